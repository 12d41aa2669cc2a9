"""What the interview tests share: the interviewer's services with a scripted model and transcriber."""

import pytest

from interviewer.hearing.transcription import FakeTranscriber
from interviewer.services import Services
from tests.support.factories import keyring
from tests.support.interviews import interviewer_model


@pytest.fixture
def services():
    return Services(keys=keyring(), chat=interviewer_model(), transcriber=FakeTranscriber())

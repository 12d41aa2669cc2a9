"""The counts a study's quality view reads, kept as the turns are written: answers and their words,
follow-ups asked, and spoken answers whose audio was poor (little speech in a long recording) or held no
words at all."""

from __future__ import annotations

import numpy as np
import pytest

from agentbank.audit import log as audit
from interviewer.hearing import recordings
from interviewer.hearing.recordings import poor_audio
from interviewer.hearing.transcription import FakeTranscriber
from interviewer.services import Services
from interviewer.session import interviews, invitations
from interviewer.session.script import load_script, shorten
from tests.support.factories import keyring
from tests.support.interviews import interviewer_model, receive, turn_of, wav_bytes

CONSENT = dict.fromkeys(invitations.CONSENT_ITEMS, True)


def test_little_speech_in_a_long_recording_is_poor_audio():
    assert poor_audio("yes", 12.0)
    assert not poor_audio(" ".join(["word"] * 30), 12.0)  # 2.5 words a second
    assert not poor_audio("yes", 2.0)  # a short answer, shortly said


def test_counts_follow_the_answers_and_the_audio(db):
    def heard(samples) -> str:  # silence gives nothing; a long recording, one word
        return "yes" if float(np.max(np.abs(samples), initial=0.0)) > 0.01 else ""

    transcriber = FakeTranscriber(script=heard)
    services = Services(keys=keyring(), chat=interviewer_model(1), transcriber=transcriber)
    code = invitations.create_invitation(db, audit.Actor("operator", "test"))
    started = invitations.start(db, services, code, CONSENT, script=shorten(load_script(), modules=2))
    interview = started.interview

    receive(db, services, interview, 2, 0, wav_bytes(8.0), max_bytes=10**7)
    turn_of(db, services, interview).answer_spoken(2)  # "yes" in eight seconds: poor audio
    receive(db, services, interview, 4, 0, wav_bytes(1.0, tone=False), max_bytes=10**7)
    with pytest.raises(recordings.NoSpeechError):  # nothing heard: refused, and counted
        turn_of(db, services, interview).answer_spoken(4)
    recordings.discard_turn(db, services.streams, interview, 4)
    turn_of(db, services, interview).answer("We lived by the river for years and years.", seconds=20.0)

    row = interviews.current(db, started.participant.id)
    db.refresh(row)
    assert (row.answers_given, row.answer_words, row.audio_flags) == (2, 1 + 9, 2)
    assert row.follow_ups_asked == 1  # the first answer was followed up, the second moved on

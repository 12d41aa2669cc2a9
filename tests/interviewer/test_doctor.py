"""The doctor's end-of-turn check hears a recording shipped with the bank, so it gives one answer every run."""

import hashlib
import io
import wave

import numpy as np
import pytest

from agentbank.core.settings import Settings
from agentbank.runtime.doctor import Check
from interviewer import doctor
from interviewer.doctor import (
    RECORDING,
    RECORDING_PROBABILITY,
    RECORDING_SHA256,
    check_speech,
    finished_recording,
    hear_end_of_turn,
)
from interviewer.hearing.smart_turn import FakeTurnModel

RATE = 16_000


def test_the_shipped_recording_is_a_short_question_with_the_pause_after_it():
    data = RECORDING.read_bytes()
    assert hashlib.sha256(data).hexdigest() == RECORDING_SHA256
    assert len(data) < 200_000
    with wave.open(io.BytesIO(data), "rb") as source:
        assert (source.getframerate(), source.getnchannels(), source.getsampwidth()) == (RATE, 1, 2)
    audio = finished_recording()
    assert 1.5 <= len(audio) / RATE <= 5.0
    # Silence before the first word and the bank's first pause (0.3 s) after the last.
    assert not np.any(audio[: round(0.2 * RATE)]) and not np.any(audio[-round(0.3 * RATE) :])
    assert np.abs(audio).max() > 0.1


def flipped(data: bytes) -> bytes:
    """The recording with one sample changed, as a damaged download or disk would leave it."""
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0x10]) + data[middle + 1 :]


def test_a_changed_recording_is_reported_as_damaged_not_heard():
    model = FakeTurnModel(0.99)
    check = Check("speech")
    assert hear_end_of_turn(check, Settings(), flipped(RECORDING.read_bytes()), model=model) is None
    assert model.calls == 0
    assert check.status == "fail" and "reinstall the bank" in check.hint
    assert "finished.wav is damaged (sha256" in check.facts["end of turn"]


def test_a_missing_recording_fails_the_speech_check(monkeypatch, tmp_path):
    monkeypatch.setattr(doctor, "RECORDING", tmp_path / "finished.wav")
    check = check_speech(Settings(speaker="fake", transcriber="fake"))
    assert check.status == "fail" and "reinstall the bank" in check.hint
    assert "finished.wav is missing" in check.facts["end of turn"]


def test_a_model_that_hears_the_finished_question_unfinished_warns():
    check = Check("speech")
    assert hear_end_of_turn(check, Settings(), model=FakeTurnModel(0.2)) == 0.2
    assert check.status == "warn" and "heard a finished question as unfinished" in check.hint
    assert hear_end_of_turn(ok := Check("speech"), Settings(), model=FakeTurnModel(0.8)) == 0.8
    assert ok.status == "ok"


def test_no_voice_model_hears_nothing():
    check = Check("speech")
    assert hear_end_of_turn(check, Settings(end_of_turn_voice="none")) is None
    assert check.status == "ok" and "end of turn" not in check.facts


@pytest.mark.slow
def test_smart_turn_gives_the_same_answer_on_every_run():
    """Five runs, each with a fresh Smart Turn session as a fresh `agentbank doctor` would load: the same
    verdict and the same probability each time, and the one heard when the recording was made."""
    from interviewer.hearing import smart_turn

    heard = []
    for _ in range(5):
        smart_turn._model.cache_clear()
        check = check_speech(Settings(speaker="fake", transcriber="fake", end_of_turn_voice="smart-turn"))
        probability = hear_end_of_turn(Check("speech"), Settings(end_of_turn_voice="smart-turn"))
        assert probability is not None
        heard.append((check.status, check.facts["end of turn"].split(" that ")[0], probability))
    assert {(status, fact) for status, fact, _ in heard} == {("ok", "smart-turn: 0.99")}
    probabilities = [p for _, _, p in heard]
    assert max(probabilities) - min(probabilities) <= 1e-6, probabilities
    assert probabilities[0] == pytest.approx(RECORDING_PROBABILITY, abs=1e-3)

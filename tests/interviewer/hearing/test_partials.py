"""Spoken answers transcribed while they are spoken: spans cut at pauses, stored as partials, joined
at the end of the turn into the text a whole-turn transcription gives, across a restart too."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import select

from agentbank.db.models.interviews import AudioPartial
from interviewer.hearing import recordings, vad
from interviewer.hearing.transcription import SAMPLE_RATE, decode_audio
from interviewer.services import Services
from interviewer.session import interviews
from interviewer.session.transcripts import state_of
from tests.support.factories import keyring
from tests.support.interviews import interviewer_model, turn_of
from tests.support.spoken_answers import (
    SILENCE_S,
    answer_of,
    begin,
    hear_tones,
    new_services,
    pieces_of,
    send,
    streaming_wav,
    tone_speech,
)


def test_the_answer_is_transcribed_while_spoken_and_only_the_tail_at_the_end(db):
    services = new_services()
    interview = begin(db, services)
    turn, question = (
        state_of(db, services, interview).turn,
        state_of(db, services, interview).question,
    )
    speech, said = tone_speech()
    assert send(db, services, interview, turn, pieces_of(streaming_wav(speech)))

    ahead = list(services.transcriber.calls)
    # Spans while the participant spoke, then the words up to the final pause, heard to judge them
    # (``turn_end``: and their last second alone, with no context, when they read as finished).
    spans = [call for call in ahead if call["duration_s"] >= recordings.PARTIAL_MIN_S]
    assert len(spans) >= 2, "spans were transcribed while the participant spoke"
    assert all(call["context"] == question for call in ahead if call["context"] is not None)
    partials = db.scalars(select(AudioPartial).where(AudioPartial.session_id == interview.id)).all()
    kept_s = partials[-1].end_sample / SAMPLE_RATE
    assert [p.start_sample for p in partials][1:] == [p.end_sample for p in partials][:-1]
    assert all(p.text_encrypted and b"w0" not in p.text_encrypted for p in partials)  # sealed

    turn_of(db, services, interview).answer_spoken(turn)
    tail = services.transcriber.calls[len(ahead) :]
    total_s = len(decode_audio(streaming_wav(speech))) / SAMPLE_RATE
    # At most the rest after the last span is heard at the end, and none when the spans already reach
    # past the last word (the decoder keeps its own pace, so where the last cut falls may vary).
    assert len(tail) <= 1
    if tail:
        assert tail[0]["context"] == question
        assert tail[0]["duration_s"] == pytest.approx(total_s - kept_s, abs=1e-3)
        assert tail[0]["duration_s"] < recordings.PARTIAL_MIN_S + SILENCE_S + 2

    whole = hear_tones(decode_audio(streaming_wav(speech)))
    assert answer_of(db, services, interview, turn) == whole == " ".join(said)
    assert db.scalars(select(AudioPartial).where(AudioPartial.session_id == interview.id)).first() is None


def test_a_restart_mid_answer_still_gives_the_whole_text(db):
    services = new_services()
    interview = begin(db, services)
    turn = state_of(db, services, interview).turn
    speech, said = tone_speech()
    chunks = pieces_of(streaming_wav(speech))
    assert not send(db, services, interview, turn, chunks[:18])
    assert services.transcriber.calls, "something was transcribed before the restart"
    stored = db.scalars(select(AudioPartial.end_sample).where(AudioPartial.session_id == interview.id)).all()

    db.expunge_all()  # as after a restart: new service objects, nothing in memory
    restarted = new_services()
    interview = interviews.current(db, interview.participant_id)
    assert send(db, restarted, interview, turn, chunks[16:], first_seq=16)  # two sent again: harmless
    turn_of(db, restarted, interview).answer_spoken(turn)
    assert answer_of(db, restarted, interview, turn) == " ".join(said)
    # After the restart, only what the spans stored before it do not cover is heard (up to the final pause,
    # whose silence is never transcribed), besides the last second heard alone to judge the pause.
    heard = [call["duration_s"] for call in restarted.transcriber.calls if call["context"] is not None]
    rest_s = len(decode_audio(b"".join(chunks))) / SAMPLE_RATE - max(stored) / SAMPLE_RATE
    assert rest_s - SILENCE_S - 1.0 < sum(heard) <= rest_s


def test_partials_of_another_model_or_discarded_audio_are_not_used(db):
    services = new_services()
    interview = begin(db, services)
    turn = state_of(db, services, interview).turn
    speech, said = tone_speech()
    chunks = pieces_of(streaming_wav(speech))
    send(db, services, interview, turn, chunks[:20])
    assert db.scalars(select(AudioPartial).where(AudioPartial.session_id == interview.id)).first() is not None

    other = new_services(name="another-model")  # say, the server came back with another transcriber
    send(db, other, interview, turn, chunks[20:], first_seq=20)
    turn_of(db, other, interview).answer_spoken(turn)
    assert answer_of(db, other, interview, turn) == " ".join(said)
    assert other.transcriber.calls[-1]["duration_s"] == pytest.approx(len(speech) / SAMPLE_RATE, abs=0.05)

    # A discarded recording takes its partials with it.
    turn = state_of(db, services, interview).turn
    send(db, services, interview, turn, chunks[:20])
    assert recordings.discard_turn(db, services.streams, interview, turn) == 20
    assert db.scalars(select(AudioPartial).where(AudioPartial.session_id == interview.id)).first() is None


def test_cuts_fall_in_pauses_long_enough_and_clear_of_the_end():
    frame = 480
    speech = [True] * 400  # 12 s of speech...
    speech[300:310] = [False] * 10  # ...a 0.3 s pause at 9 s
    speech[350:353] = [False] * 3  # ...and a gap inside a word-run at 10.5 s, too short
    assert vad.cut_point(speech, frame, 0, 400 * frame) == 305 * frame
    assert vad.cut_point(speech, frame, 2 * SAMPLE_RATE, 400 * frame) is None  # under 8 s since
    assert vad.cut_point(speech[:310], frame, 0, 310 * frame) is None  # too near the end


SPOKEN = (
    "I grew up in a small town in southern Ohio, the youngest of four children.",
    "My father worked at the paper mill for thirty years, and my mother kept the house and the garden.",
    "We did not have much money, but there was always food on the table and music on Saturday nights.",
    "When I was seventeen I left for the city and found work in a hospital laundry.",
    "Looking back, I think those years taught me to save what I could and to trust my neighbors.",
)


@pytest.mark.slow
def test_whisper_incremental_matches_whole_turn_word_error_rate(db):
    from benchmarks.bench_speech import word_error_rate
    from interviewer.hearing.transcription import WhisperTranscriber
    from interviewer.speaking.speech import PiperSpeaker
    from tests.app.web.conftest import split_chunks, webm_opus

    speaker = PiperSpeaker(threads=2)
    try:
        pause = np.zeros(int(0.4 * SAMPLE_RATE), np.float32)
        parts = [np.concatenate([decode_audio(speaker.synthesize(s).wav), pause]) for s in SPOKEN]
    finally:
        speaker.close()
    speech = np.concatenate([*parts, np.zeros(int((SILENCE_S + 1.5) * SAMPLE_RATE), np.float32)])
    assert 22 * SAMPLE_RATE < len(speech) < 34 * SAMPLE_RATE
    chunks = split_chunks(webm_opus(speech), round(len(speech) / SAMPLE_RATE))  # one a second, as browsers send

    whisper = WhisperTranscriber(threads=2)
    try:
        services = Services(keys=keyring(), chat=interviewer_model(), transcriber=whisper)
        interview = begin(db, services)
        state = state_of(db, services, interview)
        assert send(db, services, interview, state.turn, chunks, every_s=1.0)
        spans = db.scalars(select(AudioPartial).where(AudioPartial.session_id == interview.id)).all()
        assert spans, "Whisper ran on spans while the answer was spoken"
        turn_of(db, services, interview).answer_spoken(state.turn)
        incremental = answer_of(db, services, interview, state.turn)
        whole = whisper.transcribe(decode_audio(b"".join(chunks)), context=state.question).text
    finally:
        whisper.close()
    said = " ".join(SPOKEN)
    wer_incremental, wer_whole = word_error_rate(said, incremental), word_error_rate(said, whole)
    assert wer_incremental <= wer_whole + 0.05, (incremental, whole)
    assert wer_incremental < 0.15, incremental

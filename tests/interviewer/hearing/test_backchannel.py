"""A sound of listening that does not take the turn: at a likely end the server answers the frame with
``backchannel`` and keeps the turn open for the patience; speech after it continues the same answer, and the
turn passes only once the silence has outlasted the patience."""

from __future__ import annotations

import numpy as np
import pytest

from interviewer.hearing.smart_turn import FakeTurnModel
from interviewer.hearing.thoughts import Thought
from interviewer.hearing.transcription import SAMPLE_RATE, FakeTranscriber
from interviewer.hearing.turn_end import Detector, TurnTaking
from interviewer.services import Services
from interviewer.session.transcripts import state_of
from tests.support.factories import keyring
from tests.support.interviews import interviewer_model, receive, turn_of
from tests.support.spoken_answers import answer_of, begin, hear_tones, pitch, streaming_wav

# Tones are speech to the energy detector; every pause is judged at 0.3 s and a finished thought is a likely end
# at 0.5 s; the turn passes after 1.5 s of silence. The script's questions (600 s each) count as short ones here.
PATIENT = TurnTaking(pause_s=0.3, finished_s=0.5, unfinished_s=3.0, detector=Detector.ENERGY, sure_s=0.5,
                     short_speech_s=0.0, story_question_s=10_000, patience_s=1.5)  # fmt: skip
FRAME_S = 0.1


def toned(*parts: tuple[range, float]) -> np.ndarray:
    """Tone "words" (``hear_tones`` names them by pitch), each run followed by its pause in seconds."""
    pieces = [np.zeros(int(0.5 * SAMPLE_RATE), np.float32)]
    for indexes, pause in parts:
        for index in indexes:
            t = np.arange(int(0.25 * SAMPLE_RATE)) / SAMPLE_RATE
            pieces += [(0.3 * np.sin(2 * np.pi * pitch(index) * t)).astype(np.float32),
                       np.zeros(int(0.1 * SAMPLE_RATE), np.float32)]  # fmt: skip
        pieces.append(np.zeros(int(pause * SAMPLE_RATE), np.float32))
    return np.concatenate(pieces)


def frames(samples: np.ndarray) -> list[bytes]:
    data = streaming_wav(samples)
    size = int(FRAME_S * SAMPLE_RATE * 2)
    return [data[i : i + size] for i in range(0, len(data), size)]


@pytest.fixture
def services():
    return Services(keys=keyring(), chat=interviewer_model(), transcriber=FakeTranscriber(script=hear_tones))


def heard(db, services, interview, turn, chunks, taking=PATIENT):
    """Each frame received as its request does: (backchannel, end_of_turn) for each, in order."""
    said = []
    for seq, chunk in enumerate(chunks):
        received = receive(db, services, interview, turn, seq, chunk, taking=taking)
        db.commit()
        said.append((received.backchannel, received.end_of_turn))
        if received.end_of_turn:
            break
    return said


def test_speech_after_the_sound_of_listening_continues_the_same_answer(db, services):
    """Three sentences with a second's pause after the first two: a sound after the first, none after the
    second (not 4 s of speech since the last), one after the third; the turn passes after the patience."""
    interview = begin(db, services)
    turn = state_of(db, services, interview).turn
    audio = toned((range(6), 1.0), (range(6, 12), 1.0), (range(12, 24), 3.0))
    said = heard(db, services, interview, turn, frames(audio))
    sounds = [n for n, (backchannel, _) in enumerate(said) if backchannel]
    ends = [n for n, (_, ended) in enumerate(said) if ended]
    assert len(ends) == 1 and ends[0] == len(said) - 1
    second, third = (0.5 + 6 * 0.35 + 1.0) / FRAME_S, (0.5 + 12 * 0.35 + 2.0) / FRAME_S
    assert len(sounds) == 2 and sounds[0] < second and third < sounds[1] < ends[0], (sounds, ends)
    # The turn passed 1.5 s after the last word, not 0.5 s: the patience.
    last_word_ends = 0.5 + 24 * 0.35 - 0.1 + 2.0
    assert ends[0] * FRAME_S + FRAME_S >= last_word_ends + 1.5 - 0.15

    turn_of(db, services, interview).answer_spoken(turn)
    assert answer_of(db, services, interview, turn) == " ".join(f"w{i}" for i in range(24))  # one answer, in order
    assert state_of(db, services, interview).turn == turn + 2  # one answer, one reply


def test_without_patience_the_turn_passes_at_the_likely_end_and_no_sound_is_made(db, services):
    interview = begin(db, services)
    turn = state_of(db, services, interview).turn
    hasty = TurnTaking(pause_s=0.3, finished_s=0.5, unfinished_s=3.0, detector=Detector.ENERGY, sure_s=0.5,
                       short_speech_s=0.0, story_question_s=10_000)  # fmt: skip
    said = heard(db, services, interview, turn, frames(toned((range(6), 1.0), (range(6, 12), 3.0))), taking=hasty)
    assert not any(backchannel for backchannel, _ in said)
    assert said[-1][1] and len(said) * FRAME_S < 0.5 + 6 * 0.35 + 1.0  # ended in the pause: the person cut off


def test_an_unfinished_thought_gets_no_sound_and_waits_its_own_silence():
    listener = PATIENT.listener()
    listener.feed(toned((range(3), 0.0)))
    listener.feed(np.zeros(int(0.4 * SAMPLE_RATE), np.float32))
    listener.heard(Thought.UNFINISHED)
    listener.feed(np.zeros(int(2.0 * SAMPLE_RATE), np.float32))
    assert not listener.backchannel() and not listener.ended  # 2.4 s: more than the patience, less than 3 s
    listener.feed(np.zeros(int(0.7 * SAMPLE_RATE), np.float32))
    assert listener.ended and not listener.backchannel()


def test_the_patience_is_longer_after_a_question_that_leaves_time_for_a_story():
    taking = TurnTaking(patience_s=1.6, story_patience_s=2.0, story_question_s=60.0)
    story, short = taking.for_question(600), taking.for_question(30)
    assert story.patience_s == 2.0 and short.patience_s == 1.6
    assert story.finished_s == short.finished_s  # the likely ends stay: a sound at each, the turn passes later
    assert TurnTaking(story_finished_s=1.8).for_question(600).finished_s == 1.8  # no patience: waits longer
    with pytest.raises(ValueError, match="patience"):
        TurnTaking(patience_s=5.0, unfinished_s=3.0)


def test_with_a_patience_a_sure_voice_still_has_its_words_heard_so_the_decision_starts_ahead():
    """Without a patience a sure voice ends the turn before the words could be heard, so they are not asked
    for; with one the turn waits, and the words are heard (and start the decision ahead) in the meantime."""
    for patience, asks in ((0.0, False), (1.5, True)):
        taking = TurnTaking(pause_s=0.3, finished_s=1.2, unfinished_s=3.0, detector=Detector.ENERGY, sure_s=0.5,
                            short_speech_s=0.0, patience_s=patience)  # fmt: skip
        listener = taking.listener(FakeTurnModel(0.9))
        audio = toned((range(6), 0.4))
        listener.feed(audio)
        assert listener.needs_voice and listener.hear_voice(audio) and listener.sure
        assert listener.needs_words is asks

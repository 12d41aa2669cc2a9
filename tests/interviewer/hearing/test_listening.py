"""The models a spoken answer needs at its pauses run beside the chunks' requests (``listening``): a request
never waits on Whisper longer than a frame, a turn whose words are late ends as for an unfinished
thought, and the end of the turn keeps the words still being heard instead of hearing them twice."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from interviewer.deciding.speculation import SpeculativeChat
from interviewer.hearing import turn_end
from interviewer.hearing.smart_turn import FakeTurnModel
from interviewer.hearing.transcription import SAMPLE_RATE, FakeTranscriber
from interviewer.hearing.turn_end import Detector, TurnTaking, Voice
from interviewer.session.script import load_script, shorten
from interviewer.session.transcripts import state_of
from tests.interviewer.hearing import test_partials as partials
from tests.support.interviews import receive, turn_of
from tests.support.spoken_answers import (
    answer_of,
    hear_tones,
    new_services,
    pieces_of,
    pitch,
    streaming_wav,
)

FRAME_S = 0.1  # the page's frames
TAKING = TurnTaking(pause_s=0.3, finished_s=1.2, unfinished_s=3.0, detector=Detector.ENERGY, sure_s=0.5,
                    short_speech_s=1.0)  # fmt: skip
# Questions that ask for a short answer (their waits are TAKING's own), and questions that leave time for a
# story, after which a finished thought waits ``story_finished_s`` (``TurnTaking.for_question``).
SHORT, STORY = (shorten(load_script(), modules=3, seconds=seconds) for seconds in (30, 600))
# FFmpeg reads about 3 s of a streamed WAV before its first samples come out: the word starts after that.
LEAD_S, SPEECH_S, SILENCE_S = 4.0, 2.0, 4.0


def one_word_and_silence() -> np.ndarray:
    """One tone "word" of ``SPEECH_S`` (the fake hears it as "w0"), then silence."""
    t = np.arange(int(SPEECH_S * SAMPLE_RATE)) / SAMPLE_RATE
    word = (0.3 * np.sin(2 * np.pi * pitch(0) * t)).astype(np.float32)
    lead, tail = np.zeros(int(LEAD_S * SAMPLE_RATE), np.float32), np.zeros(int(SILENCE_S * SAMPLE_RATE), np.float32)
    return np.concatenate([lead, word, tail])


def two_words(pause_s: float) -> np.ndarray:
    """The word of ``one_word_and_silence``, a pause of ``pause_s``, the word again, then 4 s of silence."""
    word = one_word_and_silence()[: int((LEAD_S + SPEECH_S) * SAMPLE_RATE)]
    pause, tail = np.zeros(int(pause_s * SAMPLE_RATE), np.float32), np.zeros(4 * SAMPLE_RATE, np.float32)
    return np.concatenate([word, pause, word[int(LEAD_S * SAMPLE_RATE) :], tail])


def begin(db, services, script=SHORT):
    return partials.begin(db, services, script)


def send(db, services, interview, turn, audio: np.ndarray, taking: TurnTaking, piece_s: float = FRAME_S,
         on_chunk: Callable[[int], None] = lambda seq: None) -> float | None:  # fmt: skip
    """Send ``audio`` in pieces of ``piece_s``, as the API does; the audio sent when the turn ended (s)."""
    for seq, chunk in enumerate(pieces_of(streaming_wav(audio), piece_s)):
        on_chunk(seq)
        ended = receive(db, services, interview, turn, seq, chunk, taking=taking).end_of_turn
        db.commit()
        if ended:
            return (seq + 1) * piece_s
    return None


def frames_until_the_end(db, services, interview, turn, taking: TurnTaking) -> float | None:
    """Send the answer in the page's frames; the silence heard when the turn ended (s)."""
    sent = send(db, services, interview, turn, one_word_and_silence(), taking)
    return None if sent is None else sent - LEAD_S - SPEECH_S


def test_late_words_do_not_hold_up_the_frames_and_the_end_keeps_them(db):
    services = new_services()
    interview = begin(db, services)
    turn = state_of(db, services, interview).turn
    released, starved = threading.Event(), []

    def slow_ears(samples: np.ndarray) -> str:  # Whisper beside the chat model's notes: seconds, not a tenth
        if not released.wait(timeout=5):
            starved.append(True)
        return hear_tones(samples)

    services = services.__class__(keys=services.keys, chat=services.chat,
                                  transcriber=FakeTranscriber(script=slow_ears))  # fmt: skip
    silence_at_end = frames_until_the_end(db, services, interview, turn, TAKING)
    # The words of the pause were asked for and never came: the turn ended as for an unfinished thought,
    # frame by frame, with no request waiting for them.
    assert silence_at_end == pytest.approx(TAKING.unfinished_s, abs=FRAME_S + 1e-6)
    assert len(services.transcriber.calls) == 1 and not starved

    released.set()
    turn_of(db, services, interview).answer_spoken(turn)
    assert answer_of(db, services, interview, turn) == "w0"
    # The end of the turn waited for the words still being heard and kept them: nothing heard twice.
    assert [call["duration_s"] for call in services.transcriber.calls[1:]] in ([], [pytest.approx(1.2 + 0.2, abs=0.05)])
    assert not starved


def test_words_that_come_back_in_time_end_a_finished_thought_sooner(db):
    services = new_services()
    interview = begin(db, services)
    turn = state_of(db, services, interview).turn
    silence_at_end = frames_until_the_end(db, services, interview, turn, TAKING)
    assert silence_at_end == pytest.approx(TAKING.finished_s, abs=2 * FRAME_S + 1e-6)


def test_the_notes_waiting_to_start_are_told_when_the_person_begins_to_speak(db):
    """The notes on the last answer would take the cores from this one's pauses: the first frame with speech
    in it tells the work waiting for later that the person has begun (``notes.after_reply`` then puts the
    notes off), and the frames of silence before it do not."""
    services = new_services()
    services.chat = SpeculativeChat(services.chat)
    interview = begin(db, services)
    turn = state_of(db, services, interview).turn
    sent: list[int] = []
    told: list[tuple[bool, int]] = []
    services.chat.later(lambda model, speaking: told.append((speaking, len(sent))), after_s=60)
    try:
        send(db, services, interview, turn, one_word_and_silence(), TAKING, on_chunk=sent.append)
        services.chat.settle(5)
    finally:
        services.chat.stop()
    assert len(told) == 1 and told[0][0]
    # Told at the frames that brought the word's first speech (FFmpeg's lead of about 3 s of a streamed WAV
    # comes out with the next frames), not while the page sent silence.
    assert LEAD_S / FRAME_S <= told[0][1] <= (LEAD_S + 1.0) / FRAME_S


def test_a_sure_voice_ends_the_turn_with_no_whisper_call_at_the_pause(db, monkeypatch):
    model = FakeTurnModel(0.9)
    monkeypatch.setitem(turn_end._VOICES, Voice.SMART_TURN, lambda: model)
    services = new_services()
    interview = begin(db, services)
    turn = state_of(db, services, interview).turn
    taking = dataclasses.replace(TAKING, voice=Voice.SMART_TURN)
    silence_at_end = frames_until_the_end(db, services, interview, turn, taking)
    # Heard at the pause (0.3 s) beside the request, the voice ends the turn at sure_s, a frame late at most.
    assert silence_at_end == pytest.approx(TAKING.sure_s + FRAME_S / 2, abs=FRAME_S / 2 + 1e-6)
    assert model.calls == 1 and services.transcriber.calls == []
    turn_of(db, services, interview).answer_spoken(turn)
    assert answer_of(db, services, interview, turn) == "w0"


PAUSE_S = 1.0


def test_a_slow_voice_is_waited_for_while_the_pause_lasts(db, monkeypatch):
    """The end-of-turn model answers 0.8 s late on a one-second pause between two sentences: its answer is waited
    for, so the turn ends inside the pause, in the audio's own time (not waited for, it came after the
    person went on, and the turn ran into the second sentence)."""

    def slow(audio: np.ndarray) -> float:
        time.sleep(0.8)
        return 0.9

    model = FakeTurnModel(slow)
    monkeypatch.setitem(turn_end._VOICES, Voice.SMART_TURN, lambda: model)
    services = new_services()
    interview = begin(db, services)
    turn = state_of(db, services, interview).turn
    taking = dataclasses.replace(TAKING, voice=Voice.SMART_TURN)
    ended_at = send(db, services, interview, turn, two_words(PAUSE_S), taking)
    assert ended_at is not None and ended_at < LEAD_S + SPEECH_S + PAUSE_S, f"ended at {ended_at} s, after the pause"


def test_after_a_question_that_asks_for_a_story_a_pause_between_sentences_is_not_the_end(db, monkeypatch):
    """A finished sentence, a sure voice, a one-second pause, and the person goes on: after a short question
    the turn ends in the pause; after a question that leaves time for a story it waits ``story_finished_s``,
    and the story is one answer."""
    monkeypatch.setitem(turn_end._VOICES, Voice.SMART_TURN, lambda: FakeTurnModel(0.9))
    taking = dataclasses.replace(TAKING, voice=Voice.SMART_TURN)
    assert taking.sure_s < PAUSE_S < taking.story_finished_s
    second_word_end = LEAD_S + 2 * SPEECH_S + PAUSE_S
    ended: dict[str, float | None] = {}
    for name, script in (("short", SHORT), ("story", STORY)):
        services = new_services()
        interview = begin(db, services, script)
        turn = state_of(db, services, interview).turn
        ended[name] = send(db, services, interview, turn, two_words(PAUSE_S), taking)
        if name == "story":
            # The sure voice ends nothing sooner there, so the words of each pause are heard all the same (and a
            # finished thought starts the decision ahead): one call on the pause, one on its last words.
            assert len(services.transcriber.calls) >= 2, services.transcriber.calls
            turn_of(db, services, interview).answer_spoken(turn)
            assert answer_of(db, services, interview, turn) == "w0 w0"
    assert ended["short"] is not None and ended["short"] < LEAD_S + SPEECH_S + PAUSE_S, ended
    assert ended["story"] == pytest.approx(second_word_end + taking.story_finished_s + FRAME_S / 2, abs=FRAME_S), ended


@dataclasses.dataclass
class Held:
    """Whisper held until ``released`` (as beside Chromium and the chat model), and each wait of a request
    recorded: the chunk it was made in, and its timeout."""

    released: threading.Event = dataclasses.field(default_factory=threading.Event)
    waits: list[tuple[int, float | None]] = dataclasses.field(default_factory=list)
    chunk: int = 0


@pytest.fixture
def held(monkeypatch) -> Iterator[Held]:
    from interviewer.hearing import listening

    held, real_wait = Held(), listening.wait

    def recorded_wait(futures, timeout=None, return_when="ALL_COMPLETED"):
        held.waits.append((held.chunk, timeout))
        return real_wait(futures, timeout=timeout, return_when=return_when)

    monkeypatch.setattr(listening, "wait", recorded_wait)
    yield held
    held.released.set()


def with_held_whisper(services, held: Held):
    def slow_ears(samples: np.ndarray) -> str:
        held.released.wait(timeout=5)
        return hear_tones(samples)

    return services.__class__(keys=services.keys, chat=services.chat, transcriber=FakeTranscriber(script=slow_ears))


def test_words_of_a_pause_the_person_has_spoken_after_are_not_waited_for(db, held):
    """Whisper is slow on the words of a one-second pause, and the person goes on: the requests after it do
    not wait for them. Waiting as long as each chunk's audio lasted, the page gathered as much audio again
    for its next upload, and the wait grew with every upload while Whisper was slow."""
    services = new_services()
    interview = begin(db, services)
    turn = state_of(db, services, interview).turn
    services = with_held_whisper(services, held)
    ended = send(
        db, services, interview, turn, two_words(PAUSE_S), TAKING, on_chunk=lambda seq: setattr(held, "chunk", seq)
    )
    held.released.set()
    # Only while the pause lasted (ten frames, and a frame or two of the detector's own lag) was it waited for;
    # the second word's twenty frames and the silence after it went by without waiting.
    assert 1 <= len(held.waits) <= PAUSE_S / FRAME_S + 2, held.waits
    assert ended and len(services.transcriber.calls) == 1  # the pause's words, still held when the turn ended


def test_a_chunk_of_frames_sent_together_waits_for_the_words_no_longer_than_a_frame(db, held):
    """A page that fell behind sends a second of frames in one upload: its request waits for the pause's words
    no longer than one frame, or the next upload would gather as much again while Whisper is slow."""
    services = new_services()
    interview = begin(db, services)
    turn = state_of(db, services, interview).turn
    send(db, with_held_whisper(services, held), interview, turn, one_word_and_silence(), TAKING, piece_s=1.0)
    held.released.set()
    timeouts = [timeout for _, timeout in held.waits]
    assert timeouts and all(t is not None and t <= FRAME_S + 1e-6 for t in timeouts), timeouts

"""A corpus of spoken answers the bank makes itself, to judge its end of turn: Piper's speech with pauses
placed inside sentences (after a filler, a conjunction, a sentence without its end) and at the end of a
finished thought, heard in rooms with a fan, typing or a quiet voice at set signal-to-noise ratios; and
the end of turn run over it as the server runs it, frame by frame (``listen``). Each sentence is spoken
whole and cut where its pause goes (``Pieces``), so the voice before the pause is a voice going on.

An answer is cut into when its turn ends inside a sentence, and its end is missed when the turn ends more
than ``MISSED_AFTER_S`` after its last word (or never). Piper's speech is cached per text for the run.

Piper samples its voice (the length of each sound, the pitch's noise) from onnxruntime's random numbers, so
an unseeded corpus is a different recording each run, and two runs' figures differ by what the voice did
as much as by the code: an answer's end heard as sure in one run waits for its words in the next. The
voice's session is made under a fixed seed (``SEED``), so the same texts spoken in the same order come out
the same in every run, and a before and an after hear the same corpus. Whisper, too, samples when its
plain reading of a span looks wrong (its fallback to higher temperatures, on noisy spans above all), so a
pause's words hung on every call made before in the process; ``listen`` seeds it afresh for each answer.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import numpy as np

from interviewer.hearing.ports import Transcriber, Transcription
from interviewer.hearing.smart_turn import TurnModel
from interviewer.hearing.thoughts import Thought
from interviewer.hearing.turn_end import TurnTaking

RATE = 16_000
SEED = 2024


@functools.lru_cache(maxsize=1)
def _speaker():  # one Piper voice for the run: loading it takes seconds
    import onnxruntime

    from interviewer.speaking.speech import PiperSpeaker

    # A session's random operators take their seed when it is made; other sessions do not change it.
    onnxruntime.set_seed(SEED)
    return PiperSpeaker(threads=1)


@functools.lru_cache(maxsize=512)
def _spoken(text: str) -> np.ndarray:
    from interviewer.hearing.transcription import decode_audio

    return decode_audio(_speaker().synthesize(text).wav)


def speech(text: str) -> np.ndarray:
    """``text`` spoken by Piper, 16 kHz float32, without the silence Piper leaves around it."""
    return _spoken(text).copy()


def silence(seconds: float) -> np.ndarray:
    return np.zeros(round(seconds * RATE), dtype=np.float32)


class Room(StrEnum):
    QUIET = "quiet"
    FAN = "fan"  # steady noise, strongest at low frequencies, with a slow hum
    TYPING = "typing"  # sharp clicks at a typist's pace, over a faint hiss
    QUIET_VOICE = "quiet voice"  # the voice 25 dB softer, over a faint hiss


def _fan(samples: int, rng: np.random.Generator) -> np.ndarray:
    white = rng.standard_normal(samples + RATE)
    spectrum = np.fft.rfft(white)
    frequencies = np.fft.rfftfreq(len(white), 1 / RATE)
    spectrum /= np.sqrt(np.maximum(frequencies, 40.0))  # pink: a fan's roar is mostly low
    noise = np.fft.irfft(spectrum, len(white))[:samples]
    t = np.arange(samples) / RATE
    return noise * (1.0 + 0.3 * np.sin(2 * np.pi * 0.7 * t)) + 0.3 * np.std(noise) * np.sin(2 * np.pi * 120 * t)


def _typing(samples: int, rng: np.random.Generator) -> np.ndarray:
    noise = 0.02 * rng.standard_normal(samples)
    decay = np.exp(-np.arange(round(0.015 * RATE)) / (0.002 * RATE))
    position = 0
    while True:
        position += round(rng.uniform(0.08, 0.3) * RATE)  # about six keys a second
        if position + len(decay) >= samples:
            return noise
        noise[position : position + len(decay)] += rng.uniform(0.6, 1.0) * rng.standard_normal(len(decay)) * decay


def in_room(audio: np.ndarray, room: Room, snr_db: float, *, seed: int = 0) -> np.ndarray:
    """``audio`` (clean speech and silence) heard in ``room``, the noise ``snr_db`` below the speech (by
    power over the frames that are speech; typing by the power of its clicks, which is what fools a
    level meter)."""
    rng = np.random.default_rng(seed)
    voice = audio * (10 ** (-25 / 20) if room is Room.QUIET_VOICE else 1.0)
    if room is Room.QUIET:
        return voice.astype(np.float32)
    frames = voice[: len(voice) // 480 * 480].reshape(-1, 480)
    power = np.mean(frames**2, axis=1)
    speech_power = float(np.mean(power[power > 0.1 * power.max()]))
    noise = _fan(len(voice), rng) if room is Room.FAN else _typing(len(voice), rng)
    if room is Room.QUIET_VOICE:
        noise = rng.standard_normal(len(voice))
    noise_frames = noise[: len(noise) // 480 * 480].reshape(-1, 480)
    noise_power = np.mean(noise_frames**2, axis=1)
    reference = float(np.percentile(noise_power, 95) if room is Room.TYPING else np.mean(noise_power))
    scale = np.sqrt(speech_power / reference / 10 ** (snr_db / 10))
    return np.clip(voice + scale * noise, -1.0, 1.0).astype(np.float32)


# Each answer: the words before a pause inside the sentence, and the words that finish the thought.
ANSWERS = (
    ("When I was little, um,", "we lived above my grandfather's shop in town."),
    ("My first job was, um,", "washing dishes at a diner on the highway."),
    ("I think the hardest year was, um,", "the year my father lost his job."),
    ("We used to go to the lake and, um,", "my brother would catch fish all day."),
    ("What I remember most is, um,", "the smell of bread in the morning."),
    ("I moved to Chicago in nineteen eighty, and", "I stayed there for almost ten years."),
    ("My mother worked at the hospital, and", "she came home late every night."),
    ("We had a small garden, and", "we grew tomatoes and beans every summer."),
    ("I played the trumpet in high school, and", "I still play it at church sometimes."),
    ("I left college after two years, so", "I could help my parents on the farm."),
    ("The factory closed down, so", "we all had to look for other work."),
    ("I never liked big cities, so", "we bought a house out in the country."),
    ("I became a nurse, because", "I wanted to take care of people."),
    ("We stopped going to church, because", "the new pastor was hard to listen to."),
    ("I vote in every election, because", "my grandmother never had the chance."),
    ("I wanted to be a teacher, but", "there were no jobs when I finished school."),
    ("We tried to save money, but", "something always broke down in the house."),
    ("My favorite teacher was", "a woman who taught us poetry in the seventh grade."),
    ("After the war we moved to", "a little town near the Texas border."),
    ("The thing I am proudest of is my", "two daughters, who both finished college."),
)
# Answers that go on after a finished sentence, as stories do: the pause between the two sentences (0.5 to
# 1.5 s, ``pause_between``) ends a thought but not the answer, and a turn ended there has cut in on the
# person as surely as one ended inside a sentence (each sentence spoken alone, so its voice falls at its end
# as a voice does between sentences more often than not).
GOING_ON = (
    ("I grew up in a small town in southern Ohio.", "My father worked at the paper mill for thirty years."),
    ("We did not have much money.", "But there was always food on the table."),
    ("My grandmother lived with us.", "She taught me to sew when I was eight."),
    ("I joined the army at eighteen.", "It was the first time I had seen the ocean."),
    ("We moved to Denver in the spring.", "I started at a new school that fall."),
    ("My brother was the smart one.", "Everyone expected him to go to college."),
    ("I met my husband at a dance.", "He stepped on my feet all night."),
    ("The winters were long and hard.", "We kept the stove going day and night."),
    ("I worked nights at the hospital.", "The quiet hours were the ones I liked best."),
    ("Church was the center of our week.", "My mother sang in the choir for years."),
    ("I lost my job when I was forty.", "It took me a year to find another one."),
    ("We bought our first house in ninety two.", "It needed a new roof and new windows."),
)
# The time budget of a question that leaves time for a story, the script's first ("walk me through your life
# so far"): after it a finished thought waits longer (``TurnTaking.for_question``).
STORY_BUDGET_S = 625
ROOMS = ((Room.QUIET, 0.0), (Room.FAN, 20.0), (Room.TYPING, 15.0))
QUICK_ROOMS = ((Room.FAN, 20.0),)
LEAD_S = 0.5
TRAIL_S = 4.0  # silence after the answer: longer than any wait, so every turn can end
MISSED_AFTER_S = 2.0
JFK = Path(__file__).resolve().parents[2] / "shared" / "data" / "audio" / "jfk_inaugural_1961_excerpt_16k_mono.wav"
# Where the JFK clip's last word ends, in seconds (its pauses, all inside its one sentence, end before).
JFK_SPEECH_END_S = 10.5


class Pieces(StrEnum):
    """How an answer's pause inside a sentence is made."""

    # The sentence spoken whole, with a comma where the pause goes, and cut in that comma's silence: the
    # voice before the pause is a voice going on (a comma's rising or level pitch), as when a person stops
    # to think in the middle of a sentence.
    CUT = "cut"
    # The words before and after the pause spoken apart: the first piece ends as a finished sentence ends
    # (a falling voice), which fools a model that hears the voice. Harder than people are.
    JOINED = "joined"


_HOP = 160  # 10 ms frames
QUIET = 1e-4  # a frame is silent below this fraction of the loudest frame's power (Piper's silence is clean)
MIN_GAP_S = 0.03
# The comma's silence is looked for this far before and after where the words before it, spoken alone, end.
GAP_BEFORE_S, GAP_AFTER_S = 0.5, 0.4


def _gaps(audio: np.ndarray) -> list[tuple[int, int]]:
    """The runs of silent 10 ms frames in ``audio``, as (first sample, sample after the last)."""
    frames = audio[: len(audio) // _HOP * _HOP].reshape(-1, _HOP)
    power = np.mean(frames**2, axis=1)
    quiet = np.concatenate([[False], power < QUIET * power.max(), [False]])
    edges = np.flatnonzero(np.diff(quiet.astype(np.int8)))
    return [(start * _HOP, stop * _HOP) for start, stop in zip(edges[::2], edges[1::2], strict=True)
            if stop - start >= round(MIN_GAP_S * RATE / _HOP)]  # fmt: skip


@functools.lru_cache(maxsize=64)
def _cut(before: str, after: str) -> tuple[np.ndarray, np.ndarray]:
    """``before, after`` spoken whole and cut at the comma between them: the longest silence near where
    ``before`` spoken alone ends (Piper's words last about as long in either), the silence left out."""
    head = f"{before.rstrip(',')},"
    whole, alone = speech(f"{head} {after}"), len(speech(head))
    near = [gap for gap in _gaps(whole) if -GAP_BEFORE_S * RATE <= gap[0] - alone <= GAP_AFTER_S * RATE]
    if not near:
        raise ValueError(f"no pause where the comma of {head!r} should be")
    start, stop = max(near, key=lambda gap: gap[1] - gap[0])
    return whole[:start], whole[stop:]


def pieces(before: str, after: str, how: Pieces = Pieces.CUT) -> tuple[np.ndarray, np.ndarray]:
    """The speech before and after an answer's pause inside its sentence."""
    if how is Pieces.JOINED:
        return speech(before), speech(after)
    first, second = _cut(before, after)
    return first.copy(), second.copy()


@dataclass(frozen=True)
class Answer:
    """One answer of the corpus: its audio, where its pauses inside sentences lie, where its words end."""

    name: str
    audio: np.ndarray
    inside: tuple[tuple[float, float], ...]  # (start, end) of each pause inside a sentence, in seconds
    speech_end_s: float
    room: str
    snr_db: float
    between: tuple[tuple[float, float], ...] = ()  # pauses between sentences of an answer that goes on


def pause_for(index: int, count: int) -> float:
    """The pause inside answer ``index``: spread evenly from 0.5 to 2.5 s over the corpus."""
    return 0.5 + 2.0 * index / max(1, count - 1)


def pause_between(index: int, count: int) -> float:
    """The pause between the sentences of going-on answer ``index``: spread evenly from 0.5 to 1.5 s."""
    return 0.5 + 1.0 * index / max(1, count - 1)


def going_on(rooms: tuple[tuple[Room, float], ...] = ROOMS) -> Iterator[Answer]:
    """The answers that go on after a finished sentence (``GOING_ON``), each in each room."""
    for r, (room, snr) in enumerate(rooms):
        for index, (first_sentence, second_sentence) in enumerate(GOING_ON):
            first, second = speech(first_sentence), speech(second_sentence)
            pause = pause_between((index + 5 * r) % len(GOING_ON), len(GOING_ON))
            start = LEAD_S + len(first) / RATE
            clean = np.concatenate([silence(LEAD_S), first, silence(pause), second, silence(TRAIL_S)])
            audio = in_room(clean, room, snr, seed=1000 + index + 100 * r)
            yield Answer(f"on-{index}-{room}", audio, (), start + pause + len(second) / RATE, str(room), snr,
                         ((start, start + pause),))  # fmt: skip


def corpus(rooms: tuple[tuple[Room, float], ...] = ROOMS, *, jfk: bool = True,
           how: Pieces = Pieces.CUT) -> Iterator[Answer]:  # fmt: skip
    """The answers, each in each room (and the JFK clip in each room, when it is there)."""
    for r, (room, snr) in enumerate(rooms):
        for index, (before, after) in enumerate(ANSWERS):
            first, second = pieces(before, after, how)
            pause = pause_for((index + 7 * r) % len(ANSWERS), len(ANSWERS))
            start = LEAD_S + len(first) / RATE
            clean = np.concatenate([silence(LEAD_S), first, silence(pause), second, silence(TRAIL_S)])
            audio = in_room(clean, room, snr, seed=index + 100 * r)
            yield Answer(f"{index}-{room}", audio, ((start, start + pause),), start + pause + len(second) / RATE,
                         str(room), snr)  # fmt: skip
        if jfk and JFK.exists():
            from interviewer.hearing.transcription import decode_audio

            clean = np.concatenate([decode_audio(JFK.read_bytes()), silence(TRAIL_S)])
            yield Answer(f"jfk-{room}", in_room(clean, room, snr, seed=r), ((2.24, 3.33), (4.35, 5.44), (7.62, 8.22)),
                         JFK_SPEECH_END_S, str(room), snr)  # fmt: skip


def transcriber_calls(transcriber: Transcriber) -> int:
    """How many times the transcriber was called (a transcriber that counts, like ``Counting``)."""
    return int(getattr(transcriber, "calls", 0))


class Counting:
    """A transcriber that counts its calls."""

    def __init__(self, inner: Transcriber) -> None:
        self.inner, self.name, self.calls = inner, inner.name, 0

    def transcribe(self, audio: np.ndarray, *, context: str | None = None) -> Transcription:
        self.calls += 1
        return self.inner.transcribe(audio, context=context)

    def close(self) -> None:
        self.inner.close()


@dataclass(frozen=True)
class Heard:
    """How the end of turn went on one answer."""

    ended_s: float | None  # where the turn ended, in seconds of the answer's audio
    likely_end_s: float | None  # where the first pause that read as a finished thought began
    cut_in: bool
    missed_end: bool
    transcriptions: int
    cut_between: bool = False  # ended between the sentences of an answer that went on

    @property
    def cut_off(self) -> bool:
        """Whether the turn ended while the person meant to go on, inside a sentence or between two (as
        LiveKit's end-of-turn benchmark counts a cut-off: every corpus answer goes on after its pause)."""
        return self.cut_in or self.cut_between


def listen(answer: Answer, transcriber: Transcriber, taking: TurnTaking, *, frame_s: float = 0.1,
           model: TurnModel | None = None) -> Heard:  # fmt: skip
    """The end of turn over ``answer`` in frames of ``frame_s``, as the server runs it (``recordings.end_of_turn``
    and ``listening``): the voice heard at each pause, then, unless it sounded finished, the
    words since the last finished span transcribed (``model``: the voice's, instead of the one ``taking``
    names)."""
    import ctranslate2  # faster-whisper's engine

    ctranslate2.set_random_seed(SEED)
    listener = taking.listener(model)
    step = round(frame_s * RATE)
    kept: list[str] = []
    since = 0
    calls = 0
    ended = None
    for end in range(step, len(answer.audio) + 1, step):
        listener.feed(answer.audio[end - step : end])
        if listener.needs_voice:
            listener.hear_voice(answer.audio[:end])
        if listener.needs_words:
            before = transcriber_calls(transcriber)
            rest = listener.hear(transcriber, answer.audio[:end], since, kept)
            calls += transcriber_calls(transcriber) - before
            if listener.thought is Thought.FINISHED:
                kept, since = [*kept, rest], end
        if listener.ended:
            ended = end / RATE
            break
    early = ended is not None and ended < answer.speech_end_s - 0.05
    # An answer that goes on has no pause inside a sentence: ended before its last word, it was ended between
    # its sentences (in the pause, or as the next sentence began, before the detector had heard it).
    between = bool(answer.between) and early
    cut_in = ended is not None and any(start <= ended <= stop + 0.05 for start, stop in answer.inside)
    cut_in = cut_in or (early and not between)
    missed = not (cut_in or between) and (ended is None or ended - answer.speech_end_s > MISSED_AFTER_S)
    return Heard(ended, listener.likely_end_s, cut_in, missed, calls, between)

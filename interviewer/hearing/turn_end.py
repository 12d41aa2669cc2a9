"""Whether a pause ends the person's turn: the words said so far judged finished or not, and the silence
each judgement waits for before the interviewer speaks.

People leave about a fifth of a second between turns, yet pause for seconds inside a sentence while they
think. One fixed silence cannot be both quick and patient, so at each pause the words transcribed so far
are read: a thought that ends on a filler ("um"), a conjunction ("and", "so", "because"), a preposition or
an article, or on a comma or a trailing "...", is not finished, and the turn waits ``unfinished_s``
(longer than people's thinking pauses); a finished one ends after ``finished_s``. Until the words of a
pause are known the turn waits as for an unfinished thought.

Hearing the words costs a Whisper call at the pause (most of a second on two small cores, whatever the
length), so a turn that waited for them could not end within a second of the last word. The voice is
heard first (``smart_turn``: a Whisper encoder trained on people finishing and pausing, which hears a
trailing "and" or "um" and a voice going on as unfinished, in a tenth of a second or so): when it sounds
finished, after enough speech to trust it, the turn ends after ``sure_s`` without waiting for the words;
otherwise the words decide, as above.

A question that leaves time for a story (``TurnTaking.for_question``: by its time budget in the script) is
answered in finished sentences with pauses between them, which neither the words nor the voice can tell
from the end: after one, a finished thought or a sure voice waits ``story_finished_s`` instead, and the
words are heard at every pause (the decision then starts ahead as for any finished thought).

A likely end does not take the turn. Of the corpus's answers that go on after a finished sentence, more than
half were ended in the pause between their sentences after a short question: whatever ends a turn at a
sentence's end cuts off a person who meant to go on, as LiveKit's end-of-turn benchmark counts it. So at a
likely end the interviewer only makes a short sound of listening (``Listener.backchannel``: "Mm-hm."), and the
turn passes once the silence has lasted ``patience_s`` (``story_patience_s`` after a question that leaves time
for a story), longer than the pauses between a story's sentences. Speech after the sound goes on in the same
recording: one answer. The decision on the answer, started at its first finished pause, is ready by then.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum

import numpy as np

from agentbank.core.settings import Settings
from interviewer.hearing import silero_vad, smart_turn, vad
from interviewer.hearing.ports import Transcriber
from interviewer.hearing.thoughts import TAIL_S, UNHEARD_SPEECH_S, Pause, Thought
from interviewer.hearing.transcription import SAMPLE_RATE


class Detector(StrEnum):
    """Which voice activity detector hears the answers (``AGENTBANK_VOICE_DETECTOR``)."""

    SILERO = "silero"  # the bank's own: holds up under a fan, typing and a quiet voice
    ENERGY = "energy"  # a level meter: any loud sound is speech (for tests that speak in tones)


_DETECTORS: dict[Detector, Callable[[], vad.VoiceDetector]] = {
    Detector.SILERO: silero_vad.SileroDetector,
    Detector.ENERGY: vad.FrameDetector,
}


class Voice(StrEnum):
    """What hears whether the voice sounds finished (``AGENTBANK_END_OF_TURN_VOICE``)."""

    SMART_TURN = "smart-turn"  # Smart Turn v3.2 (interviewer/hearing/smart_turn.py)
    NONE = "none"  # the words alone: a finished thought always waits finished_s


_VOICES: dict[Voice, Callable[[], smart_turn.TurnModel | None]] = {
    Voice.SMART_TURN: smart_turn.SmartTurn,
    Voice.NONE: lambda: None,
}


@dataclass(frozen=True)
class TurnHeard:
    """What a recording's audio so far says of the turn: ended, or a likely end to answer with a sound."""

    ended: bool
    backchannel: bool = False


# Seconds of speech between two sounds of listening, at least.
BACKCHANNEL_SPEECH_S = 4.0


@dataclass(frozen=True)
class TurnTaking:
    """The silences that end a turn (every one a setting, ``AGENTBANK_END_OF_TURN_*``).

    ``pause_s``: silence after which the words so far are transcribed and judged, and, when the thought
    is finished, the interviewer's decision starts ahead (the first likely end of the turn);
    ``finished_s``: silence that ends a turn whose words end a finished thought; ``unfinished_s``: silence
    that ends any other turn, longer than a pause to think inside a sentence; ``tails_s``: the lengths of
    the last words heard alone to check a finished thought (``TAIL_S``); ``tail_must_agree``: whether a
    tail that hears another last word leaves the thought unknown. A turn with less than ``short_speech_s``
    of speech so far waits ``short_finished_s`` even after a finished thought: people pause to plan just
    after they begin, and on the corpus every turn cut into was cut at its first pause, after a clause of
    about two seconds that Whisper heard as a sentence ("And so, my fellow Americans" as "and so am I
    fellow American."); only a very short answer waits longer for it. ``voice``: the model that hears
    at each pause whether the voice sounds finished (the recording up to ``pause_s`` after the last
    speech); when its probability is at least ``sure_above`` after ``short_speech_s`` of speech, the turn
    ends after ``sure_s``, its words not waited for. ``story_finished_s``: what a finished thought (or a
    sure voice) waits instead after a question whose time budget is at least ``story_question_s``
    (``for_question``).
    """

    pause_s: float = 0.3
    finished_s: float = 1.2  # the setting's default (agentbank/core/settings.py says why)
    unfinished_s: float = 3.0
    detector: Detector = Detector.SILERO
    tails_s: tuple[float, ...] = (TAIL_S,)
    tail_must_agree: bool = False  # on the corpus it kept as many turns from being cut as it made wait 3 s
    short_speech_s: float = 2.5
    short_finished_s: float = 1.2
    voice: Voice = Voice.NONE  # in code, the words alone; the settings name Smart Turn
    sure_s: float = 0.5
    sure_above: float = 0.5
    story_question_s: float = 60.0
    story_finished_s: float = 1.8  # the setting's default (agentbank/core/settings.py says why)
    # The silence after a likely end before the turn passes (0: it passes at the likely end, with no sound of
    # listening); in code none, the settings name the bank's (agentbank/core/settings.py says why).
    patience_s: float = 0.0
    story_patience_s: float = 0.0

    def __post_init__(self) -> None:
        if not 0 < self.pause_s <= self.finished_s <= self.unfinished_s:
            raise ValueError("the silences must grow: 0 < pause_s <= finished_s <= unfinished_s")
        if not self.pause_s <= self.sure_s <= self.finished_s:
            raise ValueError("a sure end waits between the pause and a finished thought's silence")
        if not 0 <= self.sure_above <= 1:
            raise ValueError("sure_above is a probability")
        if not all(tail > 0 for tail in self.tails_s):
            raise ValueError("every tail must be longer than zero")
        if not self.pause_s <= self.story_finished_s <= self.unfinished_s:
            raise ValueError("a story's finished thought waits between the pause and an unfinished thought's silence")
        if not (0 <= self.patience_s <= self.unfinished_s and 0 <= self.story_patience_s <= self.unfinished_s):
            raise ValueError("the patience after a likely end is at most an unfinished thought's silence")

    def for_question(self, budget_s: float | None) -> TurnTaking:
        """The turn-taking after a question of ``budget_s`` seconds (its script's time budget, follow-ups
        included; None: no scripted question). A question that leaves time for a story is answered in
        sentences with pauses between them, and neither the words (each sentence is finished) nor the voice
        (it falls at each sentence's end: Smart Turn heard 0.93-0.98 there) can tell such a pause from the end:
        only its length can. With a patience, the likely ends stay where they are (a sound of listening at each)
        and the turn passes after ``story_patience_s``; without one, a finished thought waits
        ``story_finished_s`` there, sure voice or not."""
        if budget_s is None or budget_s < self.story_question_s:
            return self
        if self.patience_s > 0 or self.story_patience_s > 0:
            return replace(self, patience_s=max(self.patience_s, self.story_patience_s))
        if self.story_finished_s <= self.finished_s:
            return self
        return replace(self, finished_s=self.story_finished_s, sure_s=self.story_finished_s,
                       short_finished_s=max(self.short_finished_s, self.story_finished_s))  # fmt: skip

    def wait_s(self, thought: Thought, speech_s: float = float("inf")) -> float:
        """The silence that ends a turn whose words so far, ``speech_s`` of speech, are judged ``thought``."""
        if thought is not Thought.FINISHED:
            return self.unfinished_s
        if speech_s >= self.short_speech_s:
            return self.finished_s
        return min(max(self.finished_s, self.short_finished_s), self.unfinished_s)

    @classmethod
    def of(cls, settings: Settings) -> TurnTaking:
        """The turn-taking the settings ask for."""
        return cls(settings.end_of_turn_pause_s, settings.end_of_turn_finished_s, settings.end_of_turn_silence_s,
                   Detector(settings.voice_detector), tuple(settings.end_of_turn_tails_s),
                   settings.end_of_turn_tail_must_agree, settings.end_of_turn_short_speech_s,
                   settings.end_of_turn_short_finished_s, Voice(settings.end_of_turn_voice),
                   settings.end_of_turn_sure_s, settings.end_of_turn_sure_above,
                   settings.end_of_turn_story_question_s, settings.end_of_turn_story_finished_s,
                   settings.end_of_turn_patience_s, settings.end_of_turn_story_patience_s)  # fmt: skip

    def voice_model(self) -> smart_turn.TurnModel | None:
        """The model ``voice`` names (None: the words alone)."""
        return _VOICES[self.voice]()

    def listener(self, model: smart_turn.TurnModel | None = None) -> Listener:
        """A new recording's end of turn (``model``: instead of the one ``voice`` names)."""
        return Listener(self, model)


@dataclass(frozen=True)
class Needs:
    """What the current moment of a recording asks for, at once (``Listener.needs``)."""

    voice: bool  # the voice model, on this pause
    words: bool  # the words before this pause, judged
    paused: bool  # the person is silent for ``pause_s`` now


class Listener:
    """One recording's end of turn: its detector's frames, and what the words said at each pause were
    judged to be. The caller feeds the audio, lets the voice model hear a pause when ``needs_voice``
    (``hear_voice``), transcribes the words when ``needs_words`` and passes them to ``heard`` (``hear``
    does that); ``ended`` then answers whether the silence so far ends the turn."""

    def __init__(self, taking: TurnTaking, model: smart_turn.TurnModel | None = None) -> None:
        self.taking = taking
        self.detector = _DETECTORS[taking.detector]()
        self.tally = vad.NOTHING_HEARD  # the detector's, read once per feed
        self.model = model if model is not None else taking.voice_model()
        self._pause: float | None = None  # the speech end of the pause judged last
        self._thought = Thought.UNKNOWN
        self._voiced: float | None = None  # the speech end of the pause the voice model heard last
        self.likely_end_s: float | None = None  # where the speech that first read as finished ended
        self.sounded: float | None = None  # the voice model's probability there (None: it could not hear)
        self._listened: float | None = None  # the speech end of the pause a sound of listening was made in
        self._listened_after_s = -BACKCHANNEL_SPEECH_S  # the speech heard by then, in seconds

    def feed(self, audio: np.ndarray) -> None:
        """Hear the next samples (16 kHz mono)."""
        self.detector.feed(audio)
        self.tally = self.detector.tally()

    @property
    def speech_end_s(self) -> float | None:
        """Where the last speech heard ended, in seconds from the start of the recording."""
        return self.tally.speech_end_s

    @property
    def paused(self) -> bool:
        """Whether the person has spoken and is silent for ``pause_s`` now."""
        return self.tally.speech_started and self.tally.trailing_silence_s >= self.taking.pause_s

    def needs(self) -> Needs:
        """What this moment asks for: the voice model, the words, or (neither, and no pause) a span ahead."""
        return Needs(self.needs_voice, self.needs_words, self.paused)

    @property
    def needs_voice(self) -> bool:
        """Whether this pause waits for the voice model to hear it (once per pause, before its words)."""
        return self.model is not None and self.paused and self._voiced != self.tally.speech_end_s

    def hear_voice(self, audio: np.ndarray) -> bool:
        """Let the voice model hear the current pause in ``audio`` (the recording so far); whether the turn is
        now sure to have ended (``sure``). Its errors (``AgentBankError``) pass through, the pause left to its
        words. ``voice_clip`` and ``voiced`` do the same in two steps, for a caller that runs the model
        elsewhere."""
        at, clip = self.speech_end_s, self.voice_clip(audio)
        self.voiced(at, None)
        if self.model is None or clip is None:
            return False
        self.voiced(at, self.model.probability(clip))
        return self.sure

    def voice_clip(self, audio: np.ndarray) -> np.ndarray | None:
        """What the voice model hears of the current pause: the recording up to exactly ``pause_s`` after the
        last speech, whenever the pause came to be heard (the model weighs the silence too, and a longer one
        would sound more finished than the pause it judges); None before any speech."""
        if self.speech_end_s is None:
            return None
        return audio[: round(self.speech_end_s * SAMPLE_RATE) + round(self.taking.pause_s * SAMPLE_RATE)]

    def voiced(self, at: float | None, probability: float | None) -> None:
        """The voice model heard the pause after the speech that ended at ``at`` (s): ``probability`` that
        the turn has ended (None: it could not hear it). A pause the person has spoken after is only
        remembered: ``sure`` reads the current one."""
        self._voiced, self.sounded = at, probability

    @property
    def sure(self) -> bool:
        """Whether the voice sounded finished at the current pause, after enough speech to trust it."""
        return (self.paused and self._voiced == self.tally.speech_end_s and self.sounded is not None
                and self.sounded >= self.taking.sure_above
                and self.tally.speech_s >= self.taking.short_speech_s)  # fmt: skip

    @property
    def needs_words(self) -> bool:
        """Whether this pause waits for its words to be judged (once per pause, after its voice; not when
        the voice is sure and that ends the turn sooner, before the words could be heard: after a question
        that leaves time for a story it does not, and the words still start the decision ahead)."""
        # With a patience the turn does not pass at a sure voice, so the words have time to be heard, and the
        # decision to start ahead on them.
        hurried = self.sure and max(self.taking.sure_s, self.taking.patience_s) < self.taking.finished_s
        return self.paused and self._pause != self.tally.speech_end_s and not self.needs_voice and not hurried

    @property
    def thought(self) -> Thought:
        """The judgement of the words before the current pause (UNKNOWN while the person speaks)."""
        return self._thought if self.paused and self._pause == self.tally.speech_end_s else Thought.UNKNOWN

    def hear(self, transcriber: Transcriber, audio: np.ndarray, since: int, kept: list[str],
             *, context: str | None = None) -> str:  # fmt: skip
        """Judge the current pause (``pause``, then ``Pause.judge`` and ``heard``): the new words, transcribed
        from ``audio[since:]``. Transcription errors (``AgentBankError``) pass through, the pause unjudged."""
        pause = self.pause(since, kept)
        rest, thought = pause.judge(transcriber, audio, context=context)
        self.heard(thought, at=pause.at)
        return rest

    def pause(self, since: int, kept: list[str]) -> Pause:
        """What the current pause's words are judged with (``since``: the sample where the spans ``kept``
        stop), taken now, so that the judging may run elsewhere while more audio is fed."""
        end = self.speech_end_s
        return Pause(end, since, tuple(kept), self._speech_since(since) >= UNHEARD_SPEECH_S,
                     None if end is None else round(end * SAMPLE_RATE), self.taking.tails_s,
                     self.taking.tail_must_agree)  # fmt: skip

    def _speech_since(self, sample: int) -> float:
        frame = self.detector.frame
        return sum(self.detector.speech[sample // frame :]) * frame / SAMPLE_RATE

    def heard(self, thought: Thought, *, at: float | None = None) -> Thought:
        """How the words said up to the current pause (or the one after the speech that ended at ``at``) were
        judged (UNKNOWN: they could not be transcribed)."""
        self._pause = self.tally.speech_end_s if at is None else at
        self._thought = thought
        if self._thought is Thought.FINISHED and self.likely_end_s is None:
            self.likely_end_s = self._pause
        return self._thought

    @property
    def likely_ended(self) -> bool:
        """Whether the silence since the last speech is a likely end of the turn, as its voice was heard or its
        words judged (the turn itself passes after ``patience_s``: ``ended``)."""
        # A sure voice ends the turn whatever its words say, even where they are heard (after a story question,
        # ``needs_words``): letting words that trail keep the turn open 3 s there cut into none of the corpus's
        # answers and missed one more end (9.5% for 4.8%: Whisper reading a finished "...listen to." as
        # trailing; benchmarks/results/turn-end-quick-2026-11-29-3.json).
        return self.paused and self.tally.trailing_silence_s >= self._wait_s() - 1e-9

    def _wait_s(self) -> float:
        return self.taking.sure_s if self.sure else self.taking.wait_s(self.thought, self.tally.speech_s)

    @property
    def ended(self) -> bool:
        """Whether the turn passes: a likely end that the silence has outlasted by ``patience_s`` in all."""
        wait = max(self._wait_s(), self.taking.patience_s)
        return self.paused and self.tally.trailing_silence_s >= wait - 1e-9

    def verdict(self) -> TurnHeard:
        """The turn now: whether it passes, and whether to make a sound of listening (``backchannel``)."""
        return TurnHeard(self.ended, self.backchannel())

    def backchannel(self) -> bool:
        """Whether to make a short sound of listening now: once per likely end that does not yet pass the turn
        (and never with no patience: the turn passes there), with ``BACKCHANNEL_SPEECH_S`` of speech at least
        since the last one. Asking marks the pause as answered."""
        if not self.likely_ended or self.ended or self._listened == self.tally.speech_end_s:
            return False
        if self.tally.speech_s - self._listened_after_s < BACKCHANNEL_SPEECH_S:
            return False  # not at every sentence of a story: a listener's "mm-hm" comes now and then
        self._listened, self._listened_after_s = self.tally.speech_end_s, self.tally.speech_s
        return True

"""The end of a spoken turn: Silero VAD in noisy rooms, the words at a pause judged finished or not, and
the silence each judgement waits for; the corpus of answers with pauses inside sentences (slow)."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.voice_corpus import (
    RATE,
    ROOMS,
    STORY_BUDGET_S,
    Answer,
    Counting,
    Heard,
    Room,
    corpus,
    going_on,
    in_room,
    listen,
    silence,
    speech,
)
from interviewer.hearing.silero_vad import WINDOW_S, SileroDetector
from interviewer.hearing.smart_turn import FakeTurnModel
from interviewer.hearing.thoughts import TAIL_AFTER_S, Thought, judge
from interviewer.hearing.transcription import FakeTranscriber
from interviewer.hearing.turn_end import Detector, TurnTaking, Voice

FIRST, SECOND = "My mother was a nurse, and", "she worked nights for twenty years."
# The bounds the corpus must stay under (its figures are in bench_voice's report). With its pauses made by
# joining pieces spoken apart, the words alone measured 9.5% cut in (Whisper tiny hearing "is my" as "is
# mine.", "was." read as an end, and the JFK clip's "And so, my fellow Americans," whose comma only its voice
# gives) and 4.8% missed (a sentence that ends "listen to.", which reads like "we moved to."); waiting 1.2 s
# after a finished thought (the default since), 1.6% cut in. Cut from sentences spoken whole, the corpus
# measured 3.2% cut in (answer 19's "is my" heard as "is mine.") and 4.8% missed with the words alone, and
# the same with Smart Turn heard first, whose sure ends brought the median wait from the last word to the
# end of the turn from 1.13 s to 0.55 s (bench_turn_end, benchmarks/results/turn-end-2026-11-28.json).
# Those runs differed from one another by more than the code: Piper sampled a new voice for the corpus in
# each process, and Whisper's fallback to sampling heard a noisy span differently after other calls. Both
# are seeded now (``voice_corpus.SEED``), so every run hears the same corpus: 0.0% cut in, 4.8% missed, p50
# 0.60 s. The bounds leave room for a change to cost an answer or two; the goal of 5% is the benchmark's.
MAX_CUT_IN_RATE = 0.08
MAX_END_OF_TURN_P50_S = 0.8  # the goal for the whole wait, last word to the interviewer's voice, of which this is most
MAX_MISSED_END_RATE = 0.10


@pytest.fixture(scope="module")
def two_clauses() -> tuple[np.ndarray, float, float]:
    """A sentence with a 1.5 s pause inside it; where the pause begins and ends."""
    first = speech(FIRST)
    start = 1.0 + len(first) / RATE
    return np.concatenate([silence(1.0), first, silence(1.5), speech(SECOND), silence(2.0)]), start, start + 1.5


def speech_frames(detector, audio: np.ndarray, piece: int = 1600) -> np.ndarray:
    for start in range(0, len(audio), piece):
        detector.feed(audio[start : start + piece])
    return np.array(detector.speech)


def share(frames: np.ndarray, start_s: float, end_s: float) -> float:
    """The share of frames judged speech between two times."""
    return float(frames[round(start_s / WINDOW_S) : round(end_s / WINDOW_S)].mean())


def test_the_corpus_is_spoken_the_same_in_every_run():
    """Piper samples its voice from onnxruntime's random numbers, whose seed each process draws afresh: the
    corpus's voice is made under a fixed seed, so every run (a before and an after) hears the same answers."""
    import onnxruntime

    from benchmarks import voice_corpus

    spoken = []
    for process_seed in (1, 2):  # what two processes might have drawn
        onnxruntime.set_seed(process_seed)
        voice_corpus._speaker.cache_clear()
        voice_corpus._spoken.cache_clear()
        spoken.append(speech("And so we moved to the city."))
    assert np.array_equal(*spoken)


@pytest.mark.parametrize(("pause_s", "between"), [(1.6, True), (0.8, False)])
def test_an_answer_that_goes_on_is_ended_between_its_sentences_when_the_pause_outlasts_the_wait(pause_s, between):
    """The corpus's answers that go on after a finished sentence: a turn ended in the pause between the two
    sentences is counted as ended between them, not as a cut into a sentence nor as an end heard."""
    first, second = speech("We did not have much money."), speech("But there was always food on the table.")
    start = 0.5 + len(first) / RATE
    audio = np.concatenate([silence(0.5), first, silence(pause_s), second, silence(4.0)])
    answer = Answer(
        "going-on", audio, (), start + pause_s + len(second) / RATE, "quiet", 0.0, ((start, start + pause_s),)
    )
    finished = Counting(FakeTranscriber(script=lambda samples: "We did not have much money."))
    heard = listen(answer, finished, TurnTaking())  # the words alone: a finished thought ends after 1.2 s
    assert heard.cut_between is between
    assert not heard.cut_in and not heard.missed_end
    assert heard.ended_s is not None and (heard.ended_s < answer.speech_end_s) is between


@pytest.mark.parametrize(
    ("room", "snr_db"),
    [(Room.QUIET, 0.0), (Room.FAN, 5.0), (Room.TYPING, 0.0), (Room.TYPING, 10.0), (Room.QUIET_VOICE, 10.0)],
)
def test_the_detector_hears_the_voice_not_the_fan_or_the_keyboard(two_clauses, room, snr_db):
    audio, pause_start, pause_end = two_clauses
    frames = speech_frames(SileroDetector(), in_room(audio, room, snr_db))
    speech_end = pause_end + len(speech(SECOND)) / RATE
    # Inside the words, a little in from their edges (Piper leaves some silence around them, and its voice
    # varies from one synthesis to the next); the gaps between words and at the comma are silence.
    assert share(frames, 1.3, pause_start - 0.3) > 0.6
    assert share(frames, pause_end + 0.3, speech_end - 0.3) > 0.6
    # The pause, the lead and the end are silence, whatever the room: a click is not a word.
    assert share(frames, pause_start + 0.3, pause_end - 0.1) < 0.1
    assert share(frames, 0.0, 0.9) < 0.1
    assert share(frames, speech_end + 0.2, len(audio) / RATE) < 0.1


def test_audio_fed_in_any_pieces_is_judged_as_if_fed_whole(two_clauses):
    audio = in_room(two_clauses[0], Room.FAN, 10.0)
    whole, pieces = SileroDetector(), SileroDetector()
    whole.feed(audio)
    speech_frames(pieces, audio, piece=1_234)
    assert pieces.probabilities == pytest.approx(whole.probabilities, abs=1e-5)
    assert pieces.speech_end_s == whole.speech_end_s


@pytest.mark.parametrize(
    ("text", "thought"),
    [
        ("I grew up in Ohio.", Thought.FINISHED),
        ("Yes.", Thought.FINISHED),
        ("I think so.", Thought.FINISHED),
        ("What are you looking at?", Thought.FINISHED),
        ("It was hard to listen to.", Thought.UNFINISHED),  # waits: "we moved to." is written the same
        ("After the war we moved to.", Thought.UNFINISHED),
        ("Ten years or so.", Thought.FINISHED),
        ("I grew up in Ohio, um...", Thought.UNFINISHED),
        ("Um.", Thought.UNFINISHED),
        ("My mother was a nurse and", Thought.UNFINISHED),
        ("My mother was a nurse, and...", Thought.UNFINISHED),
        ("I left school, so.", Thought.UNFINISHED),
        ("I became a nurse because", Thought.UNFINISHED),
        ("I became a nurse because...", Thought.UNFINISHED),
        ("My favorite teacher was", Thought.UNFINISHED),
        ("My favorite teacher was.", Thought.UNFINISHED),  # Whisper's full stop after a sentence left hanging
        ("That's how it was.", Thought.FINISHED),
        ("I don't remember where the house was.", Thought.FINISHED),
        ("My brother was taller than my father was.", Thought.FINISHED),
        ("Yes, it is.", Thought.FINISHED),
        ("We moved to", Thought.UNFINISHED),
        ("The thing I am proudest of is my", Thought.UNFINISHED),
        ("We had a small garden,", Thought.UNFINISHED),
        ("", Thought.UNKNOWN),
        ("...", Thought.UNKNOWN),
    ],
)
def test_the_words_so_far_say_whether_the_thought_is_finished(text, thought):
    assert judge(text) is thought


def ended_at(audio: np.ndarray, taking: TurnTaking, words: list[str]) -> float | None:
    """Where the end of turn, fed in 100 ms frames, ends the turn; ``words``: what each pause transcribes to."""
    left = list(words)
    # The texts in order, the last one again for every later call (the tail of a finished thought).
    transcriber = FakeTranscriber(script=lambda samples: left.pop(0) if len(left) > 1 else left[0])
    return fed(audio, taking, transcriber)


def fed(audio: np.ndarray, taking: TurnTaking, transcriber: FakeTranscriber, model=None) -> float | None:
    """Where the end of turn, fed ``audio`` in 100 ms frames and hearing through ``transcriber`` (and the
    voice through ``model``), ends it."""
    listener = taking.listener(model)
    for end in range(1600, len(audio) + 1, 1600):
        listener.feed(audio[end - 1600 : end])
        if listener.needs_voice:
            listener.hear_voice(audio[:end])
        if listener.needs_words:
            listener.hear(transcriber, audio[:end], 0, [])
        if listener.ended:
            return end / RATE
    return None


def test_a_finished_thought_ends_after_a_short_silence_and_an_unfinished_one_waits(two_clauses):
    audio, pause_start, pause_end = two_clauses
    first_only = np.concatenate([audio[: round(pause_start * RATE)], silence(4.0)])
    # (the clause is short: ``short_speech_s`` is set aside here, and tested below)
    taking = TurnTaking(pause_s=0.3, finished_s=0.7, unfinished_s=3.0, short_speech_s=0.0)
    # The words end in "and": the turn waits the long silence, from the last word.
    waited = ended_at(first_only, taking, ["My mother was a nurse, and"])
    assert waited == pytest.approx(pause_start + 3.0, abs=0.25)
    # The same pause after a finished sentence ends the turn quickly, by its setting.
    finished = ended_at(first_only, taking, ["My mother was a nurse."])
    assert finished == pytest.approx(pause_start + 0.7, abs=0.25)
    slower = ended_at(first_only, TurnTaking(pause_s=0.3, finished_s=1.5, unfinished_s=3.0), ["I was a nurse."])
    assert slower == pytest.approx(pause_start + 1.5, abs=0.25)
    # Under 2.5 s of speech so far (by default), a finished thought waits a little longer: a pause to plan.
    short = ended_at(first_only, TurnTaking(), ["My mother was a nurse."])
    assert short == pytest.approx(pause_start + 1.2, abs=0.25)
    # The whole sentence, its pause after "and": not cut in on; ended after its last word.
    whole = ended_at(audio, taking, ["My mother was a nurse, and", "she worked nights for twenty years."])
    assert whole is not None and whole > pause_end


def test_speech_that_gave_no_words_is_not_a_finished_thought(two_clauses):
    audio, pause_start, _ = two_clauses
    first_only = np.concatenate([audio[: round(pause_start * RATE)], silence(4.0)])
    # Whisper left out what was said (a mumbled "and"): nothing reads as finished, the turn waits.
    assert ended_at(first_only, TurnTaking(), [""]) == pytest.approx(pause_start + 3.0, abs=0.25)


def test_the_detector_and_the_silences_are_settings():
    from agentbank.core.settings import Settings

    taking = TurnTaking.of(Settings(end_of_turn_finished_s=0.5, end_of_turn_silence_s=4.0, voice_detector="energy"))
    assert (taking.pause_s, taking.finished_s, taking.unfinished_s, taking.detector) == (0.3, 0.5, 4.0, Detector.ENERGY)
    with pytest.raises(ValueError, match="grow"):
        TurnTaking(pause_s=1.0, finished_s=0.5)


def heard_by_whisper(answers: list[Answer], taking: TurnTaking) -> list[Heard]:
    """Each answer through the end of turn as the server hears it, its words by Whisper tiny.en."""
    from interviewer.hearing.transcription import WhisperTranscriber

    transcriber = Counting(WhisperTranscriber(threads=2))
    try:
        return [listen(answer, transcriber, taking) for answer in answers]
    finally:
        transcriber.close()


@pytest.mark.slow
def test_the_corpus_is_not_cut_into_inside_sentences_and_its_ends_are_heard_soon():
    """At least 60 answers (20 sentences with a pause of 0.5 to 2.5 s after a filler, a conjunction or a
    sentence without its end, in three rooms, and the JFK clip), through Silero, Whisper and Smart Turn as
    the settings' defaults hear them: few cut into, few ends missed, and half the answers' turns ended
    within MAX_END_OF_TURN_P50_S of their last word (the words alone took 1.13 s)."""
    from agentbank.core.settings import Settings

    answers = list(corpus(ROOMS))
    # How soon a likely end is heard: with no patience the turn passes there (the patience after it, during which
    # the interviewer only says "Mm-hm.", is tested in test_backchannel.py and counted by bench_voice).
    hearing = Settings(end_of_turn_voice="smart-turn", end_of_turn_patience_s=0, end_of_turn_story_patience_s=0)
    heard = heard_by_whisper(answers, TurnTaking.of(hearing))
    assert len(heard) >= 60
    cut_in = sum(h.cut_in for h in heard) / len(heard)
    missed = sum(h.missed_end for h in heard) / len(heard)
    waits = [h.ended_s - a.speech_end_s for a, h in zip(answers, heard, strict=True) if h.ended_s and not h.cut_in]
    p50 = float(np.median(waits))
    print(f"corpus: {len(heard)} answers, cut-in rate {cut_in:.1%}, missed-end rate {missed:.1%}, "
          f"last word to end of turn p50 {p50:.2f} s")  # fmt: skip
    assert cut_in <= MAX_CUT_IN_RATE
    assert missed <= MAX_MISSED_END_RATE
    assert p50 <= MAX_END_OF_TURN_P50_S


@pytest.mark.slow
def test_after_a_question_that_asks_for_a_story_its_pauses_between_sentences_are_not_ended():
    """The answers that go on after a finished sentence (a pause of 0.5 to 1.5 s, then a second sentence), in
    three rooms, after the script's first question (625 s, "walk me through your life so far"): few ended
    between their sentences (after a short question, with Smart Turn sure after 0.5 s, 58.3% were by the fan:
    each sentence ends as a finished thought and in a falling voice), and every turn still ended."""
    from agentbank.core.settings import Settings

    answers = list(going_on(ROOMS))
    taking = TurnTaking.of(Settings(end_of_turn_voice="smart-turn")).for_question(STORY_BUDGET_S)
    heard = heard_by_whisper(answers, taking)
    between = sum(h.cut_between for h in heard) / len(heard)
    waits = [h.ended_s - a.speech_end_s for a, h in zip(answers, heard, strict=True) if h.ended_s and not h.cut_between]
    print(f"went on: {len(heard)} answers, ended between sentences {between:.1%}, "
          f"last word to end of turn p50 {float(np.median(waits)):.2f} s")  # fmt: skip
    assert len(heard) == 36 and all(h.ended_s is not None for h in heard)
    assert between <= MAX_CUT_IN_RATE


def tails_ended(audio: np.ndarray, taking: TurnTaking, whole: str, tails: dict[float, str]) -> float | None:
    """Where the turn ends when the words up to the pause are ``whole`` and the tail of each length in
    ``tails`` (seconds) reads as given."""
    heard = {round((tail_s + TAIL_AFTER_S) * RATE): text for tail_s, text in tails.items()}
    return fed(audio, taking, FakeTranscriber(script=lambda samples: heard.get(len(samples), whole)))


def test_a_finished_thought_is_heard_again_on_each_tail_and_any_that_trails_keeps_the_turn(two_clauses):
    audio, pause_start, _ = two_clauses
    first_only = np.concatenate([audio[: round(pause_start * RATE)], silence(4.0)])
    # Whisper as it hears a clause at times: whole, and on its last 1.2 s, finished; on its last 0.8 s, trailing.
    tails = {0.8: "garden, and...", 1.2: "a small garden."}
    said = "We had a small garden."
    assert tails_ended(
        first_only, TurnTaking(finished_s=0.7, tails_s=(1.2,), short_speech_s=0.0), said, tails
    ) == pytest.approx(pause_start + 0.7, abs=0.25)
    assert tails_ended(first_only, TurnTaking(tails_s=(0.8, 1.2)), said, tails) == pytest.approx(
        pause_start + 3.0, abs=0.25
    )


def test_a_tail_that_hears_another_last_word_leaves_the_thought_unknown(two_clauses):
    audio, pause_start, _ = two_clauses
    first_only = np.concatenate([audio[: round(pause_start * RATE)], silence(4.0)])
    # Whisper guessing at a word it did not catch ("is my" heard as "this mine.", then as "this, Mike.").
    said, tails = "The thing I am proudest of this mine.", {1.2: "I'm proudest of this, Mike."}
    strict = TurnTaking(tail_must_agree=True, short_speech_s=0.0)
    assert tails_ended(first_only, strict, said, tails) == pytest.approx(pause_start + 3.0, abs=0.25)
    lenient = TurnTaking(finished_s=0.7, tail_must_agree=False, short_speech_s=0.0)
    assert tails_ended(first_only, lenient, said, tails) == pytest.approx(pause_start + 0.7, abs=0.25)


def test_the_tails_are_a_setting():
    from agentbank.core.settings import Settings

    taking = TurnTaking.of(Settings(end_of_turn_tails_s=[0.8, 1.2], end_of_turn_tail_must_agree=True,
                                    end_of_turn_short_speech_s=1.0, end_of_turn_short_finished_s=2.0))  # fmt: skip
    assert (taking.tails_s, taking.tail_must_agree, taking.short_speech_s, taking.short_finished_s) == (
        (0.8, 1.2), True, 1.0, 2.0,
    )  # fmt: skip
    with pytest.raises(ValueError, match="tail"):
        TurnTaking(tails_s=(0.0,))


def test_a_short_span_after_a_finished_one_is_checked_on_a_tail_that_reaches_back():
    first = speech("My mother was a nurse.")
    audio = np.concatenate([silence(0.5), first, silence(0.35), speech("but"), silence(4.0)])
    but_end = 0.5 + len(first) / RATE + 0.35 + len(speech("but")) / RATE
    # Whisper: the first clause, whole and on its tail, finished; "but" alone, "Bye."; "but" after the
    # clause's last words, trailing.
    said = ["My mother was a nurse.", "was a nurse.", "Bye.", "a nurse, but..."]
    transcriber = FakeTranscriber(script=lambda samples: said.pop(0) if said else "")
    listener = TurnTaking(short_speech_s=0.0).listener()
    kept: list[str] = []
    since, ended = 0, None
    for end in range(1600, len(audio) + 1, 1600):
        listener.feed(audio[end - 1600 : end])
        if listener.needs_words:
            rest = listener.hear(transcriber, audio[:end], since, kept)
            if listener.thought is Thought.FINISHED:
                kept, since = [*kept, rest], end
        if listener.ended:
            ended = end / RATE
            break
    assert not said, f"the tail after 'but' was not heard: {said}"
    assert ended is not None and ended > but_end + 2.5, (ended, but_end)


# The voice: heard first at each pause; a voice that sounds finished ends the turn before its words are heard.

SURE = TurnTaking(pause_s=0.3, sure_s=0.5, finished_s=1.2, unfinished_s=3.0, short_speech_s=0.0)


def counting_words(said: str) -> FakeTranscriber:
    return FakeTranscriber(script=lambda samples: said)


def test_a_voice_that_sounds_finished_ends_the_turn_soon_without_waiting_for_its_words(two_clauses):
    audio, pause_start, _ = two_clauses
    first_only = np.concatenate([audio[: round(pause_start * RATE)], silence(4.0)])
    sure, words = FakeTurnModel(0.9), counting_words("My mother was a nurse.")
    assert fed(first_only, SURE, words, sure) == pytest.approx(pause_start + 0.5, abs=0.25)
    assert sure.calls == 1  # once per pause
    assert not words.calls  # the words of a sure pause are left to the end of the turn
    # A voice that does not sound finished leaves the pause to its words: finished, 1.2 s; trailing, 3 s.
    unsure = FakeTurnModel(0.2)
    assert fed(first_only, SURE, words, unsure) == pytest.approx(pause_start + 1.2, abs=0.25)
    assert fed(first_only, SURE, counting_words("My mother was a nurse, and"), unsure) == pytest.approx(
        pause_start + 3.0, abs=0.25
    )
    # The threshold is a setting: 0.9 is not sure enough for a stricter one.
    stricter = TurnTaking(pause_s=0.3, sure_s=0.5, sure_above=0.95, short_speech_s=0.0)
    assert fed(first_only, stricter, words, FakeTurnModel(0.9)) == pytest.approx(pause_start + 1.2, abs=0.25)


def test_after_a_story_question_a_sure_voice_waits_longer_and_its_words_are_heard(two_clauses):
    audio, pause_start, _ = two_clauses
    first_only = np.concatenate([audio[: round(pause_start * RATE)], silence(4.0)])
    story = SURE.for_question(600)
    assert story.finished_s == story.sure_s == story.story_finished_s > SURE.finished_s
    words = counting_words("My mother was a nurse.")
    assert fed(first_only, story, words, FakeTurnModel(0.9)) == pytest.approx(pause_start + 1.8, abs=0.25)
    assert words.calls  # heard, since the sure voice ends nothing sooner: the decision can start ahead
    assert SURE.for_question(30) == SURE and SURE.for_question(None) == SURE


def test_a_voice_after_too_little_speech_is_not_trusted(two_clauses):
    audio, pause_start, _ = two_clauses
    first_only = np.concatenate([audio[: round(pause_start * RATE)], silence(4.0)])
    # People pause to plan just after they begin: under short_speech_s the words decide, and wait longer.
    short = TurnTaking(pause_s=0.3, sure_s=0.5, short_speech_s=10.0, short_finished_s=1.2)
    words = counting_words("My mother was a nurse.")
    assert fed(first_only, short, words, FakeTurnModel(1.0)) == pytest.approx(pause_start + 1.2, abs=0.25)
    assert words.calls


def test_a_voice_model_that_fails_leaves_the_pause_to_its_words(two_clauses):
    from agentbank.core.errors import ProviderError

    audio, pause_start, _ = two_clauses
    first_only = np.concatenate([audio[: round(pause_start * RATE)], silence(4.0)])

    def broken(samples):
        raise ProviderError("the end-of-turn model failed (Fail)")

    listener = SURE.listener(FakeTurnModel(broken))
    for end in range(1600, len(first_only) + 1, 1600):
        listener.feed(first_only[end - 1600 : end])
        if listener.needs_voice:
            with pytest.raises(ProviderError):
                listener.hear_voice(first_only[:end])
        if listener.needs_words:
            listener.hear(counting_words("My mother was a nurse."), first_only[:end], 0, [])
        if listener.ended:
            break
    assert end / RATE == pytest.approx(pause_start + 1.2, abs=0.25)


def test_the_voice_model_hears_the_speech_and_exactly_the_pause_after_it(two_clauses):
    audio, pause_start, _ = two_clauses
    first_only = np.concatenate([audio[: round(pause_start * RATE)], silence(4.0)])
    heard: list[np.ndarray] = []
    model = FakeTurnModel(lambda samples: heard.append(samples.copy()) or 0.9)
    listener = SURE.listener(model)
    # The pause is heard late (a busy server), 0.8 s into it: the model still hears 0.3 s of silence,
    # since the silence it hears weighs in its answer.
    late = round((pause_start + 0.8) * RATE)
    listener.feed(first_only[:late])
    assert listener.needs_voice and not listener.needs_words  # the voice first
    assert listener.hear_voice(first_only[:late]) and listener.sure and listener.ended
    (samples,) = heard
    speech_end = listener.speech_end_s
    assert speech_end is not None and abs(speech_end - pause_start) < 0.15
    assert len(samples) == round(speech_end * RATE) + round(0.3 * RATE)
    np.testing.assert_array_equal(samples, first_only[: len(samples)])
    assert listener.sounded == pytest.approx(0.9)
    assert not listener.needs_voice and not listener.needs_words  # heard once; the words not needed


def test_the_voice_model_and_its_threshold_are_settings():
    from agentbank.core.settings import Settings

    assert Settings().end_of_turn_voice == "smart-turn"  # the bank listens to the voice by default
    taking = TurnTaking.of(Settings(end_of_turn_voice="none", end_of_turn_sure_s=0.6, end_of_turn_sure_above=0.7))
    assert (taking.voice, taking.sure_s, taking.sure_above) == (Voice.NONE, 0.6, 0.7)
    assert taking.listener().model is None
    with pytest.raises(ValueError, match="SURE_S"):
        Settings(end_of_turn_sure_s=2.0)  # longer than a finished thought's silence
    with pytest.raises(ValueError, match="sure end"):
        TurnTaking(pause_s=0.3, sure_s=0.2)


@pytest.mark.slow
def test_smart_turn_hears_a_voice_going_on_from_one_that_has_finished():
    """The real model on the corpus's own speech: a sentence cut at its comma sounds unfinished, the same
    sentence spoken to its end sounds finished (each with the 0.3 s of silence it hears at a pause)."""
    from benchmarks.voice_corpus import pieces
    from interviewer.hearing.smart_turn import SmartTurn, features

    model = SmartTurn()
    assert features(silence(1.0)).shape == (1, 80, 800)
    going_on, _ = pieces("We had a small garden, and", "we grew tomatoes and beans every summer.")
    finished = speech("We had a small garden, and we grew tomatoes and beans every summer.")
    for heard, expected in ((going_on, False), (finished, True)):
        probability = model.probability(np.concatenate([silence(0.5), heard, silence(0.3)]))
        assert (probability >= 0.5) is expected, probability

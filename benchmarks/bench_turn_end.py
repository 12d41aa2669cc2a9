"""The end of turn alone, over the corpus the bank makes itself, with the words alone and with Smart Turn
hearing the voice too, in one sitting: how often each cuts into a pause inside a sentence, how often it
misses an end (more than 2 s after the last word), and how long after the last word the turn ends.

Each answer is fed frame by frame (100 ms) as the server hears it (``voice_corpus.listen``: Silero VAD,
Smart Turn at each pause, then Whisper tiny.en unless the voice sounded finished), so the waits are the
end of turn's own, without the time its models take, the server's or the page's (``bench_voice`` has
those). The corpus is made both ways (``voice_corpus.Pieces``): sentences spoken whole and cut where the
pause goes, and pieces spoken apart and joined (harder than people are: the first piece ends as a
finished sentence ends).

The answers that go on after a finished sentence (``voice_corpus.going_on``, pauses of 0.5 to 1.5 s between
two sentences) are heard too: how often the turn was ended between their sentences, a cut-in on the person
as sure as one inside a sentence, though the sentence before it is finished. Smart Turn is heard once more as
the turn is taken after a question that leaves time for a story (``TurnTaking.for_question``).

Run: python -m benchmarks.bench_turn_end [--quick] [--sure-s 0.5 0.8 1.0] (--quick: the corpus in one room,
cut only, in a few minutes; --sure-s: Smart Turn heard with each of these sure waits; the default run, every
room both ways, takes about a quarter of an hour on two cores and is saved, as is a --quick run of several
sure waits).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from rich.console import Console
from rich.table import Table

from benchmarks import voice_corpus
from benchmarks.common import save
from interviewer.hearing.smart_turn import SmartTurn
from interviewer.hearing.transcription import WhisperTranscriber
from interviewer.hearing.turn_end import TurnTaking, Voice


class TimedTurnModel:
    """Smart Turn, its calls counted and timed."""

    def __init__(self) -> None:
        self.inner = SmartTurn()
        self.seconds: list[float] = []

    def probability(self, audio: np.ndarray) -> float:
        began = time.perf_counter()
        try:
            return self.inner.probability(audio)
        finally:
            self.seconds.append(time.perf_counter() - began)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one room, the cut corpus only")
    parser.add_argument("--sure-s", type=float, nargs="+", default=[TurnTaking.sure_s],
                        help="the silences a sure voice waits, each heard over the corpus")  # fmt: skip
    args = parser.parse_args()
    rooms = voice_corpus.QUICK_ROOMS if args.quick else voice_corpus.ROOMS
    ways = (voice_corpus.Pieces.CUT,) if args.quick else tuple(voice_corpus.Pieces)
    console = Console(width=150)
    transcriber = voice_corpus.Counting(WhisperTranscriber(threads=2))
    figures: dict[str, object] = {"rooms": [f"{room} {snr:g} dB" for room, snr in rooms]}
    table = Table("corpus", "end of turn", "answers", "cut-in rate", "missed-end rate",
                  "last word → end of turn p50", "p95", "Smart Turn calls", "ms per call",
                  "went on: ended between sentences")  # fmt: skip
    going_on: list[voice_corpus.Answer] = []
    try:
        for how in ways:
            answers = list(voice_corpus.corpus(rooms, how=how))
            if not going_on:  # spoken after the first corpus, as bench_voice speaks them
                going_on = list(voice_corpus.going_on(rooms))
            for voice, sure_s, story in [(Voice.NONE, TurnTaking.sure_s, False),
                                         *((Voice.SMART_TURN, s, False) for s in args.sure_s),
                                         (Voice.SMART_TURN, TurnTaking.sure_s, True)]:  # fmt: skip
                model = TimedTurnModel() if voice is Voice.SMART_TURN else None
                budget = voice_corpus.STORY_BUDGET_S if story else None
                taking = TurnTaking(voice=voice, sure_s=sure_s).for_question(budget)
                heard = [voice_corpus.listen(answer, transcriber, taking, model=model) for answer in answers]
                waits = [h.ended_s - a.speech_end_s for a, h in zip(answers, heard, strict=True)
                         if h.ended_s is not None and not h.cut_in]  # fmt: skip
                p50, p95 = (float(x) for x in np.percentile(waits, [50, 95]))
                cut_in = sum(h.cut_in for h in heard) / len(heard)
                missed = sum(h.missed_end for h in heard) / len(heard)
                calls = len(model.seconds) if model else 0
                per_call = 1000 * float(np.median(model.seconds)) if model and model.seconds else 0.0
                ended_between = [voice_corpus.listen(answer, transcriber, taking, model=model).cut_between
                                 for answer in going_on] if how is voice_corpus.Pieces.CUT else []  # fmt: skip
                between = sum(ended_between) / len(ended_between) if ended_between else float("nan")
                key = (
                    f"{how}_{voice}"
                    + ("" if sure_s == TurnTaking.sure_s else f"_sure_{sure_s:g}s")
                    + ("_story" if story else "")
                )
                figures[key] = {
                    "answers": len(heard), "cut_in_rate": cut_in, "missed_end_rate": missed,
                    "last_word_to_end_of_turn_p50_s": p50, "last_word_to_end_of_turn_p95_s": p95,
                    "cut_into": [a.name for a, h in zip(answers, heard, strict=True) if h.cut_in],
                    "missed": [a.name for a, h in zip(answers, heard, strict=True) if h.missed_end],
                    "smart_turn_calls": calls, "smart_turn_ms_per_call_median": per_call,
                    "going_on_answers": len(ended_between), "going_on_ended_between_rate": between,
                }  # fmt: skip
                name = (
                    str(voice)
                    + ("" if voice is Voice.NONE or story else f", sure after {sure_s:g} s")
                    + (f", after a story question ({taking.finished_s:g} s)" if story else "")
                )
                table.add_row(str(how), name, str(len(heard)), f"{cut_in:.1%}", f"{missed:.1%}",
                              f"{p50:.2f}", f"{p95:.2f}", str(calls), f"{per_call:.1f}",
                              f"{between:.1%} of {len(ended_between)}" if ended_between else "")  # fmt: skip
    finally:
        transcriber.close()
    console.print(table)
    figures["load_average_1m_after"] = os.getloadavg()[0]
    console.print(f"load average (1 min) at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    if not args.quick or len(args.sure_s) > 1:
        console.print(f"saved to {save('turn-end' + ('-quick' if args.quick else ''), figures)}")
    cut = figures[f"{voice_corpus.Pieces.CUT}_{Voice.SMART_TURN}"]
    assert isinstance(cut, dict)
    print(f"with Smart Turn: last word to end of turn p50 {cut['last_word_to_end_of_turn_p50_s']:.2f} s; "
          f"cut-in rate {100 * cut['cut_in_rate']:.1f}%")  # fmt: skip


if __name__ == "__main__":
    main()

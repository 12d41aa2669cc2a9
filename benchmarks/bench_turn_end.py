"""The end of turn alone, over the corpus the bank makes itself, with the words alone and with Smart Turn
hearing the voice too, in one sitting: how often each cuts into a pause inside a sentence, how often it
misses an end (more than 2 s after the last word), and how long after the last word the turn ends.

Each answer is fed frame by frame (100 ms) as the server hears it (``voice_corpus.listen``: Silero VAD,
Smart Turn at each pause, then Whisper tiny.en unless the voice sounded finished), so the waits are the
end of turn's own, without the time its models take, the server's or the page's (``bench_voice`` has
those). The corpus is made both ways (``voice_corpus.Pieces``): sentences spoken whole and cut where the
pause goes, and pieces spoken apart and joined (harder than people are: the first piece ends as a
finished sentence ends).

Run: python -m benchmarks.bench_turn_end [--quick] (--quick: the corpus in one room, cut only, in a few
minutes; the default run, every room both ways, takes about a quarter of an hour on two cores and is saved).
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
from interviewer.smart_turn import SmartTurn
from interviewer.transcription import WhisperTranscriber
from interviewer.turn_end import TurnTaking, Voice


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
    args = parser.parse_args()
    rooms = voice_corpus.QUICK_ROOMS if args.quick else voice_corpus.ROOMS
    ways = (voice_corpus.Pieces.CUT,) if args.quick else tuple(voice_corpus.Pieces)
    console = Console(width=150)
    transcriber = voice_corpus.Counting(WhisperTranscriber(threads=2))
    figures: dict[str, object] = {"rooms": [f"{room} {snr:g} dB" for room, snr in rooms]}
    table = Table("corpus", "end of turn", "answers", "cut-in rate", "missed-end rate",
                  "last word → end of turn p50", "p95", "Smart Turn calls", "ms per call")  # fmt: skip
    try:
        for how in ways:
            answers = list(voice_corpus.corpus(rooms, how=how))
            for voice in (Voice.NONE, Voice.SMART_TURN):
                model = TimedTurnModel() if voice is Voice.SMART_TURN else None
                taking = TurnTaking(voice=voice)
                heard = [voice_corpus.listen(answer, transcriber, taking, model=model) for answer in answers]
                waits = [h.ended_s - a.speech_end_s for a, h in zip(answers, heard, strict=True)
                         if h.ended_s is not None and not h.cut_in]  # fmt: skip
                p50, p95 = (float(x) for x in np.percentile(waits, [50, 95]))
                cut_in = sum(h.cut_in for h in heard) / len(heard)
                missed = sum(h.missed_end for h in heard) / len(heard)
                calls = len(model.seconds) if model else 0
                per_call = 1000 * float(np.median(model.seconds)) if model and model.seconds else 0.0
                key = f"{how}_{voice}"
                figures[key] = {
                    "answers": len(heard), "cut_in_rate": cut_in, "missed_end_rate": missed,
                    "last_word_to_end_of_turn_p50_s": p50, "last_word_to_end_of_turn_p95_s": p95,
                    "cut_into": [a.name for a, h in zip(answers, heard, strict=True) if h.cut_in],
                    "missed": [a.name for a, h in zip(answers, heard, strict=True) if h.missed_end],
                    "smart_turn_calls": calls, "smart_turn_ms_per_call_median": per_call,
                }  # fmt: skip
                table.add_row(str(how), str(voice), str(len(heard)), f"{cut_in:.1%}", f"{missed:.1%}",
                              f"{p50:.2f}", f"{p95:.2f}", str(calls), f"{per_call:.1f}")  # fmt: skip
    finally:
        transcriber.close()
    console.print(table)
    figures["load_average_1m_after"] = os.getloadavg()[0]
    console.print(f"load average (1 min) at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    if not args.quick:
        console.print(f"saved to {save('turn-end', figures)}")
    cut = figures[f"{voice_corpus.Pieces.CUT}_{Voice.SMART_TURN}"]
    assert isinstance(cut, dict)
    print(f"with Smart Turn: last word to end of turn p50 {cut['last_word_to_end_of_turn_p50_s']:.2f} s; "
          f"cut-in rate {100 * cut['cut_in_rate']:.1f}%")  # fmt: skip


if __name__ == "__main__":
    main()

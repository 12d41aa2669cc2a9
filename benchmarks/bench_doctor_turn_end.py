"""Whether ``agentbank doctor``'s end-of-turn check gives one answer: the probability Smart Turn hears in the
recording shipped with the bank (``interviewer/doctor.py``, ``hear_end_of_turn``), each run in a process of its
own as each doctor runs; and, beside it, what the check heard before, the doctor's question freshly spoken by
Piper (its random numbers seeded afresh in each process) with the bank's first pause after it.

Run: python -m benchmarks.bench_doctor_turn_end [--runs 20] [--no-fresh] (--no-fresh: the shipped recording
only). Each run loads Smart Turn anew (a second or two on two cores; a fresh synthesis loads Piper too).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from typing import Any

from benchmarks.common import save

SHIPPED, FRESH = "shipped", "fresh"


def _heard(kind: str) -> dict[str, Any]:
    """One run, in this process: the probability heard and the check's status."""
    from agentbank.core.settings import Settings
    from agentbank.runtime.doctor import Check
    from interviewer.doctor import hear_end_of_turn

    settings = Settings(end_of_turn_voice="smart-turn")
    if kind == SHIPPED:
        check = Check("speech")
        return {"probability": hear_end_of_turn(check, settings), "status": check.status}
    import numpy as np

    from interviewer.doctor import PROBE
    from interviewer.hearing.smart_turn import SmartTurn
    from interviewer.hearing.transcription import SAMPLE_RATE, decode_audio
    from interviewer.hearing.turn_end import TurnTaking
    from interviewer.speaking.speech import PiperSpeaker

    speaker = PiperSpeaker(threads=1)
    try:
        audio = decode_audio(speaker.synthesize(PROBE).wav)
    finally:
        speaker.close()
    pause = np.zeros(round(TurnTaking.of(settings).pause_s * SAMPLE_RATE), dtype=np.float32)
    probability = SmartTurn().probability(np.concatenate([audio, pause]))
    # The verdict the check gives now, had it heard this.
    return {"probability": probability, "status": "ok" if probability >= settings.end_of_turn_sure_above else "warn"}


def runs(kind: str, count: int) -> dict[str, Any]:
    """``count`` runs of one kind, each in a new process."""
    heard = []
    for _ in range(count):
        out = subprocess.run(
            [sys.executable, "-m", "benchmarks.bench_doctor_turn_end", "--child", kind],
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
        )
        heard.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(f"{kind}: {heard[-1]['probability']:.4f} ({heard[-1]['status']})", flush=True)
    probabilities = [h["probability"] for h in heard]
    return {
        "probabilities": probabilities,
        "statuses": [h["status"] for h in heard],
        "distinct_probabilities": len(set(probabilities)),
        "min": min(probabilities),
        "max": max(probabilities),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-fresh", action="store_true", help="the shipped recording only")
    parser.add_argument("--child", choices=[SHIPPED, FRESH], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_heard(args.child)))
        return
    from interviewer.doctor import RECORDING_PROBABILITY, RECORDING_SHA256, RECORDING_TEXT

    figures: dict[str, Any] = {
        "runs": args.runs,
        "each_run": "a process of its own, Smart Turn loaded anew",
        "recording": {"text": RECORDING_TEXT, "sha256": RECORDING_SHA256, "heard_when_made": RECORDING_PROBABILITY},
        "shipped_recording": runs(SHIPPED, args.runs),
    }
    if not args.no_fresh:
        figures["fresh_synthesis_as_before"] = runs(FRESH, args.runs)
    print(f"saved {save('doctor-turn-end', figures)}")


if __name__ == "__main__":
    main()

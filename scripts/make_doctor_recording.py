"""Make the recording ``agentbank doctor`` plays to the end-of-turn model: a finished question, spoken once.

    python scripts/make_doctor_recording.py [--dry-run]

The doctor checks that Smart Turn hears a finished question as finished. Heard on a fresh synthesis the
answer was a coin (0.08 to 0.96 on five runs of the same question): Piper samples each sound's length and
its pitch's noise from onnxruntime's random numbers, whose seed each process draws afresh, and Smart Turn
hears that difference. Smart Turn itself gives the same probability for the same samples every time (one
thread, see ``interviewer/hearing/smart_turn.py``), so the doctor hears a fixed recording shipped with the bank
(``interviewer/hearing/data/finished.wav``) and gives the same answer every run.

Each candidate question is spoken by the bank's own Piper voice (``PiperSpeaker``, its length scale) under a
few seeds, trimmed of Piper's own silence, given ``LEAD_S`` of silence before it and ``PAUSE_S`` after it (the
pause at which the bank first asks Smart Turn), and written as 16 kHz mono 16-bit WAV. Each is heard with
that pause and with the shorter and longer pauses in ``PAUSES_S``; the recording kept is the one heard most
surely finished at its worst pause, and only if that is at least ``MIN_FINISHED``. The script prints every
candidate's probabilities, then the sha256 and the probability to write into ``interviewer/doctor.py``
(``RECORDING_SHA256``, ``RECORDING_PROBABILITY``). With ``--dry-run`` nothing is written.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "interviewer" / "hearing" / "data" / "finished.wav"
RATE = 16_000
CANDIDATES = (
    "Tell me about the place where you grew up.",
    "What did you do for a living before you retired?",
    "Where did you go to school as a child?",
    "How did you meet your closest friend?",
)
SEEDS = (1, 2, 3, 4, 5, 6)
LEAD_S = 0.25
PAUSE_S = 0.3  # TurnTaking.pause_s: the silence after the last word at which Smart Turn is first asked
PAUSES_S = (0.2, 0.3, 0.5)  # heard at each: a recording heard as finished at one pause only is a coin too
MIN_FINISHED = 0.9
SPEECH_LEVEL = 0.01  # samples quieter than this at either end are Piper's own silence


def spoken(text: str, seed: int) -> np.ndarray:
    """``text`` in the bank's Piper voice under ``seed``, 16 kHz float32, Piper's silence at its ends trimmed."""
    import onnxruntime

    from interviewer.hearing.transcription import decode_audio
    from interviewer.speaking.speech import PiperSpeaker

    onnxruntime.set_seed(seed)  # a session's random operators take their seed when it is made
    speaker = PiperSpeaker(threads=1)
    try:
        audio = decode_audio(speaker.synthesize(text).wav)
    finally:
        speaker.close()
    loud = np.flatnonzero(np.abs(audio) > SPEECH_LEVEL)
    return audio[loud[0] : loud[-1] + 1]


def recording(speech: np.ndarray, pause_s: float) -> np.ndarray:
    """The speech as 16-bit samples, with ``LEAD_S`` of silence before it and ``pause_s`` after it."""
    quiet = np.zeros(round(LEAD_S * RATE), dtype=np.float32)
    after = np.zeros(round(pause_s * RATE), dtype=np.float32)
    whole = np.concatenate([quiet, speech, after])
    return (np.clip(whole, -1.0, 1.0) * 32767.0).astype(np.int16)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="print the candidates' probabilities only")
    args = parser.parse_args()

    from interviewer.hearing.smart_turn import SmartTurn
    from interviewer.speaking.speech import to_wav

    model = SmartTurn()
    best: tuple[float, str, int, np.ndarray] | None = None
    for text in CANDIDATES:
        for seed in SEEDS:
            speech = spoken(text, seed)
            heard = {p: model.probability(recording(speech, p).astype(np.float32) / 32768.0) for p in PAUSES_S}
            worst = min(heard.values())
            print(f"{worst:.3f}  seed {seed}  {len(speech) / RATE:.2f} s  "
                  + "  ".join(f"{p:.1f} s: {v:.3f}" for p, v in heard.items()) + f"  {text}")  # fmt: skip
            if best is None or worst > best[0]:
                best = (worst, text, seed, speech)
    assert best is not None
    worst, text, seed, speech = best
    if worst < MIN_FINISHED:
        sys.exit(f"no candidate was heard finished at every pause (best {worst:.3f}); try other sentences or seeds")
    samples = recording(speech, PAUSE_S)
    wav = to_wav(samples, RATE).wav
    probability = model.probability(samples.astype(np.float32) / 32768.0)
    print(f"kept: {text!r}, seed {seed}, {len(samples) / RATE:.2f} s, {len(wav)} bytes, heard {probability:.4f}")
    print(f'RECORDING_SHA256 = "{hashlib.sha256(wav).hexdigest()}"')
    print(f"RECORDING_PROBABILITY = {probability:.4f}")
    if not args.dry_run:
        OUT.parent.mkdir(exist_ok=True)
        OUT.write_bytes(wav)
        print(f"wrote {OUT.relative_to(OUT.parents[3])}")


if __name__ == "__main__":
    main()

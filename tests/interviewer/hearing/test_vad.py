"""End-of-turn detection on synthesized signals: tone bursts, gaps, noise, clicks, and real speech."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from interviewer.hearing.transcription import decode_audio
from interviewer.hearing.vad import FRAME_S, EndOfTurnDetector

RATE = 16_000
JFK_WAV = Path(__file__).resolve().parents[4] / "shared" / "data" / "audio" / "jfk_inaugural_1961_excerpt_16k_mono.wav"


def signal(*parts: tuple[str, float], noise: float = 0.002, voice: float = 0.3, seed: int = 0) -> np.ndarray:
    """("voice", s) or ("gap", s) parts over steady background noise of amplitude ``noise``."""
    rng = np.random.default_rng(seed)
    pieces = []
    for kind, seconds in parts:
        t = np.arange(round(seconds * RATE)) / RATE
        # A voiced sound: a 150 Hz fundamental and two harmonics, with a syllable-rate wobble.
        tone = np.sin(2 * np.pi * 150 * t) + 0.5 * np.sin(2 * np.pi * 300 * t) + 0.3 * np.sin(2 * np.pi * 450 * t)
        envelope = 0.6 + 0.4 * np.abs(np.sin(2 * np.pi * 4 * t))
        pieces.append(voice * tone * envelope / 1.8 if kind == "voice" else np.zeros_like(t))
    audio = np.concatenate(pieces)
    return (audio + noise * rng.standard_normal(len(audio))).astype(np.float32)


def first_end(detector: EndOfTurnDetector, audio: np.ndarray, chunk: int = 1600) -> float | None:
    """Seconds into ``audio`` at which ``feed`` first said the turn was over (chunk resolution)."""
    for start in range(0, len(audio), chunk):
        if detector.feed(audio[start : start + chunk]):
            return min(start + chunk, len(audio)) / RATE
    return None


def test_a_pause_shorter_than_the_setting_does_not_end_the_turn():
    audio = signal(("gap", 1.0), ("voice", 1.5), ("gap", 1.5), ("voice", 1.0), ("gap", 3.0))
    detector = EndOfTurnDetector(silence_s=2.0)
    ended_at = first_end(detector, audio, chunk=160)
    # The turn ends 2 s after the second burst (which ends at 5.0 s), not in the 1.5 s pause.
    assert ended_at == pytest.approx(7.0, abs=0.1)
    assert detector.speech_end_s == pytest.approx(5.0, abs=FRAME_S * 2)
    assert detector.speech_s == pytest.approx(2.5, abs=0.15)


def test_a_pause_longer_than_the_setting_ends_the_turn_inside_it():
    audio = signal(("gap", 0.5), ("voice", 1.0), ("gap", 2.6), ("voice", 1.0), ("gap", 1.0))
    ended_at = first_end(EndOfTurnDetector(silence_s=2.0), audio, chunk=160)
    assert ended_at == pytest.approx(3.5, abs=0.1)


def test_the_silence_is_configurable():
    audio = signal(("gap", 0.5), ("voice", 1.0), ("gap", 1.5), ("voice", 1.0), ("gap", 4.0))
    assert first_end(EndOfTurnDetector(silence_s=1.0), audio, chunk=160) == pytest.approx(2.5, abs=0.1)
    assert first_end(EndOfTurnDetector(silence_s=3.0), audio, chunk=160) == pytest.approx(7.0, abs=0.1)


def test_no_speech_never_ends_a_turn():
    detector = EndOfTurnDetector()
    assert first_end(detector, signal(("gap", 10.0))) is None
    assert not detector.speech_started and detector.speech_end_s is None
    assert detector.trailing_silence_s == pytest.approx(10.0, abs=FRAME_S)
    assert first_end(EndOfTurnDetector(), np.zeros(5 * RATE, dtype=np.float32)) is None


def test_a_click_or_cough_alone_is_not_a_turn():
    audio = signal(("gap", 1.0), ("voice", 0.1), ("gap", 4.0), noise=0.002, voice=0.8)
    detector = EndOfTurnDetector(silence_s=2.0)
    assert first_end(detector, audio) is None
    assert not detector.speech_started


def test_steady_loud_noise_becomes_the_floor():
    # A fan at about -30 dBFS from the start: its frames must not count as speech, and the
    # gaps between words in it must count as silence.
    audio = signal(("gap", 3.0), ("voice", 1.5), ("gap", 1.0), ("voice", 1.0), ("gap", 3.0), noise=0.03, voice=0.5)
    detector = EndOfTurnDetector(silence_s=2.0)
    assert first_end(detector, audio, chunk=160) == pytest.approx(8.5, abs=0.15)
    assert detector.speech_s == pytest.approx(2.5, abs=0.2)


def test_a_dropout_in_the_noise_does_not_make_the_noise_speech():
    # Browsers sometimes deliver a few all-zero frames; the fan after them is still not speech.
    audio = signal(("gap", 2.0), ("voice", 1.0), ("gap", 3.0), noise=0.03, voice=0.5)
    audio[int(0.5 * RATE) : int(0.56 * RATE)] = 0.0
    detector = EndOfTurnDetector(silence_s=2.0)
    assert first_end(detector, audio, chunk=160) == pytest.approx(5.0, abs=0.15)
    assert detector.speech_s == pytest.approx(1.0, abs=0.15)


def test_quiet_speech_in_a_quiet_room_is_heard():
    audio = signal(("gap", 1.0), ("voice", 1.0), ("gap", 2.5), noise=0.0005, voice=0.02)
    assert first_end(EndOfTurnDetector(silence_s=2.0), audio, chunk=160) == pytest.approx(4.0, abs=0.1)


@pytest.mark.parametrize("chunk", [1, 333, 480, 16_000, 200_000])
def test_chunk_size_does_not_change_the_decision(chunk):
    audio = signal(("gap", 1.0), ("voice", 1.0), ("gap", 1.0), ("voice", 0.5), ("gap", 2.5))
    whole = EndOfTurnDetector()
    whole.feed(audio)
    pieces = EndOfTurnDetector()
    for start in range(0, len(audio), chunk):
        pieces.feed(audio[start : start + chunk])
    assert pieces.ended and whole.ended
    assert (pieces.speech_end_s, pieces.speech_s) == (whole.speech_end_s, whole.speech_s)


def test_int16_pcm_is_heard_like_float():
    audio = signal(("gap", 1.0), ("voice", 1.0), ("gap", 2.5))
    as_float, as_int = EndOfTurnDetector(), EndOfTurnDetector()
    as_float.feed(audio)
    as_int.feed((audio * 32767).astype(np.int16))
    assert as_int.ended and as_int.speech_end_s == as_float.speech_end_s


def test_reset_starts_a_new_turn():
    detector = EndOfTurnDetector()
    assert detector.feed(signal(("gap", 0.5), ("voice", 1.0), ("gap", 2.5)))
    detector.reset()
    assert not detector.ended and not detector.speech_started
    assert not detector.feed(signal(("gap", 3.0)))


def test_thinking_pauses_in_real_speech_are_tolerated():
    speech = decode_audio(JFK_WAV.read_bytes())  # 11 s with pauses of up to about a second
    audio = np.concatenate([speech, np.zeros(3 * RATE, dtype=np.float32)])
    assert first_end(EndOfTurnDetector(silence_s=2.0), audio) == pytest.approx(13.0, abs=0.15)
    # A hasty setting would have cut the speaker off in the middle.
    assert first_end(EndOfTurnDetector(silence_s=0.5), audio) < 6.0


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="silence_s"):
        EndOfTurnDetector(silence_s=0)

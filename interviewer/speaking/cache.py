"""Scripted speech rendered once: the opening, questions and closing of a script version, kept as WAV files.

Every participant hears the same scripted sentences, so synthesizing them per request put seconds
of silence on the critical path for nothing. Only sentences of the script are kept: a follow-up may
quote what a participant said, and their words are never written anywhere unencrypted.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import threading
import wave
from functools import lru_cache
from pathlib import Path

from interviewer.session.script import Script
from interviewer.speaking.speech import Speaker, Speech, split_sentences

logger = logging.getLogger(__name__)


# Said at once when an answer ends, while the interviewer decides what to ask next: the person hears
# that they were heard within a moment, not seconds of silence.
ACKNOWLEDGEMENT = "Thank you."
# The sound of listening at a likely end of an answer (``hearing.turn_end``), said while the person may go on.
BACKCHANNEL = "Mm-hm."


def scripted_sentences(script: Script) -> frozenset[str]:
    """Every sentence the script itself says: the opening, each question, the closing."""
    return _sentences_of(script.model_dump_json())


@lru_cache(maxsize=16)
def _sentences_of(script_json: str) -> frozenset[str]:
    # Keyed by the script's text, so each script version is split once per process.
    script = Script.model_validate_json(script_json)
    texts = [script.opening, script.closing, *(question.text for _, question in script.questions())]
    said = (sentence for text in texts for sentence in split_sentences(text))
    return frozenset({ACKNOWLEDGEMENT, BACKCHANNEL, *said})


class SpeechCache:
    """Scripted sentences' speech on disk, one WAV per voice and sentence; safe across threads and processes."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def _path(self, speaker: Speaker, sentence: str) -> Path:
        key = hashlib.sha256(f"{speaker.name}\n{sentence}".encode()).hexdigest()
        return self.directory / key[:2] / f"{key}.wav"

    def speak(self, speaker: Speaker, sentence: str, scripted: frozenset[str]) -> Speech:
        """The sentence spoken: from the cache when it is scripted and was rendered before."""
        if sentence not in scripted:
            return speaker.synthesize(sentence)
        path = self._path(speaker, sentence)
        try:
            wav = path.read_bytes()
        except FileNotFoundError:
            pass
        else:
            with self._lock:
                self.hits += 1
            return _speech(wav)
        speech = speaker.synthesize(sentence)
        with self._lock:
            self.misses += 1
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Written beside and renamed, so another process never reads half a file.
            partial = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.part")
            partial.write_bytes(speech.wav)
            partial.replace(path)
        except OSError as exc:
            logger.warning("could not keep scripted speech (%s); it will be synthesized again", exc)
        return speech


def _speech(wav: bytes) -> Speech:
    """A cached WAV as ``Speech``."""
    with wave.open(io.BytesIO(wav), "rb") as source:
        rate, frames = source.getframerate(), source.getnframes()
    return Speech(wav=wav, sample_rate=rate, duration_s=frames / rate)

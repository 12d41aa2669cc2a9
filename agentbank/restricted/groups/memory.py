"""What a seat remembers of the discussion: a memory stream of the group, retrieved as in Generative Agents.

Every turn a seat heard is an observation: the moderator's words, the others' released utterances, its own,
a silence, a seat leaving. When the seat is spoken to, observations are scored by recency (an exponential
decay over the turns since), importance and relevance (cosine similarity of the embedded observation and the
moderator's words), each scaled to [0, 1] over the stream and summed with equal weights (Park et al. 2023);
the best are kept within a word budget and shown in the order they were said. The utterance a probe follows
up is always kept.

Importance is rated by rule, not by the model (Park et al. ask the model for a 1–10 poignancy per memory):
a group's observations are few and alike in kind, and a rating call per observation and seat would triple a
group's calls. The rule: what was said to this seat, and what it said, weigh most; others' longer answers
more than short ones; a silence least.

Nothing here is stored: the stream is rebuilt from the stored turns at each step, so a withdrawn seat's
words (no longer readable) are gone from every other seat's memory at once, and a resumed run remembers as
the first did. Vectors are kept per process, by text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from agentbank.providers.embeddings import Embedder
from agentbank.restricted.groups.moderator import line
from agentbank.restricted.groups.storage import Spoken

DECAY = 0.9  # recency per turn since
WORD_BUDGET = 350  # words of the discussion a seat is shown
CACHE_TEXTS = 4096


@dataclass(frozen=True)
class Observation:
    """A turn as one seat remembers it."""

    number: int
    text: str
    importance: float  # 1..10


def importance(turn: Spoken, seat: int) -> float:
    """How much the turn weighs for ``seat`` (see the module's docstring)."""
    if turn.kind == "moderator":
        return 8.0 if turn.seat == seat else 5.0 if turn.action in ("question", "open") else 4.0
    if turn.kind == "agent":
        return 7.0 if turn.seat == seat else 4.0 + min(3.0, len((turn.text or "").split()) / 30)
    return 3.0 if turn.kind == "left" else 1.0


def observations(spoken: Sequence[Spoken], seat: int) -> list[Observation]:
    """The seat's stream: every turn it heard that can still be read."""
    out = []
    for turn in spoken:
        text = line(turn)
        if text is not None:
            mine = turn.kind == "agent" and turn.seat == seat
            out.append(
                Observation(
                    turn.number, text.replace(f"] Seat {seat}:", "] You:") if mine else text, importance(turn, seat)
                )
            )
    return out


def _scaled(values: np.ndarray) -> np.ndarray:
    spread = float(values.max() - values.min()) if len(values) else 0.0
    return (values - values.min()) / spread if spread > 0 else np.ones_like(values)


class Stream:
    """Retrieval over a group's streams with one embedder (vectors cached by text)."""

    def __init__(self, embedder: Embedder, word_budget: int = WORD_BUDGET) -> None:
        self._embedder = embedder
        self._budget = word_budget
        self._vectors: dict[str, np.ndarray] = {}

    def _embed(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            if len(self._vectors) > CACHE_TEXTS:
                self._vectors.clear()
            for text, vector in zip(missing, self._embedder.embed(missing), strict=True):
                self._vectors[text] = np.asarray(vector, dtype=np.float32)
        return np.stack([self._vectors[t] for t in texts])

    def recall(self, stream: Sequence[Observation], query: str, now: int, keep: Sequence[int] = ()) -> str:
        """The observations worth showing for ``query`` at turn ``now``, in the order they were said."""
        if not stream:
            return ""
        vectors = self._embed([o.text for o in stream])
        asked = self._embed([query])[0]
        relevance = vectors @ asked / np.maximum(np.linalg.norm(vectors, axis=1) * np.linalg.norm(asked), 1e-9)
        recency = np.array([DECAY ** (now - o.number) for o in stream])
        weight = np.array([o.importance for o in stream])
        score = _scaled(recency) + _scaled(weight) + _scaled(relevance)
        chosen: set[int] = {i for i, o in enumerate(stream) if o.number in keep}
        words = sum(len(stream[i].text.split()) for i in chosen)
        for i in np.argsort(-score, kind="stable"):
            size = len(stream[int(i)].text.split())
            if int(i) not in chosen and words + size <= self._budget:
                chosen.add(int(i))
                words += size
        return "\n".join(stream[i].text for i in sorted(chosen))

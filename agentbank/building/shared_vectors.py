"""Embeddings of the texts that are the same for every agent, computed once per process.

Answering embeds each asked item's question to choose its expert and to steer retrieval from the
agent's memory, for every agent it asks. On the local embedder that was about 90% of a worker's CPU
per call, spent on the same few texts again and again. Those texts come from instruments and from
the researcher's question, never from a participant, so one vector serves every agent. Participant
text (transcript chunks, reflections) never passes through here: it is private and differs per
person, and it is embedded once, at build time, anyway.

The cache is bounded (least recently used first out), so a long-running worker's memory stays flat
whatever instruments it sees, and kept per embedder object, so two models never share vectors.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from agentbank.providers.embeddings import Embedder

# How answering chooses the turns it shows when an interview is longer than the memory budget (see
# ``query_vector``). Answers depend on it, so it is part of their cache key: a new way of choosing
# gets new answers, not the old ones from the cache.
RETRIEVAL = "each-item-mean"
# 4,096 vectors of 384 floats is about 6 MiB: every GSS item and every expert many times over.
CAPACITY = 4096


class SharedVectors:
    """A bounded, thread-safe cache of text embeddings, per embedder."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._lock = threading.Lock()
        self._by_embedder: weakref.WeakKeyDictionary[Embedder, OrderedDict[str, np.ndarray]] = (
            weakref.WeakKeyDictionary()
        )

    def embed(self, embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
        """The vectors of ``texts`` (one row each), embedding in one batch only those not seen before."""
        if not texts:
            return np.zeros((0, embedder.dimension), dtype=np.float32)
        with self._lock:
            vectors = self._by_embedder.setdefault(embedder, OrderedDict())
            found = {}
            for text in texts:
                if text in vectors:
                    vectors.move_to_end(text)
                    found[text] = vectors[text]
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            # Outside the lock: a model call may take a while, and another thread's texts need not wait.
            fresh = embedder.embed(missing)
            with self._lock:
                for text, vector in zip(missing, fresh, strict=True):
                    # A copy of the row, not a view: a view keeps its whole batch alive for as long
                    # as any one of its rows is held, and memory would grow past the bound.
                    vectors[text] = found[text] = np.array(vector, copy=True)
                while len(vectors) > self.capacity:
                    vectors.popitem(last=False)
        return np.stack([found[text] for text in texts])

    def texts(self, embedder: Embedder) -> list[str]:
        """The texts whose vectors are held for ``embedder``, least recently used first (to audit what is kept)."""
        with self._lock:
            return list(self._by_embedder.get(embedder, ()))


_SHARED = SharedVectors()


def shared_vectors(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """The vectors of texts that are the same for every agent (item questions, questions asked)."""
    return _SHARED.embed(embedder, texts)


def shared_texts(embedder: Embedder) -> list[str]:
    """The texts this process holds shared vectors of for ``embedder``: never a participant's words."""
    return _SHARED.texts(embedder)


def query_vector(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """One retrieval query for several asked texts: the mean of their unit vectors, made unit again.

    Each text is embedded on its own, within the embedder's window; a query that joined them would
    be cut at the window, and only the first items would steer what the agent remembers.
    """
    mean = shared_vectors(embedder, texts).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm > 0 else mean

"""An agent's memory of its interview: chunks for retrieval, and the passages a prompt shows.

Chunks are the unit of retrieval (about 180 words, the embedder's window); what a prompt shows is
always rendered from the transcript's turns, numbered, so answers can cite turns and an ablated
transcript drops turns rather than half-chunks.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from agentbank.building.transcripts import TurnText
from agentbank.db.models import Memory
from agentbank.keys.crypto import Cipher

CHUNK_WORDS = 180
TOKENS_PER_WORD = 1.35  # English prose through a BPE tokenizer; used only to size prompts


@dataclass(frozen=True)
class Chunk:
    """Consecutive turns (or part of one long turn) to embed as one memory."""

    first_turn: int
    last_turn: int
    text: str

    @property
    def words(self) -> int:
        """Words in the chunk."""
        return len(self.text.split())


def render_turn(turn: TurnText) -> str:
    """A turn as prompts show it: numbered, with its speaker."""
    return f"[{turn.position}] {turn.speaker.capitalize()}: {turn.text}"


def chunk_turns(turns: Sequence[TurnText], max_words: int = CHUNK_WORDS) -> list[Chunk]:
    """Group consecutive turns into chunks of at most ``max_words``; split longer turns."""
    chunks: list[Chunk] = []
    lines: list[str] = []
    span: list[int] = []
    count = 0

    def flush() -> None:
        nonlocal lines, span, count
        if lines:
            chunks.append(Chunk(span[0], span[-1], "\n".join(lines)))
        lines, span, count = [], [], 0

    for turn in turns:
        words = render_turn(turn).split()
        if len(words) > max_words:
            flush()
            for start in range(0, len(words), max_words):
                chunks.append(Chunk(turn.position, turn.position, " ".join(words[start : start + max_words])))
            continue
        if count + len(words) > max_words:
            flush()
        lines.append(" ".join(words))
        span.append(turn.position)
        count += len(words)
    flush()
    return chunks


def ablate(turns: Sequence[TurnText], fraction: float, seed: int) -> list[TurnText]:
    """The transcript with a seeded random ``fraction`` of its turns removed (rounded to whole turns)."""
    if not 0.0 <= fraction <= 1.0:
        raise ValueError("the ablated fraction must lie between 0 and 1")
    rng = random.Random(seed)  # noqa: S311 - reproducible sampling, not security
    removed = set(rng.sample(range(len(turns)), round(fraction * len(turns))))
    return [turn for index, turn in enumerate(turns) if index not in removed]


def estimate_tokens(text: str) -> int:
    """A conservative token count for sizing prompts."""
    return int(len(text.split()) * TOKENS_PER_WORD) + 1


def seal_vector(cipher: Cipher, vector: np.ndarray) -> bytes:
    """A passage's embedding sealed with its participant's key (an embedding can be inverted into much of
    the text it came from, so it is kept like the text)."""
    return cipher.seal_bytes(np.asarray(vector, dtype=np.float32).tobytes())


def ranked_chunk_spans(
    session: Session, agent_id: uuid.UUID, cipher: Cipher, query: np.ndarray
) -> list[tuple[int, int]]:
    """The agent's chunks, nearest to ``query`` first, as (first_turn, last_turn) spans.

    An exact scan of one agent's few hundred chunks, in memory: their vectors are opened with the
    participant's key, and the cosine distance is taken here rather than in the database.
    """
    rows = session.execute(
        select(Memory.first_turn, Memory.last_turn, Memory.embedding_encrypted)
        .where(Memory.agent_id == agent_id, Memory.kind == "chunk")
        .order_by(Memory.position)
    ).all()
    spans = [(first, last) for first, last, _ in rows]
    if not rows:
        return []
    vectors = np.stack([np.frombuffer(cipher.open_bytes(blob), dtype=np.float32) for _, _, blob in rows])
    norms = np.linalg.norm(vectors, axis=1) * (np.linalg.norm(query) or 1.0)
    distance = 1.0 - (vectors @ np.asarray(query, dtype=np.float32)) / np.where(norms > 0, norms, 1.0)
    order = np.argsort(distance, kind="stable")  # ties keep the transcript's order
    return [spans[i] for i in order if spans[i][0] is not None and spans[i][1] is not None]


def fits(turns: Sequence[TurnText], token_budget: int) -> bool:
    """Whether every turn fits in the budget, so no retrieval is needed."""
    return sum(estimate_tokens(render_turn(t)) for t in turns) <= token_budget


def select_turns(
    turns: Sequence[TurnText], spans: Sequence[tuple[int, int]] | None, token_budget: int
) -> list[TurnText]:
    """The turns a prompt shows: all of them when they fit, else the best-ranked spans that fit.

    Selected turns are returned in transcript order, so the passage reads as the interview did.
    """
    if spans is None or fits(turns, token_budget):
        chosen = list(turns)
        while chosen and sum(estimate_tokens(render_turn(t)) for t in chosen) > token_budget:
            chosen.pop()  # no ranking available: keep the beginning
        return chosen
    by_position = {t.position: t for t in turns}
    picked: dict[int, TurnText] = {}
    used = 0
    for first, last in spans:
        span_turns = [by_position[p] for p in range(first, last + 1) if p in by_position and p not in picked]
        cost = sum(estimate_tokens(render_turn(t)) for t in span_turns)
        if used + cost > token_budget:
            continue
        picked.update((t.position, t) for t in span_turns)
        used += cost
    return [picked[p] for p in sorted(picked)]

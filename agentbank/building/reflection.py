"""Expert reflection (Park et al. 2024): four disciplines each write notes about the interviewee.

The excerpt comes first and the expert's instruction last, so the four passes over one excerpt share
their prompt prefix and the model evaluates the excerpt once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial

import numpy as np

from agentbank.building.memory import Chunk
from agentbank.building.shared_vectors import shared_vectors
from agentbank.core.errors import TruncatedOutputError
from agentbank.core.prompts.files import prompt
from agentbank.providers.chat import ChatModel, ChatRequest, ChatResult, Message, Usage
from agentbank.providers.embeddings import Embedder
from agentbank.providers.in_flight import InFlight


@dataclass(frozen=True)
class Expert:
    """A discipline whose notes join the prompt for the items it knows best."""

    key: str
    title: str
    focus: str
    # Words of the questions this expert knows best; with the focus, they place items near the expert.
    keywords: str


EXPERTS = (
    Expert(
        "psychologist",
        "a psychologist",
        "personality, emotions, happiness and stress, relationships, family, faith and personal values",
        "happy happiness life feel feelings stress health marriage family friends religion God pray church faith "
        "personality values satisfied",
    ),
    Expert(
        "economist",
        "a behavioral economist",
        "money, work and income, financial decisions, risk, fairness, trust and cooperation with strangers",
        "money income dollars job work pay wages saving financial business risk trust fair fairness cooperate "
        "share give keep invest price cost",
    ),
    Expert(
        "political_scientist",
        "a political scientist",
        "politics and government, parties and elections, laws, rights and liberties, crime, public spending",
        "government federal spending nation country politics political party president election vote law laws "
        "courts police crime death penalty murder gun permit abortion rights liberties speech immigration military "
        "welfare taxes",
    ),
    Expert(
        "demographer",
        "a demographer",
        "age, household and family structure, education, occupation, place of living, race, class and migration",
        "age born years household education degree school occupation live region city race ethnicity class parents "
        "married children number",
    ),
)
EXPERT_KEYS = tuple(e.key for e in EXPERTS)
MIN_OBSERVATIONS, MAX_OBSERVATIONS = 5, 20
OBSERVATION_CHARS = 160
REFLECTION_MAX_TOKENS = 1800
ATTEMPTS = 3


def complete_structured(
    chat: ChatModel, messages: list[Message], schema: dict, *, max_tokens: int, seed: int
) -> ChatResult:
    """A sampled structured answer; when a small model rambles past max_tokens, sample again.

    Non-ASCII text can cost several tokens a character, so no max_tokens bounds every valid answer
    of a long free-text schema; a fresh seed almost always ends in time.
    """
    for attempt in range(ATTEMPTS):
        try:
            # Greedy decoding makes small models loop on one sentence, hence sampling.
            request = ChatRequest(messages, schema, temperature=0.7, max_tokens=max_tokens, seed=seed + attempt)
            return chat.complete(request)
        except TruncatedOutputError:
            if attempt == ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def observations_schema(minimum: int = MIN_OBSERVATIONS) -> dict:
    """Between 5 and 20 one-sentence observations."""
    return {
        "type": "object",
        "properties": {
            "observations": {
                "type": "array",
                "items": {"type": "string", "minLength": 10, "maxLength": OBSERVATION_CHARS},
                "minItems": minimum,
                "maxItems": MAX_OBSERVATIONS,
            }
        },
        "required": ["observations"],
        "additionalProperties": False,
    }


def reflect(
    chat: ChatModel,
    windows: Sequence[Sequence[Chunk]],
    *,
    seed: int = 0,
    max_tokens: int = REFLECTION_MAX_TOKENS,
    on_step: Callable[[str], None] = lambda _step: None,
    in_flight: InFlight | None = None,
) -> tuple[dict[str, list[str]], Usage]:
    """Each expert's observations over the excerpt windows, merged to at most 20 per expert.

    The passes are independent, so they run within ``in_flight`` (the process's calls in flight; one at a
    time without it), and their notes are merged in the same order whichever returns first. ``on_step``
    hears of each pass as it starts (the expert, and the window when there are several).
    """
    passes = []
    for n, window in enumerate(windows, 1):
        excerpt = "\n".join(chunk.text for chunk in window)
        system = f"{prompt('reflect_system')}\n\n## Interview\n{excerpt}"
        for expert in EXPERTS:
            step = f"reflection by {expert.title}" + (f", window {n} of {len(windows)}" if len(windows) > 1 else "")
            passes.append(partial(_reflect_once, chat, system, expert, step, on_step, max_tokens, seed))
    results = (in_flight or InFlight()).run_all(passes)
    notes: dict[str, list[str]] = {e.key: [] for e in EXPERTS}
    usage = Usage()
    for expert_key, result in results:
        usage += result.usage
        notes[expert_key].extend(" ".join(o.split()) for o in result.data["observations"])
    return {key: _merge(values) for key, values in notes.items()}, usage


def _reflect_once(
    chat: ChatModel, system: str, expert: Expert, step: str, on_step: Callable[[str], None], max_tokens: int,
    seed: int,
) -> tuple[str, ChatResult]:  # fmt: skip
    on_step(step)
    instruction = prompt("reflect").format(expert_title=expert.title, expert_focus=expert.focus)
    messages: list[Message] = [{"role": "system", "content": system}, {"role": "user", "content": instruction}]
    return expert.key, complete_structured(chat, messages, observations_schema(), max_tokens=max_tokens, seed=seed)


def _merge(observations: list[str]) -> list[str]:
    """Drop repeats and fragments of earlier notes (small models repeat themselves); keep at most 20."""
    unique: list[str] = []
    for note in observations:
        if len(note) >= 20 and not any(note.lower() in kept.lower() for kept in unique):
            unique.append(note)
    if len(unique) <= MAX_OBSERVATIONS:
        return unique
    step = len(unique) / MAX_OBSERVATIONS
    return [unique[int(i * step)] for i in range(MAX_OBSERVATIONS)]


def select_windows(chunks: Sequence[Chunk], word_budget: int, window_words: int = 3000) -> list[list[Chunk]]:
    """The chunks to reflect on, grouped into windows that fit one prompt.

    With a budget, chunks are taken evenly across the whole interview, so every part of a life is
    represented; 0 means every chunk.
    """
    chosen = list(chunks)
    total = sum(c.words for c in chunks)
    if word_budget and total > word_budget:
        keep = max(1, round(len(chunks) * word_budget / total))
        step = len(chunks) / keep
        chosen = [chunks[int(i * step)] for i in range(keep)]
    windows: list[list[Chunk]] = [[]]
    for chunk in chosen:
        if windows[-1] and sum(c.words for c in windows[-1]) + chunk.words > window_words:
            windows.append([])
        windows[-1].append(chunk)
    return [w for w in windows if w]


@lru_cache(maxsize=8)
def _expert_vectors(embedder: Embedder) -> np.ndarray:
    # One embedding of the experts per embedder, not one per engine (engines live one task long).
    return embedder.embed([f"{e.title}: {e.focus}. {e.keywords}" for e in EXPERTS])


class ExpertChooser:
    """Chooses the expert for an item: a declared one, else the nearest by embedding."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._experts = _expert_vectors(embedder)

    def choose(self, text: str, declared: str | None = None) -> str:
        """The key of the expert whose field is nearest to ``text``."""
        if declared in EXPERT_KEYS:
            return declared  # type: ignore[return-value]
        scores = self._experts @ shared_vectors(self._embedder, [text])[0]
        return EXPERTS[int(np.argmax(scores))].key

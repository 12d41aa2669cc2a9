"""The shape of the engine's model calls: what each records, and how several items share one."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, replace
from typing import Any

from agentbank.consultation.answering.conditions import Condition
from agentbank.db.models import Agent
from agentbank.instruments.model import Instrument, Item
from agentbank.providers.chat import Usage


@dataclass(frozen=True)
class Call:
    """The parts of one model call that every answer it produces records."""

    condition: Condition
    sampling: dict[str, Any]
    seed: int
    expert: str | None
    order_seed: int | None = None  # multi-item calls: the seed their item order was shuffled with

    def at(self, position: int, size: int) -> Call:
        """The call as one of its answers records it: with where the item stood, when order was shuffled."""
        if self.order_seed is None:
            return self
        placed = {"order_seed": self.order_seed, "position": position, "asked_with": size}
        return replace(self, sampling={**self.sampling, **placed})


def order_seed(agent: Agent, seed: int) -> int:
    """A seed of the item order for one agent: the same on every run, different between people."""
    return int.from_bytes(hashlib.sha256(f"{agent.id}:{seed}".encode()).digest()[:4], "big")


def shuffled(items: list[Item], seed: int) -> list[Item]:
    """Items in a seeded random order, so that where an item stands in a multi-item call cannot pass
    for something about the person (a model that answers by position gives each person other codes,
    which the evaluation's shuffle control then exposes)."""
    order = list(items)
    random.Random(seed).shuffle(order)  # noqa: S311 - a reproducible order, not a secret
    return order


def item_target(instrument: Instrument, item: Item) -> dict[str, str]:
    return {"instrument": instrument.key, "item": item.key, "version": item.version}


def split_usage(usage: Usage, parts: int) -> list[Usage]:
    """A multi-item call's tokens shared among its items (the remainder goes to the first)."""

    def split(total: int) -> list[int]:
        share, rest = divmod(total, parts)
        return [share + (rest if i == 0 else 0) for i in range(parts)]

    return [
        Usage(p, c, g)
        for p, c, g in zip(
            split(usage.prompt_tokens), split(usage.cached_tokens), split(usage.completion_tokens), strict=True
        )
    ]

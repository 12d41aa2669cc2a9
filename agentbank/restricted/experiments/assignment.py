"""Randomization: seeded, balanced and recorded, the same for the same agents and seed wherever it runs.

Between subjects, the agents (in a fixed order, whatever order they were named in) are shuffled by the
seed and dealt to the arms in turn, so arm sizes differ by at most one. Within subjects, every agent
takes every arm, in an order the seed draws for that agent, each order used about equally often.
"""

from __future__ import annotations

import hashlib
import random
import uuid
from collections.abc import Iterable
from itertools import permutations

from agentbank.restricted.experiments.model import Design, Experiment


def assign(experiment: Experiment, agents: Iterable[uuid.UUID], seed: int) -> dict[uuid.UUID, tuple[str, ...]]:
    """Each agent's arms, in the order it takes them (one arm between subjects)."""
    ordered = sorted(set(agents), key=str)
    draw = random.Random(_seed(experiment, seed))  # noqa: S311 - a reproducible assignment, not a secret
    draw.shuffle(ordered)
    arms = [arm.key for arm in experiment.arms]
    if experiment.design is Design.BETWEEN:
        offset = draw.randrange(len(arms))  # which arm gets the extra agent is drawn too
        return {agent: (arms[(n + offset) % len(arms)],) for n, agent in enumerate(ordered)}
    orders = list(permutations(arms))
    draw.shuffle(orders)
    return {agent: orders[n % len(orders)] for n, agent in enumerate(ordered)}


def _seed(experiment: Experiment, seed: int) -> int:
    # Not the version: a job's arms are read back with its results, and a reworded stimulus must not move them.
    text = f"{experiment.key}:{','.join(arm.key for arm in experiment.arms)}:{seed}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")

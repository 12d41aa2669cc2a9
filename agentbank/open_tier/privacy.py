"""The open tier's protection: every released figure carries Gaussian noise, under a budget stated per release.

Why this mechanism. A release's tables are counts of agents' answers by demographic group. Thresholds on
who joined or left cannot stop an attacker who controls some participants: withdrawing nine of them with
a victim, then subtracting their known answers, left the victim's answers in every table that differs.
Cell-key perturbation (the same contributors always get the same noise) fails the same attack in another
way: the cells the victim was not in keep their exact noise, so the one cell that changed is theirs, and
the victim's answer sits in dozens of tables (overall, by each breakdown, by each pair) whose independent
perturbations average away. Differential privacy bounds what any attacker learns, whoever else they know
and however many tables they combine: here the discrete Gaussian mechanism of OpenDP (a maintained
library that samples exactly, with no floating-point leaks), accounted in zero-concentrated DP.

The budget. ``mu`` is the guarantee per answer and per release, in Gaussian DP: to anyone who knows every
other record, one release makes a person's answer to an item about as distinguishable from any other answer
as two unit Gaussians ``mu`` apart. It is split (as shares of ``mu**2``) over the tables that hold the answer:
the overall table, one table per breakdown, one per pair of breakdowns, their weighted totals and the item's
validity figures. A person in ``r`` releases has spent ``mu * sqrt(r)``; the ledger keeps it, and a member
whose lifetime budget would be passed is left out of the next release. What is not protected per answer:
a person's demographic categories (the breakdowns are how tables are cut, and an attacker is assumed to know
them) and their membership with all their answers at once (``rho_per_person`` says how much that costs).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import Any, Protocol

import numpy as np
import opendp.prelude as dp

from agentbank.open_tier.weighting.targets import RAKED

dp.enable_features("contrib")  # the discrete Gaussian on vectors is a contributed measurement

MECHANISM = "discrete Gaussian noise (OpenDP), accounted in zero-concentrated differential privacy"
# How the guarantee per answer is shared out, as fractions of mu**2.
SHARES = {"overall": 0.10, "one_way": 0.40, "two_way": 0.10, "weighted": 0.30, "validity": 0.10}
MARGIN_SCALE = 3.0  # noise on the member counts the weights come from (membership, not an answer)
MEMBERS_SCALE = 3.0  # noise on the number of members a release states


@dataclass(frozen=True)
class Budget:
    """What one release may spend on each answer, and what a member may spend over every release."""

    mu: float = 1.0
    lifetime_mu: float = 5.0
    weight_cap: float = 2.0  # weights are kept within [1/cap, cap], which bounds one person's weighted share

    def releases_per_member(self) -> int:
        """How many releases one member can be in before their lifetime budget is spent."""
        return max(1, math.floor((self.lifetime_mu / self.mu) ** 2 + 1e-9))


@dataclass(frozen=True)
class Scales:
    """The noise (standard deviation) of each kind of released figure."""

    overall: float
    one_way: float
    two_way: float
    weighted: float
    validity: float
    margins: float = MARGIN_SCALE
    members: float = MEMBERS_SCALE

    @classmethod
    def of(cls, budget: Budget, dimensions: int) -> Scales:
        """Scales that spend exactly ``budget.mu`` per answer over ``dimensions`` breakdowns.

        Changing one person's answer to an item moves one count from one code to another in each of the
        item's tables (a squared change of 2), their weight in each weighted table (2·cap²), and their
        agent's right/wrong, their own repeat and the baseline's right/wrong in the validity figures (3).
        A kind of table with squared change ``d2`` and ``n`` tables costs ``n·d2/sigma**2`` of ``mu**2``.
        """
        mu2, pairs = budget.mu**2, dimensions * (dimensions - 1) // 2

        def sigma(kind: str, tables: int, change: float) -> float:
            return math.sqrt(tables * change / (SHARES[kind] * mu2))

        return cls(
            overall=sigma("overall", 1, 2),
            one_way=sigma("one_way", max(dimensions, 1), 2),
            two_way=sigma("two_way", max(pairs, 1), 2),
            weighted=sigma("weighted", dimensions + 1, 2 * budget.weight_cap**2),
            validity=sigma("validity", 1, 3),
        )


@dataclass(frozen=True)
class Ledger:
    """What a release spent, as stored with it and shown by ``agentbank release status``."""

    mechanism: str
    mu_per_answer: float
    rho_per_answer: float
    rho_per_person: float
    scales: dict[str, float]
    lifetime_mu: float
    weight_cap: float
    left_out_for_budget: int = 0
    notes: list[str] = field(default_factory=list)
    # Cut under the demo's settings (a bank of fictional people only), never a real bank's protection.
    demo_settings: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def ledger(
    budget: Budget, scales: Scales, dimensions: int, items: int, left_out: int = 0, *, demo_settings: bool = False
) -> Ledger:
    """The release's cost: per answer (by construction ``mu**2 / 2`` in rho), and per person, everything at
    once (adding or removing one member changes one count in every table of every item they answered)."""
    pairs = dimensions * (dimensions - 1) // 2
    per_item = (
        1 / scales.overall**2 + dimensions / scales.one_way**2 + pairs / scales.two_way**2
        + (dimensions + 1) * budget.weight_cap**2 / scales.weighted**2 + 4 / scales.validity**2
    )  # fmt: skip
    fixed = pairs_of_raked() / scales.margins**2 + 1 / scales.members**2
    return Ledger(
        MECHANISM, budget.mu, budget.mu**2 / 2, (items * per_item + fixed) / 2,
        {k: round(v, 3) for k, v in asdict(scales).items()}, budget.lifetime_mu, budget.weight_cap, left_out,
        demo_settings=demo_settings,
    )  # fmt: skip


def pairs_of_raked() -> int:
    """The member tables the weights are fitted to: one per pair of raked breakdowns."""
    return len(RAKED) * (len(RAKED) - 1) // 2


class Noise(Protocol):
    """Where the noise comes from: OpenDP in the bank, a seeded generator in unit tests of the arithmetic."""

    def counts(self, values: np.ndarray, sigma: float) -> np.ndarray: ...

    def totals(self, values: np.ndarray, sigma: float) -> np.ndarray: ...


class OpenDPNoise:
    """Exact discrete Gaussian noise on counts and continuous Gaussian noise on weighted totals."""

    def counts(self, values: np.ndarray, sigma: float) -> np.ndarray:
        if not len(values):
            return np.zeros(0, dtype=np.int64)
        return np.asarray(_integer_gaussian(round(sigma, 6))([int(v) for v in values]), dtype=np.int64)

    def totals(self, values: np.ndarray, sigma: float) -> np.ndarray:
        if not len(values):
            return np.zeros(0)
        return np.asarray(_float_gaussian(round(sigma, 6))([float(v) for v in values]), dtype=float)


@cache
def _integer_gaussian(sigma: float) -> Any:
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=int)
    return space >> dp.m.then_gaussian(scale=sigma)


@cache
def _float_gaussian(sigma: float) -> Any:
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float)
    return space >> dp.m.then_gaussian(scale=sigma)


def guess_bound(mu: float, prior: list[float], draws: int = 200_000, seed: int = 0) -> float:
    """The highest chance that any attacker names a person's answer, given ``prior`` (the share of each
    code among people like them) and a release that protects the answer at ``mu``.

    The attacker who knows everything else sees the answer's code as one of ``len(prior)`` points, every
    two ``mu`` apart, blurred by unit Gaussian noise; the best guess is the most probable point. Computed
    by simulation (seeded, so the same figure every time).
    """
    weights = np.asarray(prior, dtype=float)
    weights = weights / weights.sum()
    codes = len(weights)
    if codes < 2:
        return 1.0
    rng = np.random.default_rng(seed)
    truth = rng.choice(codes, size=draws, p=weights)
    centre = mu / math.sqrt(2)  # points at centre·e_c are mu apart pairwise
    observed = rng.standard_normal((draws, codes))
    observed[np.arange(draws), truth] += centre
    # log posterior of code c: log prior_c + centre·x_c (the terms common to every code cancel)
    posterior = np.log(np.maximum(weights, 1e-300)) + centre * observed
    return float(np.mean(posterior.argmax(axis=1) == truth))

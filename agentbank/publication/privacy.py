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
the release's standing workload (the overall table, one table per standing breakdown, their weighted totals
and the item's validity) and a reserve for the tables researchers asked for (``workload``): up to
``ASKED_PER_ITEM`` asked tables per item, each with the noise of a one-way table, whether one or four are
asked. A person in ``r`` releases has spent ``mu * sqrt(r)``; the ledger keeps it, and a member whose
lifetime budget would be passed is left out of the next release. What a release spends is read from
OpenDP's own accounting: each kind of table's measurement maps its sensitivity to the rho it costs
(``spent_rho``), and a test compares that with the arithmetic here. What is not protected per answer: a
person's demographic categories (the breakdowns are how tables are cut, and an attacker is assumed to know
them) and their membership with all their answers at once (``rho_per_person`` says how much that costs).

Why this split. At 1,000 agents, measuring every table of every item (12 one-way and 66 two-way) left one-way
counts a noise of 7.75 and two-way of 36: groups of 100-249 were hidden two times in three. Six standing
breakdowns and a reserve leave every one-way and asked table a noise of about 5.2 at mu 1
(``benchmarks/bench_release_privacy``); a breakdown left to be asked for costs a researcher one cut's wait.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import Any, Protocol

import numpy as np
import opendp.prelude as dp

from agentbank.publication.weighting.targets import RAKED

dp.enable_features("contrib")  # the discrete Gaussian on vectors is a contributed measurement

MECHANISM = "discrete Gaussian noise (OpenDP), accounted in zero-concentrated differential privacy"
# How the guarantee per answer is shared out, as fractions of mu**2: the standing workload and the reserve.
SHARES = {"overall": 0.05, "one_way": 0.45, "weighted": 0.15, "validity": 0.05, "asked": 0.30}
ASKED_PER_ITEM = 4  # tables researchers asked for that one release measures of one item, at most


def shares(reserve: float = SHARES["asked"]) -> dict[str, float]:
    """The split with ``reserve`` of mu² kept for asked tables, the standing kinds sharing the rest as in
    ``SHARES`` (the setting ``AGENTBANK_RELEASE_RESERVE_SHARE``)."""
    standing = {kind: share for kind, share in SHARES.items() if kind != "asked"}
    total = sum(standing.values())
    return {**{kind: share * (1 - reserve) / total for kind, share in standing.items()}, "asked": reserve}


MARGIN_SCALE = 3.0  # noise on the member counts the weights come from (membership, not an answer)
MEMBERS_SCALE = 3.0  # noise on the number of members a release states
# How much one answer moves each kind of table when it changes (squared L2): a count moves from one code
# to another (2), a weighted total by twice the weight cap squared, the validity figures by three (the
# agent's right/wrong, the person's repeat, the baseline's right/wrong).
ANSWER_CHANGE = {"overall": 2.0, "one_way": 2.0, "asked": 2.0, "validity": 3.0}
# How much one member moves each kind when they join or leave with all their answers (squared L2, per item).
MEMBER_CHANGE = {"overall": 1.0, "one_way": 1.0, "asked": 1.0, "validity": 4.0}


@dataclass(frozen=True)
class Budget:
    """What one release may spend on each answer, and what a member may spend over every release."""

    mu: float = 1.0
    lifetime_mu: float = 5.0
    weight_cap: float = 2.0  # weights are kept within [1/cap, cap], which bounds one person's weighted share

    @classmethod
    def for_horizon(cls, mu: float, horizon_days: float, interval_days: float, weight_cap: float = 2.0) -> Budget:
        """A lifetime budget sized so that a member who stays is in every release for ``horizon_days`` when
        releases are at least ``interval_days`` apart: at most ``floor(horizon / interval) + 1`` of them."""
        releases = math.floor(horizon_days / max(interval_days, 1e-9) + 1e-9) + 1
        return cls(mu, mu * math.sqrt(releases), weight_cap)

    def releases_per_member(self) -> int:
        """How many releases one member can be in before their lifetime budget is spent."""
        return max(1, math.floor((self.lifetime_mu / self.mu) ** 2 + 1e-9))


@dataclass(frozen=True)
class Scales:
    """The noise (standard deviation) of each kind of released figure."""

    overall: float
    one_way: float
    asked: float
    weighted: float
    validity: float
    standing: int = 0  # the standing breakdowns the one-way and weighted scales were chosen for
    margins: float = MARGIN_SCALE
    members: float = MEMBERS_SCALE

    @classmethod
    def of(cls, budget: Budget, standing: int, reserve: float = SHARES["asked"]) -> Scales:
        """Scales that spend exactly ``budget.mu`` per answer over ``standing`` breakdowns and a full reserve
        (``reserve`` of mu²).

        A kind of table with squared change ``d2`` per answer and ``n`` tables costs ``n·d2/sigma**2`` of
        ``mu**2``; weighted totals are made for the overall and the standing one-way tables.
        """
        mu2, split = budget.mu**2, shares(reserve)

        def sigma(kind: str, tables: int, change: float) -> float:
            return math.sqrt(tables * change / (split[kind] * mu2))

        return cls(
            overall=sigma("overall", 1, ANSWER_CHANGE["overall"]),
            one_way=sigma("one_way", max(standing, 1), ANSWER_CHANGE["one_way"]),
            asked=sigma("asked", ASKED_PER_ITEM, ANSWER_CHANGE["asked"]),
            weighted=sigma("weighted", standing + 1, 2 * budget.weight_cap**2),
            validity=sigma("validity", 1, ANSWER_CHANGE["validity"]),
            standing=standing,
        )

    def of_table(self, dims: tuple[str, ...], standing: tuple[str, ...]) -> float:
        """The noise of a table's counts: the overall, a standing one-way, or an asked table."""
        if not dims:
            return self.overall
        return self.one_way if len(dims) == 1 and dims[0] in standing else self.asked


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
    standing: list[str] = field(default_factory=list)  # the standing breakdowns
    asked_tables: int = 0  # tables researchers asked for, measured in this release (all items)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def spent_rho(scales: Scales, tables: dict[str, int], change: dict[str, float], weighted_change: float) -> float:
    """What ``tables`` (how many of each kind hold the record) cost in rho, as OpenDP's measurements say: each
    kind's measurement maps the record's L2 sensitivity over all its tables to its zCDP cost, and zCDP
    composes by addition."""
    rho = 0.0
    for kind, n in tables.items():
        if n <= 0:
            continue
        if kind == "weighted":
            rho += float(_float_gaussian(round(scales.weighted, 6)).map(math.sqrt(n * weighted_change)))
        else:
            rho += float(_integer_gaussian(round(getattr(scales, kind), 6)).map(math.sqrt(n * change[kind])))
    return rho


def ledger(
    budget: Budget, scales: Scales, standing: tuple[str, ...], items: int, asked_tables: int = 0, left_out: int = 0,
    *, demo_settings: bool = False,
) -> Ledger:  # fmt: skip
    """The release's cost, from OpenDP's accounting: per answer (at most ``mu**2 / 2`` in rho: an item with
    every asked slot used), and per person, everything at once (adding or removing one member changes one
    count in every table of every item they answered)."""
    n = len(standing)
    per_answer = {"overall": 1, "one_way": n, "asked": ASKED_PER_ITEM, "weighted": n + 1, "validity": 1}
    rho_answer = spent_rho(scales, per_answer, ANSWER_CHANGE, 2 * budget.weight_cap**2)
    per_person = {"overall": items, "one_way": n * items, "asked": asked_tables, "weighted": (n + 1) * items,
                  "validity": items}  # fmt: skip
    rho_person = spent_rho(scales, per_person, MEMBER_CHANGE, budget.weight_cap**2)
    fixed = spent_rho(scales, {"margins": pairs_of_raked(), "members": 1}, {"margins": 1.0, "members": 1.0}, 0.0)
    return Ledger(
        MECHANISM, budget.mu, rho_answer, rho_person + fixed,
        {k: round(v, 3) for k, v in asdict(scales).items() if k != "standing"}, budget.lifetime_mu, budget.weight_cap,
        left_out, demo_settings=demo_settings, standing=list(standing), asked_tables=asked_tables,
    )  # fmt: skip


def expected_share_error(sigma: float, n: int, codes: int = 2) -> float:
    """The expected absolute error, in points, that noise of ``sigma`` per count gives a share near 1/codes
    of a group of ``n`` (the delta method on share = count / the group's counted total; mean |x| of a
    Gaussian is sd·sqrt(2/π)): what a researcher can expect of a table before asking for it."""
    p = 1 / codes
    sd = sigma * math.sqrt((1 - p) ** 2 + p**2 * (codes - 1)) / n
    return 100 * sd * math.sqrt(2 / math.pi)


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
    # An L2 distance in floats over whole-number counts: the sensitivity of n tables, sqrt(2n), is no integer.
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=float)
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

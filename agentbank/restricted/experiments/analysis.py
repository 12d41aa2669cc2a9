"""Effects as the original studies reported them: a difference, Cohen's d with a 95% interval, a test.

Two arms with a binary choice: the difference in proportions and Pearson's χ² (no continuity
correction); d from the log odds ratio (× √3/π, Chinn 2000), so it sits on the same scale as the
studies that report d. Two arms with a rating or amount: the difference in means, Student's t and d
with the pooled SD (interval from Hedges & Olkin's variance). Within subjects: the paired t and d_z.
A 2×2 design: the difference of differences, its t with N − 4 df (F = t², as the ANOVA's interaction
term), standardized by the pooled within-cell SD (Bonett 2008's interval). ``scipy`` gives the
distributions and tests.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

Z95 = float(stats.norm.ppf(0.975))
LOGIT_TO_D = math.sqrt(3) / math.pi


@dataclass(frozen=True)
class Effect:
    """An estimated effect. ``d`` and its interval are None where the arms do not vary (d undefined)."""

    test: str
    estimate: float  # on the outcome's own scale: proportions, means, or the difference of differences
    d: float | None
    d_low: float | None
    d_high: float | None
    statistic: float | None
    df: float | None
    p: float | None
    n: dict[str, int]

    @property
    def significant(self) -> bool:
        """p < .05."""
        return self.p is not None and self.p < 0.05

    @property
    def se(self) -> float | None:
        """The standard error of d, read back from its interval."""
        if self.d_low is None or self.d_high is None:
            return None
        return (self.d_high - self.d_low) / (2 * Z95)


def proportions(treated: Sequence[bool], control: Sequence[bool]) -> Effect:
    """A binary outcome in two arms: difference in proportions, χ², d from the log odds ratio."""
    _need(treated, control, 1)
    a, b = float(sum(treated)), float(len(treated) - sum(treated))
    c, d = float(sum(control)), float(len(control) - sum(control))
    estimate = a / len(treated) - c / len(control)
    n = {"treatment": len(treated), "control": len(control)}
    table = np.array([[a, b], [c, d]], dtype=float)
    if (table.sum(axis=0) == 0).any():  # every agent chose alike: no test, no d
        return Effect("chi2", estimate, None, None, None, None, None, None, n)
    chi2, p, df, _ = stats.chi2_contingency(table, correction=False)
    if 0 in (a, b, c, d):  # Haldane's half for an empty cell, for the odds ratio only
        a, b, c, d = (x + 0.5 for x in (a, b, c, d))
    log_or = math.log(a * d / (b * c))
    se = math.sqrt(1 / a + 1 / b + 1 / c + 1 / d)
    low, high = (log_or - Z95 * se) * LOGIT_TO_D, (log_or + Z95 * se) * LOGIT_TO_D
    return Effect("chi2", estimate, log_or * LOGIT_TO_D, low, high, float(chi2), float(df), float(p), n)


def means(treated: Sequence[float], control: Sequence[float]) -> Effect:
    """A rating or amount in two independent arms: difference in means, Student's t, pooled-SD d."""
    _need(treated, control, 2)
    x, y = np.asarray(treated, dtype=float), np.asarray(control, dtype=float)
    n1, n2 = len(x), len(y)
    estimate = float(x.mean() - y.mean())
    pooled = math.sqrt(((n1 - 1) * x.var(ddof=1) + (n2 - 1) * y.var(ddof=1)) / (n1 + n2 - 2))
    n = {"treatment": n1, "control": n2}
    if pooled == 0:
        return Effect("t", estimate, None, None, None, None, float(n1 + n2 - 2), None, n)
    t = estimate / (pooled * math.sqrt(1 / n1 + 1 / n2))  # Student's t, as scipy's ttest_ind (without its
    p = 2 * float(stats.t.sf(abs(t), n1 + n2 - 2))  # precision warning when answers are nearly all alike)
    d = estimate / pooled
    se = math.sqrt((n1 + n2) / (n1 * n2) + d**2 / (2 * (n1 + n2)))
    return Effect("t", estimate, d, d - Z95 * se, d + Z95 * se, float(t), float(n1 + n2 - 2), float(p), n)


def paired(treated: Sequence[float], control: Sequence[float]) -> Effect:
    """The same agents in both arms: mean difference, paired t, d_z (mean difference / SD of differences)."""
    _need(treated, control, 2)
    if len(treated) != len(control):
        raise ValueError("paired samples need one answer in each arm from every agent")
    diff = np.asarray(treated, dtype=float) - np.asarray(control, dtype=float)
    m, sd, size = float(diff.mean()), float(diff.std(ddof=1)), len(diff)
    n = {"pairs": size}
    if sd == 0:
        return Effect("paired t", m, None, None, None, None, float(size - 1), None, n)
    t = m / (sd / math.sqrt(size))  # the paired t, as scipy's ttest_rel
    p = 2 * float(stats.t.sf(abs(t), size - 1))
    d = m / sd
    se = math.sqrt(1 / size + d**2 / (2 * size))
    return Effect("paired t", m, d, d - Z95 * se, d + Z95 * se, float(t), float(size - 1), float(p), n)


def interaction(cells: Mapping[tuple[str, str], Sequence[float]], a: tuple[str, str], b: tuple[str, str]) -> Effect:
    """A 2×2 design's interaction: (A high − A low at B high) − (A high − A low at B low), each factor's
    levels given high first; cells are keyed (A level, B level)."""
    keys = [(a[0], b[0]), (a[1], b[0]), (a[0], b[1]), (a[1], b[1])]
    groups = [np.asarray(cells.get(key, ()), dtype=float) for key in keys]
    if any(len(g) < 2 for g in groups):
        raise ValueError("each cell of a 2×2 design needs at least two answers")
    m = [float(g.mean()) for g in groups]
    estimate = (m[0] - m[1]) - (m[2] - m[3])
    df = sum(len(g) for g in groups) - 4
    pooled = math.sqrt(sum((len(g) - 1) * g.var(ddof=1) for g in groups) / df)
    weights = sum(1 / len(g) for g in groups)
    n = {f"{x}/{y}": len(g) for (x, y), g in zip(keys, groups, strict=True)}
    if pooled == 0:
        return Effect("interaction t", estimate, None, None, None, None, float(df), None, n)
    t = estimate / (pooled * math.sqrt(weights))
    p = 2 * float(stats.t.sf(abs(t), df))
    d = estimate / pooled
    se = math.sqrt(weights + d**2 / (2 * df))
    return Effect("interaction t", estimate, d, d - Z95 * se, d + Z95 * se, t, float(df), p, n)


def differ(first: Effect, second: Effect) -> bool | None:
    """Whether two estimates of d differ beyond their intervals: the 95% interval of their difference
    excludes zero. None when either has no d."""
    if first.d is None or second.d is None or first.se is None or second.se is None:
        return None
    return abs(first.d - second.d) > Z95 * math.hypot(first.se, second.se)


def correlation(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson's r, None with fewer than three pairs or no variation."""
    if len(xs) < 3 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return None
    return float(stats.pearsonr(xs, ys).statistic)


def _need(treated: Sequence[object], control: Sequence[object], least: int) -> None:
    if len(treated) < least or len(control) < least:
        raise ValueError(f"each arm needs at least {least} answer(s)")

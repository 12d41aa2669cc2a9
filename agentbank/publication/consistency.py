"""Post-processing of an item's noisy tables into non-negative integer tables that add up.

Each published table carries its own independent noise, so counts come out negative and tables disagree
(a one-way table's per-code sum is not the overall count). Anything computed from the noisy figures alone
is post-processing and costs no privacy, so a reader can be given tables that are consistent with one
another: one set of code totals shared by every table, one-way tables projected onto those totals, and
two-way tables fitted to the one-way margins. The tables' layout is ``protection``'s: a flat array indexed
``group * codes + code``, the group being the mixed-radix index over the categories of the dims in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

IPF_ITERATIONS = 200  # fitting stops here even if the margins are not yet met to the tolerance
IPF_TOLERANCE = 1e-6  # largest gap (in counts) between a fitted column margin and its target
# A uniform floor under every cell of a two-way table before fitting. IPF only rescales, so a row or column
# left all zero by clipping could never reach a positive margin, and a row whose cells all lie in columns
# whose margin is zero would be emptied by the column step; with the floor such a row or column starts
# uniform, and the fit always converges. It is far below a count, so it moves no other cell measurably.
FLOOR = 1e-9


@dataclass(frozen=True)
class Measured:
    """One noisy table as protection lays it out, with the noise it was measured with."""

    dims: tuple[str, ...]
    counts: np.ndarray  # flat, group * codes + code (noisy, may be negative)
    sigma: float  # noise standard deviation of each cell
    shape: tuple[int, ...]  # number of categories of each dim, in order (() for the overall table)


def consistent(tables: Sequence[Measured], codes: int) -> dict[tuple[str, ...], np.ndarray]:
    """Non-negative integer tables that add up: every table's per-code sum over its groups is the same
    code total ``T_c``, in protection's flat layout (int64), keyed by each given table's dims.

    ``T`` is the inverse-variance weighted mean of every table's per-code sums (a table of ``G`` groups
    sums with variance ``G * sigma**2``; tables measured without noise, if any, decide alone), clipped at
    zero and rounded so the grand total is the rounded grand total. The overall table becomes ``T``. A
    one-way table is the least-squares projection of its cells, per code, onto ``{y >= 0, sum y = T_c}``,
    rounded by largest remainder. A two-way table over ``(d1, d2)`` is fitted by iterative proportional
    fitting to the one-way tables of ``d1`` and ``d2`` (or, where one is not given, to that dim's margins
    of the two-way tables holding it, projected onto ``T`` in the same way), then rounded by largest
    remainder within each ``(g1, code)`` row: its ``d1`` margin equals the ``d1`` table exactly, and each
    cell is its fitted value rounded down or up, so its ``d2`` margin is met as closely as that allows:
    the rows round up where their column has so far been rounded down, which in simulations left the
    ``d2`` margin exact in most tables and one count off in a few (plain rounding row by row leaves it
    up to ``n1 - 1`` off), as far as the fit converged within ``IPF_ITERATIONS``.
    """
    for t in tables:
        if len(t.dims) != len(t.shape) or len(t.dims) > 2 or t.counts.size != int(np.prod(t.shape)) * codes:
            raise ValueError(f"table {t.dims} of shape {t.shape} does not hold {codes} codes per group")
    if not tables:
        return {}
    totals = _totals(tables, codes)
    one_way = {t.dims: _round_rows(_project(_by_code(t, codes), totals), totals).T for t in tables if len(t.dims) == 1}
    margins = {d[0]: m for d, m in one_way.items()}  # per dim: (categories, codes) integers
    margins.update(_missing_margins(tables, codes, totals, margins))
    out: dict[tuple[str, ...], np.ndarray] = {}
    for t in tables:
        if not t.dims:
            out[t.dims] = totals.copy()
        elif len(t.dims) == 1:
            out[t.dims] = one_way[t.dims].ravel()
        else:
            out[t.dims] = _two_way(t, codes, margins[t.dims[0]], margins[t.dims[1]]).ravel()
    return out


def _by_code(t: Measured, codes: int) -> np.ndarray:
    """A table's counts as (codes, groups) floats: one row per code, the rows projection works on."""
    return t.counts.reshape(-1, codes).T.astype(np.float64)


def _totals(tables: Sequence[Measured], codes: int) -> np.ndarray:
    """Code totals from every table's per-code sums, weighted by the inverse of each sum's variance."""
    sums = np.array([t.counts.reshape(-1, codes).sum(axis=0) for t in tables], dtype=np.float64)
    weight = _weights([t.counts.size // codes * t.sigma**2 for t in tables])
    estimate = np.clip(weight @ sums / weight.sum(), 0.0, None)
    return _round_rows(estimate[None, :], np.array([round(float(estimate.sum()))]))[0]


def _weights(variances: Sequence[float]) -> np.ndarray:
    """Inverse-variance weights; a figure measured exactly (variance 0) has infinite weight, so the exact
    ones decide, equally, and the noisy ones are ignored."""
    variance = np.asarray(variances, dtype=np.float64)
    return (variance == 0).astype(np.float64) if (variance == 0).any() else 1.0 / variance


def _project(rows: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """Each row's Euclidean projection onto ``{y >= 0, sum y = total}`` (sort-based, Duchi et al. 2008):
    the nearest non-negative row with the right sum, which subtracts one shift from every cell and clips."""
    desc = -np.sort(-rows, axis=1)
    excess = np.cumsum(desc, axis=1) - totals[:, None].astype(np.float64)
    ranks = np.arange(1, rows.shape[1] + 1)
    # The cells kept positive are the largest k with desc_k above the shift their own excess implies;
    # with a total of zero none qualifies and k = 1 makes the shift the maximum, so the row becomes zero.
    kept = np.maximum((desc - excess / ranks > 0).sum(axis=1), 1)
    shift = excess[np.arange(len(rows)), kept - 1] / kept
    return np.maximum(rows - shift[:, None], 0.0)


def _round_rows(rows: np.ndarray, totals: np.ndarray, carry: np.ndarray | None = None) -> np.ndarray:
    """Largest-remainder rounding of each non-negative row to an integer row summing to its total.

    Each cell goes to its floor or ceiling; the cells rounded up are those with the largest remainders
    (plus ``carry``, when given, to favour cells whose column has been rounded down so far). Only cells
    with a remainder are rounded up, so a zero stays zero; the remainders of a row whose values sum to
    an integer add up to its shortfall, so there are always enough of them."""
    floor = np.floor(rows)
    remainder = rows - floor
    # Within [0, cells] whenever a row sums to its total; the clip only absorbs floating-point dust.
    shortfall = np.clip(totals - floor.sum(axis=1).astype(np.int64), 0, rows.shape[1])
    score = np.where(remainder > 1e-12, remainder + (0.0 if carry is None else carry), -np.inf)
    order = np.argsort(-score, axis=1, kind="stable")  # stable: ties go to the lower index, deterministically
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(rows.shape[1])[None, :].repeat(len(rows), axis=0), axis=1)
    return (floor + (rank < shortfall[:, None])).astype(np.int64)


def _missing_margins(
    tables: Sequence[Measured], codes: int, totals: np.ndarray, known: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Margins of the dims in two-way tables whose one-way table is not given: the inverse-variance mean of
    that dim's margins over every two-way table holding it (so they all agree), projected onto ``T`` and
    rounded, like a one-way table. A margin summed over ``n`` categories of the other dim has variance
    ``n * sigma**2`` per cell."""
    found: dict[str, list[tuple[np.ndarray, float]]] = {}
    for t in tables:
        if len(t.dims) == 2:
            cube = t.counts.reshape(*t.shape, codes).astype(np.float64)
            for axis, d in enumerate(t.dims):
                if d not in known:  # summed over the other axis: (codes, categories of d)
                    found.setdefault(d, []).append((cube.sum(axis=1 - axis).T, t.shape[1 - axis] * t.sigma**2))
    out = {}
    for d, pairs in found.items():
        weight = _weights([v for _, v in pairs])
        mean = np.tensordot(weight / weight.sum(), np.array([m for m, _ in pairs]), axes=1)
        out[d] = _round_rows(_project(mean, totals), totals).T
    return out


def _two_way(t: Measured, codes: int, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """A two-way table fitted to integer margins ``rows`` (n1, codes) and ``cols`` (n2, codes) by IPF, all
    codes at once, then rounded within each (g1, code) row; returned as (n1, n2, codes) int64."""
    r = rows.T.astype(np.float64)[:, :, None]  # (codes, n1, 1)
    s = cols.T.astype(np.float64)[:, None, :]  # (codes, 1, n2)
    x = np.clip(t.counts.reshape(*t.shape, codes).transpose(2, 0, 1).astype(np.float64), 0.0, None)
    x += FLOOR
    for _ in range(IPF_ITERATIONS):
        x *= _ratio(s, x.sum(axis=1, keepdims=True))
        x *= _ratio(r, x.sum(axis=2, keepdims=True))  # rows last: the d1 margin is the one held exactly
        if np.abs(x.sum(axis=1, keepdims=True) - s).max() < IPF_TOLERANCE:
            break
    # Round row after row (of every code at once), each favouring the columns rounded down so far.
    n1 = t.shape[0]
    out = np.empty((codes, n1, t.shape[1]), dtype=np.int64)
    carry = np.zeros((codes, t.shape[1]))
    for g in range(n1):
        out[:, g] = _round_rows(x[:, g], rows[g], carry)
        carry += x[:, g] - out[:, g]
    return out.transpose(1, 2, 0)


def _ratio(target: np.ndarray, current: np.ndarray) -> np.ndarray:
    """target / current, with 0 where the current sum is 0 (a line with nothing in it stays empty)."""
    return np.divide(target, current, out=np.zeros(np.broadcast(target, current).shape), where=current > 0)

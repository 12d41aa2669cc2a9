"""Protected tables of the open tier: an item's counts by breakdowns, small cells and answers hidden.

Every table of a release is protected against what the release already shows of the same item:

- *Counts.* A table over some breakdowns is suppressed together with the tables linked to it (the
  overall distribution and its one-way margins), so that no hidden count is pinned down by linear
  programming over what is released (``suppression``).
- *Answers within a table.* A group whose members all gave one answer keeps the sum of its other
  answers undetermined, so the released numbers never leave all of its members with one code.
- *Answers across tables.* Someone who knows a person's demographics intersects, over every table
  of the release, the codes that person's groups could have given (a released zero rules a code
  out). A new table is released only if every member of the release keeps at least two possible
  answers; where it would not, the table hides a zero it would have shown, or is withheld whole.

Nothing here reads the database: the counts come from a release (``releases``).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentbank.errors import InvalidRequestError, NotFoundError
from agentbank.instruments.model import Instrument, Item
from agentbank.open_tier.breakdowns import BREAKDOWNS
from agentbank.open_tier.suppression import Stat, Table, suppress
from agentbank.open_tier.weighting.estimates import WeightedTable, wilson

MAX_BREAKDOWNS = 2
DIMENSIONS = tuple(BREAKDOWNS)  # a new release's profile is a member's category in each, in this order

Group = tuple[str, ...]
Released = dict[tuple[Group, int | None], int | None]
# Members of a release by profile and code: how many gave ``code``.
Profiles = Mapping[tuple[Group, int], int]


@dataclass(frozen=True)
class Cell:
    """One released (or suppressed) count of agents giving ``code`` within ``group``, with its share
    and 95% interval, unweighted and weighted (all hidden with the count)."""

    group: dict[str, str]
    code: int
    label: str
    count: int | None
    share: float | None
    interval: tuple[float, float] | None = None
    weighted_share: float | None = None
    weighted_interval: tuple[float, float] | None = None


@dataclass(frozen=True)
class Distribution:
    """An item's distribution over one release's agents, overall or by breakdowns."""

    release: int
    instrument: str
    item: str
    question: str
    breakdowns: list[str]
    k: int
    total: int | None
    groups: list[dict[str, Any]]
    cells: list[Cell]
    # Release members with no coded answer to the item; agents are never offered "don't know".
    missing: dict[str, int | None]
    weights: dict[str, Any] | None


def item_codes(item: Item) -> list[tuple[int, str]]:
    """The codes an item's answers take: its options, or whole numbers within its bounds."""
    if item.options:
        return [(o.code, o.label) for o in item.options]
    if item.kind == "numeric" and item.minimum is not None and item.maximum is not None:
        return [(v, str(v)) for v in range(int(item.minimum), int(item.maximum) + 1)]
    raise InvalidRequestError(f"item {item.key} has no fixed answers to count")


def checked_request(instrument: Instrument, item_key: str, breakdowns: list[str]) -> tuple[Item, tuple[str, ...]]:
    """The item and the breakdowns (in canonical order) of a table request, or a clear error."""
    try:
        item = instrument.item(item_key)
    except KeyError:
        raise NotFoundError(f"{instrument.key} has no item {item_key!r}") from None
    unknown = [d for d in breakdowns if d not in BREAKDOWNS]
    if unknown:
        raise InvalidRequestError(f"unknown breakdown {unknown[0]!r}; choose among {', '.join(BREAKDOWNS)}")
    dims = tuple(dict.fromkeys(breakdowns))
    if len(dims) > MAX_BREAKDOWNS:
        raise InvalidRequestError(f"at most {MAX_BREAKDOWNS} breakdowns at once")
    item_codes(item)
    return item, dims


def project(profile: Group, dims: tuple[str, ...], dimensions: tuple[str, ...] = DIMENSIONS) -> Group:
    """A profile's group in a table over ``dims``; ``dimensions`` names the profile's positions."""
    return tuple(profile[dimensions.index(d)] for d in dims)


class ReleaseTables:
    """The protected tables of one item in one release, each added only if it keeps every answer open."""

    def __init__(
        self, codes: tuple[int, ...], k: int, profiles: Profiles, dimensions: tuple[str, ...] = DIMENSIONS
    ) -> None:
        self.codes, self.k, self.profiles, self.dimensions = codes, k, profiles, dimensions
        self.tables: dict[tuple[str, ...], Released] = {}
        self._answers: dict[Group, set[int]] = {}
        for (profile, code), n in profiles.items():
            if n > 0:
                self._answers.setdefault(profile, set()).add(code)
        # For each profile in the release, the codes its members could have given, given every table so far.
        self._open: dict[Group, set[int]] = {p: set(codes) for p in self._answers}

    def add(self, dims: tuple[str, ...], released: Released) -> None:
        """Take in a table protected earlier (read back from storage)."""
        self.tables[dims] = released
        for profile, open_codes in self._open.items():
            open_codes &= _possible(released, project(profile, dims, self.dimensions), self.codes)

    def protect(self, dims: tuple[str, ...]) -> Released:
        """Protect and add the table over ``dims``; its linked tables (subsets of ``dims``) must be added first."""
        counts: dict[tuple[Group, int], int] = {}
        for (profile, code), n in self.profiles.items():
            key = (project(profile, dims, self.dimensions), code)
            counts[key] = counts.get(key, 0) + n
        linked = {d: t for d, t in self.tables.items() if set(d) < set(dims)}
        keep_open: set[tuple[Group, int]] = set()
        while True:
            released = _protect(dims, self.codes, self.k, counts, linked, keep_open)
            closing = self._closing(dims, released, keep_open)
            if closing is None:  # a member would be left with one answer, and nothing more can be hidden
                released = {key: None for key in released}
                break
            if not closing:
                break
            keep_open |= closing
        self.add(dims, released)
        return released

    def _closing(
        self, dims: tuple[str, ...], released: Released, tried: set[tuple[Group, int]]
    ) -> set[tuple[Group, int]] | None:
        """Cells to keep open so that no profile is left one answer; None if none is left to try."""
        wanted: set[tuple[Group, int]] = set()
        for profile, open_codes in self._open.items():
            group = project(profile, dims, self.dimensions)
            if len(open_codes & _possible(released, group, self.codes)) > 1:
                continue
            choices = [(group, c) for c in sorted(open_codes - self._answers[profile]) if (group, c) not in tried]
            if not choices:
                return None
            wanted.add(choices[0])
        return wanted


def _possible(released: Released, group: Group, codes: tuple[int, ...]) -> set[int]:
    """The codes a member of ``group`` could have given: hidden counts stay open, released zeros do not."""
    return {c for c in codes if released.get((group, c)) != 0}


def _protect(
    dims: tuple[str, ...],
    codes: tuple[int, ...],
    k: int,
    counts: Mapping[tuple[Group, int], int],
    linked: Mapping[tuple[str, ...], Released],
    keep_open: set[tuple[Group, int]],
) -> Released:
    """The table over ``dims`` suppressed against its linked tables, with ``keep_open`` cells undetermined."""
    categories = [BREAKDOWNS[d].categories for d in dims]
    index = {(g, c): i for i, (g, c) in enumerate(itertools.product(itertools.product(*categories), codes))}
    table = Table([counts.get(key, 0) for key in index])
    for lower, values in linked.items():
        positions = [dims.index(d) for d in lower]
        for key, value in values.items():
            table.add(("linked", lower, key), _cells(index, positions, key), linked=True, suppressed=value is None)
    own: list[Stat] = []
    protect: list[Stat] = []
    everything = list(range(len(dims)))
    for group in itertools.product(*categories):
        row = [table.add((group, code), _cells(index, everything, (group, code))) for code in codes]
        own += [*row, table.add((group, None), _cells(index, everything, (group, None)))]
        protect += [s for s in row if s.key in keep_open]
        guard = _homogeneous_guard(table, group, row)
        if guard is not None:
            protect.append(guard)
    suppress(table, k, protect=protect)
    return {s.key: None if s.suppressed else s.value for s in own}


def _homogeneous_guard(table: Table, group: Group, row: list[Stat]) -> Stat | None:
    """For a group whose members all gave one answer: the sum of its other answers, never released.

    Only such a group can have its answer inferred (the true counts are always consistent with what
    is released), and it cannot once that sum is undetermined, so could be at least one.
    """
    answered = [s for s in row if s.value > 0]
    if len(answered) != 1 or len(answered) == len(row):
        return None
    others = [cell for s in row if s.value == 0 for cell in s.cells]
    return table.add(("guard", group), others, suppressed=True)


def _cells(index: dict, positions: list[int], key: tuple) -> list[int]:
    """Base cells whose group matches ``key``'s group on ``positions`` (and its code, unless None)."""
    group, code = key
    return [
        i for (g, c), i in index.items()
        if all(g[p] == v for p, v in zip(positions, group, strict=True)) and (code is None or c == code)
    ]  # fmt: skip


def as_distribution(
    release: int,
    instrument: Instrument,
    item: Item,
    dims: tuple[str, ...],
    k: int,
    released: Released,
    total: int | None,
    *,
    members: int | None = None,
    weighted: WeightedTable | None = None,
    weights: dict[str, Any] | None = None,
) -> Distribution:
    """The released values of a table as the API shows them, with the release's overall count.

    ``members`` is how many agents the release holds; ``weighted`` the table's weighted totals (none
    when the release has no weights). A weighted figure is shown exactly where its count is.
    """
    groups, cells = [], []
    for group in itertools.product(*(BREAKDOWNS[d].categories for d in dims)):
        n = released[(group, None)]
        named = dict(zip(dims, group, strict=True))
        figures = weighted.groups.get(group) if weighted is not None and n else None
        groups.append({"group": named, "n": n, "deff": round(figures.deff, 2) if figures else None})
        for code, label in item_codes(item):
            count = released[(group, code)]
            if count is None or not n:
                cells.append(Cell(named, code, label, count, None))
                continue
            w_share = weighted.share(group, code) if weighted is not None and figures else None
            # Weighted figures to a tenth of a point, as the GSS shows them: finer ones would say more
            # about the weights of the agents behind a hidden cell than an estimate needs.
            cells.append(Cell(
                named, code, label, count, round(count / n, 4), _rounded(wilson(count / n, n), 4),
                None if w_share is None else round(w_share, 3),
                None if w_share is None or figures is None else _rounded(wilson(w_share, figures.effective_n), 3),
            ))  # fmt: skip
    missing = {"no answer": members - total if members is not None and total is not None else None}
    return Distribution(
        release, instrument.key, item.key, item.question, list(dims), k, total, groups, cells, missing, weights
    )


def _rounded(interval: tuple[float, float] | None, digits: int) -> tuple[float, float] | None:
    return None if interval is None else (round(interval[0], digits), round(interval[1], digits))

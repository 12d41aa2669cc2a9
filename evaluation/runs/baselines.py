"""Answers that need no model: the population's modal answer, and the mode within a demographic cell.

Both are fit on people outside the test set, on the wave the agents are scored against, so they are
honest predictions for the people scored. Over the GSS panels' two-year gap the population's mode
alone scores high normalized accuracy, which is why every result is printed beside these.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from agentbank.publication.breakdowns import BREAKDOWNS

# The cell: sex × age band × race × education, as the open tier's breakdowns define them.
CELL = ("sex", "age_band", "race", "education")
# A cell with fewer answers than this to an item says too little; the population's mode is used.
MIN_CELL_ANSWERS = 10


def cell_of(demographics: Mapping[str, int]) -> tuple[str, ...]:
    """The demographic cell a person falls into."""
    return tuple(BREAKDOWNS[key].classify(demographics) for key in CELL)


def _mode(codes: Iterable[int]) -> int | None:
    counts = Counter(codes)
    if not counts:
        return None
    # Ties go to the smaller code, so a fit is the same on every run.
    return min(counts, key=lambda code: (-counts[code], code))


class ModeBaseline:
    """Modal answers per item, overall and per demographic cell, fit on a training set of people."""

    def __init__(self, answers: Mapping[str, Mapping[str, int]], demographics: Mapping[str, Mapping[str, int]]) -> None:
        by_item: dict[str, list[int]] = {}
        by_cell: dict[tuple[tuple[str, ...], str], list[int]] = {}
        for person, items in answers.items():
            cell = cell_of(demographics.get(person, {}))
            for item, code in items.items():
                by_item.setdefault(item, []).append(code)
                by_cell.setdefault((cell, item), []).append(code)
        self._population = {item: _mode(codes) for item, codes in by_item.items()}
        self._cells = {key: _mode(codes) for key, codes in by_cell.items() if len(codes) >= MIN_CELL_ANSWERS}

    def population_mode(self, item: str) -> int | None:
        """The most common answer to ``item`` in the training set."""
        return self._population.get(item)

    def cell_mode(self, item: str, demographics: Mapping[str, int]) -> int | None:
        """The most common answer in the person's cell, or the population's when the cell is thin."""
        return self._cells.get((cell_of(demographics), item), self.population_mode(item))

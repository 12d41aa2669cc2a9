"""Reading a CSV or Parquet file of survey answers column by column, in any of three layouts.

Only the columns a run needs are read (a GSS panel has some 1,600), through pyarrow, so that a
file of a million rows loads in seconds. Every cell comes out as text (or None when empty), and each
layout yields the same cells: person, item, wave, value, and whether the person was interviewed.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

ID_COLUMNS = ("person", "firstid", "id", "respondent")
TIDY = ("person", "item", "wave", "answer")
WAVE_SUFFIX = re.compile(r"^(?P<key>[a-z][a-z0-9]*?)_w?(?P<wave>[1-9])$")
Cell = tuple[str, str, int, str | None, bool]  # person, item, wave, value, interviewed
Knows = Callable[[str], bool]


def read_names(path: Path) -> list[str]:
    """The file's column names, without reading its rows."""
    if path.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    with path.open(newline="", encoding="utf-8-sig") as handle:
        return next(csv.reader(handle), [])


def read_columns(path: Path, names: Sequence[str]) -> dict[str, list[str | None]]:
    """The named columns as text, keyed by their lower-case name."""
    import pyarrow as pa

    if path.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path, columns=list(dict.fromkeys(names)))
    else:
        from pyarrow import csv as pacsv

        convert = pacsv.ConvertOptions(
            include_columns=list(dict.fromkeys(names)),
            column_types=dict.fromkeys(names, pa.string()),
            strings_can_be_null=True,
        )
        table = pacsv.read_csv(path, read_options=pacsv.ReadOptions(encoding="utf-8-sig"), convert_options=convert)
    return {name.lower(): _texts(table.column(name)) for name in table.column_names}


def _texts(column: object) -> list[str | None]:
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = column.type  # type: ignore[attr-defined]
    if pa.types.is_floating(kind):
        # Whole numbers stored as floats (wave 1.0, code 2.0) read as "1", "2".
        values = column.to_pylist()  # type: ignore[attr-defined]
        return [None if v is None or v != v else str(int(v)) if float(v).is_integer() else str(v) for v in values]
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        column = pc.cast(column, pa.string())  # type: ignore[arg-type]
    return column.to_pylist()  # type: ignore[attr-defined, no-any-return]


class Layout:
    """How a file's columns hold people, items and waves."""

    name = ""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        self.lower = {n.lower(): n for n in names}
        self.unreadable_waves = 0

    def unknown_columns(self, knows: Knows) -> list[str]:
        """Columns that hold no item or demographic this instrument knows."""
        return []

    def needed(self, knows: Knows, wanted: set[str] | None, demographics: frozenset[str]) -> list[str]:
        """The original names of the columns to read."""
        raise NotImplementedError

    def distinct(self, columns: dict[str, list[str | None]], key: str) -> set[str]:
        """The distinct values ``key`` takes anywhere in the file."""
        raise NotImplementedError

    def cells(self, columns: dict[str, list[str | None]]) -> Iterator[Cell]:
        """Every cell of the columns read."""
        raise NotImplementedError

    def _wave(self, value: str | None) -> int | None:
        try:
            return int(float(value)) if value is not None else None
        except ValueError:
            self.unreadable_waves += 1
            return None

    def _keep(self, key: str, knows: Knows, wanted: set[str] | None, demographics: frozenset[str]) -> bool:
        return knows(key) and (wanted is None or key in wanted or key in demographics or key in ("age", "hispanic"))


class Tidy(Layout):
    """One row per answer: person, item, wave, answer."""

    name = "tidy"

    def needed(self, knows: Knows, wanted: set[str] | None, demographics: frozenset[str]) -> list[str]:
        return [self.lower[c] for c in TIDY]

    def distinct(self, columns: dict[str, list[str | None]], key: str) -> set[str]:
        return {v for k, v in zip(columns["item"], columns["answer"], strict=True) if v is not None and k == key}

    def cells(self, columns: dict[str, list[str | None]]) -> Iterator[Cell]:
        keys: dict[str | None, str] = {}
        for person, item, wave, answer in zip(*(columns[c] for c in TIDY), strict=True):
            number = self._wave(wave)
            if person is None or item is None or number is None:
                continue
            key = keys.get(item) or keys.setdefault(item, item.strip().lower())
            yield person.strip(), key, number, answer, True


class Long(Layout):
    """One row per person and wave (the GSS panels' own layout)."""

    name = "long"

    def __init__(self, names: Sequence[str], id_column: str) -> None:
        super().__init__(names)
        self.id = id_column

    def unknown_columns(self, knows: Knows) -> list[str]:
        return [k for k in self.lower if k not in (self.id, "wave") and not knows(k)]

    def needed(self, knows: Knows, wanted: set[str] | None, demographics: frozenset[str]) -> list[str]:
        keys = [k for k in self.lower if k not in (self.id, "wave") and self._keep(k, knows, wanted, demographics)]
        return [self.lower[k] for k in (self.id, "wave", *keys)]

    def distinct(self, columns: dict[str, list[str | None]], key: str) -> set[str]:
        return {v for v in columns.get(key, []) if v is not None}

    def cells(self, columns: dict[str, list[str | None]]) -> Iterator[Cell]:
        items = [k for k in columns if k not in (self.id, "wave")]
        presence = columns.get("sex")  # every interviewed respondent of a GSS wave has one
        for row, (person, wave) in enumerate(zip(columns[self.id], columns["wave"], strict=True)):
            number = self._wave(wave)
            if person is None or number is None:
                continue
            present = presence is None or presence[row] is not None
            for key in items:
                yield person.strip(), key, number, columns[key][row], present


class Wide(Layout):
    """One row per person; items suffixed by wave (``cappun_1``), unsuffixed columns are wave 1."""

    name = "wide"

    def __init__(self, names: Sequence[str], id_column: str) -> None:
        super().__init__(names)
        self.id = id_column
        self.split: dict[str, tuple[str, int]] = {}
        for k in self.lower:
            match = WAVE_SUFFIX.match(k)
            self.split[k] = (match["key"], int(match["wave"])) if match else (k, 1)

    def unknown_columns(self, knows: Knows) -> list[str]:
        return sorted({self.split[k][0] for k in self.lower if k != self.id and not knows(self.split[k][0])})

    def needed(self, knows: Knows, wanted: set[str] | None, demographics: frozenset[str]) -> list[str]:
        keep = [k for k in self.lower if k != self.id and self._keep(self.split[k][0], knows, wanted, demographics)]
        return [self.lower[k] for k in (self.id, *keep)]

    def distinct(self, columns: dict[str, list[str | None]], key: str) -> set[str]:
        return {v for c in columns if c != self.id and self.split[c][0] == key for v in columns[c] if v is not None}

    def cells(self, columns: dict[str, list[str | None]]) -> Iterator[Cell]:
        items = [(c, *self.split[c]) for c in columns if c != self.id]
        for row, person in enumerate(columns[self.id]):
            if person is None:
                continue
            for column, key, wave in items:
                yield person.strip(), key, wave, columns[column][row], True


def detect_layout(names: Sequence[str]) -> Layout | None:
    """The layout the column names show, or None."""
    lower = {n.lower() for n in names}
    if set(TIDY) <= lower:
        return Tidy(names)
    id_column = next((c for c in ID_COLUMNS if c in lower), None)
    if id_column is None:
        return None
    if "wave" in lower:
        return Long(names, id_column)
    if any(WAVE_SUFFIX.match(n) for n in lower):
        return Wide(names, id_column)
    return None

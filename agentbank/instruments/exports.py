"""Tables in an instrument's codes as files a statistics package opens: CSV and Parquet, and Stata ``.dta``
and SPSS ``.sav`` with their value labels (each code's label, as in the instrument) and variable labels.

The labelled formats are written by pyreadstat (the ReadStat library that R's haven also uses), so Stata,
SPSS and R read them as their own. A hidden or missing figure is missing in every format, never a zero.
"""

from __future__ import annotations

import io
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

import pandas as pd
import pyreadstat


class FileFormat(StrEnum):
    """The file formats a table is downloaded in."""

    CSV = "csv"
    PARQUET = "parquet"
    DTA = "dta"
    SAV = "sav"


@dataclass(frozen=True)
class LabelledTable:
    """A table with what a statistics package shows beside it.

    ``value_labels`` maps a column of codes to each code's label; ``variable_labels`` says what each column
    is; ``file_label`` says what the whole table is (its source and release)."""

    frame: pd.DataFrame
    variable_labels: dict[str, str] = field(default_factory=dict)
    value_labels: dict[str, dict[int, str]] = field(default_factory=dict)
    file_label: str = ""


@dataclass(frozen=True)
class Encoding:
    media_type: str
    suffix: str
    write: Callable[[LabelledTable], bytes]


# Limits of the formats in bytes: Stata's variable and file labels hold 80, its value labels 32,000 (SPSS:
# 255 and 120, its file label 64); longer labels are cut, never refused.
STATA_LABEL, STATA_VALUE_LABEL, SPSS_LABEL, SPSS_VALUE_LABEL, SPSS_FILE_LABEL = 80, 32000, 255, 120, 64
NAME = re.compile(r"[^A-Za-z0-9_]+")


def variable_name(key: str) -> str:
    """A column name every format takes (Stata: 32 characters of letters, digits and ``_``, not first a
    digit); ``arm:item`` becomes ``arm_item``."""
    name = NAME.sub("_", key.strip()).strip("_") or "v"
    if not name[0].isalpha():
        name = f"v{name}"
    return name[:32]


def variable_names(keys: list[str], taken: tuple[str, ...] = ()) -> dict[str, str]:
    """Each key's column name (``variable_name``), made distinct from the others and from ``taken`` by a
    number at the end where two keys would share one."""
    names: dict[str, str] = {}
    used = set(taken)
    for key in keys:
        name, n = variable_name(key), 1
        while name in used:
            n += 1
            name = f"{variable_name(key)[: 32 - len(str(n)) - 1]}_{n}"
        names[key] = name
        used.add(name)
    return names


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Nullable integers as floats (a missing value is a system missing value, not a zero), other objects
    as text."""
    out = frame.copy()
    for column in out.columns:
        dtype = out[column].dtype
        if pd.api.types.is_numeric_dtype(dtype):  # booleans and nullable integers included
            out[column] = out[column].astype("float64")
        else:
            out[column] = out[column].map(_text).astype(object)
    return out


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    return "" if value is None or value is pd.NA or (isinstance(value, float) and value != value) else str(value)


def _cut(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` bytes of UTF-8 (the formats count bytes), cut with an ellipsis."""
    encoded = text.encode()
    if len(encoded) <= limit:
        return text
    return encoded[: limit - 3].decode(errors="ignore") + "…"


def _through_file(suffix: str, write: Callable[[str], None]) -> bytes:
    # pyreadstat writes to a path only: a private temporary file, removed at once.
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"table{suffix}"
        write(str(path))
        return path.read_bytes()


def _dta(table: LabelledTable) -> bytes:
    frame = _typed(table.frame)
    return _through_file(".dta", lambda path: pyreadstat.write_dta(
        frame, path, file_label=_cut(table.file_label, STATA_LABEL), version=15,
        column_labels=[_cut(table.variable_labels.get(c, ""), STATA_LABEL) for c in frame.columns],
        variable_value_labels={c: {k: _cut(v, STATA_VALUE_LABEL) for k, v in labels.items()}
                               for c, labels in table.value_labels.items()},
    ))  # fmt: skip


def _sav(table: LabelledTable) -> bytes:
    frame = _typed(table.frame)
    return _through_file(".sav", lambda path: pyreadstat.write_sav(
        frame, path, file_label=_cut(table.file_label, SPSS_FILE_LABEL), compress=False,
        column_labels=[_cut(table.variable_labels.get(c, ""), SPSS_LABEL) for c in frame.columns],
        variable_value_labels={c: {k: _cut(v, SPSS_VALUE_LABEL) for k, v in labels.items()}
                               for c, labels in table.value_labels.items()},
        variable_measure={c: "nominal" for c in table.value_labels},
    ))  # fmt: skip


def _csv(table: LabelledTable) -> bytes:
    return table.frame.to_csv(index=False).encode()


def _parquet(table: LabelledTable) -> bytes:
    out = io.BytesIO()
    table.frame.to_parquet(out, index=False)
    return out.getvalue()


ENCODINGS: dict[FileFormat, Encoding] = {
    FileFormat.CSV: Encoding("text/csv; charset=utf-8", ".csv", _csv),
    FileFormat.PARQUET: Encoding("application/vnd.apache.parquet", ".parquet", _parquet),
    FileFormat.DTA: Encoding("application/x-stata-dta", ".dta", _dta),
    FileFormat.SAV: Encoding("application/x-spss-sav", ".sav", _sav),
}


def encode(table: LabelledTable, format: FileFormat) -> tuple[bytes, str]:
    """The table as ``format``'s bytes, with its media type."""
    encoding = ENCODINGS[format]
    return encoding.write(table), encoding.media_type

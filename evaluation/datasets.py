"""Two-wave human responses (person, item, wave, answer), from the GSS panels or a CSV/Parquet file.

A dataset keeps a respondent absent from a wave (not interviewed) apart from one who was
interviewed and gave no answer, and carries each person's wave-1 demographics for demographic
agents and subgroup scores. Its digest (of the source bytes) goes into every run record.
"""

from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from agentbank.answering.conditions import DEMOGRAPHIC_ATTITUDES, DEMOGRAPHIC_KEYS
from agentbank.errors import AgentBankError
from agentbank.instruments.model import Instrument

ABSENT = "absent"  # not interviewed in this wave
MISSING = "missing"  # interviewed, no answer to this item
PANELS = {"gss-panel06": "gss_panel06_long.parquet", "gss-panel08": "gss_panel08_long.parquet"}
COLUMNS = ("person", "item", "wave", "answer")


class DatasetError(AgentBankError):
    """A dataset that cannot be read: missing, of an unknown format, or with bad rows."""

    code = "invalid_dataset"
    status_code = 422


@dataclass(frozen=True)
class Response:
    """One person's answer to one item in one wave: a code, or why there is none."""

    person: str
    item: str
    wave: int
    code: int | None
    status: str = "answered"  # answered | missing | absent


@dataclass
class Dataset:
    """Responses in the instrument's codes, labels that matched no code, and wave-1 demographics."""

    name: str
    digest: str = ""
    responses: list[Response] = field(default_factory=list)
    unmapped: dict[str, set[str]] = field(default_factory=dict)
    demographics: dict[str, dict[str, int]] = field(default_factory=dict)

    def people(self, wave: int) -> set[str]:
        """Respondents interviewed in a wave."""
        return {r.person for r in self.responses if r.wave == wave and r.status != ABSENT}

    def answers(self, wave: int) -> dict[str, dict[str, int]]:
        """person → item → code for a wave."""
        out: dict[str, dict[str, int]] = {}
        for r in self.responses:
            if r.wave == wave and r.code is not None:
                out.setdefault(r.person, {})[r.item] = r.code
        return out

    def items(self) -> list[str]:
        """The items the dataset holds answers for, in first-seen order."""
        return list(dict.fromkeys(r.item for r in self.responses))


def load_dataset(spec: str, instrument: Instrument, reference_dir: Path, items: list[str] | None = None) -> Dataset:
    """A dataset by name (``gss-panel06``, ``gss-panel08``) or from a CSV or Parquet file.

    For the panels, ``items`` limits what is read (default: the instrument's items in the file).
    """
    if spec in PANELS:
        import pyarrow.parquet as pq

        from evaluation.panels import load_panel

        path = reference_dir / "gss_panels" / PANELS[spec]
        if not path.is_file():
            raise DatasetError(f"the {spec} file is missing", hint="point AGENTBANK_REFERENCE_DATA_DIR at the data")
        columns = set(pq.read_schema(path).names)
        keys = items or [k for k in instrument.item_keys() if k in columns]
        return load_panel(path, instrument, keys)
    path = Path(spec)
    if not path.is_file():
        raise DatasetError(f"no dataset named {spec!r} and no such file", hint=f"use {', '.join(PANELS)} or a path")
    if path.suffix == ".csv":
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    elif path.suffix == ".parquet":
        import pyarrow.parquet as pq

        rows = pq.read_table(path).to_pylist()
    else:
        raise DatasetError(f"{path.name}: unknown format", hint="use a .csv or .parquet file")
    return _from_rows(path, rows, instrument, items)


def _from_rows(path: Path, rows: list[dict], instrument: Instrument, items: list[str] | None) -> Dataset:
    """Long rows (person, item, wave, answer): the answer a code or an option label, empty when missing."""
    from evaluation.panels import code_for

    if rows and not set(COLUMNS) <= set(rows[0]):
        raise DatasetError(f"{path.name}: needs the columns {', '.join(COLUMNS)}")
    wanted = {k.lower() for k in items} if items else None
    demographic = {*DEMOGRAPHIC_KEYS, *DEMOGRAPHIC_ATTITUDES}
    dataset = Dataset(path.stem, hashlib.sha256(path.read_bytes()).hexdigest())
    for line, row in enumerate(rows, start=2):
        person, key, answer = str(row["person"]).strip(), str(row["item"]).strip().lower(), row["answer"]
        try:
            wave = int(row["wave"])
        except (TypeError, ValueError):
            raise DatasetError(f"{path.name}: row {line}: wave must be a whole number") from None
        if key == "age" and wave == 1 and str(answer or "").strip().isdigit():
            dataset.demographics.setdefault(person, {})["age"] = int(str(answer).strip())
            continue
        try:
            item = instrument.item(key)
        except KeyError:
            raise DatasetError(f"{path.name}: row {line}: {key!r} is not an item of {instrument.key}") from None
        text = "" if answer is None else str(answer).strip()
        code = None if not text else int(text) if text.lstrip("-").isdigit() else code_for(text, item)
        if code is not None and item.options and code not in item.codes:
            raise DatasetError(f"{path.name}: row {line}: {code} is not a code of {key}")
        if text and code is None:
            dataset.unmapped.setdefault(key, set()).add(text)
        if key in demographic and wave == 1 and code is not None:
            dataset.demographics.setdefault(person, {})[key] = code
        if wanted is None or key in wanted:
            status = "answered" if code is not None else MISSING
            dataset.responses.append(Response(person, item.key, wave, code, status))
    return dataset

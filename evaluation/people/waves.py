"""Two-wave human responses, from the GSS panels or a researcher's own CSV or Parquet file.

Three layouts are read, told apart by their columns:

- **long** (the GSS panels' own): one row per person and wave, a ``wave`` column, an id column
  (``person``, ``firstid`` or ``id``) and one column per item;
- **wide**: one row per person, items suffixed by their wave (``cappun_1``, ``cappun_w2``), and
  demographics with or without a suffix (without: wave 1);
- **tidy**: one row per answer, with the columns ``person, item, wave, answer``.

Answers are labels or codes; what is not in the codebook is set aside and reported (``coding``).
A dataset keeps a respondent absent from a wave (not interviewed) apart from one who was interviewed
and gave no answer, and carries each person's wave-1 demographics. Its digest (of the file's bytes)
names the runs made from it and keys its respondents.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from agentbank.consultation.answering.conditions import DEMOGRAPHIC_ATTITUDES, DEMOGRAPHIC_KEYS
from agentbank.core.errors import AgentBankError
from agentbank.instruments.model import Instrument
from evaluation.people.coding import BOOKKEEPING, Coder, LoadReport, degree_from_educ
from evaluation.people.layouts import Layout, detect_layout, read_columns, read_names
from evaluation.people.panel_files import PANEL_FILES, panel_path

ABSENT = "absent"  # not interviewed in this wave
MISSING = "missing"  # interviewed, no answer to this item (or an answer set aside)
PANELS = tuple(PANEL_FILES)  # shipped with the package (``panel_files``)
DEMOGRAPHICS = frozenset((*DEMOGRAPHIC_KEYS, *DEMOGRAPHIC_ATTITUDES, "educ"))
# The column every interviewed respondent of a GSS wave answers: a row without it was not interviewed.
PRESENCE = "sex"
# A person's weight, read from the first of these columns the file has (wave 1's row in a long file): the
# GSS panels' weight for people interviewed in both of their first two waves (non-response adjusted),
# or a file's own ``weight``. The fidelity of aggregates is weighted by it.
WEIGHT_COLUMNS = ("wtpannr12", "weight")


class DatasetError(AgentBankError):
    """A dataset that cannot be read: missing, of an unknown format or layout, or with nothing usable."""

    code = "invalid_dataset"
    status_code = 422


class Response(NamedTuple):
    """One person's answer to one item in one wave: a code, or why there is none."""

    person: str
    item: str
    wave: int
    code: int | None
    status: str = "answered"  # answered | missing | absent


@dataclass
class Dataset:
    """Responses in the instrument's codes, wave-1 demographics, and the report of what was set aside."""

    name: str
    digest: str = ""
    responses: list[Response] = field(default_factory=list)
    demographics: dict[str, dict[str, int]] = field(default_factory=dict)
    report: LoadReport = field(default_factory=LoadReport)
    # The bank's own participants: every condition asks their own agent (so a withdrawal reaches every
    # answer it made), and their answers stay in memory, never in the run's files.
    own: bool = False
    # Their answers to the survey's other instruments (Big Five, games): person → wave → instrument:item → value.
    battery: dict[str, dict[int, dict[str, float | None]]] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=dict)  # person → weight (``WEIGHT_COLUMNS``), if any

    def battery_instruments(self) -> list[str]:
        """The instruments besides the GSS that people answered in the bank's survey, in a stable order."""
        return sorted({key.split(":")[0] for waves in self.battery.values() for answers in waves.values()
                       for key in answers})  # fmt: skip

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

    def set_aside_shares(self) -> dict[str, float]:
        """Per item, the share of its given values that were set aside as not in the codebook."""
        answered = Counter(r.item for r in self.responses if r.code is not None)
        return {item: self.report.set_aside_share(item, answered[item]) for item in self.items()}


def load_dataset(spec: str, instrument: Instrument, items: list[str] | None = None) -> Dataset:
    """A dataset by name (``gss-panel06``, ``gss-panel08``: the panels shipped with the package, checked
    against their manifest) or from a CSV or Parquet file.

    ``items`` limits the answers kept (default: every item of the instrument the file holds);
    demographics are read whatever it says.
    """
    if spec in PANELS:
        path = panel_path(spec)
    else:
        path = Path(spec)
        if not path.is_file():
            raise DatasetError(f"no dataset named {spec!r} and no such file", hint=f"use {', '.join(PANELS)} or a path")
        if path.suffix.lower() not in (".csv", ".parquet"):
            raise DatasetError(f"{path.name}: unknown format", hint="use a .csv or .parquet file")
    names = read_names(path)
    layout = detect_layout(names)
    if layout is None:
        raise DatasetError(
            f"{path.name}: no layout recognized",
            hint="long (id, wave and one column per item), wide (id and columns such as cappun_1, cappun_2) "
            "or tidy (person, item, wave, answer)",
        )
    report = LoadReport(layout=layout.name)
    coder = Coder(instrument, report)
    wanted = {k.lower() for k in items} if items else None
    dataset = Dataset(path.stem, _digest(path), report=report)
    _fill(dataset, layout, path, coder, wanted)
    _read_weights(dataset, layout, path, names)
    _derive_degree(dataset)
    report.people = len({r.person for r in dataset.responses} | set(dataset.demographics))
    report.answers = sum(1 for r in dataset.responses if r.code is not None)
    if not report.answers:
        raise DatasetError(f"{path.name}: no answer in the codebook's codes", hint="; ".join(report.lines()))
    _note_missing_demographics(dataset)
    return dataset


def _fill(dataset: Dataset, layout: Layout, path: Path, coder: Coder, wanted: set[str] | None) -> None:
    """Code every cell the layout yields, keeping items' answers and wave-1 demographics."""
    report = dataset.report
    for key in layout.unknown_columns(coder.knows):
        if key not in BOOKKEEPING:
            report.not_items[key] += 1
    columns = read_columns(path, layout.needed(coder.knows, wanted, DEMOGRAPHICS))
    if coder.knows("region"):
        coder.prepare("region", layout.distinct(columns, "region"))
    responses, demographics = dataset.responses, dataset.demographics
    for person, key, wave, raw, present in layout.cells(columns):
        if not coder.knows(key):  # a tidy file's row of an item the instrument does not have
            report.not_items[key] += 1
            continue
        kept = key not in ("age", "hispanic") and (wanted is None or key in wanted)
        if not present:
            if kept:
                responses.append(Response(person, key, wave, None, ABSENT))
            continue
        code = None if raw is None else coder.code(key, raw)
        if kept:
            responses.append(Response(person, key, wave, code, MISSING if code is None else "answered"))
        if code is not None and wave == 1 and (key in DEMOGRAPHICS or key in ("age", "hispanic")):
            demographics.setdefault(person, {})[key] = code
    if layout.unreadable_waves:
        report.notes.append(f"rows without a readable wave, left out: {layout.unreadable_waves}")


def _read_weights(dataset: Dataset, layout: Layout, path: Path, names: list[str]) -> None:
    """Each person's weight from the first weight column the file has (a long file: their wave-1 row)."""
    lower = {n.lower(): n for n in names}
    column = next((c for c in WEIGHT_COLUMNS if c in lower), None)
    person = getattr(layout, "id", None)
    if column is None or person is None:
        return
    read = read_columns(path, [lower[person], *([lower["wave"]] if "wave" in lower else []), lower[column]])
    waves = read.get("wave") or ["1"] * len(read[person])
    for who, wave, value in zip(read[person], waves, read[column], strict=True):
        if who is not None and value is not None and wave is not None and float(wave) == 1 and float(value) > 0:
            dataset.weights[who.strip()] = float(value)
    if dataset.weights:
        dataset.report.notes.append(f"weights: {column} ({len(dataset.weights)} people), for the aggregates' fidelity")


def _derive_degree(dataset: Dataset) -> None:
    """Everyone with years of school but no degree is given the degree those years most likely mean,
    so the education cell is not silently unknown for files that hold EDUC only."""
    derived = 0
    for values in dataset.demographics.values():
        if "degree" not in values and "educ" in values:
            values["degree"] = degree_from_educ(values["educ"])
            derived += 1
    if derived:
        dataset.report.recodes["degree: from years of school (educ <12, 12, 14, 16, 18+ → 0–4)"] += derived


def _note_missing_demographics(dataset: Dataset) -> None:
    """A line for each demographic the prompts or cells use that nobody in the file has."""
    given = dataset.report.demographics
    for values in dataset.demographics.values():
        given.update(values.keys())
    for key in ("age", "sex", "race", "degree", "hispanic", "region"):
        if not given[key]:
            use = "the education cell is unknown for everyone" if key == "degree" else "demographic agents omit it"
            if key in ("age", "sex", "race"):
                use = "demographic agents omit it and its cell is unknown for everyone"
            dataset.report.notes.append(f"no {key} for anyone: {use}")


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()

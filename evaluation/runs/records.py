"""Evaluation runs: every condition's answer for every scored person and item, written as it comes.

A run lives in its own directory: ``run.json`` (what was run: model, prompt version, seeds,
dataset digest, tokens, wall time) and ``results.jsonl`` (one line per person × item × condition,
appended and synced after the answers are committed). A run of the bank's own participants keeps each
line's answer sealed with the participant's data key (a ``RowSealer``), so a withdrawal, which destroys
the key, leaves nothing of theirs readable in it. Its name is a digest of the data's content,
the configuration, the model and the prompt version: the same command on the same data resumes where
it stopped, and a corrected file (or another model) starts a run of its own instead of reusing
figures computed from the old one.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

from agentbank.core.errors import AgentBankError
from evaluation.runs.solvers import ABLATIONS, BASELINES, CONDITIONS, DERIVED, MODEL_CONDITIONS

__all__ = [
    "BANK_CONDITIONS",
    "BASELINES",
    "CONDITIONS",
    "DEFAULT_CONDITIONS",
    "DERIVED",
    "MODEL_CONDITIONS",
    "ResultRow",
    "RowSealer",
    "RunConfig",
    "RunError",
    "RunRecord",
    "RunStore",
    "timed_segment",
]  # fmt: skip

R = TypeVar("R")

# On a panel the interview + survey condition is the survey condition (no interview): asked only by name.
DEFAULT_CONDITIONS = ("survey", "demographic", *BASELINES, *DERIVED)
# The bank's own participants: their interview agents first (and the interview-length sweep), beside every
# other condition.
BANK_CONDITIONS = ("interview", "interview-survey", *(f"ablated-{p}" for p in ABLATIONS), "persona", "survey",
                   "demographic", *BASELINES, *DERIVED)  # fmt: skip
SURVEY_CONTEXTS = ("items", "all", "other-topics")


class RunError(AgentBankError):
    """A run that cannot start or be read."""

    code = "invalid_evaluation"
    status_code = 422


@dataclass(frozen=True)
class RunConfig:
    """Everything that decides a run's answers; its hash names the run."""

    dataset: str
    conditions: tuple[str, ...] = DEFAULT_CONDITIONS
    sample: int = 100  # 0: everyone, each scored with baselines fit on everyone else (leave one out)
    n_items: int = 30
    items: tuple[str, ...] = ()
    seed: int = 0  # draws the people
    answer_seed: int = 0  # passed to the model
    items_per_call: int = 1
    reasons: bool = True  # off: the model gives codes only (far fewer tokens; reasons are not scored)
    # What a survey-based agent is shown of the person's wave-1 answers: the run's other items
    # ("items") or every item the dataset holds ("all", as Park et al.), the asked item's topic
    # held out call by call; or as many items from topics none of the asked items belong to
    # ("other-topics"), one context for every call, far cheaper for a model with a prefix cache.
    survey_context: str = "items"
    # The bank's own participants: also ask their agents the survey's Big Five and games, scored per
    # trait and game across people (correlation and error, as Park et al.).
    traits: bool = True

    def __post_init__(self) -> None:
        unknown = [c for c in self.conditions if c not in CONDITIONS]
        if unknown or not self.conditions:
            raise RunError(f"unknown condition {', '.join(unknown) or '(none)'}", hint=f"use {', '.join(CONDITIONS)}")
        if self.sample < 0 or self.n_items < 2 or self.items_per_call < 1:
            raise RunError("--sample must be 0 (everyone) or more, --items at least 2 and --items-per-call at least 1")
        if self.survey_context not in SURVEY_CONTEXTS:
            raise RunError(f"--survey-context is one of {', '.join(SURVEY_CONTEXTS)}")

    def run_id(self, data_digest: str, model: str, prompt_version: str) -> str:
        """The run's name: the dataset's stem (to read it by) and a digest of the data's content and
        of everything that decides the answers. Where the file lies plays no part."""
        decided = {k: v for k, v in asdict(self).items() if k != "dataset"}
        content = {"data": data_digest, "config": decided, "model": model, "prompt_version": prompt_version}
        digest = hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:12]
        stem = "".join(c if c.isalnum() or c in "-_" else "-" for c in Path(self.dataset).stem)
        return f"{stem}-{digest}"


@dataclass(frozen=True)
class ResultRow:
    """One condition's answer to one item for one person, beside the person's own two answers."""

    person: str
    item: str
    condition: str
    predicted: int | None
    actual: int | None
    retest: int | None
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cached: bool = False
    sealed: str = ""  # a run of the bank's own participants: ``predicted``, sealed with the person's key


class RowSealer(Protocol):
    """Seals what a run writes about one person with their key, and opens it (None once they withdrew)."""

    def seal(self, person: str, value: Any) -> str | None: ...

    def open(self, person: str, sealed: str) -> Any | None: ...


@dataclass
class RunRecord:
    """What a run was and what it cost; rewritten as the run goes."""

    run_id: str
    config: dict[str, Any]
    dataset_digest: str
    model: str
    prompt_version: str
    items: list[str]
    people: list[str]
    started_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    finished_at: str | None = None
    wall_seconds: float = 0.0
    segments: int = 0
    data_report: list[str] = field(default_factory=list)  # what the data held and what was set aside


class RunStore:
    """A run's directory: its record and its results, safe to stop at any moment."""

    def __init__(self, root: Path, run_id: str, sealer: RowSealer | None = None) -> None:
        self.path = root / run_id
        self.record_path = self.path / "run.json"
        self.results_path = self.path / "results.jsonl"
        self.sealer = sealer

    def exists(self) -> bool:
        """Whether a run of this name was started before."""
        return self.record_path.is_file()

    def read_record(self) -> RunRecord:
        """The run's record."""
        try:
            return RunRecord(**json.loads(self.record_path.read_text()))
        except (OSError, ValueError, TypeError) as exc:
            raise RunError(f"cannot read the run record in {self.path.name}") from exc

    def write_record(self, record: RunRecord) -> None:
        """Replace the record atomically, so a crash leaves the old or the new one, never half."""
        self.path.mkdir(parents=True, exist_ok=True)
        tmp = self.record_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(record), indent=1))
        os.replace(tmp, self.record_path)

    def rows(self) -> list[ResultRow]:
        """The results so far, opened; a last line cut short by a crash, and the lines of a person who
        withdrew since, are left out."""
        rows = read_lines(self.results_path, ResultRow)
        if self.sealer is None:
            return rows
        opened = []
        for row in rows:
            value = self.sealer.open(row.person, row.sealed) if row.sealed else None
            if value is not None:
                opened.append(replace(row, predicted=value["predicted"], sealed=""))
        return opened

    def append(self, rows: list[ResultRow]) -> None:
        """Add results durably (written and synced before returning), sealed where the run seals them."""
        if self.sealer is not None:
            sealer = self.sealer
            rows = [replace(r, predicted=None, sealed=sealed) for r in rows
                    if (sealed := sealer.seal(r.person, {"predicted": r.predicted})) is not None]  # fmt: skip
        append_lines(self.results_path, rows)


def read_lines(path: Path, row: Callable[..., R]) -> list[R]:
    """The rows of a JSON-lines file of a run (none when it does not exist); a last line cut short by a
    crash is ignored."""
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(row(**json.loads(line)))
        except (ValueError, TypeError):
            continue
    return rows


def append_lines(path: Path, rows: Sequence[Any]) -> None:
    """Add dataclass rows to a run's JSON-lines file durably (written and synced before returning)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        handle.writelines(json.dumps(asdict(row)) + "\n" for row in rows)
        handle.flush()
        os.fsync(handle.fileno())


@contextmanager
def timed_segment(store: RunStore, record: RunRecord) -> Iterator[Callable[[], None]]:
    """Count this process's share of the run's wall time; the yielded function saves progress."""
    began = time.perf_counter()
    base = record.wall_seconds
    record.segments += 1

    def save() -> None:
        record.wall_seconds = round(base + time.perf_counter() - began, 2)
        store.write_record(record)

    try:
        yield save
    finally:
        save()

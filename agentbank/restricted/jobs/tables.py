"""A job's results as one labelled table: a row per agent and a column per answer, each coded answer with
its option's label, for the files a team downloads (``agentbank.instruments.exports``).

The labels come from the definitions the answers were asked from (the instrument's items, or the
experiment's outcomes and probes), so a code means in the file what it meant in the question.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from agentbank.core.statuses import TaskStatus
from agentbank.instruments import Item, load_instrument
from agentbank.instruments.exports import LabelledTable, variable_names
from agentbank.restricted.experiments import load_experiment
from agentbank.restricted.jobs.requests import ExperimentRequest, OpenRequest, Request, SurveyRequest


@dataclass
class AgentResult:
    """One agent's part of a job's results, as a member of its project reads it: its status (released,
    withheld while an answer is under review, unavailable once its participant withdrew), the arms it took in
    an experiment, and its answers, each a dict with its key, value and provenance (``StoredAnswer.for_team``)
    or the withheld placeholder, and the coded answer's label (``tables.label_answers``)."""

    agent_id: uuid.UUID
    status: TaskStatus
    answers: list[dict[str, Any]] = field(default_factory=list)
    arms: list[str] | None = None


BASE_LABELS = {
    "agent_id": "The agent (the bank's id for it, not the person's)",
    "status": "released, withheld (an answer under review) or unavailable (its participant withdrew)",
    "arms": "The experiment's arms the agent took, in order",
}


def answer_items(request: Request, reference_dir: Path) -> dict[str, Item]:
    """The item each coded answer's key is to: the instrument's items, or every arm's outcomes and probes."""
    if isinstance(request, SurveyRequest):
        instrument = load_instrument(request.instrument, reference_dir)
        return {key.lower(): instrument.item(key) for key in request.items}
    if isinstance(request, ExperimentRequest):
        experiment = load_experiment(request.experiment)
        return {f"{arm.key}:{item.key}": item for arm in experiment.arms
                for item in (*experiment.outcomes, *experiment.probes)}  # fmt: skip
    return {}


def _label(item: Item | None, value: Any) -> Any:
    if item is not None and isinstance(value, list):  # multiple choice or a ranking: a label per code
        return item.labelled(value)
    code = _code(value)
    if item is None or code is None:
        return None
    try:
        return item.label(code)
    except KeyError:
        return None


def _code(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    if value != int(value):
        return None
    return int(value)


def label_answers(entries: list[AgentResult], items: dict[str, Item]) -> list[AgentResult]:
    """The results with each coded answer's label beside its value (a list of labels for a list of codes;
    None for text, numbers and withheld)."""
    for entry in entries:
        for answer in entry.answers:
            answer["label"] = _label(items.get(answer.get("key", "")), answer.get("value"))
    return entries


def _question(request: Request, key: str, item: Item | None) -> str:
    if item is not None:
        return item.question
    if isinstance(request, OpenRequest) and key.startswith("question "):
        return request.questions[int(key.split()[1]) - 1]
    return key


def results_table(request: Request, entries: list[AgentResult], items: dict[str, Item],
                  title: str) -> LabelledTable:  # fmt: skip
    """One row per agent, one column per answer (named for its key: ``cappun``, ``question_1``,
    ``arm_item``), coded answers as whole numbers with their options' labels, a withheld or missing
    answer missing."""
    keys: list[str] = []
    for entry in entries:
        keys += [a["key"] for a in entry.answers if a.get("key") and a["key"] not in keys]
    base = ["agent_id", "status", *(["arms"] if isinstance(request, ExperimentRequest) else [])]
    rows = []
    for entry in entries:
        row: dict[str, Any] = {"agent_id": str(entry.agent_id), "status": str(entry.status),
                               "arms": ",".join(entry.arms or [])}  # fmt: skip
        row.update({a["key"]: None if a.get("withheld") else a.get("value") for a in entry.answers})
        rows.append(row)
    frame = pd.DataFrame(rows, columns=[*base, *keys])
    names = variable_names(keys, taken=tuple(base))
    variable_labels = {name: BASE_LABELS[name] for name in base}
    value_labels: dict[str, dict[int, str]] = {}
    for key in keys:
        item = items.get(key)
        variable_labels[names[key]] = _question(request, key, item)
        if frame[key].map(lambda v: isinstance(v, list)).any():  # several codes: kept in order, as text
            frame[key] = frame[key].map(lambda v: ";".join(map(str, v)) if isinstance(v, list) else v)
            variable_labels[names[key]] += " (option codes in order, separated by ;)"
        elif item is not None and item.options:
            frame[key] = frame[key].map(_code).astype("Int64")
            value_labels[names[key]] = {o.code: o.label for o in item.options}
        elif item is not None:
            frame[key] = pd.to_numeric(frame[key], errors="coerce").astype("Float64")
    frame = frame.rename(columns=names)
    return LabelledTable(frame, variable_labels, value_labels, title)

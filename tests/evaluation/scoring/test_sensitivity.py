"""Person sensitivity: a person-blind agent is flagged, an agent that copies the person with known
noise is not, and recovers its known accuracy."""

from __future__ import annotations

import csv
import random
import re
from pathlib import Path

import pytest

from agentbank.instruments.gss import load_gss
from agentbank.providers.fakes import ScriptedChatModel, minimal_answer
from evaluation.runs.records import ResultRow, RunConfig
from evaluation.scoring.sensitivity import impurity, person_sensitivity
from evaluation.service import REPORT, run_evaluation
from migrations.runner import SCHEMA
from tests.support.evaluation import _models

GSS = load_gss()
ITEMS = ("polviews", "natenvir", "natheal", "natcrime", "natdrug", "nateduc", "natrace", "natarms")
NOISE = 0.3  # the copying model gives another code on this share of answers


def _answers(people: int, seed: int = 3) -> dict[str, dict[str, int]]:
    rng = random.Random(seed)
    return {f"p{n:03d}": {k: rng.choice(GSS.item(k).codes) for k in ITEMS} for n in range(people)}


def _rows(answers: dict[str, dict[str, int]], guess) -> list[ResultRow]:
    return [ResultRow(p, k, "x", guess(p, k, c), c, c) for p, mine in answers.items() for k, c in mine.items()]


def test_impurity_and_checks_on_known_cases():
    assert impurity([1, 1, 1]) == 0 and impurity([1, 2]) == pytest.approx(0.5)
    answers = _answers(80)
    blind = person_sensitivity(_rows(answers, lambda p, k, code: GSS.item(k).codes[0]))
    assert blind["dispersion_ratio"] == 0 and blind["items_varying"] == 0
    assert blind["indistinguishable"] and blind["p_value"] == 1.0
    assert blind["shuffle_accuracy"] == pytest.approx(blind["accuracy"])  # permuting the same answer changes nothing
    # Answers that vary, but by something other than the person (as answering by position would).
    rng = random.Random(9)
    arbitrary = person_sensitivity(_rows(answers, lambda p, k, code: rng.choice(GSS.item(k).codes)))
    assert arbitrary["items_varying"] == 1 and arbitrary["dispersion_ratio"] > 0.8
    assert arbitrary["indistinguishable"]
    perfect = person_sensitivity(_rows(answers, lambda p, k, code: code))
    assert perfect["dispersion_ratio"] == pytest.approx(1) and not perfect["indistinguishable"]
    assert perfect["p_value"] < 0.01 and perfect["gain_over_shuffle"] > 0.5


def _write(path: Path, answers: dict[str, dict[str, int]]) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["person", "item", "wave", "answer"])
        for n, (person, mine) in enumerate(answers.items()):
            writer.writerows([[person, "sex", 1, 1 + n % 2], [person, "age", 1, 18 + n]])
            for key, code in mine.items():
                writer.writerows([[person, key, 1, code], [person, key, 2, code]])
    return path


def _copying(answers: dict[str, dict[str, int]]):
    """A model that finds the person by their age (unique here) and gives their own answer, except on
    a seeded ``NOISE`` share of answers where it gives another code."""
    by_age = {18 + n: mine for n, mine in enumerate(answers.values())}
    rng = random.Random(1)

    def reply(messages, schema):
        age = int(re.search(r"(\d+) years old", messages[0]["content"]).group(1))  # type: ignore[union-attr]
        out = {}
        for key in schema["properties"]:
            code = by_age[age][key]
            if rng.random() < NOISE:
                code = rng.choice([c for c in GSS.item(key).codes if c != code])
            out[key] = code
        return out

    return reply


def test_a_person_blind_agent_is_flagged_in_the_run_and_its_report(tmp_path, settings):
    data = _write(tmp_path / "people.csv", _answers(30))
    config = RunConfig(dataset=str(data), conditions=("demographic", "population-mode"), sample=20, items=ITEMS,
                       items_per_call=len(ITEMS), reasons=False)  # fmt: skip
    chat = ScriptedChatModel(lambda messages, schema: minimal_answer(schema))
    outcome = run_evaluation(config, settings, tmp_path / "runs", _models(chat), schema=SCHEMA)
    check = outcome.summary["sensitivity"]["demographic"]
    assert check["indistinguishable"] and check["items_varying"] == 0
    (warning,) = outcome.summary["warnings"]
    assert warning.startswith("demographic: indistinguishable from its shuffle control")
    report = (outcome.store.path / REPORT).read_text()
    assert "class='warning'" in report and "Do the answers depend on the person?" in report


def test_an_agent_that_copies_the_person_is_not_flagged_and_recovers_its_accuracy(tmp_path, settings):
    answers = _answers(60)
    data = _write(tmp_path / "people.csv", answers)
    config = RunConfig(dataset=str(data), conditions=("demographic",), sample=50, items=ITEMS,
                       items_per_call=len(ITEMS), reasons=False)  # fmt: skip
    models = _models(ScriptedChatModel(_copying(answers)))
    outcome = run_evaluation(config, settings, tmp_path / "runs", models, schema=SCHEMA)
    check = outcome.summary["sensitivity"]["demographic"]
    assert not check["indistinguishable"] and check["p_value"] < 0.01 and not outcome.summary["warnings"]
    low, high = outcome.summary["conditions"]["demographic"]["accuracy_ci"]
    assert low <= 1 - NOISE <= high, "the known accuracy lies within the bootstrap interval"
    assert check["shuffle_accuracy"] < low

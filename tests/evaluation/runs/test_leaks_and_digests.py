"""A run never shows an agent what it is scored on, and a run is tied to its data's content."""

from __future__ import annotations

import csv
from pathlib import Path

from sqlalchemy import create_engine, select
from sqlalchemy.engine import make_url

from agentbank.db.connections import database_url
from agentbank.db.models import Agent, Participant
from agentbank.providers.fakes import ScriptedChatModel
from evaluation.runs.records import RunConfig
from evaluation.runs.solvers import SOLVERS
from evaluation.service import run_evaluation
from migrations.runner import SCHEMA
from tests.support.evaluation import _models
from tests.support.leaks import leak_detector

# polviews and partyid are both stated by the demographic line and asked; no wave-1 answer below is
# an item's first code, so the leak detector scores only by reading the answer in its prompt.
ITEMS = ("polviews", "partyid", "cappun", "gunlaw")


def _write(path: Path, people: int, shift: int = 0) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["person", "item", "wave", "answer"])
        for n in range(people):
            person = f"p{n:02d}"
            writer.writerows([[person, "sex", 1, 1 + n % 2], [person, "age", 1, 30 + n], [person, "degree", 1, 1]])
            answers = {"polviews": 5 + (n + shift) % 3, "partyid": 4 + n % 3, "cappun": 2, "gunlaw": 2}
            for key, code in answers.items():
                writer.writerow([person, key, 1, code])
                writer.writerow([person, key, 2, code])
    return path


def test_no_condition_is_scored_on_what_its_prompt_states(tmp_path, settings):
    data = _write(tmp_path / "panel.csv", 10)
    model_conditions = tuple(n for n, s in SOLVERS.items() if s.uses_model and not s.bank_agent)
    config = RunConfig(dataset=str(data), conditions=model_conditions, sample=6, items=ITEMS, items_per_call=2)
    chat = ScriptedChatModel(leak_detector)
    outcome = run_evaluation(config, settings, tmp_path / "runs", _models(chat), schema=SCHEMA)
    for name in model_conditions:
        per_item = {k: v[name] for k, v in outcome.summary["items"].items()}
        assert per_item == dict.fromkeys(ITEMS, 0.0), f"{name} saw what it was scored on: {per_item}"
    systems = [c["messages"][0]["content"] for c in chat.calls]
    demographic = [s for s in systems if "## About this person" in s]
    assert demographic and all("years old" in s and "liberal or conservative" not in s for s in demographic)


def test_a_corrected_file_makes_a_new_run_with_new_respondents(tmp_path, settings):
    data = _write(tmp_path / "panel.csv", 8)
    config = RunConfig(dataset=str(data), conditions=("demographic", "population-mode"), sample=4, items=ITEMS)
    chat = ScriptedChatModel(leak_detector)
    first = run_evaluation(config, settings, tmp_path / "runs", _models(chat), schema=SCHEMA)
    again = run_evaluation(config, settings, tmp_path / "runs", _models(chat), schema=SCHEMA)
    assert again.resumed and again.record.run_id == first.record.run_id

    _write(data, 8, shift=1)  # the same path, corrected answers
    corrected = run_evaluation(config, settings, tmp_path / "runs", _models(chat), schema=SCHEMA)
    assert not corrected.resumed and corrected.record.run_id != first.record.run_id
    assert corrected.record.dataset_digest != first.record.dataset_digest

    def actual(outcome) -> dict:
        return {(r.person, r.item): r.actual for r in outcome.store.rows()}

    assert actual(corrected) != actual(first)  # the figures come from the corrected answers
    rows = [line for line in (corrected.store.results_path).read_text().splitlines() if '"demographic"' in line]
    assert rows and all('"cached": false' in line for line in rows), "no figure of the old data is reused"
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == sorted(
        [first.record.run_id, corrected.record.run_id]
    )

    # Respondents are keyed by the data's digest: each file has its own, with its own demographics.
    url = make_url(database_url(settings)).set(database=settings.evaluation_database)
    engine = create_engine(url)
    with engine.connect() as conn:
        refs = conn.execute(select(Participant.source_ref).join(Agent, Agent.participant_id == Participant.id)).all()
    engine.dispose()
    digests = {ref.split(":")[1] for (ref,) in refs}
    assert digests == {first.record.dataset_digest, corrected.record.dataset_digest}

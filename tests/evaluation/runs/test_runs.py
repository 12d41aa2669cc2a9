"""A small evaluation end to end with the scripted model: held-out topics, resume, report, report cards."""

from __future__ import annotations

import csv
import json
import uuid
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select, text
from sqlalchemy.engine import make_url

from agentbank.building.validity.cards import latest_cards
from agentbank.core.errors import ProviderError
from agentbank.db.connections import make_sessionmaker, transaction
from agentbank.db.models import AuditEvent, ReportCard
from agentbank.providers.fakes import ScriptedChatModel, minimal_answer
from evaluation.runs.records import RunConfig, RunError, RunStore
from evaluation.service import REPORT, SUMMARY, compare_runs, run_evaluation
from migrations.runner import SCHEMA
from tests.support.evaluation import _models
from tests.support.factories import build, keyring

ITEMS = ["cappun", "gunlaw", "helpful", "fair", "trust", "polviews"]  # helpful, fair and trust share a topic


def _write_dataset(path: Path, people: list[str]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["person", "item", "wave", "answer"])
        for n, person in enumerate(people):
            writer.writerow([person, "sex", 1, 1 + n % 2])
            writer.writerow([person, "race", 1, 1 + n % 3])
            writer.writerow([person, "age", 1, 25 + 3 * n])
            for k, item in enumerate(ITEMS):
                first = 1 + (n + k) % 2
                writer.writerow([person, item, 1, "Favor" if item in ("cappun", "gunlaw") and first == 1 else first])
                writer.writerow([person, item, 2, first if (n + k) % 3 else 3 - first])


def test_survey_agents_never_see_their_items_topic_and_runs_resume(tmp_path, settings):
    people = [f"p{n:02d}" for n in range(12)]
    _write_dataset(tmp_path / "two_waves.csv", people)
    config = RunConfig(
        dataset=str(tmp_path / "two_waves.csv"), sample=4, n_items=6, items=tuple(ITEMS), items_per_call=2
    )
    failing = ScriptedChatModel(lambda messages, schema: minimal_answer(schema))
    calls_before_failure = 5
    original = failing.complete

    def flaky(*args, **kwargs):
        if len(failing.calls) >= calls_before_failure:
            raise ProviderError("the model went away")
        return original(*args, **kwargs)

    failing.complete = flaky  # type: ignore[method-assign]
    with pytest.raises(ProviderError):
        run_evaluation(config, settings, tmp_path / "runs", _models(failing), schema=SCHEMA)
    (run_dir,) = (tmp_path / "runs").iterdir()
    store = RunStore(tmp_path / "runs", run_dir.name)
    first = store.rows()
    assert first and store.read_record().finished_at is None

    chat = ScriptedChatModel(lambda messages, schema: minimal_answer(schema))
    outcome = run_evaluation(config, settings, tmp_path / "runs", _models(chat), schema=SCHEMA)
    assert outcome.resumed
    rows = store.rows()
    keys = Counter((r.person, r.item, r.condition) for r in rows)
    assert set(keys.values()) == {1}, "each answer is written once across the interruption"
    assert len(rows) == 4 * 6 * 4  # four people, six items, four conditions
    # Only what the interruption lost was asked again: a person's survey takes five calls (four
    # topics, the three "people" items two to a call), their demographic agent three.
    per_condition = {"survey": 5, "demographic": 3}
    kept = {(r.person, r.condition) for r in first if r.condition in per_condition}
    assert len(chat.calls) == 4 * 8 - sum(per_condition[c] for _, c in kept)

    # Survey calls: the asked items' topic is held out, the other topics are shown.
    survey_calls = [c for c in chat.calls if "answers to other questions" in c["messages"][0]["content"]]
    assert survey_calls
    for call in survey_calls:
        system, user = call["messages"][0]["content"], call["messages"][1]["content"]
        asked = {k for k in ITEMS if f"{k.upper()}:" in user}
        if asked & {"helpful", "fair", "trust"}:
            assert "people fair or try to take advantage" not in system
            assert "can people be trusted" not in system
            assert "favor or oppose death penalty for murder" in system
        if "cappun" in asked:
            assert "favor or oppose death penalty for murder" not in system

    summary = json.loads((store.path / SUMMARY).read_text())
    assert set(summary["conditions"]) == {"survey", "demographic", "population-mode", "cell-mode", "combined"}
    # Every run measures the distortions and the fidelity of its aggregates, per condition beside the retest.
    assert set(summary["distortions"]) == set(summary["conditions"]) | {"retest"}
    assert set(summary["fidelity"]["against_people"]) == set(summary["conditions"]) | {"retest"}
    assert summary["tokens"]["prompt"] > 0
    report = (store.path / REPORT).read_text()
    assert report.count("data:image/png;base64,") == 3
    assert "normalized accuracy" in report and outcome.record.run_id in report
    record = store.read_record()
    assert record.finished_at and record.segments == 2 and record.dataset_digest
    assert record.data_report[0] == "tidy layout: 12 people, 168 answers in the codebook's codes"
    assert "<h2>The data</h2>" in report and "Do the answers depend on the person?" in report
    # The main table fits a page: seven columns, each interval in its figure's cell.
    main = report.split("<h2>By condition</h2>")[1].split("</thead>")[0]
    assert main.count("<th>") == 7 and "<th>retest corr.</th>" in main
    assert record.model == "scripted" and record.prompt_version.startswith("p-")
    # Every respondent's agent that answered is audited in the evaluation database, and chained by the run.
    evaluation = create_engine(make_url(settings.database_url.get_secret_value()).set(
        database=settings.evaluation_database))  # fmt: skip
    with evaluation.connect() as conn:
        answered = conn.scalar(text("SELECT count(*) FROM audit_events WHERE action = 'evaluation.answer'"))
        unchained = conn.scalar(text("SELECT count(*) FROM audit_events WHERE seq IS NULL"))
    evaluation.dispose()
    assert answered and unchained == 0


def test_interview_agents_get_report_cards(tmp_path, settings, fresh_database):
    bank = create_engine(fresh_database, hide_parameters=True)
    sessions = make_sessionmaker(bank)
    with transaction(sessions) as session:
        participant, agent, *_ = build(session, ref=f"file:{uuid.uuid4().hex}.json")
    people = [participant.pseudonym] + [f"p{n:02d}" for n in range(6)]
    _write_dataset(tmp_path / "linked.csv", people)
    config = RunConfig(
        dataset=str(tmp_path / "linked.csv"), conditions=("interview", "population-mode"), sample=7, items=tuple(ITEMS)
    )
    chat = ScriptedChatModel(lambda messages, schema: minimal_answer(schema))
    outcome = run_evaluation(config, settings, tmp_path / "runs", _models(chat), sessions, schema=SCHEMA)
    assert outcome.summary["conditions"]["interview"]["people"] == 1  # only the bank's participant has an agent
    with sessions() as session:
        assert len(session.scalars(select(ReportCard).where(ReportCard.agent_id == agent.id)).all()) == 1
        (card,) = latest_cards(session, keyring(), [agent.id])[agent.id]
        assert card.instrument == "gss" and card.condition == "interview" and card.run_id == outcome.record.run_id
        assert card.items == 6 and 0 <= card.accuracy <= 1
        person = outcome.summary["people"][f"{participant.pseudonym}/interview"]
        assert card.accuracy == pytest.approx(person["accuracy"])
        # The bank's agent answered through the door: one event, with the run and its purpose.
        (used,) = session.scalars(select(AuditEvent).where(AuditEvent.action == "evaluation.answer")).all()
        assert used.agent_id == agent.id and used.details["run"] == outcome.record.run_id and used.details["purpose"]
    bank.dispose()


def test_other_topics_context_is_one_prefix_per_person(tmp_path, settings):
    _write_dataset(tmp_path / "two_waves.csv", [f"p{n:02d}" for n in range(8)])
    config = RunConfig(
        dataset=str(tmp_path / "two_waves.csv"), conditions=("survey",), sample=3, items=("cappun", "gunlaw"),
        survey_context="other-topics", reasons=False,
    )  # fmt: skip
    chat = ScriptedChatModel(lambda messages, schema: minimal_answer(schema))
    outcome = run_evaluation(config, settings, tmp_path / "runs", _models(chat), schema=SCHEMA)
    assert outcome.summary["conditions"]["survey"]["people"] == 3
    systems = [c["messages"][0]["content"] for c in chat.calls]
    assert len(systems) == 3 * 2  # one call per item, one person after another
    for first, second in zip(systems[::2], systems[1::2], strict=True):
        assert first == second  # the same context for both items: the prefix cache covers it
        assert "death penalty" not in first and "gun permits" not in first
        assert "people fair or try to take advantage" in first  # another topic, as many items as asked
    assert all(set(c["schema"]["properties"]) == {"answer"} for c in chat.calls)  # codes only


def test_runs_compare_side_by_side(tmp_path, settings):
    _write_dataset(tmp_path / "two_waves.csv", [f"p{n:02d}" for n in range(10)])
    configs = [
        RunConfig(
            dataset=str(tmp_path / "two_waves.csv"),
            conditions=("population-mode", "cell-mode"),
            sample=4,
            items=tuple(ITEMS),
            seed=seed,
        )
        for seed in (0, 1)
    ]
    outcomes = [run_evaluation(config, settings, tmp_path / "runs", None, schema=SCHEMA) for config in configs]
    page = compare_runs([o.store.path for o in outcomes], tmp_path / "comparison.html").read_text()
    assert all(o.record.run_id in page for o in outcomes)
    assert page.count("population-mode") == 2 and "<th>shuffle accuracy</th>" in page
    with pytest.raises(RunError, match="no summary"):
        compare_runs([tmp_path / "runs" / "never-ran"], tmp_path / "x.html")

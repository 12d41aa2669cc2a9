"""The bank's own participants under the interview + survey condition, the bank's distributions beside the
GSS's own, and a withdrawal after a run reaching the run's answers."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import create_engine, select

from agentbank.audit import log as audit
from agentbank.db.connections import make_sessionmaker, transaction
from agentbank.db.models import Participant
from agentbank.instruments.gss import load_gss
from agentbank.keys.crypto import DataKeyDestroyedError
from agentbank.participants.battery import battery_of
from agentbank.participants.withdrawal import withdraw
from agentbank.providers.fakes import ScriptedChatModel, minimal_answer
from agentbank.publication.fidelity import REFERENCE, reference_counts
from evaluation.people.bank import BankSealer
from evaluation.runs.records import RunConfig, RunStore
from evaluation.scoring.traits import read_rows
from evaluation.service import run_evaluation
from migrations.runner import SCHEMA
from tests.support.evaluation import _models, take_both_waves
from tests.support.factories import build, keyring
from tests.support.leaks import stated

PEOPLE = 5


@pytest.fixture
def bank(settings, fresh_database):
    """Five participants with an agent and both surveys, answering six GSS items."""
    gss = load_gss()
    battery = battery_of(settings)
    items = [e.item.key for page in battery.pages if page.section == "gss" for e in page.items][:6]
    keys = keyring()
    engine = create_engine(fresh_database, hide_parameters=True)
    sessions = make_sessionmaker(engine)
    with transaction(sessions) as session:
        for n in range(PEOPLE):
            participant, *_ = build(session, ref=f"file:bank-{n}.json", keys=keys)
            take_both_waves(session, keys, participant, battery, items, n, gss)
    yield {"sessions": sessions, "keys": keys, "items": items, "gss": gss}
    engine.dispose()


def test_the_interview_and_survey_condition_and_the_bank_beside_the_gss(tmp_path, settings, bank):
    conditions = ("interview", "interview-survey", "population-mode", "cell-mode", "combined")
    config = RunConfig(dataset="bank", conditions=conditions, sample=0, items=tuple(bank["items"]), traits=False)
    chat = ScriptedChatModel(lambda messages, schema: minimal_answer(schema))  # always the first option
    outcome = run_evaluation(config, settings, tmp_path / "runs", _models(chat), bank["sessions"], schema=SCHEMA)
    both = [c for c in chat.calls if "## Interview (numbered turns)" in c["messages"][0]["content"]
            and "## This person's answers to other questions" in c["messages"][0]["content"]]  # fmt: skip
    assert both, "the interview + survey condition shows the interview and the person's other answers"
    for call in both:
        asked = [k for k in bank["items"] if f"{k.upper()}:" in call["messages"][1]["content"]]
        assert asked and all(stated(call["messages"][0]["content"], k) is None for k in asked)
    summary = outcome.summary
    assert {"interview-survey", "combined"} <= set(summary["conditions"])
    assert "interview-survey" in summary["distortions"] and "combination" in summary
    # The bank's distribution beside the GSS's own in 2022: the agents always give the first option, so an
    # item's total variation is everything the GSS's people gave to the other options.
    fidelity = summary["fidelity"]
    assert fidelity["reference"] == REFERENCE and fidelity["weights"] is None
    against = fidelity["against_reference"]["interview"]
    for item, tvd in against["item_tvd"].items():
        counts = reference_counts(settings.reference_data_dir, bank["gss"].item(item))
        first = bank["gss"].item(item).codes[0]
        assert tvd == pytest.approx(1 - counts[first] / sum(counts.values()), abs=1e-4)
    assert set(fidelity["against_reference"]) >= {"people", "interview", "interview-survey"}
    assert "GSS 2022" in (outcome.store.path / "report.html").read_text()


def test_a_withdrawal_after_an_evaluation_run_leaves_the_runs_answers_unreadable(tmp_path, settings, bank):
    config = RunConfig(dataset="bank", conditions=("interview", "population-mode"), sample=0,
                       items=tuple(bank["items"]))  # fmt: skip
    chat = ScriptedChatModel(lambda messages, schema: minimal_answer(schema))
    sessions, keys = bank["sessions"], bank["keys"]
    outcome = run_evaluation(config, settings, tmp_path / "runs", _models(chat), sessions, schema=SCHEMA)
    with sessions() as session:
        leaving = session.scalars(select(Participant).order_by(Participant.pseudonym)).first()
        assert leaving is not None
        person, wrapped = leaving.pseudonym, bytes(leaving.wrapped_key)
    before = outcome.store.rows()
    assert {r.person for r in before} >= {person} and read_rows(outcome.store.path, outcome.store.sealer)

    with transaction(sessions) as session:
        withdraw(session, keys, leaving.id, audit.Actor("participant", "p"), ledger=None)
    # The run's files still hold the person's lines, sealed; nothing opens them any more, not even the key
    # as it was wrapped when the run was made.
    written = [json.loads(line) for line in (outcome.store.results_path).read_text().splitlines()]
    theirs = [row for row in written if row["person"] == person]
    assert theirs and all(row["predicted"] is None and row["sealed"] for row in theirs)
    with pytest.raises(DataKeyDestroyedError):
        keys.cipher(leaving.id, wrapped)
    store = RunStore(outcome.store.path.parent, outcome.store.path.name, BankSealer(sessions, keys))
    after = store.rows()
    assert person not in {r.person for r in after}
    assert len(after) == len([r for r in before if r.person != person]) > 0  # everyone else's still open
    traits = read_rows(store.path, store.sealer)
    assert traits and person not in {r.person for r in traits}

"""Experiments on agents, through the door with a scripted model whose behaviour is planted: the run
recovers a planted effect, its balance check flags a planted confound, and the blinded variant removes it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import create_engine, select

from agentbank.audit import log as audit
from agentbank.consultation.door import AgentDoor
from agentbank.db import make_sessionmaker, transaction
from agentbank.db.models import AuditEvent
from agentbank.instruments.model import Item
from agentbank.participants.withdrawal import withdraw
from agentbank.providers.fakes import ScriptedChatModel
from agentbank.restricted.experiments import EXPERIMENTS
from agentbank.restricted.experiments.assignment import assign
from agentbank.restricted.experiments.model import Analysis, AnalysisKind, Arm, Design, Experiment, HumanReference
from agentbank.restricted.experiments.stimuli import STUDY_INTRO
from evaluation.experiments.runs import ExperimentConfig, opened_rows
from evaluation.experiments.service import REPORT, run_experiment_set
from tests.conftest import migrated_database
from tests.support.factories import build, responder

STUDY = STUDY_INTRO.split(".")[0]  # "You are taking part in a research study"
PLANTED = Experiment(
    key="planted",
    title="A planted effect",
    citation="none: a test",
    design=Design.BETWEEN,
    arms=(
        Arm("treat", "the price went up", ("TREATMENT. The price went up.",)),
        Arm("control", "the price stayed", ("CONTROL. The price stayed the same.",)),
    ),
    steps=((Item("score", "numeric", "How many do you buy?", minimum=0, maximum=40),),),
    analysis=Analysis(AnalysisKind.MEANS, "score", treatment="treat", control="control"),
    probes=(Item("p_income", "numeric", "What do you assume your income is?", minimum=0, maximum=40),),
    human=HumanReference(2.0, True, "planted"),
)
NOISE = [-3, -1, 0, 0, 1, 3]  # each arm gets these: SD 2, so the planted effect of 4 is d = 2
EFFECT, DEMAND, CONFOUND = 4, 8, 6


@pytest.fixture(scope="module")
def database(database_url: str) -> Iterator[str]:
    with migrated_database(database_url) as url:  # one for the module: the agents are built once
        yield url


@pytest.fixture(scope="module")
def bank(database: str) -> Iterator[dict[str, Any]]:
    """Twelve built agents, and each agent's noise by its canary (so the model can tell agents apart)."""
    engine = create_engine(database)
    sessions = make_sessionmaker(engine)
    built = []
    with transaction(sessions) as session:
        embedder = keys = None
        for n in range(12):
            participant, agent, _, embedder, keys = build(
                session, ref=f"file:exp-{n}.json", chat=ScriptedChatModel(responder), embedder=embedder, keys=keys
            )
            built.append((participant.id, agent.id))
    arms = assign(PLANTED, [a for _, a in built], seed=0)
    noise = {}
    for arm in ("treat", "control"):
        members = sorted((a for a in arms if arms[a] == (arm,)), key=str)
        noise.update({keys.canary(a): NOISE[i] for i, a in enumerate(members)})
    yield {"sessions": sessions, "keys": keys, "embedder": embedder, "built": built, "noise": noise}
    engine.dispose()


def planted(noise: dict[str, int]) -> Any:
    """The scripted people: the treatment raises the score by EFFECT; told it is a study, an agent in the
    treatment arm adds DEMAND and assumes a higher income (CONFOUND), as an LLM reading the design might."""

    def reply(messages: list[dict[str, str]], schema: dict[str, Any] | None) -> Any:
        system, user = messages[0]["content"], messages[-1]["content"]
        if schema is None or ("TREATMENT" not in system and "CONTROL" not in system):
            return responder(messages, schema)
        canary = re.search(r"Private marker, never to be repeated: (\S+)", system).group(1)  # type: ignore[union-attr]
        treated, told = "TREATMENT" in system, STUDY in system
        if user.startswith("SCORE"):
            value = 10 + noise.get(canary, 0) + EFFECT * treated + DEMAND * (treated and told)
        else:
            value = 20 + noise.get(canary, 0) + CONFOUND * (treated and told)
        return {"reason": "As I would.", "answer": value}

    return reply


def door_with(bank: dict[str, Any], chat: ScriptedChatModel) -> AgentDoor:
    return AgentDoor(chat=chat, embedder=bank["embedder"], keys=bank["keys"], memory_token_budget=4000)


def test_the_run_recovers_a_planted_effect_flags_the_confound_and_blinding_removes_it(bank, tmp_path, monkeypatch):
    monkeypatch.setitem(EXPERIMENTS, "planted", PLANTED)
    chat = ScriptedChatModel(planted(bank["noise"]))
    config = ExperimentConfig(("planted",), ("interview",))
    outcome = run_experiment_set(door_with(bank, chat), bank["sessions"], chat.name, config, tmp_path)

    results = {r["blinding"]: r for r in outcome.summary["experiments"][0]["results"]}
    blinded, unblinded = results["blinded"]["effect"], results["unblinded"]["effect"]
    assert blinded["d_low"] <= EFFECT / 2 <= blinded["d_high"]  # the planted d = 4 / SD 2
    assert blinded["d"] == pytest.approx(2.0) and blinded["n"] == {"treatment": 6, "control": 6}
    assert unblinded["d"] == pytest.approx((EFFECT + DEMAND) / 2)
    assert [c["flagged"] for c in results["unblinded"]["balance"]] == [True]
    assert [c["flagged"] for c in results["blinded"]["balance"]] == [False]
    assert outcome.summary["experiments"][0]["blinding_differs"] == {"interview": True}
    assert any("p_income" in w for w in outcome.summary["warnings"])
    report = (outcome.store.path / REPORT).read_text()
    assert "Balance checks" in report and "p_income" in report and "<img" in report

    # Blinded agents were told nothing of a study or of the other arm; unblinded ones were.
    systems = [call["messages"][0]["content"] for call in chat.calls]
    assert sum(STUDY in s for s in systems) == len(systems) / 2
    assert not any("CONTROL" in s for s in systems if "TREATMENT" in s and STUDY not in s)

    # One audit event per agent and trial, saying what was run; resuming asks the model nothing more.
    with bank["sessions"]() as session:
        events = list(session.scalars(select(AuditEvent).where(AuditEvent.action == "experiment.answer")))
    assert len(events) == 24 and {e.details["blinding"] for e in events} == {"blinded", "unblinded"}
    assert all(e.details["experiment"] == "planted" and len(e.details["arms"]) == 1 for e in events)
    calls = len(chat.calls)
    again = run_experiment_set(door_with(bank, chat), bank["sessions"], chat.name, config, tmp_path)
    assert again.resumed and len(chat.calls) == calls
    assert json.loads((outcome.store.path / "summary.json").read_text())["experiments"][0]["key"] == "planted"


def test_a_multi_step_trial_shows_the_earlier_step_and_the_agents_answer(bank, tmp_path):
    chat = ScriptedChatModel(responder)
    config = ExperimentConfig(("schilke",), ("interview",), ("unblinded",), agents=4, seed=3)
    outcome = run_experiment_set(door_with(bank, chat), bank["sessions"], chat.name, config, tmp_path)
    trust_calls = [c for c in chat.calls if c["messages"][-1]["content"].startswith("TRUST")]
    probe_calls = [c for c in chat.calls if c["messages"][-1]["content"].startswith("P_")]
    assert len(trust_calls) == 4 and probe_calls
    for call in trust_calls:
        system = call["messages"][0]["content"]
        step_one, answered, step_two = (
            system.index("market for used phones"),
            system.index("You answered:"),
            system.index("tripled to $3"),
        )
        assert step_one < answered < step_two  # stimulus, the agent's own answer, then the next stimulus
        assert "How much power do you feel you have in this market? → 1 (none at all)" in system
    assert not any("You answered:" in c["messages"][0]["content"] for c in probe_calls)
    assert outcome.summary["experiments"][0]["results"][0]["agents"] == 4


def test_an_agent_withdrawn_during_the_run_is_left_out(bank, tmp_path, monkeypatch):
    monkeypatch.setitem(EXPERIMENTS, "planted", PLANTED)
    gone_participant, gone_agent = bank["built"][-1]
    inner = planted(bank["noise"])
    state = {"withdrawn": False}

    def withdrawing(messages, schema):  # the first answer of the run withdraws another participant
        if not state["withdrawn"]:
            state["withdrawn"] = True
            with transaction(bank["sessions"]) as session:
                withdraw(session, bank["keys"], gone_participant, audit.Actor("participant", "p"), ledger=None)
        return inner(messages, schema)

    chat = ScriptedChatModel(withdrawing)
    config = ExperimentConfig(("planted",), ("demographic",), ("blinded",), seed=0)
    outcome = run_experiment_set(door_with(bank, chat), bank["sessions"], chat.name, config, tmp_path)
    found = outcome.summary["experiments"][0]["results"][0]
    assert found["excluded"] == 1 and found["agents"] == 12
    assert sum(found["effect"]["n"].values()) == 11
    with bank["sessions"]() as session:
        query = select(AuditEvent.details).where(
            AuditEvent.agent_id == gone_agent, AuditEvent.action == "experiment.answer"
        )
        assert not [use for use in session.scalars(query) if use.get("condition") == "demographic"]


def test_a_withdrawal_after_the_run_leaves_nothing_readable_in_it(bank, tmp_path, monkeypatch):
    monkeypatch.setitem(EXPERIMENTS, "planted", PLANTED)
    chat = ScriptedChatModel(planted(bank["noise"]))
    config = ExperimentConfig(("planted",), ("persona",), ("blinded",))
    outcome = run_experiment_set(door_with(bank, chat), bank["sessions"], chat.name, config, tmp_path)
    stored = (outcome.store.path / "results.jsonl").read_text()
    assert '"outcomes": {}' in stored and '"score"' not in stored  # answers sealed with each person's key
    assert outcome.summary["experiments"][0]["results"][0]["excluded"] == 0

    leaving, left_agent = bank["built"][0]
    with transaction(bank["sessions"]) as session:
        withdraw(session, bank["keys"], leaving, audit.Actor("participant", "p"), ledger=None)
    opened = opened_rows(outcome.store, bank["sessions"], bank["keys"])  # the run made before the withdrawal
    (gone,) = [r for r in opened if r.agent_id == str(left_agent)]
    assert not gone.available and gone.outcomes == {} and gone.probes == {}
    assert sum(r.available for r in opened) == len(opened) - 1
    # The same command now runs the agents that remain (a run's agents are part of its name).
    again = run_experiment_set(door_with(bank, chat), bank["sessions"], chat.name, config, tmp_path)
    assert not again.resumed and str(left_agent) not in again.record.people

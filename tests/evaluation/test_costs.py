"""An evaluation's dry run: the bank's own agents' calls planned as the run makes them, no model asked,
and the tokens the run then used within the stated tolerance (a scripted model that counts words)."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, func, select

from agentbank.consultation.door import AgentDoor
from agentbank.db.connections import make_sessionmaker, transaction
from agentbank.db.models import AnswerRecord, AuditEvent
from agentbank.instruments.gss import load_gss
from agentbank.participants.battery import battery_of
from agentbank.providers.fakes import HashingEmbedder, ScriptedChatModel, minimal_answer
from evaluation.costs import estimate_evaluation
from evaluation.runs.records import RunConfig, RunError
from evaluation.service import run_evaluation
from migrations.runner import SCHEMA
from tests.support.evaluation import _models, take_both_waves
from tests.support.factories import build, keyring

TOLERANCE = 0.02  # prompt and completion tokens; cached within the first prompt's share besides


def test_an_evaluation_is_estimated_before_it_runs(tmp_path, settings, fresh_database):
    gss = load_gss()
    battery = battery_of(settings)
    items = [e.item.key for page in battery.pages if page.section == "gss" for e in page.items][:6]
    keys = keyring()
    sessions = make_sessionmaker(create_engine(fresh_database, hide_parameters=True))
    with transaction(sessions) as session:
        for n in range(4):
            participant, *_ = build(session, ref=f"file:estimate-{n}.json", keys=keys)
            take_both_waves(session, keys, participant, battery, items, n, gss)
    config = RunConfig(dataset="bank", conditions=("interview", "demographic", "population-mode"), sample=0,
                       items=tuple(items), items_per_call=1, traits=False)  # fmt: skip
    chat = ScriptedChatModel(lambda messages, schema: minimal_answer(schema))
    models = _models(chat)
    budget = models.memory_token_budget
    planner = AgentDoor(chat=chat, embedder=HashingEmbedder(), keys=keys, memory_token_budget=budget)
    estimate = estimate_evaluation(config, settings, tmp_path / "runs", planner, sessions, keys)
    assert chat.calls == []  # nothing asked
    with sessions() as session:
        assert session.scalar(select(func.count()).select_from(AnswerRecord)) == 0
        assert session.scalar(select(func.count()).where(AuditEvent.action == "evaluation.answer")) == 0
    assert estimate.calls == estimate.answers == 4 * 2 * len(items)  # two model conditions; the mode asks none

    outcome = run_evaluation(config, settings, tmp_path / "runs", models, sessions, schema=SCHEMA)
    used = outcome.summary["tokens"]
    assert len(chat.calls) == estimate.calls
    assert abs(estimate.prompt_tokens - used["prompt"]) <= TOLERANCE * used["prompt"]
    assert abs(estimate.completion_tokens - used["completion"]) <= TOLERANCE * used["completion"]
    first_share = used["cached"] - estimate.cached_tokens
    assert 0 <= first_share <= TOLERANCE * used["cached"]
    print(f"\nevaluation, 4 people × {len(items)} items × 2 conditions: prompt {estimate.prompt_tokens}/"
          f"{used['prompt']}, cached {estimate.cached_tokens}/{used['cached']}, completion "
          f"{estimate.completion_tokens}/{used['completion']} (estimated/used)")  # fmt: skip
    # Resumed, the run lacks nothing: its estimate is empty.
    again = estimate_evaluation(config, settings, tmp_path / "runs", planner, sessions, keys)
    assert again.calls == 0


def test_other_datasets_are_refused_with_the_reason(tmp_path, settings):
    config = RunConfig(dataset="gss_panel_2006", conditions=("interview",))
    with pytest.raises(RunError, match="bank's own agents"):
        estimate_evaluation(config, settings, tmp_path, None, None, keyring())  # type: ignore[arg-type]

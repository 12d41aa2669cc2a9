"""The bank scores its own agents: participants with known survey answers in two waves, a scripted model
with known answers, and every figure of their (sealed) report cards and of the item validity a release
publishes equal to a hand computation."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from datetime import timedelta

import numpy as np
import pytest
from pydantic import SecretStr
from sqlalchemy import create_engine, select, text

from agentbank.audit.log import SYSTEM
from agentbank.building.agents import BuildConfig
from agentbank.building.build import build_agent
from agentbank.building.validity.cards import latest_cards
from agentbank.building.validity.measures import REFRESH_TASK
from agentbank.core.statuses import AgentStatus
from agentbank.db.connections import make_sessionmaker, transaction
from agentbank.db.models import Agent, AuditEvent, Participant, ReleaseValidity, ReportCard
from agentbank.instruments.gss import load_gss
from agentbank.participants.battery import answers, battery_of
from agentbank.providers.fakes import HashingEmbedder, ScriptedChatModel, minimal_answer
from agentbank.publication.privacy import Budget
from agentbank.publication.releases import Policy, cut_release
from agentbank.runtime.bank import Bank
from agentbank.runtime.worker import Worker
from evaluation.people.bank import bank_dataset
from evaluation.people.waves import DatasetError
from evaluation.refresh import refresh_bank_validity
from evaluation.runs.records import RunConfig
from evaluation.service import REPORT, run_evaluation
from evaluation.standing import standing
from migrations.runner import SCHEMA
from tests.app.api.factories import NoNoise, store_answers
from tests.support.evaluation import START, _models, take_both_waves, truth
from tests.support.factories import build, keyring

PEOPLE = 5


def test_cards_and_item_validity_equal_a_hand_computation(tmp_path, settings, fresh_database):
    gss = load_gss()
    battery = battery_of(settings)
    items = [e.item.key for page in battery.pages if page.section == "gss" for e in page.items][:6]
    keys = keyring()
    bank = create_engine(fresh_database, hide_parameters=True)
    sessions = make_sessionmaker(bank)
    people = {}
    with transaction(sessions) as session:
        for n in range(PEOPLE):
            participant, agent, *_ = build(session, ref=f"file:bank-{n}.json", keys=keys)
            take_both_waves(session, keys, participant, battery, items, n, gss)
            people[participant.pseudonym] = (n, agent.id)
        # One participant took only the first survey: not scored.
        late, *_ = build(session, ref="file:bank-late.json", keys=keys)
        for key in battery.keys(1):
            answers.save_answer(session, keys, late.id, battery, 1, key, None, START, actor=SYSTEM)
    conditions = ("interview", "ablated-40", "demographic", "population-mode")
    config = RunConfig(dataset="bank", conditions=conditions, sample=0, items=tuple(items), items_per_call=10)
    chat = ScriptedChatModel(lambda messages, schema: minimal_answer(schema))  # always the first option
    outcome = run_evaluation(config, settings, tmp_path / "runs", _models(chat), sessions, schema=SCHEMA)
    assert outcome.record.people == sorted(people)
    # The people's own answers never reach the run's files (they are joined again when scored), and every
    # condition asked their own agent in the bank: nothing of theirs went to the evaluation database.
    written = [json.loads(line) for line in (outcome.store.path / "results.jsonl").read_text().splitlines()]
    assert written and all(row["actual"] is None and row["retest"] is None for row in written)
    assert {row["condition"] for row in written} == set(conditions)
    with sessions() as session:
        asked = session.scalars(select(AuditEvent.agent_id).where(AuditEvent.action == "evaluation.answer")).all()
    # One consultation per person, model condition and instrument (GSS, Big Five, games).
    assert len(asked) == 3 * 3 * PEOPLE and set(asked) == {agent_id for _, agent_id in people.values()}
    assert not evaluation_database_exists(settings)

    by_person = {p: {k: truth(n, k, gss.item(item).codes) for k, item in enumerate(items)}
                 for p, (n, _) in people.items()}  # fmt: skip
    with sessions() as session:
        # Sealed: nothing of a card's scores is in its row.
        assert all(b"accuracy" not in c.scores_encrypted for c in session.scalars(select(ReportCard)))
        opened = latest_cards(session, keys, [agent_id for _, agent_id in people.values()])
        for pseudonym, (_, agent_id) in people.items():
            cards = {c.condition: c for c in opened[agent_id] if c.instrument == "gss"}
            assert set(cards) == {"interview", "ablated-40"}  # a card for each condition of the agent itself
            card = cards["interview"]
            mine = by_person[pseudonym]
            first_options = [gss.item(item).codes[0] for item in items]
            hits = sum(mine[k][0] == first_options[k] for k in range(len(items)))
            kept = sum(mine[k][0] == mine[k][1] for k in range(len(items)))
            assert card.condition == "interview" and card.items == len(items)
            assert card.accuracy == pytest.approx(hits / len(items))
            assert card.self_consistency == pytest.approx(kept / len(items))
            assert card.normalized_accuracy == pytest.approx(hits / kept)
            assert card.normalized_low <= card.normalized_accuracy <= card.normalized_high
            # The baseline: everyone else's most common first answer (ties to the smaller code).
            guesses = []
            for k in range(len(items)):
                counts = Counter(by_person[other][k][0] for other in people if other != pseudonym)
                guesses.append(min(counts, key=lambda code: (-counts[code], code)))
            baseline_hits = sum(mine[k][0] == guesses[k] for k in range(len(items)))
            assert card.baseline == "population-mode"
            assert card.baseline_normalized == pytest.approx(baseline_hits / kept)
    # Item validity is published only inside a release: with no noise, its counts are the hand's.
    with transaction(sessions) as session:
        agents = session.scalars(select(Agent).where(Agent.id.in_([a for _, a in people.values()]))).all()
        store_answers(session, list(agents), [dict.fromkeys(items, gss.item(items[0]).codes[0])] * len(agents))
        policy = Policy(2, Budget(mu=100.0, lifetime_mu=500.0), min_interval_s=0)
        release = cut_release(session, keys, lambda _: gss, policy, SYSTEM, noise=NoNoise()).release
        validity = {v.item: v for v in session.scalars(select(ReleaseValidity)
                                                       .where(ReleaseValidity.release_id == release.id))}  # fmt: skip
    assert set(validity) == set(items)
    for k, item in enumerate(items):
        answered = [by_person[p][k] for p in people]
        first = gss.item(item).codes[0]
        assert validity[item].scored == PEOPLE
        assert validity[item].right == sum(a[0] == first for a in answered)
        assert validity[item].repeated == sum(a[0] == a[1] for a in answered)
        assert validity[item].run_id == outcome.record.run_id
    with sessions() as session:
        # The operator's view of the same bank.
        found = standing(session, tmp_path / "runs", START + timedelta(days=20))
    assert (found.participants, found.wave1, found.wave2, found.wave2_due) == (PEOPLE + 1, PEOPLE, PEOPLE, 0)
    assert found.agents == found.participants and found.carded == PEOPLE
    assert found.run is not None and found.run.run_id == outcome.record.run_id
    assert set(found.conditions) == set(conditions)
    # The interview-length curve is in the report: the whole interview and 40% of its turns removed.
    report = (outcome.store.path / REPORT).read_text()
    curve = report.split("<h2>Interview length</h2>")[1].split("<h2>")[0]
    assert "<td>0%</td>" in curve and "<td>40%</td>" in curve

    # The Big Five, per trait across people: the scripted agent's answer 1 to every item makes each trait
    # (5 × 1 + 5 × (6 − 1)) / 10 = 3; each person's own is (v + 3) / 2.
    extraversion = outcome.summary["traits"]["ipip50"]["extraversion"]
    first = [(1 + n % 5 + 3) / 2 for n in range(PEOPLE)]
    retest = [(min(5, 1 + n % 5 + n % 2) + 3) / 2 for n in range(PEOPLE)]
    assert extraversion["people"] == PEOPLE
    assert extraversion["conditions"]["interview"]["mae"] == pytest.approx(sum(abs(3 - t) for t in first) / PEOPLE)
    assert extraversion["conditions"]["interview"]["r"] is None  # the same answer for everyone: no correlation
    assert extraversion["retest_r"] == pytest.approx(float(np.corrcoef(retest, first)[0, 1]))
    assert extraversion["retest_mae"] == pytest.approx(
        sum(abs(a - b) for a, b in zip(retest, first, strict=True)) / PEOPLE
    )
    assert "population-mean" in extraversion["conditions"] and "<h2>Big Five and economic games</h2>" in report
    bank.dispose()


def evaluation_database_exists(configured) -> bool:
    engine = create_engine(configured.database_url.get_secret_value())
    with engine.connect() as conn:
        found = conn.scalar(text("SELECT 1 FROM pg_database WHERE datname = :name"),
                            {"name": configured.evaluation_database})  # fmt: skip
    engine.dispose()
    return bool(found)


def test_a_bank_without_retested_participants_says_so(settings, fresh_database):
    bank = create_engine(fresh_database, hide_parameters=True)
    sessions = make_sessionmaker(bank)
    with transaction(sessions) as session:
        build(session, ref="file:no-survey.json")
    with pytest.raises(DatasetError, match="0 participants with both surveys complete"):
        bank_dataset(sessions, keyring(), load_gss())
    bank.dispose()


def queued_refreshes(sessions) -> list[str]:
    with sessions() as session:
        return list(session.scalars(text("SELECT status FROM procrastinate_jobs WHERE task_name = :task"),
                                    {"task": REFRESH_TASK}))  # fmt: skip


def test_a_retest_or_a_rebuild_queues_one_refresh_that_a_worker_carries_out(tmp_path, settings, fresh_database):
    gss = load_gss()
    battery = battery_of(settings)
    items = [e.item.key for page in battery.pages if page.section == "gss" for e in page.items][:4]
    keys = keyring()
    engine = create_engine(fresh_database, hide_parameters=True)
    sessions = make_sessionmaker(engine)
    agents = []
    with transaction(sessions) as session:
        for n in range(3):
            participant, agent, chat, embedder, _ = build(session, ref=f"file:refresh-{n}.json", keys=keys)
            take_both_waves(session, keys, participant, battery, items, n, gss)
            agents.append((participant, agent))
    # Three retests, one refresh waiting: it will score all three.
    assert queued_refreshes(sessions) == ["todo"]

    local = settings.model_copy(update={"database_url": SecretStr(fresh_database), "data_dir": tmp_path})
    scripted = ScriptedChatModel(lambda messages, schema: minimal_answer(schema))
    bank = Bank(local, engine, sessions, keys, scripted, HashingEmbedder())
    asyncio.run(Worker(bank, refresh=refresh_bank_validity).run_async(wait=False))
    assert queued_refreshes(sessions) == ["succeeded"]
    with sessions() as session:
        carded = set(session.scalars(select(ReportCard.agent_id).where(ReportCard.condition == "interview")))
    assert carded == {agent.id for _, agent in agents}

    # The first participant's agent is rebuilt: a fresh card is asked for.
    with transaction(sessions) as session:
        participant = session.get_one(Participant, agents[0][0].id)
        build_agent(session, participant, chat=chat, embedder=embedder, keys=keys,
                    config=BuildConfig.of(chat, embedder, 0))  # fmt: skip
    assert sorted(queued_refreshes(sessions)) == ["succeeded", "todo"]
    asyncio.run(Worker(bank, refresh=refresh_bank_validity).run_async(wait=False))
    with sessions() as session:
        rebuilt = session.scalar(select(Agent.id).where(Agent.participant_id == participant.id,
                                                        Agent.status == AgentStatus.ACTIVE))  # fmt: skip
        fresh = session.scalars(select(ReportCard).where(ReportCard.agent_id == rebuilt)).all()
    assert rebuilt != agents[0][1].id and [c.condition for c in fresh] == ["interview"]
    engine.dispose()

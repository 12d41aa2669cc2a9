"""The worker is a table of tasks: every task the bank queues has its entry (name, queue, retries) and its
domain function; a worker loads the models only for a task that needs them; and the command line's builds
run through the same build as a worker's (``building.runs``), reporting each one."""

from __future__ import annotations

import pytest
from sqlalchemy.orm import sessionmaker

from agentbank.audit import log as audit
from agentbank.building import runs
from agentbank.building.agents import BUILD_QUEUE, BUILD_TASK
from agentbank.building.runs import Builder, build_pending
from agentbank.building.transcripts import store_interview
from agentbank.building.validity.measures import REFRESH_QUEUE, REFRESH_TASK
from agentbank.core.errors import ProviderError
from agentbank.core.settings import Settings
from agentbank.providers.fakes import HashingEmbedder, ScriptedChatModel
from agentbank.publication.population import POPULATION_QUEUE, POPULATION_TASK
from agentbank.publication.releases import CUT_TASK, TABLE_QUEUE
from agentbank.restricted.groups.storage import GROUP_TASK
from agentbank.restricted.jobs.lifecycle import JOB_QUEUE, JOB_TASK
from agentbank.runtime.bank import Bank
from agentbank.runtime.worker import QUEUES, RETRY, Worker
from tests.support.factories import SECRET, interview, keyring, responder


@pytest.fixture
def bank(engine, database_url, tmp_path):
    """A bank on the test database, opened without models (as ``agentbank worker`` opens it)."""
    settings = Settings(secret_key=SECRET, data_dir=tmp_path, database_url=database_url)
    with engine.connect() as conn:
        outer = conn.begin()
        sessions = sessionmaker(bind=conn, join_transaction_mode="create_savepoint", expire_on_commit=False)
        yield Bank(settings, engine, sessions, keyring())
        outer.rollback()


def test_every_task_the_bank_queues_has_its_entry_and_the_worker_listens_on_its_queue(bank):
    worker = Worker(bank, refresh=lambda _bank, _chat: None)
    table = {task.name: (task.queue, task.retry) for task in worker.tasks()}
    assert table == {
        JOB_TASK: (JOB_QUEUE, True), GROUP_TASK: (JOB_QUEUE, True), POPULATION_TASK: (POPULATION_QUEUE, True),
        BUILD_TASK: (BUILD_QUEUE, True),
        CUT_TASK: (TABLE_QUEUE, False), REFRESH_TASK: (REFRESH_QUEUE, True),
    }  # fmt: skip
    registered = worker.app.tasks
    for name, (queue, retried) in table.items():
        assert registered[name].queue == queue
        assert registered[name].retry_strategy == (RETRY if retried else None), name
        assert queue in {*QUEUES, REFRESH_QUEUE}
    periodic = {key[1] for key in worker.app.periodic_registry.periodic_tasks}
    assert periodic == {"cut-release", "audit-checkpoint", "audit-sweep", "recover-stalled", "retest-invitations"}
    assert REFRESH_TASK not in {task.name for task in Worker(bank).tasks()}  # taken only with a refresh


def test_a_worker_loads_the_models_for_the_first_task_that_needs_them_and_not_before(bank):
    worker = Worker(bank)
    worker._cut(audit.SYSTEM, force=False)  # a release on an empty bank: no model needed
    assert bank.chat is None and bank.embedder is None
    assert worker.chat.name == "fake" and worker.door is not None  # a task that answers loads them
    assert bank.chat is not None and bank.embedder is not None
    assert bank.load_models() == (bank.chat, bank.embedder)  # once


class Shown:
    """A ``PendingReport`` that keeps what it is told."""

    def __init__(self) -> None:
        self.events: list[tuple] = []

    def started(self, total, at_once):
        self.events.append(("started", total, at_once))

    def step(self, pseudonym, name):
        self.events.append(("step", pseudonym))

    def built(self, agent_id, participant_id):
        self.events.append(("built", participant_id))

    def failed(self, pseudonym, exc):
        self.events.append(("failed", pseudonym, str(exc)))

    def finished_one(self):
        self.events.append(("finished",))


def test_the_command_lines_builds_report_each_build_and_go_on_past_a_failed_one(bank, monkeypatch):
    with bank.sessions() as session, session.begin():
        doomed, fine = (store_interview(session, interview(f"file:{n}.json", 6), bank.keys) for n in range(2))
    real = runs.build_now

    def build_now(sessions, participant_id, **kwargs):  # the endpoint goes away during one build
        if participant_id == doomed.id:
            raise ProviderError("the endpoint went away")
        return real(sessions, participant_id, **kwargs)

    monkeypatch.setattr(runs, "build_now", build_now)
    shown = Shown()
    builder = Builder(bank.sessions, ScriptedChatModel(responder), HashingEmbedder(), bank.keys, 1500)
    assert build_pending(builder, shown) == (1, 1)
    assert shown.events[0] == ("started", 2, 1)
    assert ("built", fine.id) in shown.events
    assert ("failed", doomed.pseudonym, "the endpoint went away") in shown.events
    assert shown.events.count(("finished",)) == 2 and any(e[0] == "step" for e in shown.events)
    assert build_pending(builder, shown) == (0, 1)  # the built one is not pending any more

"""A build attempt that runs out of time: a warning with the hint, the reason kept, and a lighter retry
that finishes, with its progress logged step by step."""

import logging

import procrastinate
import pytest
from sqlalchemy import select
from sqlalchemy.orm import sessionmaker

from agentbank.building.agents import BUILD_QUEUE, BUILD_TASK
from agentbank.building.progress import failed_builds
from agentbank.building.reflection import REFLECTION_MAX_TOKENS
from agentbank.building.transcripts import store_interview
from agentbank.core.errors import ProviderTimeoutError
from agentbank.core.settings import Settings
from agentbank.db.models import Agent, BuildFailure
from agentbank.providers.embedded_llm import TIMEOUT_HINT
from agentbank.providers.fakes import HashingEmbedder, ScriptedChatModel
from agentbank.runtime.bank import Bank
from agentbank.runtime.worker import Worker
from tests.support.factories import SECRET, interview, keyring, responder


class SlowMachineChat(ScriptedChatModel):
    """Runs out of time on any reflection with the full token budget, as a busy machine does."""

    def complete(self, request):
        if request.max_tokens >= REFLECTION_MAX_TOKENS:
            raise ProviderTimeoutError("the embedded model did not finish within 95 s", hint=TIMEOUT_HINT)
        return super().complete(request)


class TooSlowForAnyBudget(ScriptedChatModel):
    def complete(self, request):
        raise ProviderTimeoutError("slow")


def job(attempts: int) -> procrastinate.jobs.Job:
    return procrastinate.jobs.Job(
        id=987654, queue=BUILD_QUEUE, lock=None, queueing_lock=None, task_name=BUILD_TASK, attempts=attempts
    )


@pytest.fixture
def worker(engine, database_url, tmp_path):
    settings = Settings(secret_key=SECRET, data_dir=tmp_path, database_url=database_url, reflection_word_budget=1500)
    with engine.connect() as conn:
        outer = conn.begin()
        sessions = sessionmaker(bind=conn, join_transaction_mode="create_savepoint", expire_on_commit=False)
        bank = Bank(settings, engine, sessions, keyring(), SlowMachineChat(responder), HashingEmbedder())
        yield Worker(bank)
        outer.rollback()


def test_a_timed_out_attempt_warns_and_the_lighter_retry_builds_the_agent(worker, caplog):
    with worker.bank.sessions() as session, session.begin():
        participant = store_interview(session, interview("file:slow.json", 40), worker.bank.keys)
    caplog.set_level(logging.INFO, logger="agentbank.runtime.worker")

    with pytest.raises(ProviderTimeoutError):
        worker._build(job(0), participant.id, {}, 3)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("agent 1 of" in w and "did not finish within 95 s" in w and "lighter budget" in w for w in warnings)
    assert any("AGENTBANK_CHAT_TIMEOUT_S" in w for w in warnings)
    with worker.bank.sessions() as session:
        failure = session.scalars(select(BuildFailure).where(BuildFailure.participant_id == participant.id)).one()
        assert failure.attempt == 1 and failure.error == "ProviderTimeoutError" and failure.hint == TIMEOUT_HINT

    caplog.clear()
    worker._build(job(1), participant.id, {}, 3)
    with worker.bank.sessions() as session:
        agent = session.scalars(select(Agent).where(Agent.participant_id == participant.id)).one()
    assert agent.build["reflection_max_tokens"] == REFLECTION_MAX_TOKENS // 2
    assert agent.build["reflection_word_budget"] == 750
    progress = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert any("attempt 2 of 3" in p and "reflection by a psychologist" in p for p in progress)
    assert any(p.startswith("built agent 1 of") for p in progress)


def test_a_build_out_of_attempts_is_listed_with_its_reason(worker, caplog):
    with worker.bank.sessions() as session, session.begin():
        participant = store_interview(session, interview("file:slow2.json", 40), worker.bank.keys)
    worker.bank.chat = TooSlowForAnyBudget(responder)
    with pytest.raises(ProviderTimeoutError):
        worker._build(job(2), participant.id, {}, 3)
    assert any(r.levelno == logging.ERROR and "failed for good" in r.getMessage() for r in caplog.records)
    with worker.bank.sessions() as session:
        conn = session.connection()
        conn.exec_driver_sql(
            "INSERT INTO procrastinate_jobs (id, queue_name, task_name, status, args, attempts) "
            f"VALUES (987654, '{BUILD_QUEUE}', '{BUILD_TASK}', 'failed', "
            f'\'{{"participant_id": "{participant.id}"}}\', 3)'
        )
        listed = failed_builds(session)
    assert [(f.pseudonym, f.attempts, f.reason) for f in listed] == [(participant.pseudonym, 3, "slow")]


def test_the_attempt_called_last_is_the_one_the_queue_does_not_retry():
    from agentbank.runtime.worker import ATTEMPTS, RETRY

    for attempts in range(ATTEMPTS):
        retried = RETRY.get_retry_decision(exception=ProviderTimeoutError("slow"), job=job(attempts)) is not None
        called_last = attempts + 1 >= ATTEMPTS  # what ``Worker._build`` logs as "failed for good"
        assert retried != called_last, attempts

"""The worker: takes queued tasks (job answers, population answers) and runs them with the bank's models.

Any number of workers may run on any number of machines. A worker that dies mid-task leaves its task
in the queue as "doing"; every worker, on start and then each minute, puts back the tasks of workers
whose heartbeat stopped, and the task's own result write is idempotent, so each result is written
exactly once.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid

import procrastinate
from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from agentbank import audit
from agentbank.agents import BUILD_QUEUE, BUILD_TASK, BuildConfig, build_agent
from agentbank.audit_keys import load_signer
from agentbank.bank import Bank
from agentbank.builds import BuildProgress, build_counts, record_failure
from agentbank.checkpoints import CheckpointFile, Schedule, publish_checkpoint
from agentbank.db import transaction
from agentbank.db.engine import database_url
from agentbank.errors import AgentBankError
from agentbank.instruments import load_instrument, select_items
from agentbank.jobs import JOB_QUEUE, JOB_TASK, fail_job_task, run_job_task
from agentbank.models import Agent, Participant
from agentbank.population import POPULATION_QUEUE, POPULATION_TASK, fill_agent
from agentbank.queue import queue_app, recover_stalled
from agentbank.releases import TABLE_QUEUE, TABLE_TASK, cut_release, protect_table

log = logging.getLogger(__name__)
MAX_ATTEMPTS = 3  # of a task, before it fails for good
AUDIT_QUEUE = "audit"
QUEUES = (AUDIT_QUEUE, JOB_QUEUE, BUILD_QUEUE, POPULATION_QUEUE)
# How often a worker asks whether a checkpoint is due (croniter's sixth field is seconds); signing
# itself follows the settings' events and interval.
CHECKPOINT_CRON = "* * * * * */10"


class Worker:
    """One worker process's task handlers, bound to an open bank."""

    def __init__(self, bank: Bank) -> None:
        self.bank = bank
        self.heartbeat_s = bank.settings.worker_heartbeat_s
        self.stalled_after_s = bank.settings.worker_stalled_after_s
        self.app = queue_app(database_url(bank.settings))
        self._built = 0  # builds this worker finished, for "agent n of N"
        self._register()

    def _register(self) -> None:
        app, reference = self.app, self.bank.settings.reference_data_dir
        retry = procrastinate.RetryStrategy(max_attempts=MAX_ATTEMPTS, wait=5)

        @app.task(name=JOB_TASK, queue=JOB_QUEUE, retry=retry, pass_context=True)
        def job_agent(context: procrastinate.JobContext, job_id: str, agent_id: str) -> None:
            self._run_job(context.job, uuid.UUID(job_id), uuid.UUID(agent_id))

        @app.task(name=POPULATION_TASK, queue=POPULATION_QUEUE, retry=retry)
        def population_agent(agent_id: str, instrument: str, items: list[str]) -> None:
            loaded = load_instrument(instrument, reference)
            with transaction(self.bank.sessions) as session:
                fill_agent(session, self.bank.door, uuid.UUID(agent_id), loaded, select_items(loaded, items))

        @app.task(name=BUILD_TASK, queue=BUILD_QUEUE, retry=retry, pass_context=True)
        def build(context: procrastinate.JobContext, participant_id: str, population: dict[str, list[str]]) -> None:
            self._build(context.job, uuid.UUID(participant_id), population, MAX_ATTEMPTS)

        @app.task(name=TABLE_TASK, queue=TABLE_QUEUE, retry=retry)
        def release_table(release_id: int, instrument: str, item: str, breakdowns: list[str]) -> None:
            loaded = load_instrument(instrument, reference)
            with transaction(self.bank.sessions) as session:
                protect_table(session, loaded, release_id, item, breakdowns)

        @app.periodic(cron=self.bank.settings.release_cron, periodic_id="cut-release")
        @app.task(name="agentbank.cut_release", queue=TABLE_QUEUE)
        def scheduled_release(timestamp: int) -> None:
            with transaction(self.bank.sessions) as session:
                outcome = cut_release(
                    session, lambda key: load_instrument(key, reference), self.bank.settings.suppression_k,
                    audit.SYSTEM,
                )  # fmt: skip
            if outcome.release is not None:
                log.info("cut release %d of the open tier (%d agents)", outcome.release.id, outcome.release.agents)
            else:
                log.info("no new release of the open tier: %s", outcome.reason)

        signer, outside = load_signer(self.bank.settings), CheckpointFile.of(self.bank.settings)
        schedule = Schedule(self.bank.settings.audit_checkpoint_events, self.bank.settings.audit_checkpoint_interval_s)

        @app.periodic(cron=CHECKPOINT_CRON, periodic_id="audit-checkpoint")
        @app.task(name="agentbank.audit_checkpoint", queue=AUDIT_QUEUE)
        def audit_checkpoint(timestamp: int) -> None:
            point = publish_checkpoint(self.bank.sessions, signer, outside, schedule)
            if point is not None:
                log.info("signed an audit checkpoint at event %d", point.seq)

        @app.periodic(cron="17 * * * *", periodic_id="audit-sweep")
        @app.task(name="agentbank.audit_sweep", queue=AUDIT_QUEUE)
        async def audit_sweep(timestamp: int) -> None:
            # The checkpoint task runs every few seconds; its finished runs are not worth keeping.
            await app.job_manager.delete_old_jobs(nb_hours=1, queue=AUDIT_QUEUE)

        @app.periodic(cron="* * * * *", periodic_id="recover-stalled")
        @app.task(name="agentbank.recover_stalled", queue=JOB_QUEUE)
        async def recover(timestamp: int) -> None:
            await recover_stalled(app, self.stalled_after_s)

    def _build(
        self, job: procrastinate.jobs.Job, participant_id: uuid.UUID, population: dict[str, list[str]], attempts: int
    ) -> None:
        """One attempt of a queued build; a retry is lighter, and every failure is logged and kept with its reason."""
        chat, embedder = self.bank.require_models()
        reference = self.bank.settings.reference_data_dir
        # A retry of the same request would run out of time at the same step again.
        config = BuildConfig.of(chat, embedder, self.bank.settings.reflection_word_budget).lighter(job.attempts)
        with transaction(self.bank.sessions) as session:
            participant = session.get_one(Participant, participant_id)
            pseudonym, consent = participant.pseudonym, participant.consent
            waiting = build_counts(session)
        if consent != "consented":  # withdrew after the build was queued
            log.info("skipped the build of a participant who withdrew")
            return
        progress = BuildProgress(
            pseudonym, self._built + 1, self._built + waiting.queued + waiting.running, job.attempts, attempts
        )
        try:
            with transaction(self.bank.sessions) as session:
                participant = session.get_one(Participant, participant_id)
                agent = build_agent(
                    session, participant, chat=chat, embedder=embedder, keys=self.bank.keys, config=config,
                    on_step=progress.step,
                )  # fmt: skip
                for key, items in population.items():
                    progress.step(f"answering {len(items)} {key} items for the open tier")
                    loaded = load_instrument(key, reference)
                    fill_agent(session, self.bank.door, agent.id, loaded, select_items(loaded, items))
        except Exception as exc:
            last = job.attempts + 1 >= attempts
            progress.failed(exc, None if last else config.lighter())
            assert job.id is not None  # a job taken from the queue has its id
            try:
                with transaction(self.bank.sessions) as session:
                    record_failure(session, participant_id, job.id, job.attempts + 1, exc)
            except SQLAlchemyError:  # the database went away too: the attempt's own error matters more
                log.warning("could not record why the build of %s failed", progress.label)
            raise
        self._built += 1
        log.info("built %s in %s", progress.label, progress.elapsed())

    def _run_job(self, job: procrastinate.jobs.Job, job_id: uuid.UUID, agent_id: uuid.UUID) -> None:
        """One attempt at one agent's part of a job; a failure is audited, and the last one ends it."""
        try:
            with transaction(self.bank.sessions) as session:
                run_job_task(session, self.bank.door, job_id, agent_id, self.bank.settings.reference_data_dir)
        except Exception as exc:
            self._job_attempt_failed(job, job_id, agent_id, exc)
            raise

    def _job_attempt_failed(self, job: procrastinate.jobs.Job, job_id: uuid.UUID, agent_id: uuid.UUID,
                            exc: Exception) -> None:  # fmt: skip
        """Audit a failed attempt (its transaction was rolled back, with its own audit event) and, after
        the last one, end the agent's part of the job so the job ends and its quota comes back."""
        reason = exc.message if isinstance(exc, AgentBankError) else type(exc).__name__
        last = job.attempts + 1 >= MAX_ATTEMPTS
        log.warning("a job task failed (attempt %d of %d): %s", job.attempts + 1, MAX_ATTEMPTS, reason)
        try:
            with transaction(self.bank.sessions) as session:
                participant = session.scalar(select(Agent.participant_id).where(Agent.id == agent_id))
                audit.record(
                    session, audit.Actor("system", "worker"), "job.attempt_failed", "restricted", agent_id=agent_id,
                    participant_id=participant,
                    details={"job_id": str(job_id), "attempt": job.attempts + 1, "last": last, "reason": reason},
                )  # fmt: skip
                if last:
                    fail_job_task(session, job_id, agent_id, reason)
        except SQLAlchemyError:  # the database went away too: the attempt's own error matters more
            log.warning("could not record why a job task failed")

    async def run_async(self, *, wait: bool = True, install_signal_handlers: bool = True) -> None:
        """Work until stopped (or, with ``wait=False``, until the queues are empty)."""
        async with self.app.open_async():
            recovered = await recover_stalled(self.app, self.stalled_after_s)
            if recovered:
                log.warning("put %d stalled task(s) back in the queue", recovered)
            await self.app.run_worker_async(
                queues=list(QUEUES),
                concurrency=1,  # one model per process; scale with more workers
                wait=wait,
                install_signal_handlers=install_signal_handlers,
                update_heartbeat_interval=self.heartbeat_s,
                stalled_worker_timeout=self.stalled_after_s,
                fetch_job_polling_interval=1.0,
            )

    def run(self, *, wait: bool = True) -> None:
        """Work in this thread until SIGINT or SIGTERM (or until the queues are empty)."""
        asyncio.run(self.run_async(wait=wait))

    def start_in_background(self) -> threading.Thread:
        """Run beside a server in the same process (the embedded default)."""
        thread = threading.Thread(
            target=lambda: asyncio.run(self.run_async(install_signal_handlers=False)), name="worker", daemon=True
        )
        thread.start()
        return thread

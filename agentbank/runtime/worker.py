"""The worker: takes queued tasks (job answers, population answers) and runs them with the bank's models.

Any number of workers may run on any number of machines. A worker that dies mid-task leaves its task
in the queue as "doing"; every worker, on start and then each minute, puts back the tasks of workers
whose heartbeat stopped, and the task's own result write is idempotent, so each result is written
exactly once.

On Ctrl-C or SIGTERM a worker stops in order (``stop``): it takes no new task, gives the tasks in flight
a bounded grace, then cuts their model calls and puts them back in the queue with their attempts
unchanged; only then may the caller close the models and the database.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from collections.abc import Callable
from functools import cached_property

import procrastinate
from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from agentbank.audit import log as audit
from agentbank.audit.checkpoints import CheckpointFile, Schedule, publish_checkpoint
from agentbank.audit.sequencer import Sequencer
from agentbank.audit.signing_keys import load_signer
from agentbank.audit.tiers import Tier
from agentbank.audit.witnesses.client import Witnessing
from agentbank.building.agents import BUILD_QUEUE, BUILD_TASK, BuildConfig
from agentbank.building.build import build_now
from agentbank.building.progress import BuildProgress, build_counts, record_failure
from agentbank.building.validity.measures import REFRESH_QUEUE, REFRESH_TASK
from agentbank.consultation.door import AgentDoor
from agentbank.core.errors import AgentBankError
from agentbank.core.statuses import AgentStatus, ConsentStatus
from agentbank.db import transaction
from agentbank.db.connections import database_url
from agentbank.db.embedded import exit_on_sigterm
from agentbank.db.models import Agent, Participant
from agentbank.db.queue import give_back, queue_app, recover_stalled
from agentbank.instruments import load_instrument, select_items
from agentbank.providers.chat import ChatModel
from agentbank.publication.population import POPULATION_QUEUE, POPULATION_TASK, fill_agent
from agentbank.publication.releases import CUT_TASK, TABLE_QUEUE, cut_release
from agentbank.publication.shelf import Shelf, ensure_published
from agentbank.publication.weighting.targets import load_targets
from agentbank.restricted.jobs.lifecycle import JOB_QUEUE, JOB_TASK, fail_job_task, run_job_task
from agentbank.runtime.bank import Bank
from agentbank.runtime.demo_settings import is_demo_bank, open_tier_options, release_policy
from agentbank.runtime.stopping import Abortable, StoppableChat, TaskThreads, wait_until

log = logging.getLogger(__name__)
AUDIT_QUEUE = "audit"
QUEUES = (AUDIT_QUEUE, JOB_QUEUE, BUILD_QUEUE, POPULATION_QUEUE)
# Scores the bank's agents again: given the bank and the worker's chat model (its calls stop with the worker).
Refresh = Callable[[Bank, ChatModel], object]
# How often a worker asks whether a checkpoint is due (croniter's sixth field is seconds); signing
# itself follows the settings' events and interval.
CHECKPOINT_CRON = "* * * * * */10"
# procrastinate's max_attempts counts retries: a task runs once and then up to three times more.
RETRIES = 3
RETRY = procrastinate.RetryStrategy(max_attempts=RETRIES, wait=5)
ATTEMPTS = RETRIES + 1
# After the grace, how long cut model calls may take to end their tasks before those are put back anyway.
CUT_WAIT_S = 5.0


class Worker:
    """One worker process's task handlers, bound to an open bank."""

    def __init__(self, bank: Bank, refresh: Refresh | None = None) -> None:
        self.bank = bank
        self.refresh = refresh  # scores the bank's agents again (given by the evaluation; None: not taken)
        self.heartbeat_s = bank.settings.worker_heartbeat_s
        self.stalled_after_s = bank.settings.worker_stalled_after_s
        self.app = queue_app(database_url(bank.settings))
        self._built = 0  # builds this worker finished, for "agent n of N"
        self._threads = TaskThreads()
        self._thread: threading.Thread | None = None
        self._finished = threading.Event()  # the worker's loop has ended
        self._error: BaseException | None = None  # why it ended, when not stopped
        self._loop: asyncio.AbstractEventLoop | None = None
        self._main: asyncio.Task[None] | None = None
        self._sequencer = Sequencer.of(bank.sessions, bank.settings)
        self._register()

    @cached_property
    def chat(self) -> ChatModel:
        """The bank's chat model, whose calls a stop can cut."""
        return StoppableChat(self.bank.require_models()[0], self._threads.stopping)

    @cached_property
    def door(self) -> AgentDoor:
        """The one door to agents' answers, with the stoppable chat model."""
        return AgentDoor(
            chat=self.chat, embedder=self.bank.require_models()[1], keys=self.bank.keys,
            memory_token_budget=self.bank.settings.memory_token_budget,
            calls_in_flight=self.bank.in_flight,
        )  # fmt: skip

    def _register(self) -> None:
        app, reference = self.app, self.bank.settings.reference_data_dir
        retry = RETRY

        # Blocking tasks run on threads of their own (``stopping``): async bodies that wait for them.
        @app.task(name=JOB_TASK, queue=JOB_QUEUE, retry=retry, pass_context=True)
        async def job_agent(context: procrastinate.JobContext, job_id: str, agent_id: str) -> None:
            def work() -> None:
                self._run_job(context.job, uuid.UUID(job_id), uuid.UUID(agent_id))

            await self._threads.run(_task_id(context), work)

        @app.task(name=POPULATION_TASK, queue=POPULATION_QUEUE, retry=retry, pass_context=True)
        async def population_agent(
            context: procrastinate.JobContext, agent_id: str, instrument: str, items: list[str]
        ) -> None:
            def work() -> None:
                loaded = load_instrument(instrument, reference)
                with self.bank.sessions() as session:
                    options = open_tier_options(session)
                fill_agent(self.bank.sessions, self.door, uuid.UUID(agent_id), loaded, select_items(loaded, items),
                           options=options)  # fmt: skip

            await self._threads.run(_task_id(context), work)

        @app.task(name=BUILD_TASK, queue=BUILD_QUEUE, retry=retry, pass_context=True)
        async def build(
            context: procrastinate.JobContext, participant_id: str, population: dict[str, list[str]]
        ) -> None:
            def work() -> None:
                self._build(context.job, uuid.UUID(participant_id), population, ATTEMPTS)

            await self._threads.run(_task_id(context), work)

        @app.task(name=CUT_TASK, queue=TABLE_QUEUE, pass_context=True)
        async def release_now(context: procrastinate.JobContext, force: bool, actor_kind: str, actor_id: str) -> None:
            def work() -> None:
                self._cut(audit.Actor(actor_kind, actor_id), force=force)

            await self._threads.run(_task_id(context), work)

        if self.refresh is not None:
            refresh = self.refresh

            @app.task(name=REFRESH_TASK, queue=REFRESH_QUEUE, retry=retry, pass_context=True)
            async def refresh_validity(context: procrastinate.JobContext, reason: str) -> None:
                def work() -> None:
                    log.info("scoring the bank's agents again (%s)", reason)
                    refresh(self.bank, self.chat)

                await self._threads.run(_task_id(context), work)

        @app.periodic(cron=self.bank.settings.release_cron, periodic_id="cut-release")
        @app.task(name="agentbank.cut_release", queue=TABLE_QUEUE)
        def scheduled_release(timestamp: int) -> None:
            self._cut(audit.SYSTEM, force=False)

        load_signer(self.bank.settings)  # a key that cannot be loaded stops the worker now, not at each run
        outside = CheckpointFile.of(self.bank.settings)
        schedule = Schedule(self.bank.settings.audit_checkpoint_events, self.bank.settings.audit_checkpoint_interval_s)

        witnessing = Witnessing(self.bank.settings, self.bank.sessions)  # a bad witness key stops the worker now

        @app.periodic(cron=CHECKPOINT_CRON, periodic_id="audit-checkpoint")
        @app.task(name="agentbank.audit_checkpoint", queue=AUDIT_QUEUE)
        def audit_checkpoint(timestamp: int) -> None:
            # Loaded on each run (from a cache): a rotated key is used from the next checkpoint on.
            point = publish_checkpoint(self.bank.sessions, load_signer(self.bank.settings), outside, schedule)
            if point is not None:
                log.info("signed an audit checkpoint at event %d", point.seq)
            # After the commit, with no transaction open: witnesses that have not cosigned the newest head
            # (this one, or one an operator signed) are asked; one that failed waits a minute.
            for answer in witnessing.round():
                log.info("witness %s: %s", answer.witness, answer.message)

        @app.periodic(cron="17 * * * *", periodic_id="audit-sweep")
        @app.task(name="agentbank.audit_sweep", queue=AUDIT_QUEUE)
        async def audit_sweep(timestamp: int) -> None:
            # The checkpoint task runs every few seconds; its finished runs are not worth keeping.
            await app.job_manager.delete_old_jobs(nb_hours=1, queue=AUDIT_QUEUE)

        @app.periodic(cron="* * * * *", periodic_id="recover-stalled")
        @app.task(name="agentbank.recover_stalled", queue=JOB_QUEUE)
        async def recover(timestamp: int) -> None:
            await recover_stalled(app, self.stalled_after_s)

    def _cut(self, actor: audit.Actor, *, force: bool) -> None:
        """Cut a release of the open tier if the policy allows (``force``: an operator's, now)."""
        settings = self.bank.settings
        with transaction(self.bank.sessions) as session:
            outcome = cut_release(
                session, self.bank.keys, lambda key: load_instrument(key, settings.reference_data_dir),
                release_policy(session, settings), actor, force=force, targets=load_targets(settings.weight_targets),
            )  # fmt: skip
        if outcome.release is not None:
            log.info("cut release %d of the open tier (about %d agents)", outcome.release.id, outcome.release.agents)
        else:
            log.info("no new release of the open tier: %s", outcome.reason)
        # After the commit (and on every scheduled run, catching up after a crash): the files researchers read.
        reference = settings.reference_data_dir
        ensure_published(self.bank.sessions, Shelf(settings.release_files_path), load_signer(settings),
                         lambda key: load_instrument(key, reference), reference)  # fmt: skip

    def _build(
        self, job: procrastinate.jobs.Job, participant_id: uuid.UUID, population: dict[str, list[str]], attempts: int
    ) -> None:
        """One attempt of a queued build; a retry is lighter, and every failure is logged and kept with its reason."""
        chat, embedder = self.chat, self.bank.require_models()[1]
        reference = self.bank.settings.reference_data_dir
        # A retry of the same request would run out of time at the same step again.
        config = BuildConfig.of(chat, embedder, self.bank.settings.reflection_word_budget).lighter(job.attempts)
        with transaction(self.bank.sessions) as session:
            participant = session.get_one(Participant, participant_id)
            pseudonym, consent = participant.pseudonym, participant.consent
            waiting = build_counts(session)
            options, demo = open_tier_options(session), is_demo_bank(session)
        if consent != ConsentStatus.CONSENTED:  # withdrew after the build was queued
            log.info("skipped the build of a participant who withdrew")
            return
        progress = BuildProgress(
            pseudonym, self._built + 1, self._built + waiting.queued + waiting.running, job.attempts, attempts
        )
        try:
            agent = build_now(
                self.bank.sessions, participant_id, chat=chat, embedder=embedder, keys=self.bank.keys, config=config,
                on_step=progress.step, in_flight=self.bank.in_flight,
            )  # fmt: skip
            agent_id = agent.id if agent is not None else self._active_agent(participant_id)
            if agent_id is None:  # withdrew during the build, or another builder has the participant now
                log.info("skipped the build of %s: withdrawn, or being built elsewhere", progress.label)
                return
            for key, items in population.items():
                progress.step(f"answering {len(items)} {key} items for the open tier")
                loaded = load_instrument(key, reference)
                fill_agent(self.bank.sessions, self.door, agent_id, loaded, select_items(loaded, items),
                           options=options)  # fmt: skip
        except Exception as exc:
            if self._threads.stopping.is_set():  # interrupted, not failed: it goes back to the queue
                log.info(
                    "stopped building %s after %s; it is built again on the next start",
                    progress.label,
                    progress.elapsed(),
                )
                raise
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
        if demo:  # a demo bank's release follows its agents at once, not at the next scheduled check
            try:
                self._cut(audit.SYSTEM, force=False)
            except (AgentBankError, SQLAlchemyError) as exc:  # the agent is built; the schedule tries again
                log.warning("no release after building %s (%s); the next scheduled check tries again",
                            progress.label, type(exc).__name__)  # fmt: skip

    def _active_agent(self, participant_id: uuid.UUID) -> uuid.UUID | None:
        """The participant's active agent (a retried build that had finished before it failed)."""
        with self.bank.sessions() as session:
            return session.scalar(
                select(Agent.id).where(Agent.participant_id == participant_id, Agent.status == AgentStatus.ACTIVE)
            )

    def _run_job(self, job: procrastinate.jobs.Job, job_id: uuid.UUID, agent_id: uuid.UUID) -> None:
        """One attempt at one agent's part of a job; a failure is audited, and the last one ends it."""
        try:
            run_job_task(self.bank.sessions, self.door, job_id, agent_id, self.bank.settings.reference_data_dir)
        except Exception as exc:
            if not self._threads.stopping.is_set():  # a stop puts the task back: that is no failure
                self._job_attempt_failed(job, job_id, agent_id, exc)
            raise

    def _job_attempt_failed(self, job: procrastinate.jobs.Job, job_id: uuid.UUID, agent_id: uuid.UUID,
                            exc: Exception) -> None:  # fmt: skip
        """Audit a failed attempt (its transaction was rolled back, with its own audit event) and, after
        the last one, end the agent's part of the job so the job ends and its quota comes back."""
        reason = exc.message if isinstance(exc, AgentBankError) else type(exc).__name__
        last = job.attempts + 1 >= ATTEMPTS
        log.warning("a job task failed (attempt %d of %d): %s", job.attempts + 1, ATTEMPTS, reason)
        try:
            with transaction(self.bank.sessions) as session:
                participant = session.scalar(select(Agent.participant_id).where(Agent.id == agent_id))
                audit.record(
                    session, audit.Actor("system", "worker"), "job.attempt_failed", Tier.RESTRICTED, agent_id=agent_id,
                    participant_id=participant,
                    details={"job_id": str(job_id), "attempt": job.attempts + 1, "last": last, "reason": reason},
                )  # fmt: skip
                if last:
                    fail_job_task(session, job_id, agent_id, reason)
        except SQLAlchemyError:  # the database went away too: the attempt's own error matters more
            log.warning("could not record why a job task failed")

    async def run_async(self, *, wait: bool = True) -> None:
        """Work until cancelled (or, with ``wait=False``, until the queues are empty)."""
        async with self.app.open_async():
            recovered = await recover_stalled(self.app, self.stalled_after_s)
            if recovered:
                log.warning("put %d stalled task(s) back in the queue", recovered)
            await self.app.run_worker_async(
                queues=[*QUEUES, *((REFRESH_QUEUE,) if self.refresh else ())],
                # As many tasks as model calls in flight (one for the embedded model); each task's calls
                # share the door's pool, so the process never has more calls in flight than that.
                concurrency=self.bank.settings.calls_in_flight,
                wait=wait,
                install_signal_handlers=False,  # ``run`` and ``serve`` stop it in order (``stop``)
                update_heartbeat_interval=self.heartbeat_s,
                stalled_worker_timeout=self.stalled_after_s,
                fetch_job_polling_interval=1.0,
            )

    def run(self, *, wait: bool = True) -> None:
        """Work until SIGINT or SIGTERM (or until the queues are empty), then stop in order."""
        exit_on_sigterm()  # SIGTERM as SystemExit, so the stop below runs
        self.start_in_background(wait=wait, report=False)
        try:
            # Not Thread.join: a signal that interrupts it leaves the thread looking finished (CPython).
            while not self._finished.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
        finally:  # SIGTERM arrives as SystemExit, which goes on after the stop
            self.stop(self.bank.settings.shutdown_grace_s)
        if self._error is not None:  # the caller reports it (a database that went away, say)
            raise self._error

    def start_in_background(self, *, wait: bool = True, report: bool = True) -> threading.Thread:
        """Run on a thread of its own, beside a server or under ``run``; ``stop`` ends it. An error that
        ends the worker is logged (``report``) or kept for ``run`` to raise."""
        started = threading.Event()

        async def main() -> None:
            self._loop, self._main = asyncio.get_running_loop(), asyncio.current_task()
            started.set()
            await self.run_async(wait=wait)

        def target() -> None:
            try:
                asyncio.run(main())
            except asyncio.CancelledError:  # stopped
                pass
            except Exception as exc:
                self._error = exc
                if report:
                    log.error("the worker stopped: %s", exc, exc_info=exc)
            finally:
                started.set()
                self._finished.set()

        self._thread = threading.Thread(target=target, name="worker", daemon=True)
        self._thread.start()
        self._sequencer.start()
        started.wait()
        return self._thread

    def stop(self, grace_s: float) -> int:
        """Stop taking tasks, give those in flight ``grace_s`` seconds, then cut their model calls and put
        them back in the queue, attempts unchanged. Returns how many were put back."""
        threads, thread = self._threads, self._thread
        if thread is None or threads.stopping.is_set():
            return 0
        threads.stopping.set()
        if self._loop is not None and self._main is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._main.cancel)

        def settled() -> bool:
            return self._finished.is_set() or threads.only_interrupted()

        if threads.unfinished():
            log.info("stopping: waiting up to %g s for the task in flight (Ctrl-C again: at once)", grace_s)
        try:
            in_time = wait_until(settled, grace_s)
        except KeyboardInterrupt:  # asked twice: no more grace
            in_time = False
        if not in_time:
            chat = self.bank.chat
            if isinstance(chat, Abortable):
                chat.abort()
            wait_until(settled, CUT_WAIT_S)
        unfinished = threads.unfinished()
        given_back = 0
        if unfinished:
            try:
                with transaction(self.bank.sessions) as session:
                    given_back = give_back(session, unfinished)
                log.info("put %d unfinished task(s) back in the queue, their attempts unchanged", given_back)
            except SQLAlchemyError:
                log.warning(
                    "could not put %d unfinished task(s) back in the queue: a worker takes them again after "
                    "AGENTBANK_WORKER_STALLED_AFTER_S, as a new attempt", len(unfinished),
                )  # fmt: skip
        if not self._finished.is_set() and self._loop is not None and not self._loop.is_closed():
            # The queue's loop waits for the given-back tasks forever; its connections close now.
            closing = asyncio.run_coroutine_threadsafe(self.app.close_async(), self._loop)
            try:
                closing.result(timeout=CUT_WAIT_S)
            except Exception:  # the connections end with the process anyway
                log.debug("the queue's connections did not close in time")
        if "door" in self.__dict__:  # built (cached_property): its pool starts no more calls
            self.door.close()
        self._sequencer.stop()  # a last round: what this worker's tasks wrote is chained before it exits
        return given_back


def _task_id(context: procrastinate.JobContext) -> int:
    assert context.job.id is not None  # a job taken from the queue has its id
    return context.job.id

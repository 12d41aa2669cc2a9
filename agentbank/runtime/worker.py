"""The worker: a table of tasks (``tasks``, ``schedule``: name, queue, and the domain's function that does
the work) and the lifecycle that runs them with the bank's models, loaded for the first task that needs
them (``Bank.load_models``: the first tasks, a release or a checkpoint, often do not). Any number of
workers may run anywhere. A worker that dies mid-task leaves its task in the queue as "doing"; every
worker, on start and then each minute, puts back the tasks of workers whose heartbeat stopped, and a
task's result write is idempotent, so each result is written exactly once. On Ctrl-C or SIGTERM a worker
stops in order (``stop``): no new task, a bounded grace for those in flight, then their model calls cut and
the tasks put back in the queue, attempts unchanged; only then may the caller close models and database.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property, partial
from typing import Any

import procrastinate
from sqlalchemy.exc import SQLAlchemyError

from agentbank.audit import log as audit
from agentbank.audit.checkpoints import CheckpointFile, Schedule, publish_checkpoint
from agentbank.audit.sequencer import Sequencer
from agentbank.audit.signing_keys import load_signer
from agentbank.audit.witnesses.client import Witnessing
from agentbank.building.agents import BUILD_QUEUE, BUILD_TASK
from agentbank.building.runs import Attempt, Builder
from agentbank.building.validity.measures import REFRESH_QUEUE, REFRESH_TASK
from agentbank.consultation.door import AgentDoor
from agentbank.db import transaction
from agentbank.db.connections import database_url
from agentbank.db.embedded import exit_on_sigterm
from agentbank.db.queue import give_back, queue_app, recover_stalled
from agentbank.providers.chat import ChatModel
from agentbank.publication.cutting import cut_and_publish
from agentbank.publication.joining import OpenTier, answer_items, build_and_join
from agentbank.publication.population import POPULATION_QUEUE, POPULATION_TASK
from agentbank.publication.releases import CUT_TASK, TABLE_QUEUE
from agentbank.restricted.groups.running import run_group_task
from agentbank.restricted.groups.storage import GROUP_TASK
from agentbank.restricted.jobs.lifecycle import JOB_QUEUE, JOB_TASK
from agentbank.restricted.jobs.tasks import TaskAttempt, run_task
from agentbank.runtime.bank import Bank
from agentbank.runtime.demo_settings import is_demo_bank, open_tier_options, release_policy
from agentbank.runtime.stopping import Abortable, StoppableChat, TaskThreads, wait_until
from agentbank.studies.mail import Sender, SmtpSender
from agentbank.studies.retest import portal_link, send_due_invitations

log = logging.getLogger(__name__)
AUDIT_QUEUE = "audit"
QUEUES = (AUDIT_QUEUE, JOB_QUEUE, BUILD_QUEUE, POPULATION_QUEUE)
# Scores the bank's agents again: given the bank and the worker's chat model (its calls stop with the worker).
Refresh = Callable[[Bank, ChatModel], object]
# How often a worker asks whether a checkpoint is due (croniter's sixth field is seconds); signing
# itself follows the settings' events and interval.
CHECKPOINT_CRON = "* * * * * */10"
# How often a worker mails the retest's invitation to those whose retest has opened since (hourly).
RETEST_CRON = "41 * * * *"
# procrastinate's max_attempts counts retries: a task runs once and then up to three times more.
RETRIES = 3
RETRY = procrastinate.RetryStrategy(max_attempts=RETRIES, wait=5)
ATTEMPTS = RETRIES + 1
# After the grace, how long cut model calls may take to end their tasks before those are put back anyway.
CUT_WAIT_S = 5.0
UUID = uuid.UUID


@dataclass(frozen=True)
class Task:
    """A kind of task: its name, its queue, and what runs one: given the queue's job and the task's arguments
    on a thread of its own (``retry``: ``RETRY``), or, on a schedule (``cron``, one per tick among all
    workers), given the tick's timestamp on the queue's own loop or thread pool."""

    name: str
    queue: str
    run: Callable[..., Any]
    retry: bool = True
    cron: str = ""


class Worker:
    """One worker process's table of tasks, bound to an open bank, and its start and stop."""

    def __init__(self, bank: Bank, refresh: Refresh | None = None, mail: Sender | None = None) -> None:
        self.bank, settings = bank, bank.settings
        self.refresh = refresh  # scores the bank's agents again (given by the evaluation; None: not taken)
        self.mail = mail if mail is not None else SmtpSender.of(settings)  # None: no retest invitation is sent
        self.heartbeat_s, self.stalled_after_s = settings.worker_heartbeat_s, settings.worker_stalled_after_s
        self.app = queue_app(database_url(settings))
        self._built = 0  # builds this worker finished, for "agent n of N"
        self._threads = TaskThreads()
        self._thread: threading.Thread | None = None
        self._finished = threading.Event()  # the worker's loop has ended
        self._error: BaseException | None = None  # why it ended, when not stopped
        self._loop: asyncio.AbstractEventLoop | None = None  # the queue's, and its main task, while it runs
        self._main: asyncio.Task[None] | None = None
        self._sequencer = Sequencer.of(bank.sessions, settings)
        load_signer(settings)  # a key that cannot be loaded stops the worker now, not at each run
        self._outside = CheckpointFile.of(settings)  # where checkpoints are appended, and when they are due:
        self._schedule = Schedule(settings.audit_checkpoint_events, settings.audit_checkpoint_interval_s)
        self._witnessing = Witnessing(settings, bank.sessions)  # a bad witness key stops the worker now
        self._register()

    def tasks(self) -> list[Task]:
        """The tasks workers are asked for, each with the domain function that carries it out."""
        table = [
            Task(JOB_TASK, JOB_QUEUE, lambda job, job_id, agent_id: self._run_job(job, UUID(job_id), UUID(agent_id))),
            Task(GROUP_TASK, JOB_QUEUE, lambda job, group_id: run_group_task(
                self.bank.sessions, self.door, self.bank.load_models()[1], UUID(group_id),
                TaskAttempt(job.attempts, ATTEMPTS), stopping=self._threads.stopping)),
            Task(POPULATION_TASK, POPULATION_QUEUE, lambda job, agent_id, instrument, items: answer_items(
                self.bank.sessions, self.door, UUID(agent_id), instrument, items, self._tier)),
            Task(BUILD_TASK, BUILD_QUEUE,
                 lambda job, participant_id, population: self._build(job, UUID(participant_id), population)),
            Task(CUT_TASK, TABLE_QUEUE, lambda job, force, actor_kind, actor_id: self._cut(
                audit.Actor(actor_kind, actor_id), force=force), retry=False),
        ]  # fmt: skip
        if (refresh := self.refresh) is not None:
            table.append(Task(REFRESH_TASK, REFRESH_QUEUE, lambda job, reason: self._refresh(refresh, reason)))
        return table

    def schedule(self) -> list[Task]:
        """What every worker does on a schedule: releases, audit checkpoints and their sweep, recovery, and the
        retest's invitations."""
        return [
            Task("agentbank.cut_release", TABLE_QUEUE, lambda timestamp: self._cut(audit.SYSTEM, force=False),
                 cron=self.bank.settings.release_cron),
            Task("agentbank.audit_checkpoint", AUDIT_QUEUE, self._checkpoint, cron=CHECKPOINT_CRON),
            Task("agentbank.audit_sweep", AUDIT_QUEUE, self._sweep, cron="17 * * * *"),
            Task("agentbank.recover_stalled", JOB_QUEUE, self._recover, cron="* * * * *"),
            Task("agentbank.retest_invitations", JOB_QUEUE, self.invite_to_retest, cron=RETEST_CRON),
        ]  # fmt: skip

    def _register(self) -> None:
        for task in self.tasks():
            self.app.task(name=task.name, queue=task.queue, retry=RETRY if task.retry else False,
                          pass_context=True)(self._on_a_thread(task.run))  # fmt: skip
        for periodic in self.schedule():  # one per tick among all workers: agentbank.cut_release's is cut-release
            registered = self.app.task(name=periodic.name, queue=periodic.queue)(periodic.run)
            periodic_id = periodic.name.removeprefix("agentbank.").replace("_", "-")
            self.app.periodic(cron=periodic.cron, periodic_id=periodic_id)(registered)

    def _on_a_thread(self, run: Callable[..., None]) -> Callable[..., Any]:
        # Blocking tasks run on threads of their own (``stopping``): async bodies that wait for them.
        async def task(context: procrastinate.JobContext, **args: Any) -> None:
            assert context.job.id is not None  # a job taken from the queue has its id
            await self._threads.run(context.job.id, partial(run, context.job, **args))

        return task

    @cached_property
    def chat(self) -> ChatModel:
        """The bank's chat model, whose calls a stop can cut (loaded with the first task that needs it)."""
        return StoppableChat(self.bank.load_models()[0], self._threads.stopping)

    @cached_property
    def door(self) -> AgentDoor:
        """The one door to agents' answers, with the stoppable chat model."""
        return AgentDoor(
            chat=self.chat, embedder=self.bank.load_models()[1], keys=self.bank.keys,
            memory_token_budget=self.bank.settings.memory_token_budget, calls_in_flight=self.bank.in_flight,
        )  # fmt: skip

    def _run_job(self, job: procrastinate.jobs.Job, job_id: uuid.UUID, agent_id: uuid.UUID) -> None:
        run_task(self.bank.sessions, self.door, job_id, agent_id, self.bank.settings.reference_data_dir,
                 TaskAttempt(job.attempts, ATTEMPTS), stopping=self._threads.stopping)  # fmt: skip

    @cached_property
    def _tier(self) -> OpenTier:
        """The open tier under the bank's settings, a demo bank's own included; its cuts are this worker's."""
        cut = partial(self._cut, audit.SYSTEM, force=False)
        return OpenTier(open_tier_options, is_demo_bank, cut, self.bank.settings.reference_data_dir)

    def _build(self, job: procrastinate.jobs.Job, participant_id: uuid.UUID, population: dict[str, list[str]],
               attempts: int = ATTEMPTS) -> None:  # fmt: skip
        """One attempt of a queued build, then the agent's answers for the open tier (``joining``)."""
        assert job.id is not None  # a job taken from the queue has its id
        builder = Builder(self.bank.sessions, self.chat, self.bank.load_models()[1], self.bank.keys,
                          self.bank.settings.reflection_word_budget, self.bank.in_flight)  # fmt: skip
        if build_and_join(builder, self.door, participant_id, Attempt(job.id, job.attempts, attempts), population,
                          self._tier, built_before=self._built, stopping=self._threads.stopping):  # fmt: skip
            self._built += 1

    def _cut(self, actor: audit.Actor, *, force: bool) -> None:
        bank = self.bank  # a release of the open tier, if the policy allows (``force``: an operator's, now)
        cut_and_publish(bank.sessions, bank.keys, bank.settings, partial(release_policy, settings=bank.settings),
                        actor, force=force)  # fmt: skip

    def _refresh(self, refresh: Refresh, reason: str) -> None:
        log.info("scoring the bank's agents again (%s)", reason)
        refresh(self.bank, self.chat)

    def _checkpoint(self, timestamp: int) -> None:
        # Loaded on each run (from a cache): a rotated key is used from the next checkpoint on.
        point = publish_checkpoint(self.bank.sessions, load_signer(self.bank.settings), self._outside, self._schedule)
        if point is not None:
            log.info("signed an audit checkpoint at event %d", point.seq)
        # After the commit, with no transaction open: witnesses that have not cosigned the newest head
        # (this one, or one an operator signed) are asked; one that failed waits a minute.
        for answer in self._witnessing.round():
            log.info("witness %s: %s", answer.witness, answer.message)

    def invite_to_retest(self, timestamp: int) -> None:
        """The retest's invitation to those due at the tick who left a contact: with a mail server and the
        bank's public address only (the link in it)."""
        if self.mail is not None and (public := self.bank.settings.public_url):
            send_due_invitations(self.bank.sessions, self.bank.keys, self.mail, portal_link(public),
                                 datetime.fromtimestamp(timestamp, UTC))  # fmt: skip

    async def _sweep(self, timestamp: int) -> None:
        # The checkpoint task runs every few seconds; its finished runs are not worth keeping.
        await self.app.job_manager.delete_old_jobs(nb_hours=1, queue=AUDIT_QUEUE)

    async def _recover(self, timestamp: int) -> None:
        await recover_stalled(self.app, self.stalled_after_s)  # of workers that stopped answering

    async def run_async(self, *, wait: bool = True) -> None:
        """Work until cancelled (or, with ``wait=False``, until the queues are empty)."""
        async with self.app.open_async():
            recovered = await recover_stalled(self.app, self.stalled_after_s)
            if recovered:
                log.warning("put %d stalled task(s) back in the queue", recovered)
            # As many tasks at once as model calls in flight (one for the embedded model); each task's calls
            # share the door's pool, so the process never has more calls in flight than that. No signal
            # handlers: ``run`` and ``serve`` stop it in order (``stop``).
            await self.app.run_worker_async(
                queues=[*QUEUES, *((REFRESH_QUEUE,) if self.refresh else ())], wait=wait,
                concurrency=self.bank.settings.calls_in_flight, install_signal_handlers=False,
                update_heartbeat_interval=self.heartbeat_s, stalled_worker_timeout=self.stalled_after_s,
                fetch_job_polling_interval=1.0,
            )  # fmt: skip

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
            if isinstance(chat := self.bank.chat, Abortable):
                chat.abort()
            wait_until(settled, CUT_WAIT_S)
        unfinished, given_back = threads.unfinished(), 0
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

"""The PostgreSQL task queue (procrastinate): queuing inside the caller's transaction, and recovery
of tasks whose worker died."""

from __future__ import annotations

import json
import logging
from typing import Any

import procrastinate
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

log = logging.getLogger(__name__)


def enqueue(session: Session, queue: str, task: str, args: list[dict[str, Any]]) -> None:
    """Queue one task per ``args`` in the caller's transaction: they exist exactly when it commits."""
    if not args:
        return
    session.execute(
        text(
            "SELECT procrastinate_defer_jobs_v1(array_agg(ROW(:queue, :task, 0, NULL, NULL, "
            "r.value, NULL)::procrastinate_job_to_defer_v1)) FROM jsonb_array_elements(CAST(:args AS jsonb)) AS r"
        ),
        {"queue": queue, "task": task, "args": json.dumps(args)},
    )


def enqueue_once(session: Session, queue: str, task: str, args: dict[str, Any]) -> None:
    """Queue ``task`` in the caller's transaction unless one of it is already waiting: many requests
    while one waits are served by that one."""
    session.execute(
        text(
            "SELECT procrastinate_defer_jobs_v1(ARRAY[ROW(:queue, :task, 0, NULL, NULL, CAST(:args AS jsonb), NULL)"
            "::procrastinate_job_to_defer_v1]) WHERE NOT EXISTS "
            "(SELECT 1 FROM procrastinate_jobs WHERE task_name = :task AND status = 'todo')"
        ),
        {"queue": queue, "task": task, "args": json.dumps(args)},
    )


def conninfo(url: str) -> str:
    """A libpq connection string from a SQLAlchemy URL."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def queue_app(url: str) -> procrastinate.App:
    """A procrastinate app on the bank's database (tasks are registered by the worker)."""
    return procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=conninfo(url)))


async def recover_stalled(app: procrastinate.App, seconds_since_heartbeat: float) -> int:
    """Put back in the queue the tasks of workers that stopped sending heartbeats (killed, lost)."""
    stalled = list(await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=seconds_since_heartbeat))
    for job in stalled:
        log.warning("retrying task %s of a worker that stopped answering", job.id)
        await app.job_manager.retry_job(job)
    return len(stalled)


def give_back(session: Session, task_ids: list[int]) -> int:
    """Put tasks that a stopping worker interrupted back in the queue as they were, attempts unchanged
    (the queue's own retry would count the interruption as a failed attempt). Returns how many."""
    result = session.execute(
        text(
            "UPDATE procrastinate_jobs SET status = 'todo', worker_id = NULL, abort_requested = false "
            "WHERE id = ANY(:ids) AND status = 'doing'"
        ),
        {"ids": task_ids},
    )
    return int(getattr(result, "rowcount", 0) or 0)

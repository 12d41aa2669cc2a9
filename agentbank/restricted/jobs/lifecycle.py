"""Restricted-tier jobs: submitted once per idempotency key, expanded into one queued task per agent,
each task answered and recorded exactly once, and every release audited with the answer it records.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from sqlalchemy import case, func, null, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session, sessionmaker

from agentbank.access.principals import Principal
from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.consultation.answering import AgentUnavailableError, Condition
from agentbank.consultation.door import AgentDoor, Consultation, Grant
from agentbank.consultation.output_check import withheld
from agentbank.consultation.questions.screen import admit
from agentbank.core.errors import ConflictError, InvalidRequestError, PermissionDeniedError
from agentbank.core.statuses import AgentStatus, JobStatus, TaskStatus
from agentbank.db import transaction
from agentbank.db.models import Agent, Job, JobResult, Project
from agentbank.db.queue import enqueue
from agentbank.instruments import select_items
from agentbank.restricted.experiments import load_experiment
from agentbank.restricted.experiments.assignment import assign
from agentbank.restricted.experiments.running import run_trial
from agentbank.restricted.instruments import instrument_for_job
from agentbank.restricted.jobs.costs import latest_estimate
from agentbank.restricted.jobs.requests import ExperimentRequest, OpenRequest, Request, SurveyRequest, parse_request
from agentbank.restricted.projects import authorize_job

JOB_TASK = "agentbank.job_agent"
JOB_QUEUE = "jobs"
KEY_PATTERN = re.compile(r"^[\x21-\x7e]{1,200}$")


class IdempotencyKeyReusedError(InvalidRequestError):
    """The key was used before with a different request."""

    code = "idempotency_key_reused"


def submit_job(
    session: Session,
    principal: Principal,
    project_id: uuid.UUID,
    idempotency_key: str,
    request: Request,
    reference_dir: Path,
) -> tuple[Job, bool]:
    """The job for this key: created and queued (True), or the earlier one replayed (False).

    A replay with a different body is refused (422); a replay while the job runs is a conflict (409).
    Authorization, scope and quota are checked before anything is queued, and no model is called.
    """
    if not KEY_PATTERN.match(idempotency_key or ""):
        raise InvalidRequestError("the Idempotency-Key header must be 1 to 200 visible ASCII characters")
    existing = _job_for_key(session, principal, idempotency_key)
    if existing is not None:
        return _replay(existing, request), False
    project = authorize_job(session, principal, project_id, request.kind, request.agents, request.queries)
    held: dict[int, str] = {}
    if isinstance(request, SurveyRequest):
        select_items(instrument_for_job(session, project, request.instrument, reference_dir), request.items)
    elif isinstance(request, OpenRequest):
        # Before anything is queued: a refusal is audited (and committed with it), a held question noted.
        held = admit(session, principal.actor, project.id, request.questions)
    asked = select(Agent.id).where(Agent.id.in_(request.agents), Agent.status == AgentStatus.ACTIVE)
    active = set(session.scalars(asked))
    if len(active) != len(request.agents):
        raise InvalidRequestError(f"{len(request.agents) - len(active)} of the agents are not available")
    job_id = uuid.uuid4()
    inserted = session.execute(
        insert(Job)
        .values(
            id=job_id, project_id=project.id, client_pk=principal.pk, idempotency_key=idempotency_key,
            request_hash=request.digest(), request=request.canonical(), total=len(request.agents),
            estimate=latest_estimate(session, project.id, request),
        )
        .on_conflict_do_nothing(index_elements=["client_pk", "idempotency_key"])
        .returning(Job.id)
    ).scalar()  # fmt: skip
    if inserted is None:  # the same key arrived concurrently and won
        raise ConflictError("a job with this Idempotency-Key is still being submitted")
    project.quota_used += request.queries
    enqueue(session, JOB_QUEUE, JOB_TASK, [{"job_id": str(job_id), "agent_id": str(a)} for a in request.agents])
    audit.record(
        session, principal.actor, "job.submit", Tier.RESTRICTED, project_id=project.id,
        details={"job_id": str(job_id), **{k: v for k, v in request.canonical().items() if k != "agents"},
                 "agents": len(request.agents), **({"held": {str(i + 1): r for i, r in held.items()}} if held else {})},
    )  # fmt: skip
    job = session.get_one(Job, job_id)
    return job, True


def _job_for_key(session: Session, principal: Principal, key: str) -> Job | None:
    return session.scalars(select(Job).where(Job.client_pk == principal.pk, Job.idempotency_key == key)).first()


def _replay(job: Job, request: Request) -> Job:
    if job.request_hash != request.digest():
        raise IdempotencyKeyReusedError("this Idempotency-Key was used for a different request")
    if job.status == JobStatus.QUEUED:
        raise ConflictError("the job for this Idempotency-Key is still running", hint="poll the job instead")
    return job


def run_job_task(
    sessions: sessionmaker[Session], door: AgentDoor, job_id: uuid.UUID, agent_id: uuid.UUID, reference_dir: Path
) -> bool:
    """Answer one agent's part of a job; False when its result was already written (a retried task).

    The answers are made outside any transaction and kept as they come (a retry asks only for the rest);
    the result is written with the door's audit event, after the output check: no answer that leaks the
    transcript, the canary or a name ever reaches the team without a reviewer."""
    with transaction(sessions) as session:
        if _result_written(session, job_id, agent_id):
            return False
        job = session.get_one(Job, job_id)
        request, project_id = parse_request(job.request), job.project_id
    grant = Grant.job(project_id, job_id)
    written = False

    def write(session: Session, consultation: Consultation) -> None:
        nonlocal written
        written = _write_result(session, job_id, project_id, agent_id, consultation)

    try:
        if isinstance(request, SurveyRequest):
            with transaction(sessions) as session:  # an approved version, still approved when it is answered
                project = session.get_one(Project, project_id)
                instrument = instrument_for_job(session, project, request.instrument, reference_dir)
            items = select_items(instrument, request.items)
            door.survey(sessions, grant, agent_id, instrument, items, Condition(request.condition), then=write)
        elif isinstance(request, ExperimentRequest):
            experiment = load_experiment(request.experiment)
            arms = assign(experiment, request.agents, request.seed)[agent_id]
            run_trial(door, sessions, grant, experiment, agent_id, arms, request.blinding, Condition(request.condition),
                      seed=request.seed, then=write)  # fmt: skip
        else:
            door.ask(sessions, grant, agent_id, request.questions, then=write)
    except (AgentUnavailableError, PermissionDeniedError) as exc:
        # A participant who withdrew, or a project whose approval lapsed, after the job was queued:
        # the agent is answered for by nobody.
        with transaction(sessions) as session:
            return _refuse(session, grant, job_id, project_id, agent_id, request.kind, exc.message)
    return written


def _result_written(session: Session, job_id: uuid.UUID, agent_id: uuid.UUID) -> bool:
    query = select(func.count()).where(JobResult.job_id == job_id, JobResult.agent_id == agent_id)
    return bool(session.scalar(query))


def _write_result(
    session: Session, job_id: uuid.UUID, project_id: uuid.UUID, agent_id: uuid.UUID, consultation: Consultation
) -> bool:
    """The agent's result, once (a second worker's write changes nothing), its withheld answers queued."""
    answers, verdicts = consultation.answers, consultation.verdicts
    status = TaskStatus.RELEASED if consultation.released else TaskStatus.WITHHELD
    made = [a.record_id for a in answers if not a.cached and a.record_id is not None]
    written = _close(session, job_id, agent_id, status, [a.record_id for a in answers], made)
    if written is None:
        return False
    agent = session.get_one(Agent, agent_id)
    withheld.hold(
        session, job_id=job_id, project_id=project_id, result_id=written, agent=agent, answers=answers,
        verdicts=verdicts,
    )  # fmt: skip
    return True


def _close(
    session: Session, job_id: uuid.UUID, agent_id: uuid.UUID, status: TaskStatus,
    answer_ids: list[int | None] | None = None, made_ids: list[int] | None = None,
) -> int | None:  # fmt: skip
    """Write the agent's result and count it done; None when a result was already there (written once)."""
    written = session.execute(
        insert(JobResult)
        .values(job_id=job_id, agent_id=agent_id, answer_ids=answer_ids or [], made_ids=made_ids or [], status=status)
        .on_conflict_do_nothing(index_elements=["job_id", "agent_id"])
        .returning(JobResult.id)
    ).scalar()
    if written is not None:
        _count_done(session, job_id)
    return written


def _refuse(
    session: Session, grant: Grant, job_id: uuid.UUID, project_id: uuid.UUID, agent_id: uuid.UUID, kind: str,
    refusal: str,
) -> bool:  # fmt: skip
    """Count the agent as answered by nobody, and say why in the log its participant reads."""
    if _close(session, job_id, agent_id, TaskStatus.UNAVAILABLE) is None:
        return False
    participant = session.scalar(select(Agent.participant_id).where(Agent.id == agent_id))
    audit.record(
        session, grant.actor, "job.answer", Tier.RESTRICTED, project_id=project_id, agent_id=agent_id,
        participant_id=participant,
        details={"job_id": str(job_id), "kind": kind, "released": False, "withheld": 0, "refused": refusal},
    )  # fmt: skip
    return True


def close_cancelled(session: Session, job_id: uuid.UUID, agent_id: uuid.UUID) -> None:
    """Count a cancelled task's agent as answered by nobody (its participant withdrew), so the job ends."""
    _close(session, job_id, agent_id, TaskStatus.UNAVAILABLE)


def fail_job_task(session: Session, job_id: uuid.UUID, agent_id: uuid.UUID, reason: str) -> bool:
    """Record that an agent's part of a job failed for good: the agent is answered by nobody, the job
    can end (``failed`` or ``partial``), and the project gets back the quota it had spent on it."""
    if _close(session, job_id, agent_id, TaskStatus.FAILED) is None:  # its result was written after all
        return False
    job = session.get_one(Job, job_id)
    per_agent = parse_request(job.request).per_agent
    project = session.get_one(Project, job.project_id, with_for_update=True)
    project.quota_used = max(0, project.quota_used - per_agent)
    audit.record(
        session, audit.Actor("system", "worker"), "job.failed", Tier.RESTRICTED, project_id=job.project_id,
        agent_id=agent_id, details={"job_id": str(job_id), "reason": reason, "quota_returned": per_agent},
    )  # fmt: skip
    return True


def _count_done(session: Session, job_id: uuid.UUID) -> None:
    finishing = Job.done + 1 >= Job.total
    failed = (
        select(func.count()).where(JobResult.job_id == job_id, JobResult.status == TaskStatus.FAILED).scalar_subquery()
    )
    # A finished job is done, failed (nothing answered) or partial (some agents failed).
    ended = case((failed == 0, JobStatus.DONE), (failed >= Job.total, JobStatus.FAILED), else_=JobStatus.PARTIAL)
    session.execute(
        update(Job)
        .where(Job.id == job_id)
        .values(
            done=Job.done + 1,
            status=case((finishing, ended), else_=JobStatus.QUEUED),
            finished_at=case((finishing, func.now()), else_=null()),
        )
    )

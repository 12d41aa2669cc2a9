"""What a team reads of its jobs: a job's status, and each agent's answers with provenance.

Both reads are for members of the job's project only (404 for anyone else), and each is audited in the
caller's transaction.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentbank.access.principals import Principal
from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.consultation.answering.stored import read_answers
from agentbank.consultation.output_check import withheld
from agentbank.core.errors import AgentBankError, NotFoundError
from agentbank.core.statuses import TaskStatus
from agentbank.db.models import Job, JobResult
from agentbank.instruments.model import Item
from agentbank.keys.crypto import KeyRing
from agentbank.restricted.experiments import load_experiment
from agentbank.restricted.experiments.assignment import assign
from agentbank.restricted.instruments import is_team_ref, stored_instrument
from agentbank.restricted.jobs.requests import ExperimentRequest, Request, SurveyRequest, parse_request
from agentbank.restricted.jobs.tables import AgentResult, answer_items, label_answers
from agentbank.restricted.projects import is_member


def job_for(session: Session, principal: Principal, job_id: uuid.UUID) -> Job:
    """A job the principal may see (a member of its project), else 404. Not audited: ``read_job`` and
    ``job_results`` are the reads."""
    job = session.get(Job, job_id)
    if job is None or not is_member(session, principal, job.project_id):
        raise NotFoundError("no such job")
    return job


def read_job(session: Session, principal: Principal, job_id: uuid.UUID) -> Job:
    """A job's status and progress for a member of its project, the read audited."""
    job = job_for(session, principal, job_id)
    audit.record(session, principal.actor, "job.read", Tier.RESTRICTED, project_id=job.project_id,
                 details={"job_id": str(job.id)})  # fmt: skip
    return job


def job_results(
    session: Session,
    principal: Principal,
    job_id: uuid.UUID,
    keys: KeyRing,
    reference_dir: Path | None = None,
    format: str = "json",
) -> list[AgentResult]:
    """Each agent's answers with provenance and each coded answer's label (an option's label, or a list of
    them), for a member of the job's project (the read audited, with the ``format`` it is read in); a
    withdrawn participant's answers are gone."""
    job = job_for(session, principal, job_id)
    results = list(session.scalars(select(JobResult).where(JobResult.job_id == job.id).order_by(JobResult.id)))
    hidden = withheld.hidden_answers(session, [result.id for result in results])
    readable = [r for result in results if result.status in withheld.SHOWN for r in result.answer_ids]
    stored = read_answers(session, keys, (r for r in readable if r not in hidden))
    request = parse_request(job.request)
    arms = assign(load_experiment(request.experiment), request.agents, request.seed) if isinstance(
        request, ExperimentRequest) else {}  # fmt: skip
    entries = []
    for result in results:
        # An experiment's answers are read with the agent's arms.
        entry = AgentResult(result.agent_id, result.status, arms=list(arms[result.agent_id]) if result.agent_id in arms
                            else None)  # fmt: skip
        if result.status in withheld.SHOWN:
            entry.status = TaskStatus.RELEASED
            names = answer_keys(request, arms.get(result.agent_id, ()))
            for key, record_id in zip(names, result.answer_ids, strict=False):
                if record_id in hidden:  # the team sees that an answer exists, not what it says
                    entry.status = TaskStatus.WITHHELD
                    entry.answers.append({**withheld.PLACEHOLDER, "key": key})
                elif record_id in stored:
                    entry.answers.append({**stored[record_id].for_team(), "key": key})
                else:  # its participant withdrew: nothing of the agent's answers remains readable
                    entry.status, entry.answers = TaskStatus.UNAVAILABLE, []
                    break
        entries.append(entry)
    audit.record(session, principal.actor, "job.results.read", Tier.RESTRICTED,
                 project_id=job.project_id,
                 details={"job_id": str(job.id), "agents": len(entries), "format": format})  # fmt: skip
    return label_answers(entries, result_items(session, job, request, reference_dir))


def result_items(session: Session, job: Job, request: Request, reference_dir: Path | None) -> dict[str, Item]:
    """The item each of a job's coded answers is to, by answer key, to label them: a project's own
    instrument's, a registered instrument's or an experiment's; none where the instrument cannot be read
    (reference data this process lacks: codes without labels)."""
    if isinstance(request, SurveyRequest) and is_team_ref(request.instrument):
        instrument = stored_instrument(session, job.project_id, request.instrument)
        return {} if instrument is None else {key.lower(): instrument.item(key) for key in request.items}
    try:
        return answer_items(request, reference_dir or Path("."))
    except AgentBankError:
        return {}


def answer_keys(request: Request, arms: tuple[str, ...] = ()) -> list[str]:
    """What each answer of an agent's result is to, in order: an item's key, ``question N``, or for an
    experiment ``arm:item`` (its questions, then its probes, in each of the agent's arms)."""
    if isinstance(request, SurveyRequest):
        return [item.lower() for item in request.items]
    if isinstance(request, ExperimentRequest):
        experiment = load_experiment(request.experiment)
        return [f"{arm}:{item.key}" for arm in arms for item in (*experiment.outcomes, *experiment.probes)]
    return [f"question {n}" for n in range(1, len(request.questions) + 1)]

"""A job's dry run, and what a job then used beside it.

A dry run is checked as a submission is (the project's approval, scope, quota, the items, the agents) and
plans each agent's calls through the door under the project's grant, in the order the job's tasks run;
it asks no model, queues nothing, spends no quota and writes no answer. It is audited once, for the
project, as ``job.estimate`` (no agent answered). The estimate is kept, so a job submitted afterwards with
the same request carries it beside the figures it used.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from agentbank.access.principals import Principal
from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.consultation.answering import Condition
from agentbank.consultation.answering.costs import Estimate, Estimator
from agentbank.consultation.door import AgentDoor, Grant
from agentbank.consultation.questions.screen import admit
from agentbank.core.errors import InvalidRequestError
from agentbank.core.settings import Settings
from agentbank.core.statuses import AgentStatus
from agentbank.db.models import Agent, AnswerRecord, Job, JobEstimate, JobResult
from agentbank.instruments import select_items
from agentbank.providers.tokens import counter_of
from agentbank.restricted.experiments import load_experiment
from agentbank.restricted.experiments.assignment import assign
from agentbank.restricted.experiments.running import EXPERIMENT_NOTE, estimate_trial
from agentbank.restricted.instruments import instrument_for_job
from agentbank.restricted.jobs.requests import ExperimentRequest, OpenRequest, Request, SurveyRequest
from agentbank.restricted.projects import authorize_job


def estimate_job(
    session: Session,
    sessions: sessionmaker[Session],
    principal: Principal,
    project_id: uuid.UUID,
    request: Request,
    door: AgentDoor,
    settings: Settings,
) -> Estimate:
    """The job's estimate, made as its tasks would run, kept for the job that follows; nothing asked."""
    project = authorize_job(session, principal, project_id, request.kind, request.agents, request.queries)
    if isinstance(request, SurveyRequest):
        instrument = instrument_for_job(session, project, request.instrument, settings.reference_data_dir)
        items = select_items(instrument, request.items)
    elif isinstance(request, OpenRequest):
        # Screened as a submission is, its refusal audited the same way: a dry run probes nothing unseen.
        admit(session, principal.actor, project.id, request.questions)
    asked = select(func.count()).where(Agent.id.in_(request.agents), Agent.status == AgentStatus.ACTIVE)
    if session.scalar(asked) != len(request.agents):
        raise InvalidRequestError("some of the agents are not available")
    chat = door.chat
    estimator = Estimator(session, settings, chat.name, counter_of(chat))
    grant = Grant.estimate(project.id)
    if isinstance(request, ExperimentRequest):
        experiment = load_experiment(request.experiment)
        arms = assign(experiment, request.agents, request.seed)
        estimator.estimate.notes.append(EXPERIMENT_NOTE)
    for agent_id in request.agents:
        if isinstance(request, SurveyRequest):
            calls = door.planned_calls(sessions, grant, agent_id, instrument, items, Condition(request.condition))
            estimator.add(calls, request.per_agent)
        elif isinstance(request, OpenRequest):
            estimator.add(door.planned_asks(sessions, grant, agent_id, request.questions), request.per_agent)
        else:
            estimate_trial(estimator, door, sessions, grant, experiment, agent_id, arms[agent_id], request.blinding,
                           Condition(request.condition), seed=request.seed)  # fmt: skip
    estimate = estimator.finish()
    session.add(JobEstimate(project_id=project.id, request_hash=request.digest(), figures=estimate.to_dict()))
    audit.record(
        session, principal.actor, "job.estimate", Tier.RESTRICTED, project_id=project.id,
        details={"kind": request.kind, "agents": len(request.agents), "calls": estimate.calls},
    )  # fmt: skip
    return estimate


def latest_estimate(session: Session, project_id: uuid.UUID, request: Request) -> dict[str, Any] | None:
    """The newest dry run's figures for exactly this request in this project, if one was made."""
    query = (
        select(JobEstimate.figures)
        .where(JobEstimate.project_id == project_id, JobEstimate.request_hash == request.digest())
        .order_by(JobEstimate.id.desc())
        .limit(1)
    )
    return session.scalar(query)


def job_usage(session: Session, job: Job) -> dict[str, Any]:
    """What the answers the model made for the job used (answers it found in the cache cost nothing):
    answers made, tokens and the model's seconds, summed from the answer cache's counts."""
    ids = [i for row in session.scalars(select(JobResult.made_ids).where(JobResult.job_id == job.id)) for i in row]
    made = AnswerRecord.id.in_(ids)
    columns = (AnswerRecord.prompt_tokens, AnswerRecord.cached_tokens, AnswerRecord.completion_tokens,
               AnswerRecord.seconds)  # fmt: skip
    totals = [func.coalesce(func.sum(column), 0) for column in columns]
    row = session.execute(select(func.count(), *totals).where(made)).one()
    answers, prompt, cached, completion, seconds = row[0], row[1], row[2], row[3], row[4]
    return {"answers_made": answers, "prompt_tokens": prompt, "cached_tokens": cached,
            "completion_tokens": completion, "model_seconds": round(float(seconds), 1)}  # fmt: skip

"""The restricted tier: applications, reviews, and jobs for approved projects."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header, Path, Query, Response
from fastapi.responses import HTMLResponse, JSONResponse
from sqlalchemy.orm import Session

from agentbank.access.principals import INDIVIDUAL_QUERY, PROJECTS_APPLY, REVIEW, Principal
from agentbank.access.scope import ProjectScope
from agentbank.building.validity.cards import Card
from agentbank.building.validity.measures import agent_cards
from agentbank.core.errors import PermissionDeniedError
from agentbank.db.models import OutboxEvent, Project, TeamInstrument
from agentbank.instruments.exports import ENCODINGS, FileFormat, encode
from agentbank.restricted import projects
from agentbank.restricted.approvals import approver_ids
from agentbank.restricted.groups.costs import estimate_group
from agentbank.restricted.groups.report import render_report
from agentbank.restricted.groups.results import group_result, project_groups, read_group, transcript
from agentbank.restricted.groups.storage import GroupState, submit_group
from agentbank.restricted.instruments import Source, add_instrument, project_instruments, ref_of
from agentbank.restricted.jobs.activity import mark_read, project_agents_with_cards, project_jobs, project_notices
from agentbank.restricted.jobs.costs import estimate_job, job_usage
from agentbank.restricted.jobs.lifecycle import submit_job
from agentbank.restricted.jobs.requests import parse_request
from agentbank.restricted.jobs.results import job_for, job_results, read_job, result_items
from agentbank.restricted.jobs.tables import results_table
from app.api.deps import BankDep, PrincipalDep, SessionDep, SettingsDep, require
from app.api.projects.schemas import (
    ApplicationCreate,
    EstimateRead,
    FocusGroupCreate,
    FocusGroupListed,
    FocusGroupRead,
    InstrumentCreate,
    InstrumentRead,
    JobCreate,
    JobRead,
    MembershipAnswer,
    NoticeRead,
    ProjectAgentRead,
    ProjectDecisionCreate,
    ProjectRead,
    ReportCardRead,
    ResultRead,
    ValidityRead,
)
from app.api.types import BIGINT_MAX

router = APIRouter(prefix="/v1", tags=["restricted tier"])

DEFAULT_APPROVAL_DAYS = 180


def _any_client(principal: PrincipalDep) -> Principal:
    if not principal.scopes & {PROJECTS_APPLY, INDIVIDUAL_QUERY, REVIEW}:
        principal.require(PROJECTS_APPLY)  # raises the right 401 or 403
    return principal


def _read(session: Session, project: Project, approvals_needed: int) -> ProjectRead:
    """A project as its members and reviewers see it: the stated harms, the team, who approved it so far."""
    return ProjectRead(
        id=project.id, title=project.title, purpose=project.purpose, harms=project.harms,
        members=projects.member_ids(session, project.id),
        invited=projects.member_ids(session, project.id, accepted=False), status=project.status, scope=project.scope,
        requested=project.requested,
        approvals=approver_ids(session, project.id), approvals_needed=approvals_needed,
        quota_used=project.quota_used, created_at=project.created_at,
    )  # fmt: skip


@router.post("/projects", response_model=ProjectRead, status_code=201, dependencies=[require(PROJECTS_APPLY)])
def apply(body: ApplicationCreate, session: SessionDep, principal: PrincipalDep, settings: SettingsDep) -> ProjectRead:
    """Apply for a project: purpose, potential harms, team and requested agents and query types.

    The clients named as members are invited: the project is ``forming`` until each has accepted
    (``POST /v1/projects/{id}/membership``), and is then submitted for review."""
    project = projects.apply(
        session,
        principal,
        projects.Application(body.title, body.purpose, body.harms, body.members, body.agents, list(body.query_types)),
    )
    return _read(session, project, settings.review_approvals)


@router.get("/projects", response_model=list[ProjectRead])
def list_projects(session: SessionDep, principal: PrincipalDep, settings: SettingsDep) -> list[ProjectRead]:
    """The projects one is named on, as a member or invited (reviewers see all); audited."""
    _any_client(principal)
    return [_read(session, p, settings.review_approvals) for p in projects.projects_for(session, principal)]


@router.get("/projects/{project_id}", response_model=ProjectRead)
def get_project(
    project_id: uuid.UUID, session: SessionDep, principal: PrincipalDep, settings: SettingsDep
) -> ProjectRead:
    """One project, to the clients it names and to reviewers; audited."""
    _any_client(principal)
    return _read(session, projects.read_project(session, principal, project_id), settings.review_approvals)


@router.post("/projects/{project_id}/membership", response_model=ProjectRead)
def respond(
    project_id: uuid.UUID, body: MembershipAnswer, session: SessionDep, principal: PrincipalDep, settings: SettingsDep
) -> ProjectRead:
    """Accept one's place on a project's team, or decline it; audited. Nobody is a member without accepting,
    and a project is submitted for review once every client it names has accepted."""
    _any_client(principal)
    return _read(session, projects.respond(session, principal, project_id, body.accept), settings.review_approvals)


@router.get(
    "/projects/{project_id}/agents",
    response_model=list[ProjectAgentRead],
    dependencies=[require(INDIVIDUAL_QUERY)],
)
def list_agents(
    project_id: uuid.UUID, session: SessionDep, principal: PrincipalDep, bank: BankDep
) -> list[ProjectAgentRead]:
    """The agents an approved project may query, each with its report cards (accuracy against its participant)."""
    return [
        ProjectAgentRead(
            id=agent.id,
            version=agent.version,
            report_cards=[ReportCardRead.model_validate(c, from_attributes=True) for c in cards],
        )
        for agent, cards in project_agents_with_cards(session, bank.keys, principal, project_id)
    ]


@router.get("/projects/{project_id}/jobs", response_model=list[JobRead], dependencies=[require(INDIVIDUAL_QUERY)])
def list_jobs(project_id: uuid.UUID, session: SessionDep, principal: PrincipalDep) -> list[JobRead]:
    """The project's newest 100 jobs, newest first, with their progress; audited."""
    return [JobRead.model_validate(j, from_attributes=True) for j in project_jobs(session, principal, project_id)]


def _notice(notice: OutboxEvent) -> NoticeRead:
    return NoticeRead(id=notice.id, topic=notice.topic, notice=str(notice.payload.get("notice", "")),
                      agent_ids=notice.payload.get("agent_ids", []), created_at=notice.created_at,
                      first_read_at=notice.delivered_at)  # fmt: skip


@router.get("/projects/{project_id}/notices", response_model=list[NoticeRead])
def list_notices(project_id: uuid.UUID, session: SessionDep, principal: PrincipalDep) -> list[NoticeRead]:
    """What the bank told the team: a participant whose agent answered the project withdrew, and the
    team must delete the copies it holds. Reading changes nothing (``POST .../read`` marks one read); audited."""
    return [_notice(n) for n in project_notices(session, principal, project_id)]


@router.post("/projects/{project_id}/notices/{notice_id}/read", response_model=NoticeRead)
def read_notice(
    project_id: uuid.UUID,
    notice_id: Annotated[int, Path(ge=1, le=BIGINT_MAX)],
    session: SessionDep,
    principal: PrincipalDep,
) -> NoticeRead:
    """Mark a notice read: a member's first mark is its delivery, kept with the notice; audited."""
    return _notice(mark_read(session, principal, project_id, notice_id))


@router.post("/projects/{project_id}/decision", response_model=ProjectRead, dependencies=[require(REVIEW)])
def decide(
    project_id: uuid.UUID,
    body: ProjectDecisionCreate,
    session: SessionDep,
    principal: PrincipalDep,
    settings: SettingsDep,
) -> ProjectRead:
    """Approve with a scope (agents, query types, agents per job, quota, expiry) or reject.

    Where two reviewers must agree (AGENTBANK_REVIEW_APPROVALS=2), a first approval leaves the project
    submitted with that approval listed; a second reviewer's approval grants the scope both allow.
    """
    scope = None
    if body.approve:
        scope = ProjectScope.of(
            agents=body.agents, query_types=body.query_types, max_agents_per_job=body.max_agents_per_job,
            quota=body.quota, expires_at=body.expires_at or datetime.now(UTC) + timedelta(days=DEFAULT_APPROVAL_DAYS),
            instruments=body.instruments,
        )  # fmt: skip
    project = projects.decide(session, principal, project_id, scope, body.note, settings.review_approvals)
    return _read(session, project, settings.review_approvals)


def _instrument(version: TeamInstrument) -> InstrumentRead:
    return InstrumentRead(
        ref=ref_of(version), key=version.key, version=version.version, source=version.source,
        definition=version.definition, not_imported=version.not_imported, created_at=version.created_at,
    )  # fmt: skip


@router.post("/projects/{project_id}/instruments", response_model=InstrumentRead, status_code=201)
def add_project_instrument(
    project_id: uuid.UUID, body: InstrumentCreate, session: SessionDep, principal: PrincipalDep
) -> InstrumentRead:
    """Add a version of one of the project's own instruments (the same content again changes nothing);
    audited. Reviewers approve a version by its ``ref``; jobs ask it as their ``instrument``."""
    _any_client(principal)
    version = add_instrument(session, principal, project_id, body.key, Source(body.format), body.content, body.title,
                             body.preamble)  # fmt: skip
    return _instrument(version)


@router.get("/projects/{project_id}/instruments", response_model=list[InstrumentRead])
def list_project_instruments(
    project_id: uuid.UUID, session: SessionDep, principal: PrincipalDep
) -> list[InstrumentRead]:
    """Every version of the project's own instruments, with their items, to its members and reviewers."""
    _any_client(principal)
    return [_instrument(v) for v in project_instruments(session, principal, project_id)]


@router.post(
    "/projects/{project_id}/jobs",
    response_model=JobRead | EstimateRead,
    status_code=202,
    dependencies=[require(INDIVIDUAL_QUERY)],
    responses={200: {"description": "A dry run's estimate, or a replay of an earlier request with the same "
                                    "Idempotency-Key"}},
)  # fmt: skip
def create_job(
    project_id: uuid.UUID,
    body: JobCreate,
    session: SessionDep,
    principal: PrincipalDep,
    settings: SettingsDep,
    bank: BankDep,
    response: Response,
    idempotency_key: Annotated[str | None, Header(max_length=200)] = None,
    dry_run: Annotated[
        bool, Query(description="Estimate calls, tokens, price and time; ask and queue nothing")
    ] = False,
) -> JobRead | EstimateRead:
    """Queue survey items or open questions for agents of the project; one task per agent. With
    ``dry_run=true``, the estimate instead (checked as a submission is; no Idempotency-Key needed)."""
    if dry_run:
        response.status_code = 200
        estimate = estimate_job(session, bank.sessions, principal, project_id, body, bank.planner, settings)
        return EstimateRead.model_validate(estimate.to_dict())
    job, created = submit_job(session, principal, project_id, idempotency_key or "", body, settings.reference_data_dir)
    if not created:
        response.status_code = 200
    return JobRead.model_validate(job, from_attributes=True)


@router.get("/jobs/{job_id}", response_model=JobRead, dependencies=[require(INDIVIDUAL_QUERY)])
def get_job(job_id: uuid.UUID, session: SessionDep, principal: PrincipalDep) -> JobRead:
    """A job's status and progress, with its estimate and what it used; audited."""
    job = read_job(session, principal, job_id)
    return JobRead.model_validate(job, from_attributes=True).model_copy(update={"used": job_usage(session, job)})


@router.get(
    "/jobs/{job_id}/results",
    response_model=list[ResultRead],
    dependencies=[require(INDIVIDUAL_QUERY)],
    responses={200: {"content": {e.media_type: {} for e in ENCODINGS.values()}}},
)
def get_results(
    job_id: uuid.UUID,
    session: SessionDep,
    principal: PrincipalDep,
    bank: BankDep,
    settings: SettingsDep,
    format: Annotated[
        Literal["json", "csv", "parquet", "dta", "sav"],
        Query(
            description="json (each answer with provenance), or a table of one row per agent and one column per "
            "answer: csv, parquet, or with value and variable labels Stata `dta` or SPSS `sav`"
        ),
    ] = "json",
) -> Response | list[ResultRead]:
    """Each agent's answers with provenance (a coded answer with its option's label); audited. Transcripts
    are never part of a result."""
    if principal.kind != "client":
        raise PermissionDeniedError("results are for project members")
    results = job_results(session, principal, job_id, bank.keys, settings.reference_data_dir, format)
    job = job_for(session, principal, job_id)
    request = parse_request(job.request)
    if format != "json":
        items = result_items(session, job, request, settings.reference_data_dir)
        table = results_table(request, results, items, f"agentbank job {job_id}")
        body, media_type = encode(table, FileFormat(format))
        name = f"job-{job_id}{ENCODINGS[FileFormat(format)].suffix}"
        return Response(body, media_type=media_type, headers={"Content-Disposition": f'attachment; filename="{name}"'})
    cards = agent_cards(session, bank.keys, [r.agent_id for r in results])
    return [ResultRead.model_validate({"agent_id": r.agent_id, "status": r.status, "answers": r.answers, "arms": r.arms,
                                       "validity": _validity(cards.get(r.agent_id))}) for r in results]  # fmt: skip


def _validity(card: Card | None) -> ValidityRead:
    if card is None:
        return ValidityRead(status="not_validated", card=None)
    return ValidityRead(status="validated", card=ReportCardRead.model_validate(card, from_attributes=True))


@router.post(
    "/projects/{project_id}/focus-groups",
    response_model=FocusGroupRead | dict[str, Any],
    status_code=202,
    dependencies=[require(INDIVIDUAL_QUERY)],
    responses={200: {"description": "A dry run's estimate (per round and in all), or a replay of an earlier "
                                    "request with the same Idempotency-Key"}},
)  # fmt: skip
def create_focus_group(
    project_id: uuid.UUID,
    body: FocusGroupCreate,
    session: SessionDep,
    principal: PrincipalDep,
    settings: SettingsDep,
    bank: BankDep,
    response: Response,
    idempotency_key: Annotated[str | None, Header(max_length=200)] = None,
    dry_run: Annotated[
        bool, Query(description="Estimate calls, tokens and price per round; ask and queue nothing")
    ] = False,
) -> FocusGroupRead | dict[str, Any]:
    """Queue a moderated focus group of the project's agents (one worker task; each utterance passes the door
    and is audited to its participant). With ``dry_run=true``, its estimate instead."""
    if dry_run:
        response.status_code = 200
        return estimate_group(session, bank.sessions, principal, project_id, body, bank.planner, settings)
    group, created = submit_group(session, principal, project_id, idempotency_key or "", body)
    if not created:
        response.status_code = 200
    return _group(read_group(session, bank.keys, principal, group.id))


def _group(state: GroupState) -> FocusGroupRead:
    seats = [{"seat": f"Seat {n}", "agent_id": str(agent), "status": status}
             for n, (agent, status) in sorted(state.seats.items())]  # fmt: skip
    return FocusGroupRead(id=state.id, project_id=state.project_id, status=state.status, model=state.model,
                          seats=seats, transcript=transcript(state))  # fmt: skip


@router.get(
    "/projects/{project_id}/focus-groups",
    response_model=list[FocusGroupListed],
    dependencies=[require(INDIVIDUAL_QUERY)],
)
def list_focus_groups(project_id: uuid.UUID, session: SessionDep, principal: PrincipalDep) -> list[FocusGroupListed]:
    """The project's newest 100 focus groups, newest first, with how each stands (none of their words); audited."""
    return [
        FocusGroupListed(id=g.id, status=g.status, model=g.model, reason=g.reason, seats=seats,
                         topics=[t["title"] for t in g.request["guide"]["topics"]], created_at=g.created_at,
                         finished_at=g.finished_at)
        for g, seats in project_groups(session, principal, project_id)
    ]  # fmt: skip


@router.get("/focus-groups/{group_id}", response_model=FocusGroupRead, dependencies=[require(INDIVIDUAL_QUERY)])
def get_focus_group(group_id: uuid.UUID, session: SessionDep, principal: PrincipalDep, bank: BankDep) -> FocusGroupRead:
    """A focus group's state and transcript so far, to follow it live; audited."""
    return _group(read_group(session, bank.keys, principal, group_id))


@router.get(
    "/focus-groups/{group_id}/result",
    dependencies=[require(INDIVIDUAL_QUERY)],
    responses={200: {"content": {"application/json": {}, "text/html": {}}}},
)
def get_focus_group_result(
    group_id: uuid.UUID,
    session: SessionDep,
    principal: PrincipalDep,
    bank: BankDep,
    format: Annotated[Literal["json", "html"], Query(description="json, or a readable HTML report")] = "json",
) -> Response:
    """The group's result: transcript by seat, a summary per seat, themes with their utterances, stance changes,
    and the framing (simulated, the model, report cards, flags); audited."""
    result = group_result(session, bank.keys, principal, group_id, format)
    if format == "html":
        return HTMLResponse(render_report(result))
    return JSONResponse(result)

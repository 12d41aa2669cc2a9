"""A coordinator's routes (scope ``studies``): create a study, invite in bulk, open a panel link, revoke
unused invitations, read progress and export it, see who is due for the retest, list each participant's own
completion codes, and record what the panel reported of those who did not complete there.

Nothing here returns a transcript, an answer or a contact: progress is stages, times and counts.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from starlette.responses import PlainTextResponse

from agentbank.access.principals import STUDIES
from agentbank.core.errors import PermissionDeniedError
from agentbank.db.models import Study
from agentbank.studies import completion, contacts, export, invitations, outcomes, ownership, setup, stages
from app.api.deps import BankDep, PrincipalDep, SessionDep, actor, require
from app.api.errors import ErrorBody
from app.api.studies.schemas import (
    CompletionCodeRead,
    DueRead,
    InvitationRead,
    InvitationsCreate,
    OpenLinkRead,
    OutcomesCreate,
    OutcomesRead,
    ProgressRead,
    RevocationCreate,
    RevocationRead,
    StudyCreate,
    StudyRead,
)
from interviewer.session.script import load_script

router = APIRouter(prefix="/v1/studies", tags=["studies"], dependencies=[require(STUDIES)])


def holder(principal: PrincipalDep) -> ownership.Holder:
    """The caller as a holder of studies: a registered client, acting on the studies it owns."""
    if principal.pk is None:  # nobody can own a study for a client the bank does not know
        raise PermissionDeniedError("only a registered client coordinates studies")
    return ownership.of_client(principal.pk)


HolderDep = Annotated[ownership.Holder, Depends(holder)]


def owned_study(study_id: uuid.UUID, session: SessionDep, holder: HolderDep) -> Study:
    """The study in the path, loaded through its owner's rule: another coordinator's study is not found."""
    return ownership.load(session, holder, study_id)


StudyDep = Annotated[Study, Depends(owned_study)]


@router.post("", response_model=StudyRead, status_code=201)
def create(body: StudyCreate, session: SessionDep, principal: PrincipalDep, holder: HolderDep) -> StudyRead:
    """Create a study on the script this server runs, owned by the caller."""
    script = load_script()  # the script this server's interviews run
    plan = setup.StudyPlan(body.name, script.key, script.version, body.target_size, body.expires_at, body.panel,
                           body.panel_param, body.completion_url, body.retest_completion_url,
                           body.completion_codes)  # fmt: skip
    study = setup.create_study(session, plan, actor(principal), datetime.now(UTC), owner_pk=holder.client_pk)
    return StudyRead.of(study)


@router.get("", response_model=list[StudyRead])
def list_all(session: SessionDep, holder: HolderDep) -> list[StudyRead]:
    """The caller's studies, newest first."""
    return [StudyRead.of(s) for s in ownership.listed(session, holder)]


@router.get("/{study_id}", response_model=ProgressRead)
def status(study: StudyDep, session: SessionDep, principal: PrincipalDep) -> ProgressRead:
    """The study at a glance: counts by stage, the funnel, drop-off by module, every participant's standing."""
    return ProgressRead.of(stages.read_progress(session, study, datetime.now(UTC), actor(principal)))


@router.post("/{study_id}/invitations", response_model=list[InvitationRead], status_code=201)
def invite(
    study: StudyDep, body: InvitationsCreate, request: Request, session: SessionDep, principal: PrincipalDep
) -> list[InvitationRead]:
    """Issue ``count`` invitations; their codes are in this answer only (the bank keeps their hashes)."""
    issued = invitations.issue(session, study, body.count, actor(principal), datetime.now(UTC))
    base = str(request.base_url)
    return [InvitationRead(invitation=i.id, code=i.code, link=export.invitation_link(base, i.code)) for i in issued]


@router.post("/{study_id}/open-link", response_model=OpenLinkRead, status_code=201)
def new_open_link(study: StudyDep, request: Request, session: SessionDep, principal: PrincipalDep) -> OpenLinkRead:
    """A new open link for the panel (an earlier one stops working): each visit gets its own invitation."""
    code = invitations.open_link(session, study, actor(principal))
    return OpenLinkRead(link=export.open_link(str(request.base_url), study, code))


@router.post("/{study_id}/revocations", response_model=RevocationRead)
def revoke(study: StudyDep, body: RevocationCreate, session: SessionDep, principal: PrincipalDep) -> RevocationRead:
    """Revoke unused invitations (those numbered, or all of them and the open link)."""
    count = invitations.revoke_unused(session, study, actor(principal), datetime.now(UTC), body.invitations)
    return RevocationRead(revoked=count)


# No response_class here: with one, FastAPI documents the JSON error bodies as text/csv too.
@router.get(
    "/{study_id}/export",
    responses={
        200: {"content": {"text/csv": {}}, "description": "One row per participant (withdrawals only counted)"},
        404: {"model": ErrorBody, "description": "no such study"},
    },
)
def export_progress(study: StudyDep, session: SessionDep, principal: PrincipalDep) -> PlainTextResponse:
    """The participants by stage as CSV, with their interviews' quality counts."""
    body = export.progress_csv(session, study, datetime.now(UTC), actor(principal))
    disposition = f'attachment; filename="study-{study.id}.csv"'
    return PlainTextResponse(body, media_type="text/csv", headers={"Content-Disposition": disposition})


@router.get("/{study_id}/reminders", response_model=list[DueRead])
def reminders(study: StudyDep, session: SessionDep, principal: PrincipalDep) -> list[DueRead]:
    """Who is due for the retest, by invitation number, and whether they left a contact (never the contact)."""
    due = contacts.read_due(session, study, datetime.now(UTC), actor(principal))
    return [DueRead.of(d) for d in due]


@router.get("/{study_id}/completion-codes", response_model=list[CompletionCodeRead])
def completion_codes(
    study: StudyDep, session: SessionDep, principal: PrincipalDep, bank: BankDep
) -> list[CompletionCodeRead]:
    """Each participant's own completion code, for those who reached an end, to approve their submissions on the
    panel: the codes alone, never by invitation number (409 for a study that gives the panel's one code)."""
    return [CompletionCodeRead.of(c) for c in completion.codes(session, bank.keys, study, actor(principal))]


@router.post("/{study_id}/outcomes", response_model=OutcomesRead)
def record_outcomes(
    study: StudyDep, body: OutcomesCreate, session: SessionDep, principal: PrincipalDep, bank: BankDep
) -> OutcomesRead:
    """Record what the panel reported of people who did not complete there (returned, timed out), matched by the
    panel's id for each; the answer counts them, and names no invitation."""
    reports = [outcomes.Report(o.panel_participant_id, o.outcome) for o in body.outcomes]
    recorded = outcomes.record_outcomes(session, bank.keys, study, reports, datetime.now(UTC), actor(principal))
    return OutcomesRead.of(recorded)

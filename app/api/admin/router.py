"""Operator actions over HTTP: publish an audit checkpoint, queue the population job, ask for a release."""

from __future__ import annotations

from fastapi import APIRouter

from agentbank.access.principals import ADMIN
from agentbank.audit.checkpoints import CheckpointFile, checkpoint_now
from agentbank.core.errors import ConflictError
from agentbank.instruments import load_instrument, select_items
from agentbank.instruments.gss import survey_items
from agentbank.publication.population import queue_population
from agentbank.publication.releases import request_cut
from app.api.admin.schemas import PopulationCreate, PopulationQueued, ReleaseCreate, ReleaseQueued
from app.api.audit.schemas import CheckpointRead
from app.api.deps import BankDep, PrincipalDep, SessionDep, SettingsDep, SignerDep, actor, require

router = APIRouter(prefix="/v1/admin", tags=["admin"], dependencies=[require(ADMIN)])


@router.post("/audit/checkpoints", response_model=CheckpointRead, status_code=201)
def sign_checkpoint(
    session: SessionDep, bank: BankDep, signer: SignerDep, settings: SettingsDep, principal: PrincipalDep
) -> CheckpointRead:
    """Sign the log's current head now and publish it (workers also do this on their own, on a schedule)."""
    point = checkpoint_now(bank.sessions, session, signer, CheckpointFile.of(settings), actor(principal))
    if point is None:
        raise ConflictError("the audit log is empty")
    return CheckpointRead.of(point)


@router.post("/population", response_model=PopulationQueued, status_code=202)
def queue_population_job(
    body: PopulationCreate, session: SessionDep, settings: SettingsDep, principal: PrincipalDep
) -> PopulationQueued:
    """Queue every active agent to answer the items for the open tier (workers do the answering)."""
    instrument = load_instrument(body.instrument, settings.reference_data_dir)
    if body.items:
        items = select_items(instrument, body.items)
    else:
        items = survey_items(instrument) if instrument.key == "gss" else list(instrument.items)
    agents = queue_population(session, instrument, items, actor(principal))
    return PopulationQueued(agents=agents, items=len(items))


@router.post("/releases", response_model=ReleaseQueued, status_code=202)
def request_open_release(body: ReleaseCreate, session: SessionDep, principal: PrincipalDep) -> ReleaseQueued:
    """Ask a worker to cut a new release of the open tier if the release policy allows (it is never cut
    inside a request, and never forced over HTTP)."""
    request_cut(session, actor(principal))
    return ReleaseQueued(queued=True)

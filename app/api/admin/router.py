"""Operator actions over HTTP: publish an audit checkpoint, queue the population job."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from agentbank import audit
from agentbank.access.principals import ADMIN
from agentbank.errors import ConflictError
from agentbank.instruments import load_instrument, select_items
from agentbank.instruments.gss import survey_items
from agentbank.population import queue_population
from app.api.audit.router import CheckpointRead
from app.api.deps import PrincipalDep, SessionDep, SettingsDep, SignerDep, actor, require
from app.api.types import Text

router = APIRouter(prefix="/v1/admin", tags=["admin"], dependencies=[require(ADMIN)])


class PopulationCreate(BaseModel):
    instrument: Text = Field(default="gss", max_length=32)
    items: list[Text] = Field(default_factory=list, max_length=300, description="Default: the instrument's survey")


class PopulationQueued(BaseModel):
    agents: int
    items: int


@router.post("/audit/checkpoints", response_model=CheckpointRead, status_code=201)
def publish_checkpoint(session: SessionDep, signer: SignerDep, principal: PrincipalDep) -> CheckpointRead:
    """Sign the log's current head and publish it."""
    audit.record(session, actor(principal), "audit.checkpoint", "admin")
    point = audit.checkpoint(session, signer)
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

"""Bodies of the operator's actions: the population job and open-tier releases."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from app.api.types import Text


class PopulationCreate(BaseModel):
    instrument: Text = Field(default="gss", max_length=32)
    items: list[Text] = Field(default_factory=list, max_length=300, description="Default: the instrument's survey")


class PopulationQueued(BaseModel):
    agents: int
    items: int


class ReleaseCreate(BaseModel):
    """Nothing to choose: a release requested over HTTP follows the release policy. Forcing one is an
    operator's command (``agentbank release cut --force``), never a request."""

    model_config = ConfigDict(extra="forbid")


class ReleaseQueued(BaseModel):
    queued: bool = Field(description="A worker cuts the release if the policy allows; see `agentbank release status`")

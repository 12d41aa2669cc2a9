"""Bodies of the operator's actions: the population job and open-tier releases."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.api.types import Text


class PopulationCreate(BaseModel):
    instrument: Text = Field(default="gss", max_length=32)
    items: list[Text] = Field(default_factory=list, max_length=300, description="Default: the instrument's survey")


class PopulationQueued(BaseModel):
    agents: int
    items: int


class ReleaseCreate(BaseModel):
    force: bool = Field(
        default=False, description="Cut even if fewer than k agents joined or left since the last release (audited)"
    )


class ReleaseRead(BaseModel):
    release: int
    agents: int
    joined: int
    left: int

"""The bank's public state: counts and the release's own statement, never anything about a person."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field


class ReleaseStateRead(BaseModel):
    id: int
    cut_at: datetime
    members: int = Field(description="The release's members, counted with its noise")
    k: int = Field(description="A group is shown once its count, noise included, reaches k")
    mu: float = Field(description="What the release spends on each answer, in Gaussian differential privacy")
    demo_settings: bool = Field(description="Cut under the demo's settings (a bank of fictional people only)")


class DemoSettingsRead(BaseModel):
    k: int
    mu: float
    lifetime_mu: float
    min_interval_s: float
    temperature: float = Field(description="The temperature the open tier's answers are sampled at")
    note: str


class BankStateRead(BaseModel):
    participants: int = Field(description="Consenting participants")
    agents: int = Field(description="Active agents of consenting participants")
    building: int = Field(description="Agent builds queued or running")
    failed: int = Field(description="Agent builds that used up their attempts")
    answered: int = Field(description="Agents whose answers the open tier may count")
    carded: int = Field(description="Agents with a validity card (scored against their own person)")
    needed: int = Field(description="Agents the first release needs (k of the release policy in force)")
    exact: bool = Field(
        description="Whether the counts are exact (for the operator, or in a bank of fictional people); "
        "otherwise each is rounded up to tens"
    )
    release: ReleaseStateRead | None = Field(description="The release in force; null before the first")
    demo: DemoSettingsRead | None = Field(
        description="The demo's settings, in force while every participant is one of the demo's fictional people"
    )
    says: list[str] = Field(description="The same, in sentences")

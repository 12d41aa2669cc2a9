"""Open-tier response bodies."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ItemRead(BaseModel):
    key: str
    question: str
    kind: str
    options: list[dict[str, int | str]]


class InstrumentRead(BaseModel):
    key: str
    title: str
    version: str
    items: int


class CellRead(BaseModel):
    group: dict[str, str]
    code: int
    label: str
    count: int | None
    share: float | None


class GroupRead(BaseModel):
    group: dict[str, str]
    n: int | None


class DistributionRead(BaseModel):
    release: int = Field(description="The release the table comes from; every table of one release is consistent")
    instrument: str
    item: str
    question: str
    breakdowns: list[str]
    k: int
    total: int | None = Field(description="Everyone in the release who answered the item (None if hidden)")
    groups: list[GroupRead]
    cells: list[CellRead]


class PreparingRead(BaseModel):
    status: str = "preparing"
    release: int
    retry_after: int = Field(description="Seconds until the table is likely protected and stored")

"""Open-tier response bodies."""

from __future__ import annotations

from pydantic import BaseModel


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
    instrument: str
    item: str
    question: str
    breakdowns: list[str]
    k: int
    total: int | None
    groups: list[GroupRead]
    cells: list[CellRead]

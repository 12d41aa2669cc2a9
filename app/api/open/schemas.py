"""Open-tier response bodies."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field


class ItemRead(BaseModel):
    key: str
    question: str
    kind: str
    options: list[dict[str, int | str]]


class BreakdownRead(BaseModel):
    key: str
    title: str
    categories: list[str] = Field(description="Its categories, `unknown` last")


class InstrumentRead(BaseModel):
    key: str
    title: str
    version: str
    items: int
    released: list[str] = Field(
        default_factory=list, description="The items the current release holds tables for (none before the first)"
    )


class CellRead(BaseModel):
    group: dict[str, str]
    code: int
    label: str
    count: int | None = Field(
        description="Agents of the group who gave this answer, with the release's noise; null where the group is hidden"
    )
    share: float | None = Field(description="count / the group's n")
    interval: tuple[float, float] | None = Field(description="95% interval of the share: sampling and noise together")
    weighted_share: float | None = Field(description="The share with the release's post-stratification weights")
    weighted_interval: tuple[float, float] | None = Field(
        description="95% interval of the weighted share: sampling (times the design effect) and noise together"
    )
    noise_interval: tuple[float, float] | None = Field(
        default=None, description="95% interval of the share from the release's noise alone"
    )
    sampling_interval: tuple[float, float] | None = Field(
        default=None, description="95% sampling interval of the share, as if the counts were exact"
    )


class GroupRead(BaseModel):
    group: dict[str, str]
    n: int | None = Field(description="The group's count, noise included; null where hidden")
    deff: float | None = Field(description="Kish's design effect of the release's weights (1: no precision lost)")
    hidden: str | None = Field(None, description="Why the group's figures are not shown")


class WeightsRead(BaseModel):
    source: str = Field(description="Where the population margins the weights are raked to come from")
    raked_on: list[str] = Field(description="The breakdowns whose margins the weights meet")
    notes: list[str] | None = Field(default=None, description="Categories no agent falls in, unknown categories")
    cap: float | None = Field(default=None, description="No weight is above cap or below 1/cap")
    method: str | None = Field(default=None, description="How the weights were made from the release's figures")
    error: str | None = Field(default=None, description="Why this release has no weights")


class ItemValidityRead(BaseModel):
    status: Literal["measured", "nearest", "not_validated"] = Field(
        description="measured: the bank scored its interview agents on this item against their own people; "
        "nearest: not this item, but the items named in `items`, of the same topic; not_validated: neither"
    )
    items: list[str] = Field(description="The items the figures come from")
    agents: int = Field(description="People (and their agents) the figures rest on, with the release's noise")
    accuracy: float | None = Field(description="Share of agents answering as their person did in the first survey")
    retest: float | None = Field(description="Share of people who gave the same answer in their own retest")
    normalized_accuracy: float | None = Field(description="accuracy / retest (Park et al. 2024)")
    baseline: str | None = Field(description="The best non-LLM baseline of the same scoring")
    baseline_accuracy: float | None
    below_baseline: bool | None = Field(description="True where the agents scored below that baseline")
    run_id: str | None
    model: str | None
    measured_at: datetime | None
    release: int | None = Field(None, description="The release the figures were published in")


class ItemFidelityRead(BaseModel):
    against: str = Field(description="The population's distribution the release's is set beside")
    people: int = Field(description="Everyone in the release who answered the item, with the release's noise")
    reference_people: int = Field(description="The reference's people who gave one of the item's options")
    weighted: bool = Field(description="Whether the release's weighted shares were compared (else its shares)")
    tvd: float = Field(description="Total variation: the largest share any answer is over- or under-stated by")
    tvd_interval: tuple[float, float] = Field(description="95% interval, both distributions drawn again")
    jsd: float = Field(description="Jensen–Shannon divergence in bits (0 identical, 1 disjoint)")
    jsd_interval: tuple[float, float]
    release: int


class ProtectionRead(BaseModel):
    mu: float = Field(description="The release's guarantee per answer, in Gaussian differential privacy")
    sigma: float = Field(description="The noise (standard deviation) of each count of this table")
    sigma_weighted: float | None = Field(description="The noise of each weighted total of this table")
    note: str
    demo_settings: bool = Field(
        False,
        description="True where the release was cut under the demo's settings, which only a bank of fictional "
        "people takes (a smaller k and a far larger mu than any real bank's): never a real bank's protection",
    )


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
    missing: dict[str, int | None] = Field(
        description="Release members without a coded answer to the item (`no answer`), kept apart from every "
        "share; agents are not offered the GSS's don't know, so it and inapplicable do not occur"
    )
    weights: WeightsRead | None = Field(description="The release's weights; null for a release cut before them")
    protection: ProtectionRead = Field(description="How the release protects every person in this table")
    validity: ItemValidityRead = Field(description="How well the bank's agents are known to answer this item")
    fidelity: ItemFidelityRead | None = Field(
        None,
        description="How far the release's distribution of the item lies from the GSS's own (overall, computed "
        "from the published table alone); null where the reference lacks the item or the table is hidden",
    )


class TableQueuedRead(BaseModel):
    """A table the current release lacks, queued for the next cut."""

    status: Literal["queued"] = "queued"
    instrument: str
    item: str
    breakdowns: list[str]
    release: int = Field(description="The release in force, which lacks the table")
    asks: int = Field(description="How many times this table was asked for")
    next_cut_after: datetime = Field(description="The earliest time the next release may be cut")
    note: str


class TokenCheckRead(BaseModel):
    """The token may read the open tier."""

    client: str = Field(description="The client the token belongs to")


TableKind = Literal["overall", "standing one-way", "asked"]


class KindOfTableRead(BaseModel):
    kind: TableKind
    tables: str = Field(description="Which tables are of this kind")
    in_every_release: bool = Field(description="Measured in every release; else measured at the next cut once asked")
    sigma: float = Field(description="The noise's standard deviation on each count")
    expected_error_points: dict[str, float] = Field(
        description="Expected absolute error of a share near one half from the noise alone, in points, by group size"
    )


class ExpectedErrorsRead(BaseModel):
    """What the current release's noise costs a share, by kind of table, before any table is asked for."""

    release: int
    mu: float = Field(description="The guarantee per answer and release (Gaussian differential privacy)")
    standing: list[str] = Field(description="The breakdowns every release measures")
    asked_per_item: int = Field(description="How many asked tables one release measures of one item, at most")
    kinds: list[KindOfTableRead]
    note: str

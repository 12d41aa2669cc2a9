"""A release's weights: raked when it is cut, applied to a table when one is read."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentbank.breakdowns import BREAKDOWNS
from agentbank.distributions import DIMENSIONS, project
from agentbank.models import Agent, Participant, Release, ReleaseCount
from agentbank.weighting.estimates import WeightedTable, weigh
from agentbank.weighting.raking import RakingError, Weights, rake
from agentbank.weighting.targets import Targets


def release_weights(session: Session, members: set[uuid.UUID], targets: Targets) -> dict[str, object]:
    """The members' weights as stored with the release, or why there are none."""
    dims = tuple(d for d in DIMENSIONS if d in targets.margins)
    rows = session.scalars(
        select(Participant.demographics)
        .join(Agent, Agent.participant_id == Participant.id)
        .where(Agent.id.in_(members))
    ).all()
    try:
        return rake([tuple(BREAKDOWNS[d].classify(demo or {}) for d in dims) for demo in rows], dims, targets).to_json()
    except RakingError as exc:
        return {"source": targets.source, "error": str(exc)}


def weighted_table(
    session: Session, release: Release, instrument: str, item: str, dims: tuple[str, ...]
) -> tuple[WeightedTable | None, dict[str, object] | None]:
    """The table's weighted totals, and what the API says of the weights (None before weights existed)."""
    if release.weights is None:
        return None, None
    if "error" in release.weights:
        return None, {"source": release.weights["source"], "raked_on": [], "error": release.weights["error"]}
    weights = Weights.from_json(release.weights)
    about: dict[str, object] = {"source": weights.source, "raked_on": list(weights.dimensions), "notes": weights.notes}
    profile_dims = tuple(release.dimensions)
    counts = release_counts(session, release.id, instrument, item)
    table = weigh(
        counts,
        lambda profile: project(profile, dims, profile_dims),
        lambda profile: weights.of(project(profile, weights.dimensions, profile_dims)),
    )
    return table, about


def release_counts(
    session: Session, release_id: int, instrument: str, item: str
) -> dict[tuple[tuple[str, ...], int], int]:
    """A release's frozen counts of one item, by (profile, code)."""
    return {
        (tuple(cell), code): n
        for cell, code, n in session.execute(
            select(ReleaseCount.cell, ReleaseCount.code, ReleaseCount.count).where(
                ReleaseCount.release_id == release_id,
                ReleaseCount.instrument == instrument,
                ReleaseCount.item == item,
            )
        )
    }

"""A release's weights: raked when it is cut, applied to a table when one is read."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentbank.db.models import Agent, Participant, Release, ReleaseCount
from agentbank.open_tier.breakdowns import BREAKDOWNS
from agentbank.open_tier.distributions import DIMENSIONS, project
from agentbank.open_tier.weighting.estimates import weigh
from agentbank.open_tier.weighting.raking import RakingError, Weights, rake
from agentbank.open_tier.weighting.targets import Targets


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


def weights_about(release: Release) -> dict[str, object] | None:
    """What a table says of its release's weights (None for a release cut before weights existed)."""
    if release.weights is None:
        return None
    if "error" in release.weights:
        return {"source": release.weights["source"], "raked_on": [], "error": release.weights["error"]}
    return {"source": release.weights["source"], "raked_on": release.weights["dimensions"],
            "notes": release.weights["notes"]}  # fmt: skip


def weighted_totals(
    release: Release, counts: Mapping[tuple[tuple[str, ...], int], int], dims: tuple[str, ...]
) -> dict[str, Any] | None:
    """The weighted totals of the table over ``dims``, to store beside it (None without weights).

    Computed once, when the table is protected, so a request reads them with the table.
    """
    if release.weights is None or "error" in release.weights:
        return None
    weights = Weights.from_json(release.weights)
    profile_dims = tuple(release.dimensions)
    return weigh(
        counts,
        lambda profile: project(profile, dims, profile_dims),
        lambda profile: weights.of(project(profile, weights.dimensions, profile_dims)),
    ).to_json()


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

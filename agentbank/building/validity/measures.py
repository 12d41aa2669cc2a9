"""Validity that travels with every individual answer: the agent's newest card, or that it is not validated.

The open tier's figures per item are published only inside a release (``open_tier.validity``); here is
what the restricted tier and the worker need: each agent's card for its results, whether a participant
has been retested, and the request to score the bank again when a retest arrives.
"""

from __future__ import annotations

import uuid

from sqlalchemy.orm import Session

from agentbank.building.validity.cards import Card, latest_cards
from agentbank.core.statuses import BatteryWaveStatus
from agentbank.db.models import BatteryWave
from agentbank.db.queue import enqueue_once
from agentbank.keys.crypto import KeyRing

# The worker task that scores the bank's agents again (cards) when a participant's retest arrives or their
# agent is rebuilt; its body lives with the evaluation, which the worker is given.
REFRESH_TASK = "agentbank.validity_refresh"
REFRESH_QUEUE = "validity"


def request_refresh(session: Session, reason: str) -> None:
    """Ask for the bank's cards to be refreshed, in the caller's transaction (one request waits at most)."""
    enqueue_once(session, REFRESH_QUEUE, REFRESH_TASK, {"reason": reason})


def has_retest(session: Session, participant_id: uuid.UUID) -> bool:
    """Whether the participant completed their retest (so their agent can be scored)."""
    wave = session.get(BatteryWave, (participant_id, 2))
    return wave is not None and wave.status == BatteryWaveStatus.COMPLETE


def agent_cards(session: Session, keys: KeyRing, agent_ids: list[uuid.UUID]) -> dict[uuid.UUID, Card]:
    """Each agent's newest interview card (the GSS's where it has several), for its results."""
    out: dict[uuid.UUID, Card] = {}
    for agent_id, cards in latest_cards(session, keys, agent_ids).items():
        interview = sorted((c for c in cards if c.condition == "interview"), key=lambda c: (c.instrument != "gss",))
        if interview:
            out[agent_id] = interview[0]
    return out

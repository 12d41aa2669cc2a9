"""The participant's portal: who used their agent, when and for what; their own transcript.

Everything here is scoped to one participant by construction: events are selected by their own id or
their own agents' ids, never by anything the caller names.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from agentbank.audit import entries
from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.building.memory import render_turn
from agentbank.building.transcripts import latest_final_transcript, load_turns
from agentbank.core.errors import NotFoundError
from agentbank.db.models import Agent, AuditEvent, Participant, Project
from agentbank.keys.crypto import KeyRing

MAX_EVENTS = 1000


@dataclass(frozen=True)
class UseOfAgent:
    """One audited event about the participant or their agent, as the participant sees it."""

    seq: int | None  # the event's place in the chain; None until the sequencer gives it (seconds)
    hash: str | None
    prev_hash: str | None
    at: datetime
    action: str
    tier: str
    actor_kind: str
    project: dict[str, Any] | None  # id, title and approved purpose of the team's project
    purpose: str | None  # why the agent was asked, as the door recorded it (operator, evaluation, teams)
    asked: dict[str, Any]  # instrument and item keys; open questions only as sha256 hashes
    outcome: str | None  # released | withheld | unavailable | aggregate | a reviewer's decision


def uses_of_agent(session: Session, participant_id: uuid.UUID, actor: audit.Actor) -> list[UseOfAgent]:
    """Every audit event that touched the participant or one of their agents, oldest first; the read is
    itself audited (it shows up in the next read)."""
    agents = select(Agent.id).where(Agent.participant_id == participant_id)
    rows = session.execute(
        select(AuditEvent, Project)
        .outerjoin(Project, Project.id == AuditEvent.project_id)
        # Rows quarantined on the way in were never the bank's events (``audit.chain``): not a use of anyone.
        .where(
            or_(AuditEvent.participant_id == participant_id, AuditEvent.agent_id.in_(agents)), ~AuditEvent.quarantined
        )
        .order_by(AuditEvent.id)
        .limit(MAX_EVENTS)
    ).all()
    audit.record(session, actor, "participant.audit.read", Tier.PARTICIPANT, participant_id=participant_id)
    return [
        UseOfAgent(
            seq=event.seq,
            hash=event.hash.hex() if event.hash else None,
            prev_hash=event.prev_hash.hex() if event.prev_hash else None,
            at=event.created_at,
            action=event.action,
            tier=event.tier,
            actor_kind=event.actor_kind,
            project={"id": str(project.id), "title": project.title, "purpose": project.purpose} if project else None,
            purpose=(event.details or {}).get("purpose"),
            asked=entries.asked(event.details or {}),
            outcome=entries.outcome(event.action, event.details or {}),
        )
        for event, project in rows
    ]


def profile(session: Session, participant_id: uuid.UUID, actor: audit.Actor) -> tuple[Participant, str | None]:
    """The participant and their newest agent's status, audited as their view of themselves."""
    participant = session.get_one(Participant, participant_id)
    status = session.scalar(
        select(Agent.status).where(Agent.participant_id == participant.id).order_by(Agent.version.desc()).limit(1)
    )
    audit.record(session, actor, "participant.view", Tier.PARTICIPANT, participant_id=participant.id)
    return participant, status


def transcript_text(session: Session, keys: KeyRing, participant_id: uuid.UUID, actor: audit.Actor) -> str:
    """The participant's newest final transcript as plain text, one numbered turn per line.

    Raises ``DataKeyDestroyedError`` (410) once they withdrew: nobody can read it any more.
    """
    participant = session.get_one(Participant, participant_id)
    cipher = keys.cipher(participant.id, participant.wrapped_key)
    transcript = latest_final_transcript(session, participant_id)
    if transcript is None:
        raise NotFoundError("there is no finished interview yet")
    text = "\n".join(render_turn(t) for t in load_turns(session, transcript.id, cipher)) + "\n"
    audit.record(session, actor, "participant.transcript.read", Tier.PARTICIPANT, participant_id=participant_id)
    return text

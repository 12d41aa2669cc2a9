"""Populations of agents for API tests, without building them (no model is needed to count answers)."""

from __future__ import annotations

import uuid
from pathlib import Path

from sqlalchemy.orm import Session

from agentbank.audit.log import SYSTEM
from agentbank.building.transcripts import new_pseudonym
from agentbank.db.models import Agent, Participant, PopulationAnswer, Transcript
from agentbank.instruments import load_instrument
from agentbank.open_tier.releases import cut_release
from tests.agentbank.factories import keyring


def population(session: Session, answers: list[tuple[dict, int]], item: str = "cappun") -> list[Agent]:
    """One active agent per (demographics, code), each with its stored answer to ``item``."""
    keys = keyring()
    agents = []
    for demographics, code in answers:
        participant = Participant(id=uuid.uuid4(), pseudonym=new_pseudonym(), source_ref=f"test:{uuid.uuid4()}",
                                  demographics=demographics)  # fmt: skip
        participant.wrapped_key, _ = keys.new_key(participant.id)
        transcript = Transcript(id=uuid.uuid4(), participant_id=participant.id, status="final")
        agent = Agent(id=uuid.uuid4(), participant_id=participant.id, version=1, transcript_id=transcript.id)
        session.add_all([participant, transcript])
        session.flush()
        session.add(agent)
        session.flush()
        session.add(PopulationAnswer(agent_id=agent.id, instrument="gss", item=item, code=code, value=code))
        agents.append(agent)
    session.flush()
    return agents


def release(session: Session, k: int = 10, *, force: bool = True):
    """Cut a release of the open tier from the answers stored so far (forced: tests choose their banks)."""
    outcome = cut_release(session, lambda key: load_instrument(key, Path("../shared/data")), k, SYSTEM, force=force)
    return outcome.release

"""Survey respondents as agents, in a database of their own.

Survey-based and demographic agents of panel respondents go through the product's answering code,
which needs an agent row to cache and record every answer. They live in a separate database on the
same server, created and migrated on first use, so that people who never gave the bank an interview
can never appear in its aggregates, its restricted tier or its audit trail.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Engine, create_engine, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from agentbank.building.transcripts import seal_demographics
from agentbank.core.settings import Settings
from agentbank.db.connections import database_url, owner_database_url
from agentbank.db.models import Agent, Participant, Transcript
from agentbank.db.roles import enable_app_login
from agentbank.db.schema import Schema
from agentbank.keys.crypto import KeyRing
from agentbank.keys.rotation import hold_keyring


def evaluation_engine(settings: Settings, schema: Schema) -> Engine:
    """An engine for the evaluation database next to the bank's, created and brought to ``schema`` if needed."""
    database = settings.evaluation_database  # a checked identifier: safe to quote into DDL
    # Created and migrated by the owner; used, like the bank's, as the application role.
    owner_url = make_url(owner_database_url(settings))
    admin = create_engine(owner_url, isolation_level="AUTOCOMMIT", hide_parameters=True)
    try:
        with admin.connect() as conn:
            exists = conn.scalar(text("SELECT 1 FROM pg_database WHERE datname = :name"), {"name": database})
            if not exists:
                conn.execute(text(f'CREATE DATABASE "{database}"'))
    finally:
        admin.dispose()
    schema.upgrade(owner_url.set(database=database).render_as_string(hide_password=False))
    if settings.database_url is None:
        # On a fresh embedded server the bank's own database may never have been migrated, and the
        # application role gets its login there; a configured server's role is its administrator's.
        enable_app_login(owner_url.render_as_string(hide_password=False))
    url = make_url(database_url(settings)).set(database=database)
    return create_engine(url, pool_pre_ping=True, hide_parameters=True)


def respondent_agent(
    session: Session, keys: KeyRing, data_digest: str, person: str, demographics: Mapping[str, Any]
) -> tuple[Agent, Participant]:
    """The agent standing for one respondent of the data with ``data_digest``: found again on later
    runs of the same data, else made.

    Respondents are keyed by the data's content, not its file name: a corrected file gives new
    respondents with the corrected demographics, and none of the old one's cached answers.
    It has an empty final transcript: what it knows comes only from its condition (demographics or
    the person's other answers), so the interview conditions cannot be asked of it.
    """
    source_ref = f"dataset:{data_digest}:{person}"
    participant = session.scalar(select(Participant).where(Participant.source_ref == source_ref))
    if participant is not None:
        agent = session.scalar(select(Agent).where(Agent.participant_id == participant.id, Agent.status == "active"))
        if agent is not None:
            return agent, participant
    participant = Participant(id=uuid.uuid4(), pseudonym=f"r-{uuid.uuid4().hex[:16]}", source_ref=source_ref)
    hold_keyring(session)
    participant.wrapped_key, cipher = keys.new_key(participant.id)
    seal_demographics(participant, cipher, demographics)
    session.add(participant)
    session.flush()
    transcript = Transcript(id=uuid.uuid4(), participant_id=participant.id, version=1, status="final")
    session.add(transcript)
    session.flush()
    agent = Agent(
        id=uuid.uuid4(),
        participant_id=participant.id,
        version=1,
        transcript_id=transcript.id,
        status="active",
        build={"kind": "respondent", "data_digest": data_digest},
    )
    session.add(agent)
    session.flush()
    return agent, participant

"""Shared helpers of the tests (moved from ``tests.app.web.test_portal_page``)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session, sessionmaker

from agentbank.access.clients import create_client, issue_participant_token
from agentbank.access.principals import Principal
from agentbank.access.scope import ProjectScope
from agentbank.audit import log as audit
from agentbank.audit import notes
from agentbank.audit.checkpoints import CheckpointFile, publish_checkpoint
from agentbank.audit.signing_keys import load_signer
from agentbank.core.settings import Settings
from agentbank.db.models import AuditCosignature, AuditEvent
from agentbank.keys.crypto import KeyRing
from agentbank.restricted import projects
from tests.support.factories import SECRET, build

TITLE = "Household spending"


PURPOSE = "A study of how agents answer questions about spending."


OPERATOR = audit.Actor("operator", "test")


OPERATOR_PURPOSE = "checking a complaint about the agent"


def participant_whose_agent_was_used(database_url: str, keys: KeyRing) -> tuple[str, int]:
    """A participant with a built agent that an approved team's job used: (access code, the use's audit seq)."""
    engine = create_engine(database_url)
    try:
        with Session(engine) as session, session.begin():
            participant, agent, *_ = build(session, keys=keys)
            team = create_client(session, "team", ["projects:apply", "individual:query"], OPERATOR).client
            applicant = Principal("client", team.client_id, team.id, frozenset({"projects:apply", "individual:query"}))
            project = projects.apply(
                session, applicant, projects.Application(TITLE, PURPOSE, PURPOSE, [], None, ["survey"])
            )
            reviewer = Principal("client", "reviewer", None, frozenset({"review"}))
            grant = ProjectScope.of(None, ["survey"], 10, 1000, datetime.now(UTC) + timedelta(days=30))
            projects.decide(session, reviewer, project.id, grant, "approved")
            used = audit.record(
                session, audit.SYSTEM, "job.answer", "restricted", project_id=project.id, agent_id=agent.id,
                participant_id=participant.id, details={"instrument": "gss", "items": ["cappun"], "released": True},
            )  # fmt: skip
            audit.record(
                session, audit.Actor("operator", "cli"), "operator.answer", "operator", agent_id=agent.id,
                participant_id=participant.id, details={"purpose": OPERATOR_PURPOSE, "kind": "survey",
                                                        "instrument": "gss", "items": ["grass"]},
            )  # fmt: skip
            audit.record(
                session, audit.Actor("operator", "experiment"), "experiment.answer", "operator", agent_id=agent.id,
                participant_id=participant.id, details={"purpose": "a published experiment", "kind": "experiment",
                                                        "experiment": "schilke", "arms": ["low_power"],
                                                        "blinding": "blinded", "released": True},
            )  # fmt: skip
            # The participant's own interview: dozens of steps that must not bury the uses above.
            for step in ["interview.start", *["interview.audio_turn"] * 20, "interview.finish"]:
                audit.record(
                    session, audit.Actor("participant", participant.pseudonym), step, "participant",
                    participant_id=participant.id,
                )  # fmt: skip
            session.flush()
            audit.sequence(session)  # as the server's sequencer would within a second
            code = issue_participant_token(session, participant, 3600)
            seq = session.get_one(AuditEvent, used).seq
            assert seq is not None
            return code, seq
    finally:
        engine.dispose()


WITNESS = Ed25519PrivateKey.generate()


WITNESS_NAME = "witness.example/w1"


def sign_and_cosign(server, database_url: str) -> int:
    """Sign a checkpoint with the server's own key (as its workers would), and store a witness's cosignature
    of it (as `agentbank audit checkpoint` would after asking the witness); the head's size."""
    settings = Settings(data_dir=server.data_dir, secret_key=SECRET)
    engine = create_engine(database_url)
    try:
        sessions = sessionmaker(bind=engine)
        point = publish_checkpoint(sessions, load_signer(settings), CheckpointFile.of(settings))
        assert point is not None and point.note is not None
        signed_text = notes.Note.parse(point.note).text
        with Session(engine) as session, session.begin():
            checkpoint_id = session.execute(text("SELECT max(id) FROM audit_checkpoints")).scalar_one()
            line = notes.cosign(signed_text, WITNESS_NAME, WITNESS, int(time.time()))
            session.add(AuditCosignature(checkpoint_id=checkpoint_id, witness=WITNESS_NAME, line=line,
                                         received_at=datetime.now(UTC)))  # fmt: skip
        return point.seq
    finally:
        engine.dispose()


def sign_in(page, url: str, code: str) -> None:
    page.goto(f"{url}/portal")
    page.get_by_label("Access code").fill(code)
    page.get_by_role("button", name="Sign in").click()

"""Storing interviews as participants with encrypted, final transcripts, and reading them back."""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentbank.building.ingest import ParsedInterview
from agentbank.core.statuses import TranscriptStatus, move
from agentbank.db.models import Participant, Transcript, Turn
from agentbank.keys.crypto import Cipher, KeyRing
from agentbank.keys.rotation import hold_keyring


@dataclass(frozen=True)
class TurnText:
    """A decrypted turn; ``position`` is its number within the transcript, used for citations."""

    position: int
    speaker: str
    text: str


@dataclass(frozen=True)
class IngestResult:
    """What one ingest stored, and which interviews were already in the bank."""

    participants: list[Participant]
    already_present: list[str]


def new_pseudonym() -> str:
    """A random pseudonym that carries nothing about the person."""
    return f"P-{secrets.token_hex(4)}"


def store_interviews(session: Session, interviews: list[ParsedInterview], keys: KeyRing) -> IngestResult:
    """Store each interview as a participant with its own data key and a final transcript.

    Interviews whose source is already stored are left as they are, so re-running an ingest is safe.
    The caller's transaction makes the whole batch appear at once or not at all.
    """
    refs = [i.source_ref for i in interviews]
    present = set(session.scalars(select(Participant.source_ref).where(Participant.source_ref.in_(refs))))
    stored = []
    for interview in interviews:
        if interview.source_ref in present:
            continue
        present.add(interview.source_ref)
        stored.append(store_interview(session, interview, keys))
    return IngestResult(stored, sorted(set(refs) & present - {p.source_ref for p in stored}))


def store_interview(session: Session, interview: ParsedInterview, keys: KeyRing) -> Participant:
    """One participant, their wrapped data key and their finalized transcript."""
    participant = Participant(id=uuid.uuid4(), pseudonym=new_pseudonym(), source_ref=interview.source_ref)
    hold_keyring(session)
    participant.wrapped_key, cipher = keys.new_key(participant.id)
    seal_demographics(participant, cipher, interview.demographics)
    transcript = Transcript(id=uuid.uuid4(), participant_id=participant.id, version=1, status=TranscriptStatus.DRAFT)
    session.add_all([participant, transcript])
    session.flush()
    session.add_all(
        Turn(transcript_id=transcript.id, position=n, speaker=t.speaker, text_encrypted=cipher.seal(t.text))
        for n, t in enumerate(interview.turns, start=1)
    )
    session.flush()
    transcript.status = move(transcript.status, TranscriptStatus.FINAL, "the transcript")
    transcript.finalized_at = datetime.now(UTC)
    session.flush()
    return participant


def open_demographics(participant: Participant, cipher: Cipher) -> dict[str, Any]:
    """The participant's GSS-coded demographics, opened with their key (empty when none are known)."""
    blob = participant.demographics_encrypted
    return dict(cipher.open_json(blob)) if blob is not None else {}


def seal_demographics(participant: Participant, cipher: Cipher, demographics: Mapping[str, Any]) -> None:
    """Seal the participant's demographics with their key (none known: nothing stored)."""
    participant.demographics_encrypted = cipher.seal_json(dict(demographics)) if demographics else None


def load_turns(session: Session, transcript_id: uuid.UUID, cipher: Cipher) -> list[TurnText]:
    """The decrypted turns of a transcript, in order."""
    rows = session.execute(
        select(Turn.position, Turn.speaker, Turn.text_encrypted)
        .where(Turn.transcript_id == transcript_id)
        .order_by(Turn.position)
    )
    return [TurnText(position, speaker, cipher.open(blob)) for position, speaker, blob in rows]


def latest_final_transcript(session: Session, participant_id: uuid.UUID) -> Transcript | None:
    """The newest final transcript of a participant."""
    return session.scalars(
        select(Transcript)
        .where(Transcript.participant_id == participant_id, Transcript.status == TranscriptStatus.FINAL)
        .order_by(Transcript.version.desc())
        .limit(1)
    ).first()

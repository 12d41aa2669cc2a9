"""What a study's panel reports of the people who did not complete there (Prolific's RETURNED: the person gave
the study back; TIMED-OUT: its time ran out), recorded by the coordinator from the panel's list and counted
in the study's funnel as outcomes.

The panel names each person by its own id, which the bank keeps only sealed with the participant's data key
(``panel_ref_encrypted``). A list is matched by opening, in memory, the panel ids of the study's participants:
no digest of a panel id is stored, which would outlive a withdrawal in the database's files. What comes back
is how many were recorded, unchanged, refused or not found, never which invitation a panel id matched, so the
list adds no panel id to a row of the progress. Each outcome recorded is audited to its participant.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.core.errors import InvalidRequestError
from agentbank.core.statuses import ConsentStatus, PanelOutcome, can_move
from agentbank.db.models import InterviewInvitation, InterviewSession, Participant, Study
from agentbank.keys.crypto import KeyRing
from agentbank.studies.invitations import MAX_PANEL_REF

MAX_REPORTS = 20_000
# Prolific's export of a study's submissions names these columns.
ID_COLUMN, STATUS_COLUMN = "Participant id", "Status"


@dataclass(frozen=True)
class Report:
    """One line of the panel's list: its id for the person, and what became of their submission."""

    panel_ref: str
    outcome: PanelOutcome


@dataclass(frozen=True)
class Recorded:
    """What recording a list did, by invitation; ``unmatched``: panel ids no participant of the study has (never
    came, withdrew, or another study's)."""

    recorded: int
    unchanged: int
    refused: int  # a move outcomes do not make (returned, then timed out)
    unmatched: int


def outcome_of(status: str) -> PanelOutcome | None:
    """The outcome a panel's status names (``RETURNED``, ``TIMED-OUT``, ``timed_out``), or None for any other
    (approved, awaiting review, rejected: not outcomes recorded here)."""
    try:
        return PanelOutcome(status.strip().lower().replace("-", "_").replace(" ", "_"))
    except ValueError:
        return None


def read_export(text: str, id_column: str = ID_COLUMN, status_column: str = STATUS_COLUMN) -> tuple[list[Report], int]:
    """The returned and timed-out lines of a panel's CSV export (Prolific's columns by default), and how many
    other lines it has. InvalidRequestError when a column is missing."""
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    columns = reader.fieldnames or []
    for column in (id_column, status_column):
        if column not in columns:
            raise InvalidRequestError(f"the export has no {column!r} column", hint=f"its columns: {columns[:12]}")
    reports: list[Report] = []
    other = 0
    for row in reader:
        outcome = outcome_of(row.get(status_column) or "")
        if outcome is None or not (row.get(id_column) or "").strip():
            other += 1
        else:
            reports.append(Report(row[id_column].strip(), outcome))
    return reports, other


def record_outcomes(
    session: Session, keys: KeyRing, study: Study, reports: list[Report], now: datetime, actor: audit.Actor
) -> Recorded:
    """Record each reported outcome on the invitations whose sealed panel id it names (withdrawn participants
    have none); an outcome already recorded stays unchanged, and a move ``PanelOutcome`` does not make is
    refused. Audited: each outcome recorded to its participant, and the list's counts."""
    if len(reports) > MAX_REPORTS:
        raise InvalidRequestError(f"record at most {MAX_REPORTS} outcomes at a time")
    for report in reports:
        ref = report.panel_ref.strip()
        if not ref or len(ref) > MAX_PANEL_REF or not ref.isprintable():
            raise InvalidRequestError("a panel's participant id is empty, too long or not printable")
    rows = session.execute(
        select(InterviewInvitation, Participant.id, Participant.wrapped_key)
        .join(InterviewSession, InterviewSession.id == InterviewInvitation.session_id)
        .join(Participant, Participant.id == InterviewSession.participant_id)
        .where(
            InterviewInvitation.study_id == study.id,
            InterviewInvitation.panel_ref_encrypted.is_not(None),
            Participant.consent != ConsentStatus.WITHDRAWN,
            Participant.wrapped_key.is_not(None),
        )
        .order_by(InterviewInvitation.id)
        .with_for_update(of=InterviewInvitation)
    ).all()
    by_ref: dict[str, list[InterviewInvitation]] = defaultdict(list)
    for invitation, participant_id, wrapped in rows:
        sealed = invitation.panel_ref_encrypted
        assert sealed is not None  # selected so
        by_ref[keys.cipher(participant_id, wrapped).open(sealed)].append(invitation)
    owners = {invitation.id: participant_id for invitation, participant_id, _ in rows}
    recorded = unchanged = refused = unmatched = 0
    for report in reports:
        matched = by_ref.get(report.panel_ref.strip(), [])
        unmatched += not matched
        for invitation in matched:
            current = invitation.panel_outcome
            if current == report.outcome:
                unchanged += 1
            elif current is not None and not can_move(current, report.outcome):
                refused += 1
            else:
                invitation.panel_outcome, invitation.panel_outcome_at = report.outcome, now
                audit.record(session, actor, "study.outcome", Tier.PARTICIPANT, participant_id=owners[invitation.id],
                             details={"study": str(study.id), "invitation": invitation.id,
                                      "outcome": str(report.outcome)})  # fmt: skip
                recorded += 1
    session.flush()
    result = Recorded(recorded, unchanged, refused, unmatched)
    counts = {"recorded": recorded, "unchanged": unchanged, "refused": refused, "unmatched": unmatched}
    audit.record(session, actor, "study.outcomes", Tier.ADMIN,
                 details={"study": str(study.id), "reported": len(reports), **counts})  # fmt: skip
    return result

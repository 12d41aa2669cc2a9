"""Walking the hash chain: every link checked, each kind of break named, and the rows the sequencer never
placed told apart from events edited afterwards.

The application's role may do two things the sequencer does, and neither can be told from it by its
privileges: insert an event, and give a waiting event its place (once). The database keeps the second
honest where it can (migration 0029): a place is given only at the head, linked to the head's hash, and a
row inserted claiming a place is quarantined on the way in. What it cannot check is the hash itself (it
cannot compute the canonical form in SQL), so a row may be placed with a hash that is not the hash of its
content. Such a link is quarantined, not an edit: the database fingerprinted the content when the row was
placed (``placed_digest``), and the content is still what it fingerprinted, so nobody changed it since; the
hash was wrong from the start. The events after it link to that hash, so nothing later is lost, and what
it says is covered by its Merkle leaf (which commits to its content), not by the chain.

What this cannot tell: the owner, who can rewrite the fingerprint too, can make an edit look like such a
row, as the owner can rewrite anything; the outside checkpoints and witnesses catch that (the leaf of an
edited event no longer gives the signed root). Rows placed before migration 0029 have no fingerprint: a
hash that is not their content's is an edit, as it always was.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import ColumnElement, func, literal_column, select
from sqlalchemy.orm import Session

from agentbank.audit import entries
from agentbank.audit.heads import TreeWalk
from agentbank.audit.log import GENESIS, event_hash
from agentbank.audit.outcome import Finding, Verification
from agentbank.db.models import AuditEvent

# The database's fingerprint of an event's content, as its placing trigger computes it (migration 0029).
# Written here rather than called as a stored function: the owner could replace a function of its own.
PLACED_DIGEST: ColumnElement[bytes] = literal_column(
    "sha256(convert_to(jsonb_build_array(audit_events.created_at AT TIME ZONE 'UTC', audit_events.actor_kind, "
    "audit_events.actor_id, audit_events.action, audit_events.tier, audit_events.project_id, audit_events.agent_id, "
    "audit_events.participant_id, audit_events.details, audit_events.leaf_version)::text, 'UTF8'))"
)


def untouched() -> ColumnElement[bool]:
    """Whether a placed event's content is what the database fingerprinted when it was placed (null: no print)."""
    return AuditEvent.placed_digest == PLACED_DIGEST


def chained_events(session: Session) -> Iterable[tuple[AuditEvent, bool | None]]:
    """Every placed event in sequence order, each with ``untouched``, streamed (logs are long)."""
    query = select(AuditEvent, untouched()).where(AuditEvent.seq.is_not(None)).order_by(AuditEvent.seq)
    return ((event, same) for event, same in session.execute(query.execution_options(yield_per=2000)))


def quarantined_rows(session: Session) -> int:
    """How many rows were written claiming a place in the chain they were not given (kept aside, unchained)."""
    return session.scalar(select(func.count()).where(AuditEvent.quarantined)) or 0


def walk(
    events: Iterable[tuple[AuditEvent, bool | None]], wanted: set[int], result: Verification, tree: TreeWalk
) -> dict[int, bytes]:
    """Check every link of the chain and rebuild the tree; keep the hashes at the checkpoints' events (not
    all rows: logs are long). Links with a hash the sequencer did not write are counted in ``result``."""
    hashes_at: dict[int, bytes] = {}
    every_hash: set[bytes] = set()  # to tell, once the walk is done, a moved event from a deleted one
    broken: list[tuple[Finding, bytes]] = []
    quarantined = kept_outside = 0
    prev, expected = GENESIS, 1
    for row, same in events:  # placed events only: their seq is set
        assert row.seq is not None
        result.events += 1
        if row.leaf_version == entries.KEPT_OUTSIDE:
            kept_outside += 1  # lost in a restore, put back from the tiles: a hash, no content to hash again
        # A placed event without its hashes was emptied by hand: as edited as one whose content changed.
        elif row.prev_hash is None or row.hash is None or event_hash(row.prev_hash, row) != row.hash:
            if same and row.hash is not None:
                quarantined += 1
            else:
                result.findings.append(Finding("edited", row.seq, f"event {row.seq} was edited after it was written"))
        if row.seq > expected:
            missing = f"{expected}" if row.seq == expected + 1 else f"{expected}–{row.seq - 1}"
            result.findings.append(Finding("deleted", expected, f"event(s) {missing} were deleted"))
        elif row.prev_hash != prev:
            finding = Finding("deleted", row.seq, f"the event before {row.seq} was deleted or rewritten")
            result.findings.append(finding)
            broken.append((finding, row.prev_hash or b""))
        every_hash.add(row.hash or b"")
        tree.add(entries.leaf(row))
        prev, expected = row.hash or b"", row.seq + 1
        if row.seq in wanted:
            hashes_at[row.seq] = row.hash or b""
    for finding, linked in broken:
        if linked in every_hash:
            finding.kind, finding.message = "reordered", f"event {finding.seq} was moved: it was written after another"
    result.head_seq = expected - 1
    result.quarantined += quarantined
    if kept_outside:
        result.notes.append(
            f"{kept_outside} event(s) lost in a restore were put back from the tiles kept outside the database: "
            "their entries and chain hashes, which the signed heads cover; what they said was lost with the database"
        )
    if quarantined:
        result.notes.append(
            f"{quarantined} chained event(s) were placed with a hash that is not the hash of their content, their "
            "content unchanged since (the application's role may give a waiting event its place): quarantined, not "
            "an edit. The events after them link to that hash, so nothing later is lost; what they say is covered "
            "by their Merkle leaves, not by the chain"
        )
    return hashes_at


def note_quarantined_rows(session: Session, result: Verification) -> None:
    """Count the rows kept aside on the way in, and say what they are (a count: never what they hold)."""
    count = quarantined_rows(session)
    result.quarantined += count
    if count:
        result.notes.append(
            f"{count} row(s) quarantined: written with a place in the chain already set (seq, prev_hash or hash), "
            "which only the sequencer gives, so by someone with the application's rights; kept aside as evidence "
            "and never chained"
        )

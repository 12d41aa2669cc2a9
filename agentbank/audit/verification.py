"""Checking the audit log: its chain, and its checkpoints, those kept outside the database above all.

What the chain alone shows: an event edited, deleted or moved without recomputing the hashes after it.
What outside checkpoints add (someone able to rewrite the database cannot reach them): a tail cut
after one (``truncated``), a history rewritten with its chain recomputed (``rewritten``: the head hash
at the checkpoint's event differs), checkpoint rows deleted from the database (``checkpoint_deleted``),
checkpoints that do not extend each other (``inconsistent``), and any not signed by the bank's key
(``bad_signature``). The Merkle tree is rebuilt from the log as it is walked and its root compared with
every signed tree head (``rewritten`` again when it differs: proofs against that head would fail), and
the stored subtrees proofs are served from are compared with it (``tree_edited``).

What no checkpoint can show: events after the newest outside checkpoint are covered by none yet
(``Verification.uncovered``), so until the next one they can be cut or appended unseen; and an event
appended through the application's own right to append, chained correctly, is indistinguishable from
a real one, because the chain proves that what was written stays written, not that it is true.

Rows the sequencer did not place (``agentbank.audit.chain``): one written claiming a place, and one
placed with a hash that is not its content's, are quarantined and counted (``Verification.quarantined``,
a note, never a finding, never their content): the application's role can write them, so they must not
make every later verification fail, and they stop neither the chain, the tree, nor any proof.

Without any outside checkpoint (``Verification.outside_record`` false: the file removed or emptied,
no witness copy) the log proves nothing against someone who can rewrite the database, who can cut or
rewrite it and recompute the chain and the rows: ``missing_outside`` says so, and the command line
fails closed on it unless told otherwise. A checkpoint *row* that no trusted key signed is reported
and ignored (``ignored``): the application's role inserts rows (workers sign as it), so such a row is
what a compromised application can add, and it must not make every later verification fail. A row
validly signed by a retired key after it retired is a finding: that is what a stolen key signs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from agentbank.audit import chain
from agentbank.audit import heads as tree_heads
from agentbank.audit import outside as outside_log
from agentbank.audit.checkpoints import SignedCheckpoint
from agentbank.audit.notes import Verifier
from agentbank.audit.outcome import Finding, Verification
from agentbank.audit.tiles import TileLog
from agentbank.audit.trust import TrustedKeys
from agentbank.db.models import AuditEvent

# The bank's current public key, or every key it has signed with (rotated keys, each until it retired).
Keys = Ed25519PublicKey | TrustedKeys


def _trusted(keys: Keys) -> TrustedKeys:
    return keys if isinstance(keys, TrustedKeys) else TrustedKeys(keys)


def signed_by(point: SignedCheckpoint, keys: Keys) -> bool:
    """Whether the checkpoint names a trusted key and its signature is valid under it, in its time."""
    return _trusted(keys).verifies(point)


def check_history(
    points: Iterable[SignedCheckpoint], keys: Keys, where: str, unsigned: list[int] | None = None
) -> list[Finding]:
    """What a witness can check with checkpoints alone: signatures, one head per size, a log that never shrinks.

    With ``unsigned`` (a list), a checkpoint no trusted key signed is put there (reported and ignored)
    instead of being a finding; one a retired key signed after it retired is a finding all the same.
    """
    findings, valid = [], []
    trusted = _trusted(keys)
    for point in points:
        if signed_by(point, keys):
            valid.append(point)
        elif unsigned is not None and not trusted.signed_late(point):
            unsigned.append(point.seq)
        else:
            message = f"the checkpoint at {point.seq} {where} is not signed by the bank's key {trusted.key_id}"
            if point.key_id in {r.key_id for r in trusted.retired}:
                message += f" (it names the retired key {point.key_id}: signed after it retired, or not by it)"
            findings.append(Finding("bad_signature", point.seq, message))
    heads: dict[int, bytes] = {}
    newest: SignedCheckpoint | None = None
    for point in sorted(valid, key=lambda p: p.signed_at):
        if heads.setdefault(point.seq, point.head_hash) != point.head_hash:
            message = f"two checkpoints {where} sign different heads for event {point.seq}: the log was forked"
            findings.append(Finding("inconsistent", point.seq, message))
        if newest is not None and point.seq < newest.seq:
            message = f"a checkpoint {where} at {point.seq} was signed after one at {newest.seq}: the log shrank"
            findings.append(Finding("inconsistent", point.seq, message))
        if newest is None or point.seq >= newest.seq:
            newest = point
    return findings


def verify(
    events: Iterable[tuple[AuditEvent, bool | None]],
    stored: Sequence[SignedCheckpoint],
    public_key: Keys,
    outside: Sequence[SignedCheckpoint] | None = None,
    witnesses: Sequence[Verifier] = (),
) -> Verification:
    """Walk the log in sequence order and check it, and the Merkle tree over it, against the stored and
    (if given) the outside checkpoints; cosignatures count under the ``witnesses`` keys given. Each event
    comes with whether its content is what the database fingerprinted when it was placed (``chain``)."""
    result = Verification()
    valid_stored = [p for p in stored if signed_by(p, public_key)]
    valid_outside = [p for p in outside or () if signed_by(p, public_key)]
    wanted = {p.seq for p in (*valid_stored, *valid_outside)}
    trusted = _trusted(public_key)
    for points, where in ((valid_stored, "the database"), (valid_outside, "outside")):
        found, bad = tree_heads.read_heads(points, trusted, where, witnesses)
        result.heads += found
        for wrong in bad:
            message = f"the checkpoint at {wrong.seq} in {wrong.where} is validly signed, but {wrong.reason}"
            result.findings.append(Finding("bad_signature", wrong.seq, message))
    result.tree = tree_heads.TreeWalk(h.head.size for h in result.heads)
    hashes_at = chain.walk(events, wanted, result, result.tree)
    for head in result.tree.mismatches(result.heads):
        message = (
            f"the Merkle tree of the first {head.head.size} events is not the one the signed tree head in "
            f"{head.where} commits to: the log was rewritten, and proofs checked against that head fail"
        )
        result.findings.append(Finding("rewritten", head.head.size, message))
    result.findings += check_history(stored, public_key, "in the database", result.ignored)
    result.stored = len(valid_stored)
    if result.ignored:
        result.notes.append(
            f"{len(result.ignored)} checkpoint row(s) in the database are not signed by the bank's keys (at "
            f"{', '.join(map(str, sorted(set(result.ignored))[:5]))}): ignored; the application's role can add "
            "rows, so one proves nothing, but it was added by someone with the application's rights"
        )
    if outside is not None:
        result.findings += check_history(outside, public_key, "kept outside the database")
    for point, where in [(p, "the database") for p in valid_stored] + [(p, "outside") for p in valid_outside]:
        if point.seq > result.head_seq:
            message = f"the log ends at event {result.head_seq}, but a checkpoint in {where} covers {point.seq}"
            result.findings.append(Finding("truncated", result.head_seq + 1, message))
        elif hashes_at.get(point.seq) != point.head_hash:
            message = (
                f"the log up to event {point.seq} is not what the checkpoint in {where} signed: "
                "it was rewritten and its chain recomputed"
            )
            result.findings.append(Finding("rewritten", point.seq, message))
    _check_extension(valid_stored + valid_outside, hashes_at, result)
    newest = max(valid_stored + valid_outside, key=lambda p: p.seq, default=None)
    result.checkpoint_seq = newest.seq if newest else None
    if outside is not None:
        _compare_copies(valid_stored, valid_outside, result)
    covered = max((p.seq for p in (valid_outside if outside is not None else valid_stored)), default=0)
    result.outside_seq = max((p.seq for p in valid_outside), default=None)
    if result.head_seq > covered:
        result.uncovered = (covered + 1, result.head_seq)
    return _deduplicated(result)


def _check_extension(points: list[SignedCheckpoint], hashes_at: dict[int, bytes], result: Verification) -> None:
    """A later checkpoint must extend an earlier one: the log has to pass through both heads."""
    matching = {p.seq for p in points if hashes_at.get(p.seq) == p.head_hash}
    for earlier in sorted({p.seq for p in points} - matching):
        later = min((seq for seq in matching if seq > earlier), default=None)
        if later is not None:
            message = (
                f"the checkpoint at {later} does not extend the one at {earlier}: "
                f"the history before {earlier} was replaced, then signed again"
            )
            result.findings.append(Finding("inconsistent", later, message))


def _compare_copies(stored: list[SignedCheckpoint], outside: list[SignedCheckpoint], result: Verification) -> None:
    """Every outside checkpoint was committed to the database before it was published, so its row must be there."""
    kept = {(p.seq, p.head_hash, p.signature) for p in stored}
    for point in outside:
        if (point.seq, point.head_hash, point.signature) not in kept:
            message = f"the checkpoint at {point.seq} published outside is gone from the database"
            result.findings.append(Finding("checkpoint_deleted", point.seq, message))
    published = {(p.seq, p.head_hash, p.signature) for p in outside}
    unpublished = [p.seq for p in stored if (p.seq, p.head_hash, p.signature) not in published]
    if unpublished:
        result.notes.append(
            f"{len(unpublished)} checkpoint(s) in the database were never published outside it "
            f"(the newest at {max(unpublished)}): they prove nothing against someone who can rewrite the database"
        )


def _deduplicated(result: Verification) -> Verification:
    seen: set[tuple[str, int | None, str]] = set()
    findings = []
    for finding in result.findings:
        key = (finding.kind, finding.seq, finding.message)
        if key not in seen:
            seen.add(key)
            findings.append(finding)
    result.findings = findings
    return result


def verify_log(
    session: Session,
    public_key: Keys,
    outside: Sequence[SignedCheckpoint] | None = None,
    witnesses: Sequence[Verifier] = (),
    tiles: TileLog | None = None,
) -> Verification:
    """Verify the log stored in the database, against outside checkpoints when given; the tree nodes the
    database stores (proofs are served from them) are compared with the tree rebuilt from the log, and the
    log with the tiles kept outside the database when given."""
    result = verify(chain.chained_events(session), tree_heads.stored_points(session), public_key, outside, witnesses)
    _compare_nodes(session, result)
    if tiles is not None:
        _compare_tiles(session, tiles, result)
    chain.note_quarantined_rows(session, result)
    waiting = session.execute(
        select(func.count(), func.min(AuditEvent.created_at)).where(AuditEvent.seq.is_(None), ~AuditEvent.quarantined)
    ).one()  # fmt: skip
    result.unchained = waiting[0]
    if waiting[0]:
        result.notes.append(
            f"{waiting[0]} event(s) are written but not chained yet (the oldest at {waiting[1]:%Y-%m-%d %H:%M:%S} "
            "UTC): a running API or worker chains them within seconds; `agentbank audit checkpoint` chains them now"
        )
    return result


def _compare_tiles(session: Session, tiles: TileLog, result: Verification) -> None:
    """The tiles kept outside hold every event the database does, the same (a restore rebuilds from them)."""
    found = outside_log.compare(session, tiles)
    if found.first_difference is not None:
        result.findings.append(Finding("outside_differs", found.first_difference, (
            f"event {found.first_difference} differs from the log kept outside the database (its tiles): it was "
            "edited, or the database is not this bank's")))  # fmt: skip
    if found.tiles > found.database:
        result.findings.append(Finding("truncated", found.database + 1, (
            f"the tiles kept outside hold {found.tiles} events, the database {found.database}: events were deleted, "
            "or a backup was restored other than by `agentbank restore`")))  # fmt: skip
    elif found.tiles < found.database:
        result.notes.append(f"the tiles kept outside hold {found.tiles} of the {found.database} events: a running "
                            "API or worker publishes the rest within seconds")  # fmt: skip


def _compare_nodes(session: Session, result: Verification) -> None:
    """The stored subtrees must be those of the log: an edited one makes every proof through it fail."""
    assert result.tree is not None
    differing, missing = tree_heads.compare_nodes(session, result.tree)
    if differing:
        level, index = differing[0]
        message = (
            f"{len(differing)} stored node(s) of the Merkle tree differ from the tree of the log (the first covers "
            f"events {(index << level) + 1}–{(index + 1) << level}): proofs served through them fail"
        )
        result.findings.append(Finding("tree_edited", (index << level) + 1, message))
    if missing:
        result.notes.append(
            f"{missing} node(s) of the Merkle tree are not stored yet: the next chained event or checkpoint "
            "stores them (until then, proofs through them are refused)"
        )

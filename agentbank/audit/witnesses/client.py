"""The bank asking its witnesses to cosign each new tree head (the client side of c2sp.org/tlog-witness).

After a checkpoint is committed and published, each configured witness (``AGENTBANK_AUDIT_WITNESSES``)
that has not cosigned the newest head is sent it, with a consistency proof from the size it cosigned
last. Its cosignature is checked under the key the settings name for it, stored, and the cosigned head
is appended to the outside file and served with the checkpoint. This runs with no transaction open:
a witness may be slow or away, and the log never waits for one.

A witness that answers 409 holds another size than the bank thinks: the bank tries once more from
that size. If the witness holds *more* events than the log has, the log was rolled back (restored
from an old backup, or cut), and that is said loudly: no proof can lead from the head the witness
holds to this history, so it will cosign none of this log's heads again.

``confirm`` is what ``audit verify`` asks by default: whether each witness holds the bank's newest head,
or one that head extends (then it cosigns it, as after a checkpoint; nothing is stored). It is the one
check a rollback of the database and of the outside file together cannot pass: only the witnesses keep
what they saw elsewhere.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime

import httpx
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from agentbank.audit import notes, tree
from agentbank.audit.checkpoints import CheckpointFile, SignedCheckpoint, latest_checkpoint
from agentbank.audit.heads import with_cosignatures
from agentbank.audit.trust import TrustedKeys
from agentbank.core.errors import AgentBankError, ConfigurationError
from agentbank.core.settings import Settings
from agentbank.db import transaction
from agentbank.db.models import AuditCheckpoint, AuditCosignature

log = logging.getLogger(__name__)
RETRY_AFTER_S = 60.0  # a witness that failed is asked again after this, not on every checkpoint round


@dataclass(frozen=True)
class WitnessClient:
    """A configured witness: where it listens and the key its cosignatures verify under."""

    url: str
    verifier: notes.Verifier

    @property
    def name(self) -> str:
        return self.verifier.name


def configured(settings: Settings) -> list[WitnessClient]:
    """The witnesses the settings name, each key read as a cosigner's verifier key."""
    witnesses = []
    for entry in settings.audit_witnesses:
        try:
            key = notes.Verifier.parse(entry.key)
        except notes.NoteError as exc:
            raise ConfigurationError(f"AGENTBANK_AUDIT_WITNESSES: {exc}") from exc
        if key.kind != notes.COSIGNATURE:
            raise ConfigurationError(
                f"AGENTBANK_AUDIT_WITNESSES: the key of {key.name} is not a cosigner's (type 0x04)",
                hint="`agentbank witness key` prints a witness's verifier key",
            )
        witnesses.append(WitnessClient(entry.url.rstrip("/"), key))
    return witnesses


@dataclass(frozen=True)
class Answer:
    """What one witness did with the newest head."""

    witness: str
    cosigned: bool
    message: str
    rolled_back: bool = False  # the witness holds a larger log than the bank's: it was cut or restored
    refused: bool = False  # the witness holds a head this one does not extend: the log forked or was rewritten
    held: int | None = None  # the size the witness holds, where it said


@dataclass(frozen=True)
class _Cosigned:
    """A witness's answer that verified: its cosignature line, and whether it held this very head already."""

    line: str
    already: bool


class Witnessing:
    """Asks the configured witnesses; remembers, in this process, which failed recently so a worker's
    round every few seconds does not wait on an absent witness each time."""

    def __init__(self, settings: Settings, sessions: sessionmaker[Session]) -> None:
        self.settings = settings
        self.sessions = sessions
        self.witnesses = configured(settings)
        self._failed_at: dict[str, float] = {}

    def round(self, *, retry_now: bool = False) -> list[Answer]:
        """Ask every witness that has not cosigned the newest head (none open: no transaction is held)."""
        if not self.witnesses:
            return []
        with self.sessions() as session:
            row = latest_checkpoint(session, TrustedKeys.of(self.settings).verifies)
            if row is None or row.note is None:
                return []
            point = SignedCheckpoint.of(row)
            done = set(
                session.scalars(select(AuditCosignature.witness).where(AuditCosignature.checkpoint_id == row.id))
            )
            cosigned_sizes = session.execute(
                select(AuditCosignature.witness, func.max(AuditCheckpoint.seq))
                .join(AuditCheckpoint, AuditCheckpoint.id == AuditCosignature.checkpoint_id)
                .group_by(AuditCosignature.witness)
            ).all()  # fmt: skip
            last = {name: size for name, size in cosigned_sizes}
            checkpoint_id = row.id
        answers = []
        for witness in self.witnesses:
            if witness.name in done:
                continue
            failed = self._failed_at.get(witness.name)
            if failed is not None and not retry_now and time.monotonic() - failed < RETRY_AFTER_S:
                continue
            answer = self._ask(witness, point, checkpoint_id, last.get(witness.name, 0))
            if answer.cosigned:
                self._failed_at.pop(witness.name, None)
            else:
                self._failed_at[witness.name] = time.monotonic()
                (log.error if answer.rolled_back else log.warning)("witness %s: %s", witness.name, answer.message)
            answers.append(answer)
        return answers

    def _ask(self, witness: WitnessClient, point: SignedCheckpoint, checkpoint_id: int, old: int) -> Answer:
        sent = self._send(witness, point, old)
        return sent if isinstance(sent, Answer) else self._keep(witness, point, checkpoint_id, sent.line)

    def confirm(self) -> list[Answer]:
        """Whether each witness holds the newest head the bank signed, or one it extends (which it then cosigns);
        nothing is stored. None: no signed tree head to ask about (``audit verify`` fails without one anyway)."""
        with self.sessions() as session:
            row = latest_checkpoint(session, TrustedKeys.of(self.settings).verifies)
            if row is None or row.note is None:
                return []
            point = SignedCheckpoint.of(row)
        answers = []
        for witness in self.witnesses:
            sent = self._send(witness, point, point.seq)  # "you hold this head?": a 409 names what it holds
            if isinstance(sent, _Cosigned):
                what = "holds this log's head" if sent.already else "cosigned this log's head, extending its own,"
                answers.append(Answer(witness.name, True, f"{what} of {point.seq} events"))
            elif sent.rolled_back and self._signed_since(sent):
                answers.append(Answer(witness.name, True, "holds a head the bank signed while it was being asked"))
            elif sent.rolled_back:
                message = (
                    f"has cosigned a log of {sent.held} events, but the newest head this bank signed is of "
                    f"{point.seq}: the log was rolled back (restored from an older backup, or cut), and what it "
                    "keeps outside the database with it"
                )
                answers.append(Answer(witness.name, False, message, rolled_back=True, held=sent.held))
            else:
                answers.append(sent)
        return answers

    def _signed_since(self, answer: Answer) -> bool:
        """Whether a head at least as large as the one the witness holds was signed after ``confirm`` read its own
        (a worker signs while a verification runs): then the witness is ahead of the read, not of the bank."""
        with self.sessions() as session:
            newest = latest_checkpoint(session, TrustedKeys.of(self.settings).verifies)
        return newest is not None and answer.held is not None and newest.seq >= answer.held

    def _send(self, witness: WitnessClient, point: SignedCheckpoint, old: int) -> Answer | _Cosigned:
        """Send the head as extending the size ``old`` (once more from the size a 409 names): the witness's
        cosignature line, checked under its configured key, or why there is none."""
        assert point.note is not None
        retried = False
        for _ in range(2):  # a 409 names the size the witness holds: one more try from there
            if old > point.seq:
                return Answer(witness.name, False, rolled_back_message(old, point.seq), rolled_back=True, held=old)
            try:
                with self.sessions() as session:
                    proof = tree.consistency(session, old, point.seq) if old else []
            except AgentBankError as exc:  # events missing under the tree: nothing can be proven
                return Answer(witness.name, False, f"no consistency proof from {old}: {exc.message}")
            body = f"old {old}\n" + "".join(f"{notes.b64(h)}\n" for h in proof) + "\n" + point.note
            try:
                response = httpx.post(
                    f"{witness.url}/add-checkpoint",
                    content=body.encode(),
                    timeout=self.settings.audit_witness_timeout_s,
                )
            except httpx.HTTPError as exc:
                return Answer(witness.name, False, f"could not be reached ({type(exc).__name__})")
            if response.status_code == 409 and response.headers.get("content-type", "").startswith("text/x.tlog.size"):
                try:
                    old, retried = int(response.text.strip()), True
                except ValueError:
                    return Answer(witness.name, False, "answered 409 without a size")
                continue
            if response.status_code in (409, 422):  # a fork, or a proof from what it holds that does not verify
                message = f"refused ({response.status_code}): {response.text.strip()[:200]}"
                return Answer(witness.name, False, message, refused=True)
            if response.status_code != 200:
                return Answer(witness.name, False, f"refused ({response.status_code}): {response.text.strip()[:200]}")
            line = _valid_line(witness, point, response.text)
            if line is None:
                return Answer(witness.name, False, "answered with no valid cosignature under its configured key")
            return _Cosigned(line, already=not retried and old == point.seq)
        return Answer(witness.name, False, "holds another size on every try")

    def _keep(self, witness: WitnessClient, point: SignedCheckpoint, checkpoint_id: int, line: str) -> Answer:
        """Store the witness's (checked) cosignature line, and publish the cosigned head outside the database."""
        try:
            with transaction(self.sessions) as session:
                received = datetime.now(UTC)
                session.add(
                    AuditCosignature(checkpoint_id=checkpoint_id, witness=witness.name, line=line, received_at=received)
                )
        except IntegrityError:  # another process (a worker, a command) kept this witness's cosignature first
            pass
        with self.sessions() as session:
            cosigned = with_cosignatures(session, [session.get_one(AuditCheckpoint, checkpoint_id)])[0]
        CheckpointFile.of(self.settings).append(cosigned)
        return Answer(witness.name, True, f"cosigned the head of {point.seq} events")


def _valid_line(witness: WitnessClient, point: SignedCheckpoint, lines: str) -> str | None:
    """The witness's cosignature line among those it answered, if one verifies under its configured key."""
    assert point.note is not None
    text = notes.Note.parse(point.note).text
    try:
        answered = notes.Note.parse(text + "\n" + lines)
    except notes.NoteError:
        return None
    if answered.cosigned_at(witness.verifier) is None:
        return None
    return next(
        notes.signature_line(name, raw)
        for name, raw in answered.signatures
        if notes.Note(text, ((name, raw),)).cosigned_at(witness.verifier) is not None
    )


def rolled_back_message(held: int, size: int) -> str:
    """What a witness holding more events than the log has means."""
    return (
        f"has cosigned a log of {held} events, but this log has {size}: the log was rolled back (restored from an "
        "older backup, or cut); the witness will cosign none of its heads again, since no proof can lead from what "
        "it saw to this history, and verification against the cosigned heads names the events that are gone"
    )

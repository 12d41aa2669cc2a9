"""The members of a release, opened in memory: each one's demographic profile, coded answers and validity.

Everything here was sealed with each participant's data key; it is opened for the length of a cut and
never written back in the clear. Members are kept column-wise (one small integer per member and item),
so a bank of a hundred thousand agents answering 173 items fits in a few tens of megabytes.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from sqlalchemy import select
from sqlalchemy.dialects.postgresql import distinct_on
from sqlalchemy.orm import Session

from agentbank.db.models import Agent, Participant, PopulationAnswer, ReportCard
from agentbank.keys.crypto import Cipher, DataKeyDestroyedError, KeyRing
from agentbank.open_tier.breakdowns import BREAKDOWNS
from agentbank.statuses import AgentStatus, ConsentStatus

NO_ANSWER = -1
VALIDITY_CONDITION = "interview"  # the cards whose items the open tier's validity counts


@dataclass
class Validity:
    """Per item, over the members scored on it: whether their agent was right, whether they repeated
    their own answer, and whether the run's best baseline was right (-1: not scored)."""

    run_id: str
    model: str
    baseline: str | None
    measured_at: datetime
    flags: dict[str, np.ndarray] = field(default_factory=dict)  # item -> int8 [members, 3]


@dataclass
class Members:
    """A release's population, column-wise: row ``i`` of every array is the same (unnamed) member."""

    dimensions: tuple[str, ...]
    profiles: np.ndarray  # int16 [members, dimensions]: each member's category index per breakdown
    answers: dict[tuple[str, str], np.ndarray]  # (instrument, item) -> int16 codes, NO_ANSWER where none
    joined: np.ndarray  # when each member's agent was built (for their privacy budget)
    digest: str  # of the member ids and their sealed data: equal digests, nothing changed
    validity: dict[str, Validity] = field(default_factory=dict)  # instrument -> the newest scoring

    def __len__(self) -> int:
        return len(self.profiles)

    def keep(self, rows: np.ndarray) -> Members:
        """Only the members at ``rows`` (a boolean mask)."""
        validity = {k: Validity(v.run_id, v.model, v.baseline, v.measured_at, {i: f[rows] for i, f in v.flags.items()})
                    for k, v in self.validity.items()}  # fmt: skip
        return Members(self.dimensions, self.profiles[rows], {k: v[rows] for k, v in self.answers.items()},
                       self.joined[rows], self.digest, validity)  # fmt: skip


@dataclass
class _Row:
    agent_id: uuid.UUID
    joined: datetime
    profile: list[int]
    answers: dict[tuple[str, str], int] = field(default_factory=dict)


def load_members(session: Session, keys: KeyRing, dimensions: Sequence[str]) -> Members:
    """Every active, consenting agent with coded answers, opened with its participant's key."""
    dims = tuple(dimensions)
    rows: dict[uuid.UUID, _Row] = {}
    ciphers: dict[uuid.UUID, Cipher] = {}
    digest = hashlib.sha256()
    for agent_id, created, participant_id, wrapped, demographics, instrument, sealed in _sealed(session):
        row = rows.get(agent_id)
        if row is None:
            try:
                cipher = keys.cipher(participant_id, wrapped)
            except DataKeyDestroyedError:
                continue  # withdrawn between the query and now: not a member
            ciphers[agent_id] = cipher
            known = cipher.open_json(demographics) if demographics is not None else {}
            profile = [BREAKDOWNS[d].categories.index(BREAKDOWNS[d].classify(known)) for d in dims]
            row = rows[agent_id] = _Row(agent_id, created, profile)
            digest.update(agent_id.bytes + hashlib.sha256(demographics or b"").digest())
        digest.update(instrument.encode() + hashlib.sha256(sealed).digest())
        for item, (code, _value) in ciphers[agent_id].open_json(sealed).items():
            if code is not None:
                row.answers[(instrument, item)] = int(code)
    ordered = sorted(rows.values(), key=lambda r: r.agent_id)
    keys_seen = sorted({key for r in ordered for key in r.answers})
    answers = {key: np.array([r.answers.get(key, NO_ANSWER) for r in ordered], dtype=np.int16) for key in keys_seen}
    members = Members(
        dims, np.array([r.profile for r in ordered], dtype=np.int16).reshape(len(ordered), len(dims)), answers,
        np.array([r.joined.timestamp() for r in ordered], dtype=float), "",
    )  # fmt: skip
    members.validity = _validity(session, [r.agent_id for r in ordered], ciphers, digest)
    members.digest = digest.hexdigest()
    return members


def _sealed(session: Session) -> Iterator[tuple]:
    """Each member's sealed demographics and answers, one row per agent and instrument, agent by agent."""
    query = (
        select(Agent.id, Agent.created_at, Participant.id, Participant.wrapped_key, Participant.demographics_encrypted,
               PopulationAnswer.instrument, PopulationAnswer.answers_encrypted)
        .join(Participant, Participant.id == Agent.participant_id)
        .join(PopulationAnswer, PopulationAnswer.agent_id == Agent.id)
        .where(Agent.status == AgentStatus.ACTIVE, Participant.consent == ConsentStatus.CONSENTED,
               Participant.wrapped_key.is_not(None))
        .order_by(Agent.id, PopulationAnswer.instrument)
    )  # fmt: skip
    yield from session.execute(query.execution_options(yield_per=2000))


def _validity(
    session: Session, agent_ids: list[uuid.UUID], ciphers: dict[uuid.UUID, Cipher], digest: hashlib._Hash
) -> dict[str, Validity]:
    """The newest interview cards of the members, per instrument, opened into per-item flags."""
    if not agent_ids:
        return {}
    newest = session.execute(
        select(ReportCard.instrument, ReportCard.run_id, ReportCard.model, ReportCard.created_at)
        .where(ReportCard.condition == VALIDITY_CONDITION)
        .order_by(ReportCard.instrument, ReportCard.created_at.desc(), ReportCard.id.desc())
        .ext(distinct_on(ReportCard.instrument))
    ).all()
    index = {agent_id: i for i, agent_id in enumerate(agent_ids)}
    out: dict[str, Validity] = {}
    for instrument, run_id, model, measured_at in newest:
        validity = Validity(run_id, model, None, measured_at)
        cards = session.scalars(select(ReportCard).where(
            ReportCard.condition == VALIDITY_CONDITION, ReportCard.instrument == instrument,
            ReportCard.run_id == run_id, ReportCard.agent_id.in_(list(index)),
        ).order_by(ReportCard.agent_id))  # fmt: skip
        for card in cards:
            digest.update(card.agent_id.bytes + hashlib.sha256(card.scores_encrypted).digest())
            scores = ciphers[card.agent_id].open_json(card.scores_encrypted)
            validity.baseline = validity.baseline or scores.get("baseline")
            for item, (right, repeated, baseline_right) in scores.get("item_flags", {}).items():
                flags = validity.flags.setdefault(item, np.full((len(agent_ids), 3), -1, dtype=np.int8))
                flags[index[card.agent_id]] = (int(right), int(repeated), -1 if baseline_right is None else
                                               int(baseline_right))  # fmt: skip
        out[instrument] = validity
    return out

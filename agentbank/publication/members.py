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
from sqlalchemy import Select, select
from sqlalchemy.dialects.postgresql import distinct_on
from sqlalchemy.orm import Session

from agentbank.core.statuses import AgentStatus, ConsentStatus
from agentbank.db.models import Agent, Participant, PopulationAnswer, ReportCard
from agentbank.keys.crypto import Cipher, DataKeyDestroyedError, KeyRing
from agentbank.publication.breakdowns import BREAKDOWNS

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
    # Each member's agent and participant, in memory only: the release tells each one they are in it.
    ids: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=object))

    def __len__(self) -> int:
        return len(self.profiles)

    def keep(self, rows: np.ndarray) -> Members:
        """Only the members at ``rows`` (a boolean mask)."""
        validity = {k: Validity(v.run_id, v.model, v.baseline, v.measured_at, {i: f[rows] for i, f in v.flags.items()})
                    for k, v in self.validity.items()}  # fmt: skip
        return Members(self.dimensions, self.profiles[rows], {k: v[rows] for k, v in self.answers.items()},
                       self.joined[rows], self.digest, validity, self.ids[rows])  # fmt: skip


def load_members(session: Session, keys: KeyRing, dimensions: Sequence[str]) -> Members:
    """Every active, consenting agent with coded answers, opened with its participant's key.

    Streamed: the members are counted first, then each one's sealed rows are opened and written into
    arrays made for them, so memory holds the arrays, not a Python object per member and answer.
    """
    dims = tuple(dimensions)
    ids = list(session.scalars(_members().with_only_columns(Agent.id).distinct().order_by(Agent.id)))
    index = {agent_id: i for i, agent_id in enumerate(ids)}
    profiles = np.zeros((len(ids), len(dims)), dtype=np.int16)
    joined = np.zeros(len(ids))
    kept = np.zeros(len(ids), dtype=bool)
    named = np.empty((len(ids), 2), dtype=object)
    answers: dict[tuple[str, str], np.ndarray] = {}
    ciphers: dict[uuid.UUID, Cipher] = {}
    categories = [{c: n for n, c in enumerate(BREAKDOWNS[d].categories)} for d in dims]
    digest = hashlib.sha256()
    for agent_id, created, participant_id, wrapped, demographics, instrument, sealed in _sealed(session):
        i = index.get(agent_id)
        if i is None:
            continue  # an agent that became a member after it was counted: in the next release
        if agent_id not in ciphers:
            try:
                ciphers[agent_id] = keys.cipher(participant_id, wrapped)
            except DataKeyDestroyedError:
                continue  # withdrawn between the count and now: not a member
            known = ciphers[agent_id].open_json(demographics) if demographics is not None else {}
            profiles[i] = [categories[n][BREAKDOWNS[d].classify(known)] for n, d in enumerate(dims)]
            joined[i], kept[i] = created.timestamp(), True
            named[i] = (agent_id, participant_id)
            digest.update(agent_id.bytes + hashlib.sha256(demographics or b"").digest())
        digest.update(instrument.encode() + hashlib.sha256(sealed).digest())
        for item, (code, _value) in ciphers[agent_id].open_json(sealed).items():
            if code is not None:
                column = answers.get((instrument, item))
                if column is None:
                    column = answers[(instrument, item)] = np.full(len(ids), NO_ANSWER, dtype=np.int16)
                column[i] = int(code)
    members = Members(dims, profiles, dict(sorted(answers.items())), joined, "", ids=named)
    members.validity = _validity(session, ids, ciphers, digest)
    members.digest = digest.hexdigest()
    return members.keep(kept)


def _members() -> Select:
    """Agents that may answer for the open tier: active, their participant consenting, with a key."""
    return (
        select(Agent.id)
        .join(Participant, Participant.id == Agent.participant_id)
        .join(PopulationAnswer, PopulationAnswer.agent_id == Agent.id)
        .where(Agent.status == AgentStatus.ACTIVE, Participant.consent == ConsentStatus.CONSENTED,
               Participant.wrapped_key.is_not(None))
    )  # fmt: skip


def _sealed(session: Session) -> Iterator[tuple]:
    """Each member's sealed demographics and answers, one row per agent and instrument, agent by agent."""
    query = _members().with_only_columns(
        Agent.id, Agent.created_at, Participant.id, Participant.wrapped_key, Participant.demographics_encrypted,
        PopulationAnswer.instrument, PopulationAnswer.answers_encrypted,
    ).order_by(Agent.id, PopulationAnswer.instrument)  # fmt: skip
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
            if card.agent_id not in ciphers:
                continue  # withdrawn while the release was read
            digest.update(card.agent_id.bytes + hashlib.sha256(card.scores_encrypted).digest())
            scores = ciphers[card.agent_id].open_json(card.scores_encrypted)
            validity.baseline = validity.baseline or scores.get("baseline")
            for item, (right, repeated, baseline_right) in scores.get("item_flags", {}).items():
                flags = validity.flags.setdefault(item, np.full((len(agent_ids), 3), -1, dtype=np.int8))
                flags[index[card.agent_id]] = (int(right), int(repeated), -1 if baseline_right is None else
                                               int(baseline_right))  # fmt: skip
        out[instrument] = validity
    return out

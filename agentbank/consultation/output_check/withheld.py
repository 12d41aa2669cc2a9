"""The reviewer queue: restricted answers the output check held back, and reviewers' decisions.

A job's answers are checked when its result is written, in the same transaction; a held answer is
stored (sealed, like every answer) and queued here, the team sees only a placeholder, and every
holding and every decision is in the audit log.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import CompoundSelect, or_, select
from sqlalchemy.orm import Session

from agentbank.access import duties
from agentbank.access.principals import Principal
from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.building import deny_list
from agentbank.building.transcripts import load_turns
from agentbank.consultation.answering import AgentAnswer
from agentbank.consultation.answering.stored import read_answers, read_with
from agentbank.consultation.output_check.check import Verdict, answer_text, check
from agentbank.consultation.output_check.highlights import overlaps
from agentbank.consultation.output_check.received import Received
from agentbank.consultation.output_check.reference import Reference
from agentbank.core.errors import NotFoundError
from agentbank.core.statuses import TaskStatus, WithheldStatus, move
from agentbank.db.models import (
    Agent,
    FocusGroup,
    FocusGroupUtterance,
    Job,
    JobResult,
    Participant,
    Project,
    ProjectMember,
    WithheldAnswer,
)
from agentbank.keys.crypto import Cipher, KeyRing

PLACEHOLDER = {"withheld": True, "reason": "under review"}
# Statuses under which the team sees the placeholder instead of the answer.
HIDDEN = (WithheldStatus.PENDING, WithheldStatus.KEPT, WithheldStatus.WITHDRAWN)
# Job results whose answers a team can read (those not hidden above).
SHOWN = (TaskStatus.RELEASED, TaskStatus.WITHHELD)


def reference_for(session: Session, keys: KeyRing, agent: Agent, participant: Participant) -> Reference:
    """What the agent's answers are checked against: its participant's turns, canary and deny-list."""
    cipher = keys.cipher(participant.id, participant.wrapped_key)
    turns = load_turns(session, agent.transcript_id, cipher)
    return Reference.build(
        [t.text for t in turns if t.speaker == "participant"],
        keys.canary(agent.id),
        deny_list.open_sealed(cipher, agent.deny_list_encrypted),
    )


def linked_projects(project_id: uuid.UUID) -> CompoundSelect[uuid.UUID]:
    """The project and every project that shares a client with it (its applicant or a member, accepted or
    not): what one client received through any of its projects reaches all of them, so a passage handed
    out over several projects adds up as one handed out over several jobs. A person signs in as one
    client (``access.people``), so this counts per person too."""
    clients = select(ProjectMember.client_pk).where(ProjectMember.project_id == project_id)
    return (
        select(ProjectMember.project_id)
        .where(ProjectMember.client_pk.in_(clients))
        .union(select(Project.id).where(or_(Project.id == project_id, Project.pi_pk.in_(clients))))
    )


def received_texts(session: Session, cipher: Cipher, project_id: uuid.UUID, agent_id: uuid.UUID) -> list[str]:
    """The text of every answer of this agent that the project's clients can read (every job, any kind,
    through this project or any other of theirs: ``linked_projects``), oldest first: pieces are put
    together in the order they were handed out.

    Read back from the answers themselves, sealed with the participant's key: nothing about what a
    team received is kept in the clear, and it is destroyed with the rest on withdrawal.
    """
    results = session.execute(
        select(JobResult.id, JobResult.answer_ids, JobResult.created_at)
        .join(Job, Job.id == JobResult.job_id)
        .where(
            Job.project_id.in_(linked_projects(project_id)),
            JobResult.agent_id == agent_id,
            JobResult.status.in_(SHOWN),
        )
        .order_by(JobResult.id)  # results in the order they were written, each one's answers in order
    ).all()
    hidden = hidden_answers(session, [r.id for r in results])
    # A focus group's utterances are received as they are spoken (a silence was never received).
    spoken = session.execute(
        select(FocusGroupUtterance.answer_ids, FocusGroupUtterance.created_at)
        .join(FocusGroup, FocusGroup.id == FocusGroupUtterance.group_id)
        .where(FocusGroup.project_id.in_(linked_projects(project_id)), FocusGroupUtterance.agent_id == agent_id,
               FocusGroupUtterance.kind == "agent")
        .order_by(FocusGroupUtterance.id)
    ).all()  # fmt: skip
    handed = [(r.created_at, [a for a in r.answer_ids if a not in hidden]) for r in results]
    handed += [(u.created_at, list(u.answer_ids)) for u in spoken]
    handed.sort(key=lambda pair: pair[0])  # stable: each kind keeps its own order at equal times
    ids = list(dict.fromkeys(a for _, answer_ids in handed for a in answer_ids))
    # In the order the team received them, so pieces handed out one by one are read back whole.
    return [answer_text(answer.value, answer.reason) for answer in read_with(session, cipher, ids)]


def screen(
    session: Session,
    keys: KeyRing,
    agent: Agent,
    participant: Participant,
    answers: Sequence[AgentAnswer],
    project_id: uuid.UUID | None = None,
    held: Sequence[tuple[str, ...]] = (),
) -> list[Verdict]:
    """The output check's verdict on each answer (the transcript is indexed once for all of them).

    With a project, each answer is also checked against what that project has already received from
    the agent, and against the earlier answers of this call that pass, so a turn asked for in short
    pieces (across questions or jobs) is stopped at the piece that would complete a span. ``held``
    gives, per answer, reasons it is withheld whatever the check finds (its question was held).
    """
    if not answers:
        return []
    reference = reference_for(session, keys, agent, participant)
    received = None
    if project_id is not None:
        cipher = keys.cipher(participant.id, participant.wrapped_key)
        received = Received.of(reference, received_texts(session, cipher, project_id, agent.id))
    verdicts = []
    for n, answer in enumerate(answers):
        text = answer_text(answer.value, answer.reason)
        verdict = check(text, reference, received)
        if n < len(held) and held[n]:
            verdict = Verdict(tuple(sorted({*verdict.reasons, *held[n]})))
        if received is not None and verdict.released:
            received.add(text)
        verdicts.append(verdict)
    return verdicts


def hold(
    session: Session,
    *,
    job_id: uuid.UUID,
    project_id: uuid.UUID,
    result_id: int,
    agent: Agent,
    answers: Sequence[AgentAnswer],
    verdicts: Sequence[Verdict],
) -> int:
    """Queue every answer that failed the check for review, auditing each; returns how many."""
    held = 0
    for position, (answer, verdict) in enumerate(zip(answers, verdicts, strict=True)):
        if verdict.released or answer.record_id is None:
            continue
        row = WithheldAnswer(
            job_result_id=result_id, job_id=job_id, project_id=project_id, agent_id=agent.id,
            answer_id=answer.record_id, position=position, reasons=list(verdict.reasons), status=WithheldStatus.PENDING,
        )  # fmt: skip
        session.add(row)
        session.flush()
        audit.record(
            session, audit.Actor("system", "output-check"), "output.withheld", Tier.RESTRICTED, project_id=project_id,
            agent_id=agent.id, participant_id=agent.participant_id,
            details={"job_id": str(job_id), "withheld_id": row.id, "position": position,
                     "reasons": list(verdict.reasons)},
        )  # fmt: skip
        held += 1
    return held


def hidden_answers(session: Session, result_ids: Sequence[int]) -> set[int]:
    """Answer ids (of these job results) the team must not see yet."""
    if not result_ids:
        return set()
    return set(
        session.scalars(
            select(WithheldAnswer.answer_id).where(
                WithheldAnswer.job_result_id.in_(result_ids), WithheldAnswer.status.in_(HIDDEN)
            )
        )
    )


@dataclass(frozen=True)
class Held:
    """A queued answer as a reviewer sees it."""

    id: int
    job_id: uuid.UUID
    project_id: uuid.UUID
    agent_id: uuid.UUID
    reasons: list[str]
    status: str
    answer: dict[str, Any] | None  # None once the participant withdrew
    created_at: datetime


def queue(
    session: Session, keys: KeyRing, reviewer: Principal, status: WithheldStatus = WithheldStatus.PENDING
) -> list[Held]:
    """The withheld answers with ``status``, oldest first, each readable by the reviewer; the read is audited.

    Answers of projects the reviewer is named on are not in their queue (``duties``): reading one would
    hand a team member what the output check held back from their team.
    """
    actor = reviewer.actor
    rows = session.scalars(
        select(WithheldAnswer)
        .where(WithheldAnswer.status == status, WithheldAnswer.project_id.not_in(duties.projects_of(reviewer)))
        .order_by(WithheldAnswer.id)
        .limit(200)
    ).all()
    stored = read_answers(session, keys, (row.answer_id for row in rows))
    references: dict[uuid.UUID, Reference] = {}
    held = []
    for row in rows:
        answer = stored[row.answer_id].for_reviewer() if row.answer_id in stored else None
        if answer is not None:
            if row.agent_id not in references:
                agent = session.get_one(Agent, row.agent_id)
                participant = session.get_one(Participant, agent.participant_id)
                references[row.agent_id] = reference_for(session, keys, agent, participant)
            answer["highlights"] = _highlights(answer, references[row.agent_id])
        held.append(Held(row.id, row.job_id, row.project_id, row.agent_id, row.reasons, row.status, answer,
                         row.created_at))  # fmt: skip
    audit.record(session, actor, "review.withheld.list", Tier.ADMIN, details={"status": status, "count": len(held)})
    return held


def _highlights(answer: dict[str, Any], reference: Reference) -> dict[str, list[tuple[int, int]]]:
    """Where the answer's value (when it is text) and its rationale overlap what they must not repeat."""
    value = answer["value"]
    return {"value": overlaps(value, reference) if isinstance(value, str) else [],
            "reason": overlaps(answer["reason"] or "", reference)}  # fmt: skip


def decide(session: Session, reviewer: Principal, withheld_id: int, release: bool, note: str | None) -> WithheldAnswer:
    """Release a held answer to its team, or keep it withheld for good; audited. Only pending answers, and
    only by a reviewer not named on the answer's project (``duties``)."""
    row = session.get(WithheldAnswer, withheld_id, with_for_update=True)
    if row is None:
        raise NotFoundError("no such withheld answer")
    duties.require_independent(session, reviewer, row.project_id, "release or keep answers")
    actor = reviewer.actor
    row.status = move(row.status, WithheldStatus.RELEASED if release else WithheldStatus.KEPT, "this answer")
    row.decided_by, row.decided_at, row.note = actor.id, datetime.now(UTC), note
    agent = session.get_one(Agent, row.agent_id)
    audit.record(
        session, actor, "review.withheld.decide", Tier.RESTRICTED, project_id=row.project_id, agent_id=row.agent_id,
        participant_id=agent.participant_id,
        details={"withheld_id": row.id, "job_id": str(row.job_id), "decision": row.status},
    )  # fmt: skip
    session.flush()
    return row

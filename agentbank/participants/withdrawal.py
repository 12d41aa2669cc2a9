"""Withdrawal: a participant leaves the bank, at once and for good, within the caller's transaction.

What happens, all in one transaction (so either all of it or none):

- every version of their agent is set to ``withdrawn``: no job, population task or build takes it again,
  and its population answers are removed, so no future release of the open tier counts it (the current
  release keeps it inside its counts until the next one is cut, see ``releases``: changing the
  published tables for one person would tell that person's answers);
- queued tasks that name the agent or the participant are cancelled;
- their data key is destroyed: every other participant's key is re-wrapped under a new key-encryption
  key and the old one is destroyed once the transaction commits (``key_rotation``), so copies of their
  wrapped key in the database's files, WAL, replicas or backups open nothing. Transcript, audio,
  reflections, persona, deny-list and answers were sealed with it and cannot be read again by anyone.
  Rows that need no key to read are removed: memory rows (their embeddings are plain vectors) and the
  answer cache, their own survey answers (the battery) and their agents' report cards;
- what a study kept about them goes: the contact they left, the panel's id, their interview's counts
  (``studies.contacts.forget``), so the study shows only that someone withdrew;
- a tombstone stays: the participant row with consent ``withdrawn``, no key and no demographics.
  Its ``source_ref`` is kept so a later import of the same interview is recognized and skipped,
  and builds select only consenting participants, so the agent is never rebuilt;
- each project that received the agent's answers gets a notice in the outbox;
- the withdrawal is audited (the audit log keeps ids and hashes, never the participant's words);
- it is written to the withdrawal ledger outside the database (``ledger``), with everyone else's keys
  as the rotation re-wrapped them, so that restoring a backup taken before it re-applies it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import delete, select, text, update
from sqlalchemy.orm import Session

from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.core.statuses import AgentStatus, ConsentStatus, WithheldStatus, move, sources
from agentbank.db.models import (
    Agent,
    AnswerRecord,
    FocusGroup,
    FocusGroupSeat,
    Job,
    JobResult,
    Memory,
    OutboxEvent,
    Participant,
    ReportCard,
    WithheldAnswer,
)
from agentbank.keys.crypto import KeyRing
from agentbank.keys.rotation import rotate
from agentbank.participants.battery.answers import forget as forget_battery
from agentbank.participants.ledger import WithdrawalLedger
from agentbank.publication.population import forget_agent
from agentbank.restricted.jobs.lifecycle import JOB_TASK, close_cancelled
from agentbank.studies.contacts import forget as forget_study_data

NOTICE_TOPIC = "participant.withdrawn"


@dataclass(frozen=True)
class Withdrawn:
    """What a withdrawal did (counts only)."""

    agent_ids: list[uuid.UUID]
    tasks_cancelled: int
    projects_notified: int
    already_withdrawn: bool = False

    @property
    def agents(self) -> int:
        """How many agents (versions) the participant had."""
        return len(self.agent_ids)


def withdraw(
    session: Session, keys: KeyRing, participant_id: uuid.UUID, actor: audit.Actor, *, ledger: WithdrawalLedger | None
) -> Withdrawn:
    """Withdraw the participant (see the module's docstring); a second call changes nothing.

    ``ledger`` is the bank's withdrawal ledger; None only where no backup of the database is ever
    restored (a throwaway database)."""
    participant = session.get_one(Participant, participant_id, with_for_update=True)
    if participant.consent == ConsentStatus.WITHDRAWN and participant.wrapped_key is None:
        return Withdrawn([], 0, 0, already_withdrawn=True)
    done = _forget(session, participant)
    rotation = rotate(session, keys, dropping=participant_id)
    if ledger is not None:
        ledger.append(participant_id, rotation)
    _audit(session, actor, participant_id, done, {"keyring_version": rotation.version})
    return done


def reapply(session: Session, participant_id: uuid.UUID, actor: audit.Actor) -> Withdrawn | None:
    """A withdrawal the ledger holds, re-applied to a database restored from a backup taken before it.

    Everything ``withdraw`` does to the rows, in the caller's transaction; the keyring is left alone,
    since the withdrawal destroyed the person's key-encryption key when it happened. None: the
    participant is not in this database (they joined after the backup) or is withdrawn in it already."""
    participant = session.get(Participant, participant_id, with_for_update=True)
    if participant is None or (participant.consent == ConsentStatus.WITHDRAWN and participant.wrapped_key is None):
        return None
    done = _forget(session, participant)
    participant.wrapped_key = None
    _audit(session, actor, participant_id, done, {"reapplied": True})
    return done


def _forget(session: Session, participant: Participant) -> Withdrawn:
    """Every row change of a withdrawal, the keyring's rotation aside (see the module's docstring)."""
    participant_id = participant.id
    agent_ids = list(session.scalars(select(Agent.id).where(Agent.participant_id == participant_id)))
    session.execute(
        update(Agent)
        .where(Agent.participant_id == participant_id, Agent.status.in_(sources(AgentStatus.WITHDRAWN)))
        .values(status=AgentStatus.WITHDRAWN, persona_encrypted=None, deny_list_encrypted=None)
    )
    for agent_id in agent_ids:
        forget_agent(session, agent_id)
    session.execute(delete(Memory).where(Memory.agent_id.in_(agent_ids)))
    session.execute(delete(AnswerRecord).where(AnswerRecord.agent_id.in_(agent_ids)))
    forget_battery(session, participant_id)
    forget_study_data(session, participant_id)
    # A card is a figure about this person's own answers: it goes too (item figures stay, over k people).
    session.execute(delete(ReportCard).where(ReportCard.agent_id.in_(agent_ids)))
    session.execute(
        update(WithheldAnswer)
        .where(WithheldAnswer.agent_id.in_(agent_ids), WithheldAnswer.status.in_(sources(WithheldStatus.WITHDRAWN)))
        .values(status=WithheldStatus.WITHDRAWN)
    )
    cancelled = _cancel_tasks(session, participant_id, agent_ids)
    projects = len(_notify_projects(session, agent_ids))
    if participant.consent != ConsentStatus.WITHDRAWN:
        participant.consent = move(participant.consent, ConsentStatus.WITHDRAWN, "the participant")
    participant.demographics_encrypted = None
    return Withdrawn(agent_ids, cancelled, projects)


def _audit(
    session: Session, actor: audit.Actor, participant_id: uuid.UUID, done: Withdrawn, extra: dict[str, object]
) -> None:
    audit.record(
        session, actor, "participant.withdraw", Tier.PARTICIPANT, participant_id=participant_id,
        details={"agents": [str(a) for a in done.agent_ids], "tasks_cancelled": done.tasks_cancelled,
                 "projects_notified": done.projects_notified, **extra},
    )  # fmt: skip


def _cancel_tasks(session: Session, participant_id: uuid.UUID, agent_ids: list[uuid.UUID]) -> int:
    # Tasks a worker already took finish on their own: each re-reads the agent and finds it withdrawn.
    rows = session.execute(
        text(
            "UPDATE procrastinate_jobs SET status = 'cancelled' WHERE status = 'todo' "
            "AND (args->>'agent_id' = ANY(:agents) OR args->>'participant_id' = :participant) RETURNING task_name, args"
        ),
        {"agents": [str(a) for a in agent_ids], "participant": str(participant_id)},
    ).all()
    for task, args in rows:
        if task == JOB_TASK:  # the job still ends, with this agent answered by nobody
            close_cancelled(session, uuid.UUID(args["job_id"]), uuid.UUID(args["agent_id"]))
    return len(rows)


def _notify_projects(session: Session, agent_ids: list[uuid.UUID]) -> list[uuid.UUID]:
    projects = list(
        session.scalars(
            select(Job.project_id)
            .join(JobResult, JobResult.job_id == Job.id)
            .where(JobResult.agent_id.in_(agent_ids))
            .union(select(FocusGroup.project_id).join(FocusGroupSeat, FocusGroupSeat.group_id == FocusGroup.id)
                   .where(FocusGroupSeat.agent_id.in_(agent_ids)))
            .order_by("project_id")
        )
    )  # fmt: skip
    session.add_all(
        OutboxEvent(
            topic=NOTICE_TOPIC,
            project_id=project_id,
            payload={
                "agent_ids": [str(a) for a in agent_ids],
                "notice": "The participant behind these agents withdrew. Their answers are no longer "
                "available; delete the copies you hold.",
            },
        )
        for project_id in projects
    )
    return projects

"""A focus group as stored: submitted once per idempotency key, its seats, and its turns written one by one.

Every turn is its own row, written as it is made and numbered in order, so a run that stops (a crash, a
killed worker) starts again from the rows there are: none is lost and none is made twice (``running``). An
agent's turn is written in the door's release transaction, with its audit event (``write_spoken``); a second
writer of the same number rolls its whole release back. The state a run and a reader see is read here, the
agents' words opened with their participants' keys: a withdrawn participant's words are simply absent.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from agentbank.access.principals import Principal
from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.consultation.answering.stored import read_answers
from agentbank.consultation.door import Consultation
from agentbank.consultation.questions.screen import admit
from agentbank.core.errors import AgentBankError, ConflictError, InvalidRequestError, NotFoundError
from agentbank.core.statuses import AgentStatus, GroupStatus, SeatStatus, move, sources, terminal
from agentbank.db.models import Agent, FocusGroup, FocusGroupSeat, FocusGroupUtterance, Project
from agentbank.db.queue import enqueue
from agentbank.keys.crypto import KeyRing
from agentbank.providers.chat import Usage
from agentbank.restricted.groups.requests import FocusGroupRequest
from agentbank.restricted.jobs.lifecycle import JOB_QUEUE, KEY_PATTERN, IdempotencyKeyReusedError
from agentbank.restricted.projects import authorize_job, is_member

GROUP_TASK = "agentbank.focus_group"
ENDED = tuple(s for s in GroupStatus if terminal(s))


class AlreadySpokenError(AgentBankError):
    """Another run wrote this turn first: the release that would write it again is rolled back."""

    code = "turn_already_written"
    status_code = 409


def label(seat: int) -> str:
    """A seat as the group and the team read it."""
    return f"Seat {seat}"


@dataclass(frozen=True)
class Spoken:
    """One stored turn, as a run or a reader sees it: an agent's words and stance opened (None once its
    participant withdrew: ``readable`` false)."""

    number: int
    round: int
    kind: str  # moderator | agent | silence | left
    seat: int | None
    agent_id: uuid.UUID | None
    action: str | None = None
    guide_ref: str | None = None
    about: int | None = None
    text: str | None = None
    stance: int | None = None
    readable: bool = True
    reasons: tuple[str, ...] = ()
    usage: Usage = field(default_factory=Usage)


@dataclass
class GroupState:
    """A group's request, seats (seat -> (agent, status)) and turns so far."""

    id: uuid.UUID
    project_id: uuid.UUID
    request: FocusGroupRequest
    status: GroupStatus
    model: str | None
    seats: dict[int, tuple[uuid.UUID, SeatStatus]]
    spoken: list[Spoken]

    @property
    def active(self) -> list[int]:
        """The seats still in the group, in order."""
        return [seat for seat, (_, status) in sorted(self.seats.items()) if status == SeatStatus.ACTIVE]

    @property
    def agent_turns(self) -> int:
        """The agent turns taken (utterances and silences): what the turn budget counts."""
        return sum(s.kind in ("agent", "silence") for s in self.spoken)

    def pending(self) -> Spoken | None:
        """The moderator's last words to a seat, when that seat has not replied yet."""
        for turn in reversed(self.spoken):
            if turn.kind == "left":  # a seat that left meanwhile: the question still waits for its seat
                continue
            asked = turn.kind == "moderator" and turn.action in ("question", "probe") and turn.seat in self.active
            return turn if asked else None
        return None


def submit_group(
    session: Session, principal: Principal, project_id: uuid.UUID, idempotency_key: str, request: FocusGroupRequest
) -> tuple[FocusGroup, bool]:
    """The group for this key: created and queued (True), or the earlier one replayed (False). Checked as a
    job is (membership, approval, scope, quota) and its guide screened as a team's questions are."""
    if not KEY_PATTERN.match(idempotency_key or ""):
        raise InvalidRequestError("the Idempotency-Key header must be 1 to 200 visible ASCII characters")
    existing = session.scalars(
        select(FocusGroup).where(FocusGroup.client_pk == principal.pk, FocusGroup.idempotency_key == idempotency_key)
    ).first()
    if existing is not None:
        if existing.request_hash != request.digest():
            raise IdempotencyKeyReusedError("this Idempotency-Key was used for a different request")
        return existing, False
    project = authorize_job(session, principal, project_id, "focus_group", request.seats, request.queries)
    admit(session, principal.actor, project.id, request.wording())
    active = set(
        session.scalars(select(Agent.id).where(Agent.id.in_(request.seats), Agent.status == AgentStatus.ACTIVE))
    )
    if len(active) != len(request.seats):
        raise InvalidRequestError(f"{len(request.seats) - len(active)} of the agents are not available")
    group_id = uuid.uuid4()
    inserted = session.execute(
        insert(FocusGroup)
        .values(
            id=group_id,
            project_id=project.id,
            client_pk=principal.pk,
            idempotency_key=idempotency_key,
            request_hash=request.digest(),
            request=request.canonical(),
            status=GroupStatus.QUEUED,
        )
        .on_conflict_do_nothing(index_elements=["client_pk", "idempotency_key"])
        .returning(FocusGroup.id)
    ).scalar()
    if inserted is None:
        raise ConflictError("a focus group with this Idempotency-Key is still being submitted")
    session.add_all(
        FocusGroupSeat(group_id=group_id, seat=n, agent_id=a, status=SeatStatus.ACTIVE)
        for n, a in enumerate(request.seats, 1)
    )
    project.quota_used += request.queries
    enqueue(session, JOB_QUEUE, GROUP_TASK, [{"group_id": str(group_id)}])
    audit.record(
        session,
        principal.actor,
        "focus_group.submit",
        Tier.RESTRICTED,
        project_id=project.id,
        details={"group_id": str(group_id), "seats": len(request.seats), "max_turns": request.guide.max_turns},
    )
    session.flush()
    return session.get_one(FocusGroup, group_id), True


def group_for(session: Session, principal: Principal, group_id: uuid.UUID) -> FocusGroup:
    """A group the principal may see (a member of its project), else 404."""
    group = session.get(FocusGroup, group_id)
    if group is None or principal.kind != "client" or not is_member(session, principal, group.project_id):
        raise NotFoundError("no such focus group")
    return group


def load_state(session: Session, keys: KeyRing, group_id: uuid.UUID) -> GroupState:
    """The group with every turn so far, agents' words opened where their participants are still in."""
    group = session.get_one(FocusGroup, group_id, populate_existing=True)
    seats = {
        s.seat: (s.agent_id, s.status)
        for s in session.scalars(
            select(FocusGroupSeat).where(FocusGroupSeat.group_id == group_id).execution_options(populate_existing=True)
        )
    }
    rows = list(
        session.scalars(
            select(FocusGroupUtterance)
            .where(FocusGroupUtterance.group_id == group_id)
            .order_by(FocusGroupUtterance.number)
        )
    )
    opened = read_answers(session, keys, [a for r in rows if r.kind == "agent" for a in r.answer_ids])
    spoken = []
    for r in rows:
        text, stance, readable = r.text, None, True
        if r.kind == "agent":
            words, position = opened.get(r.answer_ids[0]), opened.get(r.answer_ids[1])
            readable = words is not None and position is not None
            text = str(words.value) if words is not None else None
            stance = int(position.value) if position is not None else None
        usage = Usage(r.prompt_tokens, r.cached_tokens, r.completion_tokens)
        spoken.append(
            Spoken(
                r.number,
                r.round,
                r.kind,
                r.seat,
                r.agent_id,
                r.action,
                r.guide_ref,
                r.about,
                text,
                stance,
                readable,
                tuple(r.reasons),
                usage,
            )
        )
    request = FocusGroupRequest.model_validate(group.request)
    return GroupState(group.id, group.project_id, request, group.status, group.model, seats, spoken)


def write_moderator(session: Session, group_id: uuid.UUID, turn: Spoken) -> None:
    """The moderator's turn (its words the guide's, with seat labels); a number already written is kept."""
    session.execute(
        insert(FocusGroupUtterance)
        .values(
            group_id=group_id,
            number=turn.number,
            round=turn.round,
            kind="moderator",
            seat=turn.seat,
            action=turn.action,
            guide_ref=turn.guide_ref,
            about=turn.about,
            text=turn.text,
            answer_ids=[],
            reasons=[],
            prompt_tokens=turn.usage.prompt_tokens,
            cached_tokens=turn.usage.cached_tokens,
            completion_tokens=turn.usage.completion_tokens,
        )
        .on_conflict_do_nothing(index_elements=["group_id", "number"])
    )


def write_spoken(
    session: Session,
    group_id: uuid.UUID,
    number: int,
    round_: int,
    seat: int,
    agent_id: uuid.UUID,
    consultation: Consultation,
) -> None:
    """An agent's turn, in the door's release transaction: its words and stance by their answers' ids, or, when
    the output check withheld them, a silence the others hear (its reasons, never the words)."""
    released = consultation.released
    reasons = sorted({r for v in consultation.verdicts for r in v.reasons})
    usage = sum((a.usage for a in consultation.answers), Usage())
    written = session.execute(
        insert(FocusGroupUtterance)
        .values(
            group_id=group_id,
            number=number,
            round=round_,
            kind="agent" if released else "silence",
            seat=seat,
            agent_id=agent_id,
            answer_ids=[a.record_id for a in consultation.answers],
            reasons=reasons,
            prompt_tokens=usage.prompt_tokens,
            cached_tokens=usage.cached_tokens,
            completion_tokens=usage.completion_tokens,
        )
        .on_conflict_do_nothing(index_elements=["group_id", "number"])
        .returning(FocusGroupUtterance.id)
    ).scalar()
    if written is None:
        raise AlreadySpokenError("this turn of the group was written by another run")
    if not released:
        participant = session.scalar(select(Agent.participant_id).where(Agent.id == agent_id))
        audit.record(
            session,
            audit.Actor("system", "output-check"),
            "output.withheld",
            Tier.RESTRICTED,
            project_id=session.get_one(FocusGroup, group_id).project_id,
            agent_id=agent_id,
            participant_id=participant,
            details={"group_id": str(group_id), "utterance": number, "reasons": reasons},
        )


def remove_seat(session: Session, group_id: uuid.UUID, seat: int, number: int, round_: int) -> None:
    """The seat leaves the group at once (its participant withdrew): marked removed, and a turn says so."""
    session.execute(
        update(FocusGroupSeat)
        .where(
            FocusGroupSeat.group_id == group_id,
            FocusGroupSeat.seat == seat,
            FocusGroupSeat.status.in_(sources(SeatStatus.REMOVED)),
        )
        .values(status=SeatStatus.REMOVED, removed_at=number)
    )
    session.execute(
        insert(FocusGroupUtterance)
        .values(
            group_id=group_id,
            number=number,
            round=round_,
            kind="left",
            seat=seat,
            answer_ids=[],
            reasons=[],
            prompt_tokens=0,
            cached_tokens=0,
            completion_tokens=0,
        )
        .on_conflict_do_nothing(index_elements=["group_id", "number"])
    )


def finish(session: Session, group_id: uuid.UUID, status: GroupStatus, reason: str | None = None) -> bool:
    """End the group (once) and give the project back the quota of the turns it did not take."""
    group = session.get_one(FocusGroup, group_id, with_for_update={"key_share": True})
    if group.status in ENDED:
        return False
    group.status = move(group.status, status, "the focus group")
    group.reason, group.finished_at = reason, datetime.now(UTC)
    taken = len(
        list(
            session.scalars(
                select(FocusGroupUtterance.id).where(
                    FocusGroupUtterance.group_id == group_id, FocusGroupUtterance.kind.in_(("agent", "silence"))
                )
            )
        )
    )
    unused = max(0, FocusGroupRequest.model_validate(group.request).queries - taken)
    project = session.get_one(Project, group.project_id, with_for_update=True)
    project.quota_used = max(0, project.quota_used - unused)
    audit.record(
        session,
        audit.Actor("system", "worker"),
        f"focus_group.{status}",
        Tier.RESTRICTED,
        project_id=group.project_id,
        details={
            "group_id": str(group_id),
            "turns": taken,
            "quota_returned": unused,
            **({"reason": reason} if reason else {}),
        },
    )
    return True

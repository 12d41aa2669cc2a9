"""A focus group as a worker runs it: one task, a loop of turns, each stored as it is made.

Each step reads the group as stored (``storage.load_state``), so a run that was stopped or killed starts
again where the rows end: a moderator's turn written and not yet answered is answered; an agent's answer made
and not yet released is found in the answer cache and released, once. Per step:

1. seats whose agents can no longer answer (their participant withdrew) leave at once, before anyone is
   spoken to; fewer than two seats left, or the budget spent, or the guide covered: the moderator closes;
2. with no question waiting, the moderator chooses (a model call, no transaction open) and its turn is stored;
3. with one waiting, the seat answers through the door (grant, consent at that moment, the output check on
   what the project received from that agent, the audit event to its participant) and the turn is written in
   the release's transaction; withheld, it is a silence the others hear; withdrawn meanwhile, the seat leaves.

No model call runs inside a database transaction.
"""

from __future__ import annotations

import logging
import threading
import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from agentbank.consultation.answering import AgentUnavailableError
from agentbank.consultation.answering.utterances import GroupTurn
from agentbank.consultation.door import AgentDoor, Consultation, Grant
from agentbank.core.errors import AgentBankError, PermissionDeniedError
from agentbank.core.prompts.files import group_prompt_version
from agentbank.core.statuses import AgentStatus, ConsentStatus, GroupStatus, move
from agentbank.db import transaction
from agentbank.db.models import Agent, FocusGroup, Participant
from agentbank.providers.embeddings import Embedder
from agentbank.restricted.groups import moderator
from agentbank.restricted.groups.memory import Stream, observations
from agentbank.restricted.groups.storage import (
    ENDED,
    AlreadySpokenError,
    GroupState,
    Spoken,
    finish,
    label,
    load_state,
    remove_seat,
    write_moderator,
    write_spoken,
)
from agentbank.restricted.jobs.tasks import TaskAttempt

log = logging.getLogger("agentbank.runtime.worker.groups")
MAX_STEPS = 1000  # a bound on the loop whatever the rows say


def run_group(
    sessions: sessionmaker[Session],
    door: AgentDoor,
    embedder: Embedder,
    group_id: uuid.UUID,
    *,
    stopping: threading.Event | None = None,
) -> bool:
    """Run (or resume) the group to its end; False when it had ended already."""
    with transaction(sessions) as session:
        # FOR NO KEY UPDATE: turns being written (which hold the group's key) do not wait for it, nor it for them.
        group = session.get_one(FocusGroup, group_id, with_for_update={"key_share": True})
        if group.status in ENDED:
            return False
        if group.status == GroupStatus.QUEUED:  # a stopped or killed run goes on running
            group.status = move(group.status, GroupStatus.RUNNING, "the focus group")
        group.model = door.chat.name
    stream = Stream(embedder)
    grant = None
    for _ in range(MAX_STEPS):
        if stopping is not None and stopping.is_set():
            raise InterruptedError("the worker is stopping; the group resumes from its stored turns")
        with transaction(sessions) as session:
            state = load_state(session, door.keys, group_id)
            if _seat_those_who_left(session, state):
                continue
        grant = grant or Grant.focus_group(state.project_id, group_id)
        number = len(state.spoken)
        if number == 0:
            with transaction(sessions) as session:
                write_moderator(session, group_id, moderator.opening(state))
            continue
        waiting = state.pending()
        if waiting is None:
            choice = moderator.options(state)
            if choice is None:
                with transaction(sessions) as session:
                    write_moderator(session, group_id, moderator.closing(state, number))
                    finish(session, group_id, GroupStatus.DONE)
                return True
            turn = moderator.decide(door.chat, state, choice, number)
            with transaction(sessions) as session:
                write_moderator(session, group_id, turn)
            continue
        if not _speak(sessions, door, stream, grant, state, waiting, number):
            return True
    raise AgentBankError("the focus group took more steps than it can have")


def _speak(
    sessions: sessionmaker[Session],
    door: AgentDoor,
    stream: Stream,
    grant: Grant,
    state: GroupState,
    waiting: Spoken,
    number: int,
) -> bool:
    """The waiting seat's answer through the door; False when the group ended (its grant lapsed)."""
    seat = waiting.seat
    assert seat is not None
    agent_id = state.seats[seat][0]
    question = waiting.text or ""
    if waiting.action == "probe" and waiting.about is not None:
        said = next((s for s in state.spoken if s.number == waiting.about), None)
        who = "you" if said is not None and said.seat == seat else label(said.seat or 0) if said else "someone"
        question = f"About what {who} said at [{waiting.about}]: {question}"
    heard = stream.recall(
        observations(state.spoken, seat), question, number, keep=[waiting.about] if waiting.about is not None else []
    )
    turn = GroupTurn(
        state.id, number, label(seat), question, state.request.stimulus.text, heard, group_prompt_version()
    )

    def then(session: Session, consultation: Consultation) -> None:
        write_spoken(session, state.id, number, waiting.round, seat, agent_id, consultation)

    try:
        door.speak(sessions, grant, agent_id, turn, then=then)
    except AlreadySpokenError:
        pass  # another run wrote it: the next step reads it
    except AgentUnavailableError:
        with transaction(sessions) as session:
            remove_seat(session, state.id, seat, number, waiting.round)
    except PermissionDeniedError as exc:  # the project's approval lapsed: nobody answers any more
        with transaction(sessions) as session:
            finish(session, state.id, GroupStatus.STOPPED, exc.message[:200])
        return False
    return True


def _seat_those_who_left(session: Session, state: GroupState) -> bool:
    """Remove at once every active seat whose agent can no longer answer; True when one was removed."""
    active = {state.seats[s][0]: s for s in state.active}
    rows = session.execute(
        select(Agent.id, Agent.status, Participant.consent, Participant.wrapped_key.is_not(None))
        .join(Participant, Participant.id == Agent.participant_id)
        .where(Agent.id.in_(list(active)))
    ).all()
    gone = [
        active[a]
        for a, status, consent, keyed in rows
        if status != AgentStatus.ACTIVE or consent != ConsentStatus.CONSENTED or not keyed
    ]
    number = len(state.spoken)
    waiting = state.pending()
    for offset, seat in enumerate(sorted(gone)):
        remove_seat(
            session,
            state.id,
            seat,
            number + offset,
            waiting.round if waiting else max((s.round for s in state.spoken), default=0),
        )
    return bool(gone)


def run_group_task(
    sessions: sessionmaker[Session],
    door: AgentDoor,
    embedder: Embedder,
    group_id: uuid.UUID,
    attempt: TaskAttempt,
    *,
    stopping: threading.Event | None = None,
) -> bool:
    """One attempt of the group's queued task; after the last failed one the group ends as failed. A stop is
    no failure: the task goes back to the queue and resumes from the stored turns."""
    try:
        return run_group(sessions, door, embedder, group_id, stopping=stopping)
    except Exception as exc:
        if (stopping is None or not stopping.is_set()) and attempt.last:
            reason = exc.message if isinstance(exc, AgentBankError) else type(exc).__name__
            log.warning("a focus group failed for good: %s", reason)
            with transaction(sessions) as session:
                finish(session, group_id, GroupStatus.FAILED, reason[:200])
        raise

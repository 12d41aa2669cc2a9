"""A focus group's dry run: the calls and tokens of each round, and the price, before anything is asked.

Checked as a submission is (approval, scope, quota, the guide screened, the agents available). Each round is
one guide question: the moderator's call and the seat's utterance for every seat, then the probes the guide
allows, until the turn budget is spent. Agents' calls are planned through the door under the project's grant
with their real context (interview, notes, stimulus); what they will have heard is not said yet, so it is
counted as a full memory of placeholder words (``memory.WORD_BUDGET``) from the second turn on, and the
moderator's discussion as its full window of turns of the same length. Completions are the smallest valid
answers, or this model's mean open answer once it has given enough (``answering.costs``). Audited once for
the project (``focus_group.estimate``).
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from agentbank.access.principals import Principal
from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.consultation.answering.costs import Estimator
from agentbank.consultation.answering.utterances import GroupTurn
from agentbank.consultation.door import AgentDoor, Grant
from agentbank.consultation.questions.screen import admit
from agentbank.core.errors import InvalidRequestError
from agentbank.core.prompts.files import group_prompt_version
from agentbank.core.settings import Settings
from agentbank.core.statuses import AgentStatus, GroupStatus, SeatStatus
from agentbank.db.models import Agent
from agentbank.providers.tokens import counter_of
from agentbank.restricted.groups import moderator
from agentbank.restricted.groups.memory import WORD_BUDGET
from agentbank.restricted.groups.requests import FocusGroupRequest
from agentbank.restricted.groups.storage import GroupState, Spoken, label
from agentbank.restricted.projects import authorize_job

PLACEHOLDER_WORDS = 40  # a remembered utterance's length, for counting
NOTE = (
    "what each seat will have heard is counted as a full memory of placeholder words from its second turn on; "
    "the moderator's discussion as its full window of such turns"
)


def _rounds(request: FocusGroupRequest) -> list[list[tuple[str, int]]]:
    """Per round, the agent turns the budget allows: (action, seat) for each seat, then the round's probes."""
    seats, guide = list(range(1, len(request.seats) + 1)), request.guide
    rounds, left = [], guide.max_turns
    for _ in guide.questions():
        turns = [("question", s) for s in seats] + [
            ("probe", seats[i % len(seats)]) for i in range(guide.probes_per_question if guide.probes else 0)
        ]
        turns = turns[:left]
        if turns:
            rounds.append(turns)
        left -= len(turns)
    return rounds


def _placeholder(state: GroupState, number: int) -> None:
    filler = " ".join(["word"] * PLACEHOLDER_WORDS)
    state.spoken.append(Spoken(number, 1, "agent", 1, None, text=filler))


def estimate_group(
    session: Session,
    sessions: sessionmaker[Session],
    principal: Principal,
    project_id: uuid.UUID,
    request: FocusGroupRequest,
    door: AgentDoor,
    settings: Settings,
) -> dict[str, Any]:
    """The dry run's figures: the whole group's estimate, and each round's calls, tokens and price."""
    project = authorize_job(session, principal, project_id, "focus_group", request.seats, request.queries)
    admit(session, principal.actor, project.id, request.wording())
    asked = select(func.count()).where(Agent.id.in_(request.seats), Agent.status == AgentStatus.ACTIVE)
    if session.scalar(asked) != len(request.seats):
        raise InvalidRequestError("some of the agents are not available")
    counter, grant, group_id = counter_of(door.chat), Grant.estimate(project.id), uuid.uuid4()
    seats = {n: (a, SeatStatus.ACTIVE) for n, a in enumerate(request.seats, 1)}
    state = GroupState(group_id, project.id, request, GroupStatus.QUEUED, door.chat.name, seats, [])
    whole = Estimator(session, settings, door.chat.name, counter)
    rounds, number = [], 1
    filler = " ".join(["word"] * WORD_BUDGET)
    for round_number, turns in enumerate(_rounds(request), 1):
        per_round = Estimator(session, settings, door.chat.name, counter)
        for action, seat in turns:
            ref = request.guide.questions()[round_number - 1][0] if action == "question" else "p1"
            choice = moderator.Options(
                (action,),
                ref if action == "question" else None,
                round_number,
                (seat,),
                (seat,),
                ("p1",) if action == "probe" else (),
                (moderator.NO_UTTERANCE,),
            )
            call = moderator.request(state, choice)
            for estimator in (per_round, whole):
                estimator.add_call(call.messages, call.schema or {})
            turn = GroupTurn(
                group_id,
                number + 1,
                label(seat),
                request.guide.text_of(ref),
                request.stimulus.text,
                filler if number > 1 else "",
                group_prompt_version(),
            )
            calls = door.planned_utterance(sessions, grant, request.seats[seat - 1], turn)
            for estimator in (per_round, whole):
                estimator.add(calls, 2)
            while len(state.spoken) < moderator.SHOWN_TURNS:
                _placeholder(state, len(state.spoken))
            number += 2
        figures = per_round.finish().to_dict()
        rounds.append(
            {
                "round": round_number,
                "agent_turns": len(turns),
                **{
                    k: figures[k]
                    for k in ("calls", "prompt_tokens", "cached_tokens", "completion_tokens", "price", "currency")
                },
            }
        )
    estimate = whole.finish()
    estimate.notes.append(NOTE)
    figures = {**estimate.to_dict(), "rounds": rounds}
    audit.record(
        session,
        principal.actor,
        "focus_group.estimate",
        Tier.RESTRICTED,
        project_id=project.id,
        details={"seats": len(request.seats), "calls": estimate.calls},
    )
    return figures

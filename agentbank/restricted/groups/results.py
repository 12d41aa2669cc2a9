"""What a team reads of its focus group: its state and transcript so far, and the result.

The result is computed when it is read, from the turns as stored and the words still readable, and nothing
derived from anyone's words is stored: a withdrawn participant's utterances, and whatever the themes and
summaries drew from them, are gone from the next read. It holds the transcript by seat, a summary per seat,
themes with the utterances they come from, and each seat's stance over the session with its changes, beside
the honest framing: the group is simulated, which model ran it, each seat's report card, and the seats whose
answers are not shown to depend on their person (the embedded model; no card; a card that does not beat the
non-LLM baseline), flagged. Every read is audited.
"""

from __future__ import annotations

import re
import uuid
from collections import Counter
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from agentbank.access.principals import Principal
from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.building.validity.cards import Card
from agentbank.building.validity.measures import agent_cards
from agentbank.core.errors import NotFoundError
from agentbank.db.models import FocusGroup, FocusGroupSeat
from agentbank.keys.crypto import KeyRing
from agentbank.providers.model_packages import SMOLLM2_NAME
from agentbank.restricted.groups.storage import GroupState, Spoken, group_for, label, load_state
from agentbank.restricted.projects import is_member

SIMULATED = (
    "This focus group is simulated: every participant is a generative agent built from an interview, "
    "speaking through a language model, and the moderator is a model following the team's guide. It is "
    "not what the people would have said."
)
THEMES, THEME_MIN_SEATS = 6, 2
WORD = re.compile(r"[a-z][a-z'-]{3,}")
STOPWORDS = frozenset(
    "that this with from have were what which would your their there about been they them then "
    "than just also very really think because when some more into over like only much such".split()
)


RECENT_GROUPS = 100


def project_groups(session: Session, principal: Principal, project_id: uuid.UUID) -> list[tuple[FocusGroup, int]]:
    """The project's newest groups, newest first, each with its number of seats (members only); the read
    audited. Nothing an agent said is read: a group is followed or read one at a time."""
    if principal.kind != "client" or not is_member(session, principal, project_id):
        raise NotFoundError("no such project")
    seats = select(func.count()).where(FocusGroupSeat.group_id == FocusGroup.id).scalar_subquery()
    newest = (select(FocusGroup, seats).where(FocusGroup.project_id == project_id)
              .order_by(FocusGroup.created_at.desc(), FocusGroup.id).limit(RECENT_GROUPS))  # fmt: skip
    groups = [(group, count) for group, count in session.execute(newest)]
    audit.record(session, principal.actor, "project.focus_groups.list", Tier.RESTRICTED, project_id=project_id,
                 details={"groups": len(groups)})  # fmt: skip
    return groups


def read_group(session: Session, keys: KeyRing, principal: Principal, group_id: uuid.UUID) -> GroupState:
    """The group and its turns so far, for a member of its project (to follow it live); audited."""
    group = group_for(session, principal, group_id)
    state = load_state(session, keys, group.id)
    audit.record(
        session,
        principal.actor,
        "focus_group.read",
        Tier.RESTRICTED,
        project_id=group.project_id,
        details={"group_id": str(group.id), "turns": len(state.spoken)},
    )
    return state


def transcript(state: GroupState) -> list[dict[str, Any]]:
    """Every turn in order: who spoke (the moderator or a seat), to whom, what (a silence, a seat leaving, or
    words no longer readable once their participant withdrew)."""
    out = []
    for turn in state.spoken:
        entry: dict[str, Any] = {
            "number": turn.number,
            "round": turn.round,
            "kind": turn.kind,
            "seat": label(turn.seat) if turn.seat else None,
        }
        if turn.kind == "moderator":
            entry.update(
                speaker="Moderator", action=turn.action, guide_ref=turn.guide_ref, about=turn.about, text=turn.text
            )
        elif turn.kind == "agent":
            status = "spoken" if turn.readable else "withdrawn"
            entry.update(speaker=label(turn.seat or 0), status=status, text=turn.text, stance=turn.stance)
        else:
            entry.update(
                speaker=label(turn.seat or 0),
                status=turn.kind,
                text=None,
                reasons=list(turn.reasons) if turn.kind == "silence" else [],
            )
        out.append(entry)
    return out


def _words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if w not in STOPWORDS}


def _spoken(state: GroupState) -> list[Spoken]:
    return [t for t in state.spoken if t.kind == "agent" and t.readable and t.text]


def themes(state: GroupState) -> list[dict[str, Any]]:
    """Words said by at least two seats, most seats first, each with the utterances (by number) it comes from."""
    said = _spoken(state)
    seats: dict[str, set[int]] = {}
    where: dict[str, list[int]] = {}
    for turn in said:
        for word in _words(turn.text or ""):
            seats.setdefault(word, set()).add(turn.seat or 0)
            where.setdefault(word, []).append(turn.number)
    shared = [w for w in seats if len(seats[w]) >= THEME_MIN_SEATS]
    shared.sort(key=lambda w: (-len(seats[w]), -len(where[w]), w))
    return [
        {"theme": w, "seats": [label(s) for s in sorted(seats[w])], "utterances": where[w]} for w in shared[:THEMES]
    ]


def stances(state: GroupState) -> dict[str, Any]:
    """Each seat's stance on the stimulus after each of its utterances, and where it changed (with the turn
    before it, what it had just heard)."""
    path: dict[str, list[dict[str, int]]] = {}
    changes = []
    for turn in _spoken(state):
        seat = label(turn.seat or 0)
        earlier = path.setdefault(seat, [])
        if earlier and turn.stance is not None and earlier[-1]["stance"] != turn.stance:
            changes.append(
                {
                    "seat": seat,
                    "from": earlier[-1]["stance"],
                    "to": turn.stance,
                    "at": turn.number,
                    "after": turn.number - 2,
                }
            )
        if turn.stance is not None:
            earlier.append({"number": turn.number, "stance": turn.stance})
    return {"by_seat": path, "changes": changes}


def _flag(card: Card | None, embedded: bool) -> str | None:
    if embedded:
        return "the embedded model: its answers are near chance and do not depend on the person"
    if card is None:
        return "not validated: no report card shows its answers depend on the person"
    if card.normalized_accuracy is None or (
        card.baseline_normalized is not None and card.normalized_accuracy <= card.baseline_normalized
    ):
        return "its report card does not beat the non-LLM baseline"
    return None


def seats(state: GroupState, cards: dict[uuid.UUID, Card], embedded: bool) -> list[dict[str, Any]]:
    """A summary per seat: its agent, status, turns, words, stance from first to last, its most central
    utterance (the one sharing most words with its others), its report card and its flag."""
    out = []
    for seat, (agent_id, status) in sorted(state.seats.items()):
        mine = [t for t in _spoken(state) if t.seat == seat]
        counts = Counter(w for t in mine for w in _words(t.text or ""))
        central = max(mine, key=lambda t: sum(counts[w] for w in _words(t.text or "")), default=None)
        card = cards.get(agent_id)
        out.append(
            {
                "seat": label(seat),
                "agent_id": str(agent_id),
                "status": status,
                "utterances": len(mine),
                "silences": sum(t.kind == "silence" and t.seat == seat for t in state.spoken),
                "words": sum(len((t.text or "").split()) for t in mine),
                "stance": {"first": mine[0].stance, "last": mine[-1].stance} if mine else None,
                "central_utterance": central.number if central else None,
                "report_card": None
                if card is None
                else {
                    "instrument": card.instrument,
                    "items": card.items,
                    "accuracy": card.accuracy,
                    "normalized_accuracy": card.normalized_accuracy,
                    "baseline": card.baseline,
                    "baseline_normalized": card.baseline_normalized,
                },
                "flag": _flag(card, embedded),
            }
        )
    return out


def is_embedded(model: str | None) -> bool:
    """Whether the group ran on the bank's embedded model (SmolLM2)."""
    return model is not None and model.startswith(SMOLLM2_NAME.split("-Q")[0])


def group_result(
    session: Session, keys: KeyRing, principal: Principal, group_id: uuid.UUID, format: str = "json"
) -> dict[str, Any]:
    """The group's result for a member of its project (see the module's docstring); the read audited."""
    group = group_for(session, principal, group_id)
    state = load_state(session, keys, group.id)
    embedded = is_embedded(state.model)
    cards = agent_cards(session, keys, [agent for agent, _ in state.seats.values()])
    result = {
        "id": str(state.id),
        "project_id": str(state.project_id),
        "status": state.status,
        "framing": {"simulated": True, "statement": SIMULATED, "model": state.model, "embedded_model": embedded},
        "stimulus": state.request.stimulus.model_dump(mode="json"),
        "seats": seats(state, cards, embedded),
        "transcript": transcript(state),
        "themes": themes(state),
        "stances": stances(state),
    }
    audit.record(
        session,
        principal.actor,
        "focus_group.results.read",
        Tier.RESTRICTED,
        project_id=group.project_id,
        details={"group_id": str(group.id), "turns": len(state.spoken), "format": format},
    )
    return result

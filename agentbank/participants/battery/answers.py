"""The participant's battery answers: saved one by one as they are given, sealed with their data key,
in two waves.

Wave 1 opens once the transcript is confirmed; completing it sets the participant's demographics
from the ``about`` page and schedules the retest (wave 2) ``retest_after`` later. Every answer is
stored the moment it is given, so a closed tab loses nothing and the page resumes where it stopped.
A team never reads these answers: they exist to score the participant's agent.
"""

from __future__ import annotations

import json
import uuid
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.building.transcripts import open_demographics, seal_demographics
from agentbank.building.validity.measures import request_refresh
from agentbank.core.errors import ConflictError, InvalidRequestError
from agentbank.core.statuses import BatteryWaveStatus, ConsentStatus, move
from agentbank.db.models import BatteryAnswer, BatteryWave, Participant
from agentbank.instruments.model import Item
from agentbank.keys.crypto import Cipher, KeyRing
from agentbank.participants.battery.contents import ABOUT_WAVE_ONLY, Battery, Page

WAVES = (1, 2)
Answer = float | int | None  # None: the person preferred not to say


class BatteryClosedError(ConflictError):
    """A battery wave that cannot be answered now (not open yet, already complete, or not due)."""

    code = "battery_closed"


@dataclass(frozen=True)
class BatteryState:
    """Where a participant stands: the wave to answer now (or None), its pages and the answers given."""

    wave: int | None
    status: str  # not_started | open | scheduled | complete
    due_at: datetime | None  # the retest's date, once wave 1 is complete
    pages: tuple[Page, ...]
    answers: dict[str, Answer]
    completed: dict[int, datetime]

    @property
    def answered(self) -> int:
        """Items of the wave answered or declined."""
        return len(self.answers)

    @property
    def total(self) -> int:
        """Items the wave asks."""
        return sum(len(page.items) for page in self.pages)


def state(
    session: Session, keys: KeyRing, participant_id: uuid.UUID, battery: Battery, now: datetime, *, actor: audit.Actor
) -> BatteryState:
    """The participant's battery as their page shows it, audited as a read of their answers. Reads only;
    answering opens a wave."""
    shown = _state(session, keys, participant_id, battery, now)
    audit.record(session, actor, "participant.battery.read", Tier.PARTICIPANT, participant_id=participant_id,
                 details={"wave": shown.wave})  # fmt: skip
    return shown


def _state(session: Session, keys: KeyRing, participant_id: uuid.UUID, battery: Battery, now: datetime) -> BatteryState:
    participant = _consenting(session, participant_id)
    rows = session.scalars(select(BatteryWave).where(BatteryWave.participant_id == participant_id))
    waves = {w.wave: w for w in rows}
    completed = {n: w.completed_at for n, w in waves.items() if w.completed_at is not None}
    retest = waves.get(2)
    due = retest.due_at if retest else None
    wave: int | None
    if 1 not in completed:
        wave, status = 1, "open" if 1 in waves else "not_started"
    elif retest is not None and retest.status != BatteryWaveStatus.COMPLETE:
        wave, status = (2, "open") if retest.due_at <= now else (None, "scheduled")
    else:
        wave, status = None, "complete"
    if wave is None:
        return BatteryState(None, status, due, (), {}, completed)
    cipher = keys.cipher(participant.id, participant.wrapped_key)
    return BatteryState(wave, status, due, battery.for_wave(wave, _seed(participant_id)),
                        _read(session, cipher, participant_id, wave), completed)  # fmt: skip


def save_answer(
    session: Session, keys: KeyRing, participant_id: uuid.UUID, battery: Battery, wave: int, key: str,
    answer: Answer, now: datetime, *, actor: audit.Actor,
) -> None:  # fmt: skip
    """Store one answer (or "prefer not to say", ``None``) of the wave being answered; again replaces it.
    Audited with the question's key, never the answer."""
    participant = _consenting(session, participant_id)
    current = _open_wave(session, participant_id, wave, now)
    if key not in battery.keys(wave):
        raise InvalidRequestError(f"wave {wave} of the survey has no question {key!r}")
    value = _checked(battery.item(key).item, answer)
    cipher = keys.cipher(participant.id, participant.wrapped_key)
    sealed = cipher.seal(json.dumps({"skipped": True} if value is None else {"value": value}))
    statement = insert(BatteryAnswer).values(participant_id=participant_id, wave=current.wave, item=key,
                                             answer_encrypted=sealed, answered_at=now)  # fmt: skip
    session.execute(statement.on_conflict_do_update(
        index_elements=["participant_id", "wave", "item"],
        set_={"answer_encrypted": statement.excluded.answer_encrypted, "answered_at": now},
    ))  # fmt: skip
    audit.record(session, actor, "participant.battery.answer", Tier.PARTICIPANT, participant_id=participant_id,
                 details={"wave": wave, "items": [key]})  # fmt: skip


def complete(
    session: Session, keys: KeyRing, participant_id: uuid.UUID, battery: Battery, wave: int, now: datetime,
    retest_after: timedelta, *, actor: audit.Actor,
) -> BatteryState:  # fmt: skip
    """Close a wave once every question is answered or declined. Wave 1 sets the participant's
    demographics and schedules the retest; returns the state that follows."""
    participant = _consenting(session, participant_id)
    current = _open_wave(session, participant_id, wave, now)
    cipher = keys.cipher(participant.id, participant.wrapped_key)
    answers = _read(session, cipher, participant_id, wave)
    missing = [k for k in battery.keys(wave) if k not in answers]
    if missing:
        raise ConflictError(f"{len(missing)} questions are not answered yet",
                            hint="answer them or choose “prefer not to say”")  # fmt: skip
    current.status = move(current.status, BatteryWaveStatus.COMPLETE, f"wave {wave} of the survey")
    current.completed_at = now
    if wave == 1:
        known = open_demographics(participant, cipher)
        seal_demographics(participant, cipher, {**known, **demographics_of(answers, battery)})
        session.add(BatteryWave(participant_id=participant_id, wave=2, status=BatteryWaveStatus.SCHEDULED,
                                due_at=now + retest_after))  # fmt: skip
    else:  # the participant's agent can now be scored against them
        request_refresh(session, "retest")
    session.flush()
    audit.record(session, actor, "participant.battery.complete", Tier.PARTICIPANT, participant_id=participant_id,
                 details={"wave": wave})  # fmt: skip
    return _state(session, keys, participant_id, battery, now)


def demographics_of(answers: dict[str, Answer], battery: Battery) -> dict[str, int]:
    """The ``about`` page's answers as the bank codes demographics (GSS codes; age in years)."""
    about = {e.key: e.item.key for p in battery.pages if p.section == ABOUT_WAVE_ONLY for e in p.items}
    return {about[k]: int(v) for k, v in answers.items() if k in about and v is not None}


def waves_of(
    session: Session, keys: KeyRing, participant_id: uuid.UUID, *, actor: audit.Actor, purpose: str
) -> dict[int, dict[str, Answer]]:
    """Every completed wave's answers, opened (for scoring the participant's agent), audited with why, so
    the participant's portal shows who read their survey."""
    participant = session.get_one(Participant, participant_id)
    cipher = keys.cipher(participant.id, participant.wrapped_key)
    done = list(session.scalars(select(BatteryWave.wave).where(
        BatteryWave.participant_id == participant_id, BatteryWave.status == BatteryWaveStatus.COMPLETE)))  # fmt: skip
    audit.record(session, actor, "participant.battery.read", Tier.PARTICIPANT, participant_id=participant_id,
                 details={"waves": sorted(done), "purpose": purpose})  # fmt: skip
    return {wave: _read(session, cipher, participant_id, wave) for wave in done}


def forget(session: Session, participant_id: uuid.UUID) -> None:
    """Remove the participant's battery (withdrawal): the key that sealed it is destroyed as well."""
    session.execute(delete(BatteryAnswer).where(BatteryAnswer.participant_id == participant_id))
    session.execute(delete(BatteryWave).where(BatteryWave.participant_id == participant_id))


def _consenting(session: Session, participant_id: uuid.UUID) -> Participant:
    participant = session.get_one(Participant, participant_id)
    if participant.consent == ConsentStatus.INTERVIEWING:
        raise BatteryClosedError("the survey opens once you have confirmed your transcript")
    return participant  # a withdrawn participant's key is gone: opening it raises DataKeyDestroyedError (410)


def _open_wave(session: Session, participant_id: uuid.UUID, wave: int, now: datetime) -> BatteryWave:
    """The wave's row, locked, opened on its first answer; refused unless it is the one to answer now."""
    if wave not in WAVES:
        raise InvalidRequestError("the survey has waves 1 and 2")
    if wave == 1:
        session.execute(insert(BatteryWave).values(participant_id=participant_id, wave=1, status=BatteryWaveStatus.OPEN,
                                                   due_at=now).on_conflict_do_nothing())  # fmt: skip
    row = session.get(BatteryWave, (participant_id, wave), with_for_update=True)
    if row is None:
        raise BatteryClosedError("the retest is offered once the first survey is complete")
    if row.status == BatteryWaveStatus.SCHEDULED:
        if row.due_at > now:
            raise BatteryClosedError(f"the retest opens on {row.due_at:%d %B %Y}")
        row.status = move(row.status, BatteryWaveStatus.OPEN, "the retest")
    if row.status == BatteryWaveStatus.COMPLETE:
        raise BatteryClosedError(f"wave {wave} of the survey is already complete")
    return row


def _checked(item: Item, answer: Answer) -> Answer:
    if answer is None:
        return None
    if item.kind == "numeric":
        if item.minimum is not None and item.maximum is not None and not item.minimum <= answer <= item.maximum:
            raise InvalidRequestError(f"the answer must be between {item.minimum:g} and {item.maximum:g}")
        return answer
    if answer != int(answer) or int(answer) not in item.codes:
        raise InvalidRequestError(f"{answer!r} is not one of the question's options")
    return int(answer)


def _read(session: Session, cipher: Cipher, participant_id: uuid.UUID, wave: int) -> dict[str, Answer]:
    rows = session.execute(select(BatteryAnswer.item, BatteryAnswer.answer_encrypted).where(
        BatteryAnswer.participant_id == participant_id, BatteryAnswer.wave == wave))  # fmt: skip
    return {item: _value(json.loads(cipher.open(blob))) for item, blob in rows}


def _value(payload: dict[str, Any]) -> Answer:
    return None if payload.get("skipped") else payload["value"]


def _seed(participant_id: uuid.UUID) -> int:
    return zlib.crc32(participant_id.bytes)

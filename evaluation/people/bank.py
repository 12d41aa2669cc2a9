"""The bank's own participants as an evaluation dataset: their survey (wave 1) and its retest (wave 2).

``agentbank evaluate --dataset bank`` scores the bank's agents against the people they stand for, as
Park et al. did: every consenting participant with an active agent and both waves of their survey
complete is a respondent, named by their pseudonym (so the interview condition finds their agent),
with the demographics their survey gave. Their answers are opened with their own keys for the run
only; the dataset's digest (of its content) names the run, so a new retest or a withdrawal starts a
run of its own and the answers already made are taken from the agents' cache.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from agentbank.audit import log as audit
from agentbank.building.transcripts import open_demographics
from agentbank.core.statuses import AgentStatus, BatteryWaveStatus, ConsentStatus
from agentbank.db import transaction
from agentbank.db.models import Agent, BatteryWave, Participant
from agentbank.instruments.model import Instrument
from agentbank.keys.crypto import Cipher, DataKeyDestroyedError, KeyRing
from agentbank.participants.battery import answers as battery
from agentbank.participants.battery.contents import ABOUT_GSS
from evaluation.people.coding import LoadReport
from evaluation.people.waves import MISSING, Dataset, DatasetError, Response

BANK = "bank"
EVALUATION = audit.Actor("operator", "evaluation")
# The bank's survey asks at most the GSS's 173 attitude and behaviour items: all of them are scored.
BANK_ITEMS = 173
GSS_PREFIX = "gss:"
NOT_TRAITS = ("gss", "about")  # the survey's other instruments (Big Five, games) are scored as traits


def retested(session: Session) -> list[Participant]:
    """Consenting participants with an active agent whose survey and retest are both complete."""
    complete = (
        select(BatteryWave.participant_id)
        .where(BatteryWave.wave == 2, BatteryWave.status == BatteryWaveStatus.COMPLETE)
        .scalar_subquery()
    )
    active = select(Agent.participant_id).where(Agent.status == AgentStatus.ACTIVE).scalar_subquery()
    return list(
        session.scalars(
            select(Participant)
            .where(Participant.consent == ConsentStatus.CONSENTED)
            .where(Participant.id.in_(complete), Participant.id.in_(active))
            .order_by(Participant.pseudonym)
        )
    )


def bank_dataset(sessions: sessionmaker[Session], keys: KeyRing, instrument: Instrument) -> Dataset:
    """The bank's retested participants' GSS answers in both waves, with their demographics."""
    dataset = Dataset(BANK, report=LoadReport(layout=BANK), own=True)
    with transaction(sessions) as session:  # each read of a person's survey is audited
        for participant in retested(session):
            waves = battery.waves_of(session, keys, participant.id, actor=EVALUATION,
                                     purpose="scoring the participant's agent against their own answers")  # fmt: skip
            person = participant.pseudonym
            known = open_demographics(participant, keys.cipher(participant.id, participant.wrapped_key))
            dataset.demographics[person] = {k: int(v) for k, v in known.items()}
            for wave in (1, 2):
                for key, value in sorted(waves.get(wave, {}).items()):
                    if key.split(":")[0] not in NOT_TRAITS:
                        dataset.battery.setdefault(person, {}).setdefault(wave, {})[key] = value
                    if not key.startswith(GSS_PREFIX) or key[len(GSS_PREFIX) :] not in _scored(instrument):
                        continue
                    code = None if value is None else int(value)
                    status = "answered" if code is not None else MISSING
                    dataset.responses.append(Response(person, key[len(GSS_PREFIX) :], wave, code, status))
    people = set(dataset.demographics)
    if len(people) < 2:
        raise DatasetError(
            f"the bank has {len(people)} participants with both surveys complete; scoring needs at least two",
            hint="participants take the survey after their interview and the retest from its due date",
        )
    report = dataset.report
    report.people = len(people)
    report.answers = sum(1 for r in dataset.responses if r.code is not None)
    for values in dataset.demographics.values():
        report.demographics.update(values.keys())
    dataset.digest = _digest(dataset)
    return dataset


def _scored(instrument: Instrument) -> set[str]:
    """Attitude and behaviour items; the about-you page's (party, ideology) are demographics, asked once."""
    kinds = ("attitude", "behavior")
    return {item.key for item in instrument.items if item.meta.get("gss_kind") in kinds and item.key not in ABOUT_GSS}


def _digest(dataset: Dataset) -> str:
    content = {"responses": sorted(dataset.responses), "demographics": dataset.demographics,
               "battery": dataset.battery}  # fmt: skip
    return hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()


class BankSealer:
    """Seals what a run writes about one of the bank's participants with their data key, by pseudonym:
    ``results.jsonl`` and ``traits.jsonl`` of a bank run hold only ciphertext of anyone's answers."""

    def __init__(self, sessions: sessionmaker[Session], keys: KeyRing) -> None:
        self._sessions, self._keys = sessions, keys
        self._ciphers: dict[str, Cipher | None] = {}

    def _cipher(self, person: str) -> Cipher | None:
        if person not in self._ciphers:
            with self._sessions() as session:
                participant = session.scalar(select(Participant).where(Participant.pseudonym == person))
            try:
                self._ciphers[person] = (
                    self._keys.cipher(participant.id, participant.wrapped_key) if participant is not None else None
                )
            except DataKeyDestroyedError:
                self._ciphers[person] = None
        return self._ciphers[person]

    def seal(self, person: str, value: Any) -> str | None:
        cipher = self._cipher(person)
        return None if cipher is None else base64.b64encode(cipher.seal_json(value)).decode()

    def open(self, person: str, sealed: str) -> Any | None:
        cipher = self._cipher(person)
        if cipher is None:
            return None
        try:
            return cipher.open_json(base64.b64decode(sealed))
        except DataKeyDestroyedError:
            return None

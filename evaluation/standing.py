"""The bank's standing: how many participants took their survey and its retest, how many agents carry a
report card, and how the interview agents compare with every baseline in the newest scoring of the bank (with
its distortions and the fidelity of its distributions to the people's own and the GSS's)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from agentbank.core.statuses import AgentStatus, BatteryWaveStatus, ConsentStatus
from agentbank.db.models import Agent, BatteryWave, Participant, ReportCard
from evaluation.people.bank import BANK
from evaluation.runs.records import RunRecord, RunStore
from evaluation.service import SUMMARY


@dataclass(frozen=True)
class Standing:
    """Counts from the bank's database, and the newest finished bank run's figures (if any)."""

    participants: int
    wave1: int
    wave2_due: int  # retests offered and not yet taken
    wave2: int
    agents: int
    carded: int  # active agents with an interview card
    run: RunRecord | None = None
    summary: dict[str, Any] = field(default_factory=dict)  # the newest bank run's figures across people

    @property
    def conditions(self) -> dict[str, Any]:
        """The newest bank run's figures per condition."""
        return dict(self.summary.get("conditions", {}))

    @property
    def fidelity(self) -> dict[str, Any]:
        """The newest bank run's distributions beside the people's own and the GSS's."""
        return dict(self.summary.get("fidelity") or {})

    @property
    def sentences(self) -> list[str]:
        """The newest bank run's combination, distortions and fidelity, in plain sentences."""
        return list(self.summary.get("sentences", []))

    @property
    def run_date(self) -> datetime | None:
        """When the newest bank run finished."""
        return datetime.fromisoformat(self.run.finished_at) if self.run and self.run.finished_at else None


def standing(session: Session, runs: Path, now: datetime) -> Standing:
    """Where the bank stands (``runs``: the directory evaluation runs are kept in)."""
    consenting = select(Participant.id).where(Participant.consent == ConsentStatus.CONSENTED).scalar_subquery()

    def waves(wave: int, *where: Any) -> int:
        query = select(func.count()).select_from(BatteryWave).where(
            BatteryWave.wave == wave, BatteryWave.participant_id.in_(consenting), *where)  # fmt: skip
        return int(session.scalar(query) or 0)

    complete = BatteryWave.status == BatteryWaveStatus.COMPLETE
    active = select(Agent.id).where(Agent.status == AgentStatus.ACTIVE)
    carded = select(func.count(func.distinct(ReportCard.agent_id))).where(
        ReportCard.agent_id.in_(active), ReportCard.condition == "interview"
    )
    run, summary = newest_bank_run(runs)
    return Standing(
        participants=int(session.scalar(select(func.count()).where(Participant.id.in_(consenting))) or 0),
        wave1=waves(1, complete),
        wave2_due=waves(2, BatteryWave.status != BatteryWaveStatus.COMPLETE, BatteryWave.due_at <= now),
        wave2=waves(2, complete),
        agents=int(session.scalar(select(func.count()).select_from(active.subquery())) or 0),
        carded=int(session.scalar(carded) or 0),
        run=run,
        summary=summary,
    )


def newest_bank_run(runs: Path) -> tuple[RunRecord | None, dict[str, Any]]:
    """The newest finished run of ``--dataset bank`` under ``runs``, and its summary."""
    newest: tuple[str, RunRecord, dict[str, Any]] | None = None
    for summary in runs.glob(f"{BANK}-*/{SUMMARY}") if runs.is_dir() else ():
        record = RunStore(runs, summary.parent.name).read_record()
        if record.finished_at and (newest is None or record.finished_at > newest[0]):
            newest = (record.finished_at, record, json.loads(summary.read_text()))
    return (newest[1], newest[2]) if newest else (None, {})

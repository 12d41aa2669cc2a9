"""Where each participant of a study stands, from the tables the interview, survey, builds and cards write.

Every invitation has one stage, the furthest it reached along ``Stage``'s order; withdrawal ends the
line and leaves a count with no row, no time and no quality figures. Beside the stages, the panel's outcomes
the coordinator recorded (``outcomes``: returned, timed out) are counted, never shown on a participant's row
(the panel's list would tie its ids to rows). One query reads the whole study.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import distinct_on
from sqlalchemy.orm import Session, aliased

from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.core.statuses import AgentStatus, BatteryWaveStatus, ConsentStatus, InterviewStatus, PanelOutcome
from agentbank.db.models import (
    Agent,
    BatteryWave,
    InterviewInvitation,
    InterviewSession,
    Participant,
    ReportCard,
    Study,
    Transcript,
)
from agentbank.studies.outline import Outline
from agentbank.studies.quality import Quality, quality_of


class Stage(StrEnum):
    """A participant's furthest step, in the order a study's funnel reads them."""

    REVOKED = "revoked"  # an unused invitation the coordinator took back
    EXPIRED = "expired"  # an unused invitation past its expiry
    INVITED = "invited"
    STARTED = "started"  # consented, nothing answered yet
    IN_MODULE = "in_module"  # answering module m of M
    PAUSED = "paused"
    FINISHED = "finished"  # the questions are over; the transcript is being reviewed
    CONFIRMED = "confirmed"  # the transcript is confirmed
    SURVEY_DONE = "survey_done"
    AGENT_BUILT = "agent_built"
    RETEST_DUE = "retest_due"
    RETEST_DONE = "retest_done"
    CARD = "card"  # the agent's report card against the person's own answers
    WITHDREW = "withdrew"


# The funnel: each stage counts everyone who reached it or went further (withdrawals apart).
FUNNEL = (Stage.INVITED, Stage.STARTED, Stage.FINISHED, Stage.CONFIRMED, Stage.SURVEY_DONE, Stage.AGENT_BUILT,
          Stage.RETEST_DUE, Stage.RETEST_DONE, Stage.CARD)  # fmt: skip
_RANK = {stage: rank for rank, stage in enumerate([Stage.INVITED, Stage.STARTED, Stage.IN_MODULE, Stage.PAUSED,
                                                   *FUNNEL[2:]])}  # fmt: skip


@dataclass(frozen=True)
class Standing:
    """One participant (named by their invitation's number) as a coordinator sees them."""

    invitation: int
    stage: Stage
    since: datetime | None
    module: int | None  # 1-based, while the interview is under way
    modules: int | None
    quality: Quality | None
    reminded_at: datetime | None = None
    has_contact: bool = False


@dataclass(frozen=True)
class ModuleDropOff:
    """How many interviews reached a module, and how many stand in it now (under way or paused)."""

    key: str
    title: str
    reached: int
    under_way: int
    paused: int


@dataclass(frozen=True)
class Progress:
    """A study at a glance: counts by stage, the funnel, drop-off by module, every participant's standing, and
    how many the panel reported returned or timed out."""

    study: Study
    counts: dict[Stage, int]
    funnel: list[tuple[Stage, int]]
    modules: list[ModuleDropOff]
    standings: list[Standing]  # withdrawn participants are only counted
    outcomes: dict[PanelOutcome, int] = field(default_factory=lambda: dict.fromkeys(PanelOutcome, 0))

    @property
    def invited(self) -> int:
        return sum(n for stage, n in self.counts.items() if stage not in (Stage.REVOKED, Stage.EXPIRED))


def progress(session: Session, study: Study, now: datetime) -> Progress:
    """The study's progress at ``now`` (see the module's docstring)."""
    rows = list(session.execute(_query(study.id)).all())
    outlines = _outlines(session, study.id)
    standings: list[Standing] = []
    counts = dict.fromkeys(Stage, 0)
    reached = dict.fromkeys(FUNNEL, 0)
    module_rows: dict[str, list[int]] = {}
    outcomes = dict.fromkeys(PanelOutcome, 0)
    for row in rows:
        standing = _standing(row, outlines, now)
        counts[standing.stage] += 1
        if standing.stage == Stage.WITHDREW:
            continue
        if row.panel_outcome is not None:
            outcomes[PanelOutcome(row.panel_outcome)] += 1
        standings.append(standing)
        rank = _RANK.get(standing.stage)
        if rank is not None:
            for stage in FUNNEL:
                reached[stage] += rank >= _RANK[stage]
        if row.fingerprint is not None:
            module_rows.setdefault(row.fingerprint, []).append(len(standings) - 1)
    modules = _drop_off(rows, standings, outlines, module_rows)
    return Progress(study, counts, [(stage, reached[stage]) for stage in FUNNEL], modules, standings, outcomes)


def read_progress(session: Session, study: Study, now: datetime, actor: audit.Actor) -> Progress:
    """The study's progress as a coordinator reads it: audited like its export (who looked, how many rows)."""
    seen = progress(session, study, now)
    audit.record(
        session, actor, "study.status", Tier.ADMIN, details={"study": str(study.id), "rows": len(seen.standings)}
    )
    return seen


def _query(study_id: uuid.UUID) -> Any:
    first, retest = aliased(BatteryWave), aliased(BatteryWave)
    agents = (
        select(Agent.participant_id, func.min(Agent.created_at).label("at"))
        .where(Agent.status != AgentStatus.WITHDRAWN)
        .group_by(Agent.participant_id)
        .subquery()
    )
    cards = (
        select(Agent.participant_id, func.min(ReportCard.created_at).label("at"))
        .join(ReportCard, ReportCard.agent_id == Agent.id)
        .group_by(Agent.participant_id)
        .subquery()
    )
    s, i = InterviewSession, InterviewInvitation
    return (
        select(
            i.id,
            i.created_at,
            i.expires_at,
            i.revoked_at,
            i.reminded_at,
            i.contact_encrypted.is_not(None).label("has_contact"),
            i.panel_outcome,
            s.status,
            s.question_index,
            s.script_fingerprint.label("fingerprint"),
            s.consented_at,
            s.updated_at,
            s.seconds_used,
            s.answers_given,
            s.answer_words,
            s.follow_ups_asked,
            s.audio_flags,
            Participant.consent,
            Transcript.finalized_at,
            first.status.label("first_status"),
            first.completed_at.label("first_done"),
            retest.status.label("retest_status"),
            retest.due_at.label("retest_due"),
            retest.completed_at.label("retest_done"),
            agents.c.at.label("agent_at"),
            cards.c.at.label("card_at"),
        )
        .select_from(i)
        .outerjoin(s, s.id == i.session_id)
        .outerjoin(Participant, Participant.id == s.participant_id)
        .outerjoin(Transcript, Transcript.id == s.transcript_id)
        .outerjoin(first, (first.participant_id == s.participant_id) & (first.wave == 1))
        .outerjoin(retest, (retest.participant_id == s.participant_id) & (retest.wave == 2))
        .outerjoin(agents, agents.c.participant_id == s.participant_id)
        .outerjoin(cards, cards.c.participant_id == s.participant_id)
        .where(i.study_id == study_id)
        .order_by(i.id)
    )


def _outlines(session: Session, study_id: uuid.UUID) -> dict[str, Outline]:
    """The outline of every distinct script the study's interviews follow (one row read per script)."""
    sessions = select(InterviewInvitation.session_id).where(InterviewInvitation.study_id == study_id)
    rows = session.execute(
        select(InterviewSession.script_fingerprint, InterviewSession.script)
        .ext(distinct_on(InterviewSession.script_fingerprint))
        .where(InterviewSession.id.in_(sessions))
    ).all()
    return {fingerprint: Outline.of(script) for fingerprint, script in rows}


def _standing(row: Any, outlines: dict[str, Outline], now: datetime) -> Standing:
    base = {"invitation": row.id, "reminded_at": row.reminded_at, "has_contact": bool(row.has_contact)}
    if row.status is None:  # never redeemed
        if row.revoked_at is not None:
            return Standing(stage=Stage.REVOKED, since=row.revoked_at, module=None, modules=None, quality=None, **base)
        if row.expires_at is not None and row.expires_at <= now:
            return Standing(stage=Stage.EXPIRED, since=row.expires_at, module=None, modules=None, quality=None, **base)
        return Standing(stage=Stage.INVITED, since=row.created_at, module=None, modules=None, quality=None, **base)
    if row.consent == ConsentStatus.WITHDRAWN:
        return Standing(stage=Stage.WITHDREW, since=None, module=None, modules=None, quality=None, **base)
    outline = outlines.get(row.fingerprint)
    quality = quality_of(row, outline)
    stage, since = _furthest(row, now)
    module = modules = None
    if stage in (Stage.IN_MODULE, Stage.PAUSED, Stage.STARTED) and outline is not None:
        module, modules = outline.module_at(row.question_index) + 1, outline.modules
    return Standing(stage=stage, since=since, module=module, modules=modules, quality=quality, **base)


def _furthest(row: Any, now: datetime) -> tuple[Stage, datetime | None]:
    """The last stage, in the funnel's order, whose mark the participant's rows carry, and when."""
    steps: list[tuple[Stage, datetime | None]] = []
    if row.status == InterviewStatus.PAUSED:
        steps.append((Stage.PAUSED, row.updated_at))
    elif row.status == InterviewStatus.ACTIVE:
        steps.append((Stage.IN_MODULE, row.updated_at) if row.answers_given else (Stage.STARTED, row.consented_at))
    else:
        steps.append((Stage.FINISHED, row.updated_at))
    if row.status == InterviewStatus.FINISHED:
        steps.append((Stage.CONFIRMED, row.finalized_at))
    if row.first_status == BatteryWaveStatus.COMPLETE:
        steps.append((Stage.SURVEY_DONE, row.first_done))
    if row.agent_at is not None:
        steps.append((Stage.AGENT_BUILT, row.agent_at))
    if row.retest_status is not None and row.retest_status != BatteryWaveStatus.COMPLETE and row.retest_due <= now:
        steps.append((Stage.RETEST_DUE, row.retest_due))
    if row.retest_status == BatteryWaveStatus.COMPLETE:
        steps.append((Stage.RETEST_DONE, row.retest_done))
    if row.card_at is not None:
        steps.append((Stage.CARD, row.card_at))
    return max(steps, key=lambda step: _RANK[step[0]])


def _drop_off(
    rows: list[Any], standings: list[Standing], outlines: dict[str, Outline], by_script: dict[str, list[int]]
) -> list[ModuleDropOff]:
    """Drop-off by module for the study's most used script (a study runs one script; stragglers on another
    version are counted in the stages, not here)."""
    if not by_script:
        return []
    fingerprint = max(by_script, key=lambda f: len(by_script[f]))
    outline = outlines[fingerprint]
    index_of = {row.id: row.question_index for row in rows}
    reached, under_way, paused = [0] * outline.modules, [0] * outline.modules, [0] * outline.modules
    for position in by_script[fingerprint]:
        standing = standings[position]
        interviewing = standing.stage in (Stage.STARTED, Stage.IN_MODULE, Stage.PAUSED)
        last = outline.module_at(index_of[standing.invitation]) if interviewing else outline.modules - 1
        for module in range(last + 1):
            reached[module] += 1
        if standing.stage == Stage.PAUSED:
            paused[last] += 1
        elif interviewing:
            under_way[last] += 1
    return [
        ModuleDropOff(outline.keys[m], outline.titles[m], reached[m], under_way[m], paused[m])
        for m in range(outline.modules)
    ]

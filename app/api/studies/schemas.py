"""Bodies of the coordinator's routes: a study's settings, invitations, and progress without a word."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, Field

from agentbank.core.statuses import PanelOutcome
from agentbank.studies.completion import Code, CompletionCodes, Ending
from agentbank.studies.contacts import Due
from agentbank.studies.outcomes import Recorded
from agentbank.studies.setup import Panel
from agentbank.studies.stages import ModuleDropOff, Progress, Stage, Standing
from app.api.types import AwareDatetime, Serial, Text

# Outcomes a request records: a panel's export of a larger study goes in several (or by the command line).
MAX_OUTCOMES = 1000


class StudyCreate(BaseModel):
    name: Text = Field(min_length=1, max_length=200)
    target_size: int = Field(ge=1, le=100_000)
    expires_at: AwareDatetime = Field(description="With a time zone, e.g. 2027-01-01T00:00:00Z")
    panel: Panel = Panel.NONE
    panel_param: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9_]{1,64}$",
        description="The query parameter carrying a custom panel's id for the person",
    )
    completion_url: str | None = Field(
        default=None,
        max_length=500,
        pattern=r"^https?://",
        description="Where the interview's end sends a panel's participant",
    )
    retest_completion_url: str | None = Field(
        default=None, max_length=500, pattern=r"^https?://", description="Where the retest's end sends them"
    )
    completion_codes: CompletionCodes = Field(
        default=CompletionCodes.PANEL,
        description="panel: the URLs carry the panel's one code; per_participant: each participant's own code, "
        "in the place of {code} in them",
    )


class StudyRead(BaseModel):
    id: uuid.UUID
    name: str
    script_key: str
    script_version: int
    target_size: int
    expires_at: datetime
    panel: str
    panel_param: str | None
    completion_url: str | None
    retest_completion_url: str | None
    completion_codes: str
    open_link: bool = Field(description="Whether the study's open link takes visitors")

    @classmethod
    def of(cls, study) -> StudyRead:  # type: ignore[no-untyped-def]
        return cls(
            id=study.id,
            name=study.name,
            script_key=study.script_key,
            script_version=study.script_version,
            target_size=study.target_size,
            expires_at=study.expires_at,
            panel=study.panel,
            panel_param=study.panel_param,
            completion_url=study.completion_url,
            retest_completion_url=study.retest_completion_url,
            completion_codes=study.completion_codes,
            open_link=study.open_code_hash is not None,
        )


class InvitationsCreate(BaseModel):
    count: int = Field(ge=1, le=5000)


class InvitationRead(BaseModel):
    invitation: int = Field(description="The invitation's number, as the study's progress names it")
    code: str
    link: str


class OpenLinkRead(BaseModel):
    link: str = Field(description="One link for the panel; the panel appends its own id for the person")


class RevocationCreate(BaseModel):
    invitations: list[Serial] | None = Field(
        default=None, max_length=5000, description="The numbers to revoke; all unused ones when absent"
    )


class RevocationRead(BaseModel):
    revoked: int


class QualityRead(BaseModel):
    duration_s: float
    budget_s: int
    answers: int
    words_per_answer: float | None
    follow_up_share: float | None
    audio_flags: int
    flags: list[str]


class StandingRead(BaseModel):
    invitation: int
    stage: Stage
    since: datetime | None
    module: int | None
    modules: int | None
    quality: QualityRead | None
    has_contact: bool = Field(description="Whether the person left a contact for the retest (never the contact)")
    reminded_at: datetime | None

    @classmethod
    def of(cls, s: Standing) -> StandingRead:
        quality = None
        if s.quality is not None:
            q = s.quality
            quality = QualityRead(
                duration_s=q.duration_s,
                budget_s=q.budget_s,
                answers=q.answers,
                words_per_answer=q.words_per_answer,
                follow_up_share=q.follow_up_share,
                audio_flags=q.audio_flags,
                flags=[str(f) for f in q.flags],
            )
        return cls(
            invitation=s.invitation,
            stage=s.stage,
            since=s.since,
            module=s.module,
            modules=s.modules,
            quality=quality,
            has_contact=s.has_contact,
            reminded_at=s.reminded_at,
        )


class FunnelStep(BaseModel):
    stage: Stage
    reached: int


class ModuleRead(BaseModel):
    key: str
    title: str
    reached: int
    under_way: int
    paused: int

    @classmethod
    def of(cls, m: ModuleDropOff) -> ModuleRead:
        return cls(key=m.key, title=m.title, reached=m.reached, under_way=m.under_way, paused=m.paused)


class ProgressRead(BaseModel):
    study: StudyRead
    invited: int
    counts: dict[str, int] = Field(description="Invitations by stage; withdrawals only counted")
    funnel: list[FunnelStep]
    modules: list[ModuleRead]
    participants: list[StandingRead]
    outcomes: dict[str, int] = Field(
        description="Invitations the panel reported returned or timed out (recorded by the coordinator); counts only"
    )

    @classmethod
    def of(cls, p: Progress) -> ProgressRead:
        return cls(
            study=StudyRead.of(p.study),
            invited=p.invited,
            counts={str(k): v for k, v in p.counts.items()},
            funnel=[FunnelStep(stage=s, reached=n) for s, n in p.funnel],
            modules=[ModuleRead.of(m) for m in p.modules],
            participants=[StandingRead.of(s) for s in p.standings],
            outcomes={str(k): v for k, v in p.outcomes.items()},
        )


class DueRead(BaseModel):
    invitation: int
    due_at: datetime
    reminded_at: datetime | None
    has_contact: bool
    reminder_failed_at: datetime | None = Field(
        default=None, description="When the last attempt to send the reminder failed (it is tried again)"
    )

    @classmethod
    def of(cls, d: Due) -> DueRead:
        return cls(invitation=d.invitation, due_at=d.due_at, reminded_at=d.reminded_at, has_contact=d.has_contact,
                   reminder_failed_at=d.reminder_failed_at)  # fmt: skip


class CompletionCodeRead(BaseModel):
    ending: Ending = Field(description="The end whose URL carried it: interview or retest")
    code: str

    @classmethod
    def of(cls, c: Code) -> CompletionCodeRead:
        return cls(ending=c.ending, code=c.code)


class OutcomeCreate(BaseModel):
    panel_participant_id: Text = Field(min_length=1, max_length=200, description="The panel's id for the person")
    outcome: PanelOutcome = Field(description="returned (Prolific's RETURNED) or timed_out (TIMED-OUT)")


class OutcomesCreate(BaseModel):
    outcomes: list[OutcomeCreate] = Field(
        max_length=MAX_OUTCOMES,
        description=f"As the panel's export lists them, at most {MAX_OUTCOMES} a request (and the body limit)",
    )


class OutcomesRead(BaseModel):
    recorded: int = Field(description="Invitations whose outcome this recorded")
    unchanged: int = Field(description="Invitations that had this outcome already")
    refused: int = Field(description="Invitations whose outcome does not move so (returned, then timed out)")
    unmatched: int = Field(description="Panel ids no participant of the study has (never came, or withdrew)")

    @classmethod
    def of(cls, r: Recorded) -> OutcomesRead:
        return cls(recorded=r.recorded, unchanged=r.unchanged, refused=r.refused, unmatched=r.unmatched)

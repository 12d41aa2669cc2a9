"""Restricted-tier request and response bodies: applications, decisions, jobs."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, Field

from agentbank.restricted.groups.requests import FocusGroupRequest
from agentbank.restricted.jobs.requests import JobRequest
from agentbank.restricted.projects import QUERY_TYPES, QueryType
from app.api.types import Text


def _survey_only() -> list[QueryType]:
    return ["survey"]


class ApplicationCreate(BaseModel):
    title: Text = Field(min_length=3, max_length=200)
    purpose: Text = Field(min_length=20, max_length=5000)
    harms: Text = Field(min_length=20, max_length=5000, description="Potential harms to participants, and mitigations")
    members: list[Text] = Field(
        default_factory=list, max_length=50, description="Client ids of team members; each must accept to join"
    )
    agents: list[uuid.UUID] | None = Field(default=None, max_length=500, description="Requested agents; null for any")
    query_types: list[QueryType] = Field(min_length=1, max_length=len(QUERY_TYPES))


class MembershipAnswer(BaseModel):
    """An invited client's answer to its place on a project's team."""

    accept: bool = Field(description="true: join the team; false: decline (the name is removed)")


class ProjectDecisionCreate(BaseModel):
    """A reviewer's decision on a project's application: approve with a scope, or reject."""

    approve: bool
    note: Text = Field(default="", max_length=2000)
    agents: list[uuid.UUID] | None = Field(default=None, max_length=500)
    query_types: list[QueryType] = Field(default_factory=_survey_only, max_length=len(QUERY_TYPES))
    max_agents_per_job: int = Field(default=50, ge=1, le=500)
    quota: int = Field(default=1000, ge=1, le=1_000_000)
    instruments: list[Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,23}@[0-9]{1,6}$")]] = Field(
        default_factory=list, max_length=20,
        description="Versions of the project's own instruments it may ask (key@version), as the reviewer read them",
    )  # fmt: skip
    expires_at: AwareDatetime | None = Field(default=None, description="With a time zone, e.g. 2027-01-01T00:00:00Z")


class ProjectRead(BaseModel):
    id: uuid.UUID
    title: str
    purpose: str
    harms: str = Field(description="The potential harms to participants the applicants stated, and mitigations")
    members: list[str] = Field(description="Client ids of the project's members (who accepted), the PI among them")
    invited: list[str] = Field(
        default_factory=list, description="Client ids named on the team who have not accepted yet"
    )
    status: str = Field(description="forming (members still to accept), submitted, approved or rejected")
    requested: dict[str, Any] = Field(
        default_factory=dict, description="What the application asked for: agents (null for any) and query types"
    )
    approvals: list[str] = Field(
        default_factory=list, description="Client ids of the reviewers who approved it, in order"
    )
    approvals_needed: int = Field(
        1, description="Reviewers who must approve before it is approved; while fewer have, it stays submitted"
    )
    scope: dict[str, Any]
    quota_used: int
    created_at: datetime


# A survey, open questions or an experiment, told apart by ``kind``: the domain's own tagged union, validated once.
JobCreate = JobRequest
FocusGroupCreate = FocusGroupRequest


class FocusGroupRead(BaseModel):
    """A focus group's state, and its transcript so far (to follow it live)."""

    id: uuid.UUID
    project_id: uuid.UUID
    status: str = Field(description="queued, running, done, stopped (its approval lapsed) or failed")
    model: str | None = Field(description="The chat model that runs it; null before it started")
    seats: list[dict[str, Any]] = Field(description="Each seat, its agent and whether it is still in the group")
    transcript: list[dict[str, Any]] = Field(description="Every turn so far, by seat; an agent's words only while "
                                             "its participant is in")  # fmt: skip
    simulated: Literal[True] = True


class FocusGroupListed(BaseModel):
    """A focus group in its project's list: what it is and how it stands, none of its words."""

    id: uuid.UUID
    status: str = Field(description="queued, running, done, stopped (its approval lapsed) or failed")
    model: str | None = Field(description="The chat model that runs it; null before it started")
    reason: str | None = Field(description="Why it stopped or failed, in the bank's own words")
    seats: int = Field(description="How many agents it seated")
    topics: list[str] = Field(description="The titles of its guide's topics (the team's own text)")
    created_at: datetime
    finished_at: datetime | None


class InstrumentCreate(BaseModel):
    """A version of the project's own instrument: JSON, a CSV sheet, or a Qualtrics export (.qsf)."""

    key: str = Field(pattern=r"^[a-z][a-z0-9_]{0,23}$", description="The instrument's name within the project")
    format: Literal["json", "csv", "qsf"]
    content: Text = Field(
        min_length=2, max_length=1_000_000, description="The file's text, within AGENTBANK_MAX_BODY_BYTES"
    )
    title: Text = Field(default="", max_length=200, description="For a CSV sheet: the instrument's title")
    preamble: Text = Field(default="", max_length=2000, description="For a CSV sheet: what a respondent reads first")


class InstrumentRead(BaseModel):
    """One version of a project's own instrument, as reviewers approve it."""

    ref: str = Field(description="How jobs and approvals name it: key@version")
    key: str
    version: int
    source: str
    definition: dict[str, Any] = Field(description="Title, preamble and items exactly as they will be asked")
    not_imported: list[str] = Field(description="What an import left out, and why")
    created_at: datetime


class JobRead(BaseModel):
    id: uuid.UUID
    project_id: uuid.UUID
    status: str
    total: int
    done: int
    request: dict[str, Any]
    created_at: datetime
    finished_at: datetime | None
    estimate: dict[str, Any] | None = Field(
        None, description="The newest dry run of exactly this request before it was submitted, if one was made"
    )
    used: dict[str, Any] | None = Field(
        None, description="What the answers the model made for the job used (on a single job's read)"
    )


class EstimateRead(BaseModel):
    """A dry run: what the job would cost, asking no model and queuing nothing."""

    model: str
    calls: int = Field(description="Model calls the job would make")
    answers: int = Field(description="Answers the job asks for")
    answers_stored: int = Field(description="Of those, answers already in the answer cache: no call")
    prompt_tokens: int
    cached_tokens: int = Field(description="Prompt tokens a prefix cache serves (shared with the call before)")
    completion_tokens: int
    calls_in_flight: int
    seconds: float | None = Field(
        description="Expected wall time at the calls in flight; null before the model was timed"
    )
    price: float | None = Field(description="From the operator's price table; null where it has no price for the model")
    currency: str | None
    notes: list[str] = Field(description="What the figures rest on, and what they leave out")


class AnswerRead(BaseModel):
    key: str = Field("", description="What the answer is to: the item, `question N`, or for an experiment `arm:item`")
    value: Any = None
    label: Any = Field(None, description="A survey item's answer in words: its option's label, or a list of them")
    reason: str = Field("", description='The rationale; "under review" for a withheld answer')
    cited_turns: list[int] = Field(default_factory=list)
    provenance: dict[str, Any] = Field(default_factory=dict)
    withheld: bool = Field(False, description="Held back by the output check until a reviewer decides")


class ReportCardRead(BaseModel):
    instrument: str
    condition: str
    items: int = Field(description="Items the agent was scored on")
    accuracy: float
    self_consistency: float = Field(description="The participant's own retest accuracy on the same items")
    normalized_accuracy: float | None = Field(description="accuracy / self_consistency (Park et al. 2024)")
    normalized_low: float | None = Field(None, description="95% interval of the normalized accuracy over the items")
    normalized_high: float | None = None
    baseline: str | None = Field(None, description="The run's best non-LLM baseline (population or cell mode)")
    baseline_normalized: float | None = Field(None, description="That baseline's figure on the same person and items")
    model: str
    prompt_version: str
    run_id: str
    created_at: datetime = Field(description="When the run scored the agent")


class ValidityRead(BaseModel):
    status: Literal["validated", "not_validated"] = Field(
        description="validated: the agent was scored against its own participant's survey and retest"
    )
    card: ReportCardRead | None = Field(description="The agent's newest interview card; null when not validated")


class ResultRead(BaseModel):
    agent_id: uuid.UUID
    status: str
    answers: list[AnswerRead]
    arms: list[str] | None = Field(None, description="An experiment job: the arms the agent was assigned, in order")
    validity: ValidityRead = Field(description="How well this agent is known to answer as its participant does")


class ProjectAgentRead(BaseModel):
    id: uuid.UUID
    version: int
    report_cards: list[ReportCardRead]


class NoticeRead(BaseModel):
    id: int
    topic: str = Field(description="What happened: `participant.withdrawn`")
    notice: str = Field(description="What the team must do")
    agent_ids: list[uuid.UUID] = Field(description="The agents concerned")
    created_at: datetime
    first_read_at: datetime | None = Field(
        description="When a member of the team first marked it read (POST .../read): its delivery"
    )

"""The typed vocabulary: statuses move only as listed, and a job request is validated once, by its kind."""

import uuid
from enum import StrEnum

import pytest
from pydantic import ValidationError
from sqlalchemy import text

from agentbank.core import statuses
from agentbank.core.statuses import (
    TRANSITIONS,
    AgentStatus,
    InvalidTransitionError,
    JobStatus,
    WithheldStatus,
    move,
    sources,
)
from agentbank.db.models import Agent
from agentbank.restricted.jobs.requests import OpenRequest, SurveyRequest, parse_request

ENUMS = [v for v in vars(statuses).values() if isinstance(v, type) and issubclass(v, StrEnum) and v is not StrEnum]


@pytest.mark.parametrize("enum", ENUMS, ids=lambda e: e.__name__)
def test_every_status_has_its_moves_listed(enum):
    assert set(TRANSITIONS[enum]) == set(enum)
    assert all(targets <= set(enum) for targets in TRANSITIONS[enum].values())
    assert all(len(member.value) <= 16 for member in enum)  # the columns are varchar(16)


def test_moves_outside_the_table_are_refused():
    assert move(WithheldStatus.PENDING, WithheldStatus.RELEASED, "this answer") is WithheldStatus.RELEASED
    with pytest.raises(InvalidTransitionError, match="this answer is already released and cannot become kept"):
        move(WithheldStatus.RELEASED, WithheldStatus.KEPT, "this answer")
    with pytest.raises(InvalidTransitionError):
        move(JobStatus.DONE, JobStatus.QUEUED, "the job")
    assert set(sources(AgentStatus.WITHDRAWN)) == {AgentStatus.ACTIVE, AgentStatus.SUPERSEDED}
    assert sources(AgentStatus.ACTIVE) == []  # nothing comes back to life


def test_a_status_column_reads_back_its_enumeration_and_refuses_unknown_values(db):
    from tests.support.factories import build

    _, agent, *_ = build(db)
    db.expire_all()
    assert type(db.get_one(Agent, agent.id).status) is AgentStatus
    agent.status = "sleeping"
    with pytest.raises(Exception, match="'sleeping' is not a valid AgentStatus"):
        db.flush()
    db.rollback()
    assert db.execute(text("SELECT 1")).scalar() == 1


AGENTS = [str(uuid.uuid4()), str(uuid.uuid4())]


@pytest.mark.parametrize(
    "body, problem",
    [
        ({"kind": "survey", "agents": AGENTS, "instrument": "gss", "items": []}, "at least 1"),
        ({"kind": "survey", "agents": AGENTS, "instrument": "gss", "items": ["a", "A"]}, "each item once"),
        ({"kind": "survey", "agents": AGENTS, "instrument": "gss", "items": ["a"], "questions": ["q"]}, "at most 0"),
        ({"kind": "survey", "agents": AGENTS, "instrument": "gss", "items": ["a"], "condition": "survey"}, "condition"),
        ({"kind": "survey", "agents": AGENTS * 2, "instrument": "gss", "items": ["a"]}, "each agent once"),
        ({"kind": "open", "agents": AGENTS, "questions": ["  "]}, "blank"),
        ({"kind": "open", "agents": AGENTS, "questions": ["Why?"], "items": ["a"]}, "at most 0"),
        ({"kind": "open", "agents": AGENTS, "questions": ["Why?"], "condition": "persona"}, "condition"),
        ({"kind": "open", "agents": AGENTS, "questions": ["x" * 501]}, "at most 500"),
        ({"kind": "poll", "agents": AGENTS}, "kind"),
        ({"kind": "open", "agents": [], "questions": ["Why?"]}, "at least 1"),
        ({"kind": "open", "agents": AGENTS, "questions": ["Why\ud800?"]}, "valid Unicode"),
    ],
)
def test_malformed_requests_are_refused_by_their_kind(body, problem):
    with pytest.raises(ValidationError, match=problem):
        parse_request(body)


def test_a_request_reads_back_as_stored_with_the_same_digest():
    survey = parse_request({"kind": "survey", "agents": AGENTS, "instrument": "gss", "items": ["CAPPUN", "gunlaw"]})
    assert isinstance(survey, SurveyRequest) and survey.queries == 4
    # Every field in a fixed spelling, as jobs were always stored and hashed, so replays still match.
    assert survey.canonical() == {"kind": "survey", "agents": AGENTS, "instrument": "gss",
                                  "items": ["cappun", "gunlaw"], "questions": [], "condition": "interview"}  # fmt: skip
    again = parse_request(survey.canonical())
    assert again.digest() == survey.digest()
    question = parse_request({"kind": "open", "agents": AGENTS[:1], "questions": ["Why?", "How?"]})
    assert isinstance(question, OpenRequest) and question.queries == 2
    assert question.canonical()["instrument"] is None and question.canonical()["items"] == []


def test_the_conditions_a_job_may_ask_for_are_registered_units():
    from typing import get_args

    from agentbank.consultation.answering import CONDITIONS
    from agentbank.restricted.jobs.requests import RestrictedCondition

    assert set(get_args(RestrictedCondition)) <= set(CONDITIONS)
    assert "survey" not in get_args(RestrictedCondition)  # a team never sees a person's own answers

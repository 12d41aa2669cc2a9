"""What a team asks of individual agents: survey items, open questions or a published experiment, one tagged
union validated once.

The API takes ``JobRequest`` as its request body, so a malformed request is refused (422) before any
code runs; a stored request is read back through ``parse_request``, so the worker sees the same types.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from agentbank.core.text import Text
from agentbank.restricted.experiments import EXPERIMENTS, load_experiment
from agentbank.restricted.experiments.model import Blinding

MAX_ITEMS, MAX_QUESTIONS, MAX_QUESTION_CHARS, MAX_AGENTS = 50, 5, 500, 500
RestrictedCondition = Literal["interview", "demographic", "persona"]
Question = Annotated[Text, Field(min_length=1, max_length=MAX_QUESTION_CHARS)]


class _Request(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    agents: list[uuid.UUID] = Field(min_length=1, max_length=MAX_AGENTS)

    @field_validator("agents")
    @classmethod
    def _distinct_agents(cls, agents: list[uuid.UUID]) -> list[uuid.UUID]:
        if len(set(agents)) != len(agents):
            raise ValueError("name each agent once")
        return agents

    @property
    def per_agent(self) -> int:
        """Items or questions each agent answers."""
        raise NotImplementedError

    @property
    def queries(self) -> int:
        """What the job costs against the project's quota: one per agent and item or question."""
        return len(self.agents) * self.per_agent

    def canonical(self) -> dict[str, Any]:
        """The request as stored and hashed: every field, agents and item keys in a fixed spelling."""
        data = self.model_dump(mode="json")
        data.setdefault("instrument", None)
        data["items"] = [i.lower() for i in data.get("items", [])]
        data.setdefault("questions", [])
        return data

    def digest(self) -> str:
        """A hash of the request, to tell a replay from a different request under the same key."""
        return hashlib.sha256(json.dumps(self.canonical(), sort_keys=True).encode()).hexdigest()


class SurveyRequest(_Request):
    """Items of one instrument, answered under a condition the restricted tier allows."""

    kind: Literal["survey"]
    instrument: Text = Field(min_length=1, max_length=32)
    items: list[Annotated[Text, Field(min_length=1, max_length=64)]] = Field(min_length=1, max_length=MAX_ITEMS)
    # Accepted only empty, so a client that sends every field of both kinds is not refused.
    questions: list[str] = Field(default_factory=list, max_length=0)
    condition: RestrictedCondition = "interview"

    @field_validator("items")
    @classmethod
    def _distinct_items(cls, items: list[str]) -> list[str]:
        if len({i.lower() for i in items}) != len(items):
            raise ValueError("name each item once")
        return items

    @property
    def per_agent(self) -> int:
        return len(self.items)


class OpenRequest(_Request):
    """Open questions, always answered from the interview."""

    kind: Literal["open"]
    questions: list[Question] = Field(min_length=1, max_length=MAX_QUESTIONS)
    instrument: None = None
    items: list[str] = Field(default_factory=list, max_length=0)
    condition: Literal["interview"] = "interview"

    @field_validator("questions")
    @classmethod
    def _distinct_questions(cls, questions: list[str]) -> list[str]:
        if any(not q.strip() for q in questions):
            raise ValueError("a question cannot be blank")
        if len(set(questions)) != len(questions):
            raise ValueError("ask each question once")
        return questions

    @property
    def per_agent(self) -> int:
        return len(self.questions)


class ExperimentRequest(_Request):
    """A published experiment (``agentbank.restricted.experiments``): each agent is given an arm by a seeded, balanced
    draw over the job's agents and takes that arm's trial; the agents' answers are individual answers,
    output-checked like any other."""

    kind: Literal["experiment"]
    experiment: Text = Field(min_length=1, max_length=32)
    blinding: Blinding = Blinding.BLINDED
    seed: int = Field(default=0, ge=0, le=2**31 - 1)
    condition: RestrictedCondition = "interview"
    instrument: None = None
    items: list[str] = Field(default_factory=list, max_length=0)
    questions: list[str] = Field(default_factory=list, max_length=0)

    @field_validator("experiment")
    @classmethod
    def _known(cls, key: str) -> str:
        if key not in EXPERIMENTS:
            raise ValueError(f"no experiment called {key!r}; choose one of {', '.join(EXPERIMENTS)}")
        return key

    @property
    def per_agent(self) -> int:
        return load_experiment(self.experiment).per_agent


Request = SurveyRequest | OpenRequest | ExperimentRequest
JobRequest = Annotated[Request, Field(discriminator="kind")]
_REQUESTS: TypeAdapter[Request] = TypeAdapter(JobRequest)


def parse_request(data: dict[str, Any]) -> Request:
    """A request as stored with a job (``canonical``), read back into its type."""
    return _REQUESTS.validate_python(data)

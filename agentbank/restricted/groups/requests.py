"""What a team asks for a focus group: 2 to 12 of its agents in seats, a moderator guide and a stimulus.

The guide is the team's own text (topics with questions, probes, a turn budget): the moderator says nothing
else, so what it says is the team's, never a model's paraphrase of a participant (``moderator``). Each agent
utterance counts as one query against the project's quota; the turn budget is reserved at submission.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agentbank.core.text import Text

MIN_SEATS, MAX_SEATS, MAX_TURNS = 2, 12, 200
Line = Annotated[Text, Field(min_length=1, max_length=500)]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Topic(_Frozen):
    """A topic of the guide and the questions the moderator poses on it, in order."""

    title: Annotated[Text, Field(min_length=1, max_length=200)]
    questions: list[Line] = Field(min_length=1, max_length=10)


class Guide(_Frozen):
    """The moderator's guide: topics, probes to follow an answer up with, and the budget of agent turns."""

    topics: list[Topic] = Field(min_length=1, max_length=10)
    probes: list[Line] = Field(default_factory=list, max_length=10)
    max_turns: int = Field(default=24, ge=2, le=MAX_TURNS)
    probes_per_question: int = Field(default=1, ge=0, le=5)
    opening: Line = "Welcome, and thank you for joining. There are no right or wrong answers."
    closing: Line = "That is all our time. Thank you for your thoughts."

    def questions(self) -> list[tuple[str, str]]:
        """Every question with its reference (``q1``, ``q2``, ... across topics), in order."""
        flat = [q for topic in self.topics for q in topic.questions]
        return [(f"q{n}", q) for n, q in enumerate(flat, 1)]

    def probe_refs(self) -> list[tuple[str, str]]:
        """Every probe with its reference (``p1``, ...)."""
        return [(f"p{n}", p) for n, p in enumerate(self.probes, 1)]

    def text_of(self, ref: str) -> str:
        """The guide's wording of a question or probe."""
        return dict(self.questions() + self.probe_refs())[ref]


class Stimulus(_Frozen):
    """What the group discusses: a text, the description of an image, or a concept."""

    kind: Literal["text", "image_description", "concept"] = "text"
    text: Annotated[Text, Field(min_length=1, max_length=4000)]


class FocusGroupRequest(_Frozen):
    """A moderated focus group of the project's agents, one seat each."""

    kind: Literal["focus_group"] = "focus_group"
    seats: list[uuid.UUID] = Field(min_length=MIN_SEATS, max_length=MAX_SEATS)
    guide: Guide
    stimulus: Stimulus

    @field_validator("seats")
    @classmethod
    def _distinct(cls, seats: list[uuid.UUID]) -> list[uuid.UUID]:
        if len(set(seats)) != len(seats):
            raise ValueError("seat each agent once")
        return seats

    @property
    def queries(self) -> int:
        """What the group may cost against the project's quota: one query per agent turn of its budget."""
        return self.guide.max_turns

    def wording(self) -> list[str]:
        """Everything the moderator may say to a seat (screened as a team's questions are)."""
        return [text for _, text in self.guide.questions() + self.guide.probe_refs()]

    def canonical(self) -> dict[str, Any]:
        """The request as stored and hashed."""
        return self.model_dump(mode="json")

    def digest(self) -> str:
        """A hash of the request, to tell a replay from a different request under the same key."""
        return hashlib.sha256(json.dumps(self.canonical(), sort_keys=True).encode()).hexdigest()

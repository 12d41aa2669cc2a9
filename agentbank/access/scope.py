"""What an approved project may ask, as one typed value: the reviewer approves it, the project stores it,
and every check (the job's submission, the door at answer time, the agents a team lists) reads it.

Stored as JSON on the project and on each reviewer's approval; read back only through ``ProjectScope.stored``,
so no caller reads the scope by string keys.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from agentbank.core.errors import ConflictError, InvalidRequestError


@dataclass(frozen=True)
class ProjectScope:
    """The agents a project may ask (None: any active agent), its kinds of question, how many agents one job
    may ask, the queries it may make in all, when its approval ends, and the versions of the project's own
    instruments it may ask (``key@version``: the exact items the reviewers saw)."""

    agents: tuple[uuid.UUID, ...] | None
    query_types: tuple[str, ...]
    max_agents_per_job: int
    quota: int
    expires_at: datetime
    instruments: tuple[str, ...] = ()

    @classmethod
    def of(
        cls, agents: Iterable[uuid.UUID] | None, query_types: Iterable[str], max_agents_per_job: int, quota: int,
        expires_at: datetime, instruments: Iterable[str] = (),
    ) -> ProjectScope:  # fmt: skip
        """A scope a reviewer approves, checked: it must end in the future and allow something."""
        if expires_at.tzinfo is None:
            raise InvalidRequestError("the approval's end needs a time zone")
        if expires_at <= datetime.now(UTC):
            raise InvalidRequestError("the approval must expire in the future")
        if max_agents_per_job < 1 or quota < 1:
            raise InvalidRequestError("max agents per job and quota must be positive")
        return cls(None if agents is None else tuple(agents), tuple(query_types), max_agents_per_job, quota,
                   expires_at.astimezone(UTC), tuple(dict.fromkeys(instruments)))  # fmt: skip

    @classmethod
    def stored(cls, value: Mapping[str, Any]) -> ProjectScope:
        """A scope as a project or an approval stored it."""
        agents = value["agents"]
        return cls(
            None if agents is None else tuple(uuid.UUID(str(a)) for a in agents), tuple(value["query_types"]),
            int(value["max_agents_per_job"]), int(value["quota"]), datetime.fromisoformat(value["expires_at"]),
            tuple(value.get("instruments", ())),
        )  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        """As stored with the project and in the audit log."""
        return {
            "agents": None if self.agents is None else [str(a) for a in self.agents],
            "query_types": list(self.query_types),
            "max_agents_per_job": self.max_agents_per_job,
            "quota": self.quota,
            "expires_at": self.expires_at.isoformat(),
            "instruments": list(self.instruments),
        }

    def expired(self, now: datetime | None = None) -> bool:
        return self.expires_at <= (now or datetime.now(UTC))

    def allows_instrument(self, ref: str) -> bool:
        """Whether the project may ask this version (``key@version``) of its own instrument."""
        return ref in self.instruments

    def covers(self, agent_id: uuid.UUID) -> bool:
        """Whether the project may ask this agent."""
        return self.agents is None or agent_id in self.agents

    @classmethod
    def narrowest(cls, scopes: Sequence[ProjectScope]) -> ProjectScope:
        """The scope every one of ``scopes`` allows; refused when they share no agent or query type."""
        agents: tuple[uuid.UUID, ...] | None = None
        for scope in scopes:
            if scope.agents is not None:
                agents = scope.agents if agents is None else tuple(a for a in agents if a in scope.agents)
        query_types = tuple(q for q in scopes[0].query_types if all(q in s.query_types for s in scopes))
        if agents == () or not query_types:
            kind = "agent" if agents == () else "query type"
            raise ConflictError(f"the approvals share no {kind}; approve a scope that overlaps")
        instruments = tuple(i for i in scopes[0].instruments if all(i in s.instruments for s in scopes))
        return cls(agents, query_types, min(s.max_agents_per_job for s in scopes), min(s.quota for s in scopes),
                   min(s.expires_at for s in scopes), instruments)  # fmt: skip

"""Principals and scopes: who is asking, and what they may ask for. Everything is denied by default."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Literal

from agentbank.audit.log import Actor
from agentbank.core.errors import AuthenticationRequiredError, PermissionDeniedError

AGGREGATE_READ = "aggregate:read"
PROJECTS_APPLY = "projects:apply"
INDIVIDUAL_QUERY = "individual:query"
REVIEW = "review"
ADMIN = "admin"
STUDIES = "studies"
SCOPES = (AGGREGATE_READ, PROJECTS_APPLY, INDIVIDUAL_QUERY, REVIEW, ADMIN, STUDIES)
SCOPE_HELP = {
    AGGREGATE_READ: "open tier: population distributions on fixed instruments",
    PROJECTS_APPLY: "apply for a restricted-tier project",
    INDIVIDUAL_QUERY: "restricted tier: jobs for approved projects one is a member of",
    REVIEW: "review project applications",
    ADMIN: "operate the bank: clients, audit checkpoints, population builds",
    STUDIES: "coordinate studies: invitations, each participant's stage and interview quality (never words, "
    "answers or contacts)",
}


@dataclass(frozen=True)
class Principal:
    """The caller of an operation: anonymous, an OAuth2 client, or a participant."""

    kind: Literal["anonymous", "client", "participant"]
    id: str = "anonymous"
    pk: uuid.UUID | None = None
    scopes: frozenset[str] = field(default_factory=frozenset)

    @property
    def actor(self) -> Actor:
        """How the audit log names this principal."""
        return Actor(self.kind, self.id)

    def require(self, scope: str) -> None:
        """Raise unless the principal holds ``scope``: 401 when anonymous, 403 otherwise."""
        if self.kind == "anonymous":
            raise AuthenticationRequiredError("this operation needs a bearer token")
        if scope not in self.scopes:
            raise PermissionDeniedError(f"this operation needs the {scope!r} scope")

    def require_participant(self) -> uuid.UUID:
        """The participant's id; raise unless the principal is a participant."""
        if self.kind == "anonymous":
            raise AuthenticationRequiredError("sign in with your access code")
        if self.kind != "participant" or self.pk is None:
            raise PermissionDeniedError("this operation is for participants")
        return self.pk


ANONYMOUS = Principal("anonymous")

"""Who may read and change a study: the client that owns it, or the operator.

The rule is applied in the query that loads a study, so a route cannot forget it: a study of another
owner is not found (404, the same answer as no study at all, so ids and names of other coordinators'
studies cannot be probed). A study gets its owner when it is created: the creating client through the
API, nobody (the operator) from the command line. Only the operator transfers a study, and the transfer is
audited.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import ColumnElement, select, true
from sqlalchemy.orm import Session

from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.core.errors import NotFoundError
from agentbank.core.statuses import ClientStatus
from agentbank.db.models import Client, Study


@dataclass(frozen=True)
class Holder:
    """Who acts on studies: a client (``client_pk``), or the operator (None), who reaches every study."""

    client_pk: uuid.UUID | None

    @property
    def is_operator(self) -> bool:
        return self.client_pk is None

    def condition(self) -> ColumnElement[bool]:
        """The studies this holder may read and change, as a condition on ``studies``."""
        return true() if self.client_pk is None else Study.owner_pk == self.client_pk


OPERATOR = Holder(None)


def of_client(client_pk: uuid.UUID) -> Holder:
    """A client acting on the studies it owns."""
    return Holder(client_pk)


def load(session: Session, holder: Holder, study_id: uuid.UUID, *, lock: bool = False) -> Study:
    """The study, if this holder may act on it; NotFoundError otherwise (also when it exists)."""
    query = select(Study).where(Study.id == study_id, holder.condition())
    study = session.scalars(query.with_for_update() if lock else query).first()
    if study is None:
        raise NotFoundError("there is no such study")
    return study


def listed(session: Session, holder: Holder) -> list[Study]:
    """The holder's studies, newest first."""
    query = select(Study).where(holder.condition()).order_by(Study.created_at.desc(), Study.name)
    return list(session.scalars(query))


def transfer(session: Session, study: Study, client_id: str | None, actor: audit.Actor) -> Study:
    """Give the study to the active client ``client_id`` (None: back to the operator); audited."""
    new_owner = None
    if client_id is not None:
        client = session.scalars(
            select(Client).where(Client.client_id == client_id, Client.status == ClientStatus.ACTIVE)
        ).first()
        if client is None:
            raise NotFoundError(f"no active client {client_id!r}")
        new_owner = client.id
    previous, study.owner_pk = study.owner_pk, new_owner
    session.flush()
    audit.record(
        session, actor, "study.transfer", Tier.ADMIN,
        details={"study": str(study.id), "from": str(previous) if previous else None, "to": client_id},
    )  # fmt: skip
    return study


__all__ = ["OPERATOR", "Holder", "listed", "load", "of_client", "transfer"]

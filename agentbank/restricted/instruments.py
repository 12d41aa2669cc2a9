"""A project's own instruments: versions its members add, reviewers approve by version, jobs ask.

A version once written never changes (the table is insert-only for the application): adding the same
key again makes the next version, unless nothing changed. Reviewers approve ``key@version`` as part of
the scope, so the items they read are the items a job asks; a job naming another version is refused,
at submission and again when an agent answers. Items are the team's, never shown in the open tier.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from enum import StrEnum
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentbank.access.principals import REVIEW, Principal
from agentbank.access.scope import ProjectScope
from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.core.errors import InvalidRequestError, NotFoundError
from agentbank.db.models import Project, TeamInstrument
from agentbank.instruments import load_instrument
from agentbank.instruments.model import Instrument
from agentbank.instruments.qsf import from_qsf
from agentbank.instruments.team import TeamInstrumentSpec, from_csv, from_json, split_ref, to_instrument
from agentbank.restricted.projects import OutOfScopeError, is_member


class Source(StrEnum):
    """How a team wrote its instrument."""

    JSON = "json"
    CSV = "csv"
    QSF = "qsf"


def is_team_ref(ref: str) -> bool:
    """Whether an instrument name is a team's version (``key@version``) rather than the bank's own."""
    return "@" in ref


def add_instrument(
    session: Session, principal: Principal, project_id: uuid.UUID, key: str, source: Source, content: str,
    title: str = "", preamble: str = "",
) -> TeamInstrument:  # fmt: skip
    """Check and keep a version of the project's instrument ``key`` (the latest again if nothing changed)."""
    if not is_member(session, principal, project_id):
        raise NotFoundError("no such project")
    session.get_one(Project, project_id, with_for_update=True)  # versions of one project are numbered in turn
    not_imported: list[str] = []
    if source is Source.JSON:
        spec = from_json(content)
    elif source is Source.CSV:
        if not title:
            raise InvalidRequestError("a sheet needs the instrument's title beside it")
        spec = from_csv(content, title, preamble)
    else:
        spec, not_imported = from_qsf(content)
    definition = spec.model_dump(mode="json")
    digest = hashlib.sha256(json.dumps(definition, sort_keys=True).encode()).hexdigest()
    latest = session.scalars(
        select(TeamInstrument).where(TeamInstrument.project_id == project_id, TeamInstrument.key == key)
        .order_by(TeamInstrument.version.desc()).limit(1)
    ).first()  # fmt: skip
    if latest is not None and latest.digest == digest:
        return latest
    version = TeamInstrument(
        project_id=project_id, key=key, version=(latest.version + 1) if latest else 1, definition=definition,
        digest=digest, source=source.value, not_imported=not_imported, created_by=principal.pk,
    )  # fmt: skip
    session.add(version)
    session.flush()
    audit.record(
        session, principal.actor, "project.instrument", Tier.RESTRICTED, project_id=project_id,
        details={"instrument": ref_of(version), "items": len(spec.items), "sha256": digest, "source": source.value},
    )  # fmt: skip
    return version


def ref_of(version: TeamInstrument) -> str:
    """How a job and an approval name this version."""
    return f"{version.key}@{version.version}"


def instrument_of(version: TeamInstrument) -> Instrument:
    """The version as the answering engine asks it."""
    spec = TeamInstrumentSpec.model_validate(version.definition)
    return to_instrument(ref_of(version), spec, f"a project's own instrument ({version.source})")


def project_instruments(session: Session, principal: Principal, project_id: uuid.UUID) -> list[TeamInstrument]:
    """Every version of the project's instruments, to its members and to reviewers (who approve them)."""
    if REVIEW not in principal.scopes and not is_member(session, principal, project_id):
        raise NotFoundError("no such project")
    if session.get(Project, project_id) is None:
        raise NotFoundError("no such project")
    query = select(TeamInstrument).where(TeamInstrument.project_id == project_id)
    return list(session.scalars(query.order_by(TeamInstrument.key, TeamInstrument.version)))


def instrument_for_job(session: Session, project: Project, ref: str, reference_dir: Path) -> Instrument:
    """The instrument a job of ``project`` asks: the bank's own, or an approved version of the project's."""
    if not is_team_ref(ref):
        return load_instrument(ref, reference_dir)
    scope = ProjectScope.stored(project.scope)
    if not scope.allows_instrument(ref):
        approved = ", ".join(scope.instruments) or "none"
        raise OutOfScopeError(f"the project is not approved for instrument {ref} (approved: {approved})")
    found = stored_instrument(session, project.id, ref)
    if found is None:  # approved versions are never removed
        raise NotFoundError(f"no instrument version {ref!r}")
    return found


def stored_instrument(session: Session, project_id: uuid.UUID, ref: str) -> Instrument | None:
    """A version of the project's instrument by its reference, approved or not (to label its answers)."""
    version = find_version(session, project_id, ref)
    return None if version is None else instrument_of(version)


def find_version(session: Session, project_id: uuid.UUID, ref: str) -> TeamInstrument | None:
    """The version ``key@version`` of the project's instrument, if it has it."""
    parts = split_ref(ref)
    if parts is None:
        return None
    query = select(TeamInstrument).where(
        TeamInstrument.project_id == project_id, TeamInstrument.key == parts[0], TeamInstrument.version == parts[1]
    )
    return session.scalars(query).first()

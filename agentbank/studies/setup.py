"""A study's settings: its name, script, target size, expiry and the panel it recruits from.

Panels append their own participant id to the study's link as a query parameter and take the person back
at the end with a completion code in a URL; ``Panel`` names the parameter each one uses. The code is the
panel's one code, written in the URL, or each participant's own, in the place of ``{code}`` (``completion``).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.core.errors import ConflictError, InvalidRequestError, NotFoundError
from agentbank.db.models import Study
from agentbank.studies.completion import CODE_FIELD, CompletionCodes


class Panel(StrEnum):
    """Where a study recruits from."""

    NONE = "none"  # invitations handed out by the coordinator
    PROLIFIC = "prolific"
    CLOUDRESEARCH = "cloudresearch"
    CUSTOM = "custom"  # a university pool or another panel: the parameter is named by the study


# The query parameter each panel appends to a study's link with its own id for the person.
PANEL_PARAMS: dict[Panel, str | None] = {
    Panel.NONE: None,
    Panel.PROLIFIC: "PROLIFIC_PID",
    Panel.CLOUDRESEARCH: "participantId",
    Panel.CUSTOM: None,
}
MAX_TARGET = 100_000


@dataclass(frozen=True)
class StudyPlan:
    """What a coordinator asks for when creating a study."""

    name: str
    script_key: str
    script_version: int
    target_size: int
    expires_at: datetime
    panel: Panel = Panel.NONE
    panel_param: str | None = None  # only for a custom panel; the others name their own
    completion_url: str | None = None  # where the interview's end sends a panel's participant back
    retest_completion_url: str | None = None  # and where the retest's end does
    completion_codes: CompletionCodes = CompletionCodes.PANEL  # the panel's one code, or each participant's own


def create_study(
    session: Session, plan: StudyPlan, actor: audit.Actor, now: datetime, owner_pk: uuid.UUID | None = None
) -> Study:
    """A new study owned by client ``owner_pk`` (None: the operator's); refused when the name is taken, the
    expiry is past or a panel lacks what it needs."""
    name = " ".join(plan.name.split())
    if not name:
        raise InvalidRequestError("a study needs a name")
    if not 1 <= plan.target_size <= MAX_TARGET:
        raise InvalidRequestError(f"the target size must be between 1 and {MAX_TARGET}")
    if plan.expires_at <= now:
        raise InvalidRequestError("the study's expiry is already past")
    param = PANEL_PARAMS[plan.panel] or plan.panel_param
    if plan.panel == Panel.CUSTOM and not param:
        raise InvalidRequestError("a custom panel needs the name of the parameter that carries its id")
    urls = [url for url in (plan.completion_url, plan.retest_completion_url) if url is not None]
    if any(not url.startswith(("https://", "http://")) for url in urls):
        raise InvalidRequestError("a completion URL must be an http(s) address")
    _check_codes(plan.completion_codes, urls)
    study = Study(
        id=uuid.uuid4(), name=name, script_key=plan.script_key, script_version=plan.script_version,
        target_size=plan.target_size, expires_at=plan.expires_at, panel=plan.panel, panel_param=param,
        completion_url=plan.completion_url, retest_completion_url=plan.retest_completion_url, owner_pk=owner_pk,
        completion_codes=plan.completion_codes,
    )  # fmt: skip
    session.add(study)
    try:
        with session.begin_nested():
            session.flush()
    except IntegrityError:
        raise ConflictError(f"a study named {name!r} exists already") from None
    audit.record(
        session,
        actor,
        "study.create",
        Tier.ADMIN,
        details={"study": str(study.id), "target_size": plan.target_size, "panel": str(plan.panel),
                 "completion_codes": str(plan.completion_codes)},
    )  # fmt: skip
    return study


def _check_codes(codes: CompletionCodes, urls: list[str]) -> None:
    """Each participant's own code needs a completion URL with one place for it, and the panel's one code none."""
    if codes == CompletionCodes.PER_PARTICIPANT:
        if not urls or any(url.count(CODE_FIELD) != 1 for url in urls):
            raise InvalidRequestError(
                f"each participant's own completion code needs a completion URL with {CODE_FIELD} where it goes",
                hint=f"e.g. https://app.prolific.com/submissions/complete?cc={CODE_FIELD}",
            )
    elif any(CODE_FIELD in url for url in urls):
        raise InvalidRequestError(f"{CODE_FIELD} in a completion URL asks for each participant's own code",
                                  hint="create the study with per-participant completion codes")  # fmt: skip


def find_study(session: Session, name_or_id: str) -> Study:
    """The study by its name or its id, or NotFoundError: the operator's look-up, over every owner's studies
    (a client's goes through ``ownership.load``)."""
    try:
        query = select(Study).where(Study.id == uuid.UUID(name_or_id))
    except ValueError:
        query = select(Study).where(Study.name == " ".join(name_or_id.split()))
    found = session.scalars(query.limit(2)).all()
    if not found:
        raise NotFoundError("there is no such study")
    if len(found) > 1:  # names are unique per owner only
        raise ConflictError(f"{len(found)} coordinators have a study named {name_or_id!r}", hint="name it by its id")
    return found[0]

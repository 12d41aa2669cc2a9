"""A study as files: the invitations just issued (codes and links, to mail-merge or upload to a panel) and
its progress (stages, times and quality counts by invitation number; no words, answers or contacts)."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from datetime import datetime

from sqlalchemy.orm import Session

from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.db.models import Study
from agentbank.studies.invitations import Issued
from agentbank.studies.stages import progress

PROGRESS_COLUMNS = (
    "invitation",
    "stage",
    "since",
    "module",
    "modules",
    "duration_s",
    "budget_s",
    "answers",
    "words_per_answer",
    "follow_up_share",
    "audio_flags",
    "flags",
    "has_contact",
    "reminded_at",
)


def invitation_link(base: str, code: str) -> str:
    """The interview page's link carrying one invitation code (in the fragment, so no server logs it)."""
    return f"{base.rstrip('/')}/interview#invite={code}"


def open_link(base: str, study: Study, code: str) -> str:
    """The study's one link for a panel, which appends its own id for the person after it; ``id_param``
    tells the page which of the appended parameters is that id."""
    link = f"{base.rstrip('/')}/interview?study={code}"
    return f"{link}&id_param={study.panel_param}" if study.panel_param else link


def invitations_csv(issued: list[Issued], link_of: Callable[[str], str]) -> str:
    """One row per invitation: its number, its code and the link that carries it."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("invitation", "code", "link"))
    writer.writerows((i.id, i.code, link_of(i.code)) for i in issued)
    return out.getvalue()


def progress_csv(session: Session, study: Study, now: datetime, actor: audit.Actor) -> str:
    """The study's participants by stage, one row each (withdrawals only in the counts: they have no row)."""
    standing = progress(session, study, now)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(PROGRESS_COLUMNS)
    for s in standing.standings:
        q = s.quality
        writer.writerow((
            s.invitation, s.stage, s.since.isoformat() if s.since else "", s.module or "", s.modules or "",
            *((q.duration_s, q.budget_s, q.answers, _blank(q.words_per_answer), _blank(q.follow_up_share),
               q.audio_flags, " ".join(q.flags)) if q else ("",) * 7),
            "yes" if s.has_contact else "no", s.reminded_at.isoformat() if s.reminded_at else "",
        ))  # fmt: skip
    audit.record(session, actor, "study.export", Tier.ADMIN,
                 details={"study": str(study.id), "rows": len(standing.standings)})  # fmt: skip
    return out.getvalue()


def _blank(value: float | None) -> object:
    return "" if value is None else value

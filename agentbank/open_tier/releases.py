"""Releases: the open tier answers from frozen populations, never from live counts.

Comparing a table before and after one withdrawal (or one new agent) would show that person's answer
to every item. So the open tier shows only releases: a release freezes the population's answers (as
counts per demographic profile and code, with no agent ids) and is cut only when every kind of change
since the last one hides among at least k people: 0 or at least k agents joined, and 0 or at least k
left. A withdrawn agent leaves the next release; until then its answers remain only inside the
current release's counts, which are never shown unprotected.

Each release's overall and one-way tables are protected when it is cut, off the request path; a
two-way table is protected once, by a worker, on its first request, and served as stored after that.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlalchemy import delete, func, insert, select, text
from sqlalchemy.orm import Session

from agentbank.audit import log as audit
from agentbank.db.models import Agent, Participant, PopulationAnswer, Release, ReleaseCount, ReleaseMember
from agentbank.db.queue import enqueue
from agentbank.errors import InvalidRequestError, NotFoundError
from agentbank.instruments.model import Instrument
from agentbank.open_tier.breakdowns import BREAKDOWNS
from agentbank.open_tier.distributions import (
    DIMENSIONS,
    Distribution,
    ReleaseTables,
    as_distribution,
    checked_request,
)
from agentbank.open_tier.distributions import item_codes as codes_of
from agentbank.open_tier.population import POPULATION_QUEUE
from agentbank.open_tier.tables import store_table, stored_tables
from agentbank.open_tier.weighting.estimates import WeightedTable
from agentbank.open_tier.weighting.releases import release_counts, release_weights, weights_about
from agentbank.open_tier.weighting.targets import Targets, default_targets

RELEASE_LOCK = 0x72656C73  # "rels": one cut at a time
TABLE_TASK = "agentbank.release_table"
TABLE_QUEUE = POPULATION_QUEUE  # the open tier's work shares one queue
RETRY_AFTER_S = 5


class NoReleaseError(NotFoundError):
    """The open tier has no release yet."""

    code = "no_release"


@dataclass(frozen=True)
class Changes:
    """Who joined and who left the population since the last release."""

    agents: int
    joined: int
    left: int
    first: bool
    # Members of both whose answers differ (re-answered, or new items): each would show in a difference.
    changed: int = 0

    def blocker(self, k: int) -> str | None:
        """Why no release may be cut now (None: one may)."""
        if self.first:
            return None if self.joined >= k else f"{self.joined} agents have answered; the first release needs {k}"
        if not self.joined and not self.left and not self.changed:
            return "nothing changed since the last release"
        for count, verb in ((self.joined, "joined"), (self.left, "left"), (self.changed, "changed their answers")):
            if 0 < count < k:
                return f"{count} agent(s) {verb} since the last release; a release needs none or at least {k}"
        return None


@dataclass(frozen=True)
class Preparing:
    """A table the worker is protecting now; ask again after ``retry_after`` seconds."""

    release: int
    retry_after: int = RETRY_AFTER_S


def current_release(session: Session) -> Release | None:
    """The newest release (the one every open-tier response comes from)."""
    return session.scalars(select(Release).order_by(Release.id.desc()).limit(1)).first()


# Every active, consenting agent with answers, and a digest of its coded answers.
MEMBERS = text(
    "SELECT a.id, md5(string_agg(pa.instrument || ':' || pa.item || '=' || coalesce(pa.code::text, ''), ',' "
    "ORDER BY pa.instrument, pa.item)) FROM agents a JOIN participants p ON p.id = a.participant_id "
    "JOIN population_answers pa ON pa.agent_id = a.id WHERE a.status = 'active' AND p.consent = 'consented' "
    "GROUP BY a.id"
)


def pending_changes(session: Session) -> tuple[Release | None, dict[uuid.UUID, str], Changes]:
    """The current release, the agents a release cut now would hold (with a digest of their answers),
    and the changes between them. A rebuilt agent is a new agent: one left, one joined."""
    release = current_release(session)
    members: dict[uuid.UUID, str] = {agent: digest for agent, digest in session.execute(MEMBERS)}
    before: dict[uuid.UUID, str] = {}
    if release is not None:
        before = dict(
            session.execute(
                select(ReleaseMember.agent_id, ReleaseMember.answers_digest).where(
                    ReleaseMember.release_id == release.id
                )
            ).all()
        )
    changed = sum(1 for agent, digest in members.items() if agent in before and before[agent] != digest)
    return (
        release,
        members,
        Changes(
            len(members),
            len(members.keys() - before.keys()),
            len(before.keys() - members.keys()),
            release is None,
            changed,
        ),
    )


@dataclass(frozen=True)
class CutOutcome:
    """A new release, or why none was cut."""

    release: Release | None
    changes: Changes
    reason: str | None = None


def cut_release(
    session: Session,
    instruments: Callable[[str], Instrument],
    k: int,
    actor: audit.Actor,
    *,
    force: bool = False,
    targets: Targets | None = None,
) -> CutOutcome:
    """Cut a release if the policy allows (or ``force``, audited as such), with its one-way tables and
    its members' weights, raked to ``targets`` (the GSS margins by default).

    ``instruments`` loads an instrument by key (the codes of its items).
    """
    session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": RELEASE_LOCK})
    previous, members, changes = pending_changes(session)
    reason = changes.blocker(k)
    if reason and not (force and members):
        return CutOutcome(None, changes, reason)
    release = Release(agents=len(members), joined=changes.joined, left=changes.left, k=k, cut_by=actor.id[:100],
                      dimensions=list(DIMENSIONS))  # fmt: skip
    release.weights = release_weights(session, set(members), targets or default_targets())
    session.add(release)
    session.flush()
    session.execute(
        insert(ReleaseMember),
        [{"release_id": release.id, "agent_id": a, "answers_digest": d} for a, d in members.items()],
    )
    profiles = _snapshot(session, release.id, set(members))
    for (instrument_key, item_key), counts in profiles.items():
        try:
            item = instruments(instrument_key).item(item_key)
        except KeyError:  # an item the instrument's current version no longer has: nothing to show
            continue
        tables = ReleaseTables(tuple(c for c, _ in codes_of(item)), k, counts)
        for dims in [(), *((d,) for d in DIMENSIONS)]:
            store_table(session, release, instrument_key, item_key, dims, tables.protect(dims), counts)
    if previous is not None:
        # The previous release stays for requests already reading it; older ones and its members go.
        session.execute(delete(Release).where(Release.id < previous.id))
        session.execute(delete(ReleaseMember).where(ReleaseMember.release_id == previous.id))
    audit.record(session, actor, "release.cut", "open", details={
        "release": release.id, "agents": release.agents, "joined": changes.joined, "left": changes.left,
        "changed": changes.changed, "forced": bool(reason)})  # fmt: skip
    return CutOutcome(release, changes)


def _snapshot(
    session: Session, release_id: int, members: set[uuid.UUID]
) -> dict[tuple[str, str], dict[tuple[tuple[str, ...], int], int]]:
    """Freeze the members' answers as counts by profile and code; returns them by item."""
    rows = session.execute(
        select(PopulationAnswer.instrument, PopulationAnswer.item, PopulationAnswer.code, Participant.demographics)
        .join(Agent, Agent.id == PopulationAnswer.agent_id)
        .join(Participant, Participant.id == Agent.participant_id)
        .where(PopulationAnswer.agent_id.in_(members), PopulationAnswer.code.is_not(None))
    ).all()
    counted = Counter(
        (instrument, item, tuple(BREAKDOWNS[d].classify(demo) for d in DIMENSIONS), code)
        for instrument, item, code, demo in rows
    )
    if counted:
        session.execute(
            insert(ReleaseCount),
            [
                {"release_id": release_id, "instrument": i, "item": it, "cell": list(p), "code": c, "count": n}
                for (i, it, p, c), n in counted.items()
            ],
        )
    by_item: dict[tuple[str, str], dict[tuple[tuple[str, ...], int], int]] = {}
    for (instrument, item, profile, code), n in counted.items():
        by_item.setdefault((instrument, item), {})[(profile, code)] = n
    return by_item


def open_table(
    session: Session, instrument: Instrument, item_key: str, breakdowns: Sequence[str]
) -> Distribution | Preparing:
    """A protected table of the current release, or ``Preparing`` while a worker protects it."""
    item, requested = checked_request(instrument, item_key, list(breakdowns))
    dims = tuple(d for d in DIMENSIONS if d in requested)
    release = current_release(session)
    if release is None:
        raise NoReleaseError(
            "the open tier has no release yet", hint="a release is cut once enough agents have answered"
        )
    later = [d for d in dims if d not in release.dimensions]
    if later:
        raise InvalidRequestError(
            f"release {release.id} was cut before the breakdown {later[0]!r} existed; it shows from the next release on"
        )
    weighted: dict[str, WeightedTable] = {}
    stored = stored_tables(session, release.id, instrument.key, item.key, ["", ",".join(dims)], weighted)
    if "" not in stored:
        raise NotFoundError(f"no agent of release {release.id} answered {instrument.key}/{item.key}")
    if ",".join(dims) not in stored:
        _queue_table(session, release.id, instrument.key, item.key, dims)
        return Preparing(release.id)
    total, key = stored[""][((), None)], ",".join(dims)
    return as_distribution(
        release.id, instrument, item, dims, release.k, stored[key], total,
        members=release.agents, weighted=weighted.get(key), weights=weights_about(release),
    )  # fmt: skip


def protect_table(
    session: Session, instrument: Instrument, release_id: int, item_key: str, dims: Sequence[str]
) -> None:
    """Protect one table of a release against every table it already shows of the item, and store it."""
    # One table of an item at a time: each is checked against all the ones before it.
    session.execute(text("SELECT pg_advisory_xact_lock(:key, hashtext(:item))"),
                    {"key": RELEASE_LOCK, "item": f"{release_id}:{instrument.key}:{item_key}"})  # fmt: skip
    release = session.get(Release, release_id)
    if release is None:
        return  # a newer release replaced it; the request will ask that one
    item = instrument.item(item_key)
    stored = stored_tables(session, release_id, instrument.key, item_key, None)
    if ",".join(dims) in stored:
        return
    counts = release_counts(session, release_id, instrument.key, item_key)
    tables = ReleaseTables(tuple(c for c, _ in codes_of(item)), release.k, counts, tuple(release.dimensions))
    for key, released in stored.items():
        tables.add(tuple(key.split(",")) if key else (), released)
    store_table(session, release, instrument.key, item_key, tuple(dims), tables.protect(tuple(dims)), counts)


def _queue_table(session: Session, release_id: int, instrument: str, item: str, dims: tuple[str, ...]) -> None:
    args = {"release_id": release_id, "instrument": instrument, "item": item, "breakdowns": list(dims)}
    queued = session.scalar(
        text("SELECT 1 FROM procrastinate_jobs WHERE task_name = :task AND status IN ('todo', 'doing') "
             "AND args = CAST(:args AS jsonb)"),
        {"task": TABLE_TASK, "args": json.dumps(args)},
    )  # fmt: skip
    if not queued:
        enqueue(session, TABLE_QUEUE, TABLE_TASK, [args])


def release_count(session: Session) -> int:
    """How many releases are kept (the current one, and the previous while requests may read it)."""
    return session.scalar(select(func.count()).select_from(Release)) or 0

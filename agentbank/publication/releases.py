"""Releases: the open tier answers from protected snapshots, never from live counts.

A release is cut by a worker (on its schedule, or when an operator asks), never inside a request: its
members' sealed answers, demographics and validity are opened in memory, the tables of its workload
(``workload``: the standing tables of every item and those researchers asked for) are counted and
protected at once (``protection``, with the noise of ``privacy``), and only the protected figures are
stored, with what the release cost. No row per person is kept. Each member's own audit log gets one event
saying their agent's answers are part of the release (which items, what budget), written with the cut;
reading the release later is no use of an agent (``publication``: its files are read with no audit event).

The cadence and its guarantee: a new release is cut when its members or their answers changed (a digest of
their sealed data says so) or a table was asked for, at most once per ``min_interval_s`` (30 days by
default). The lifetime budget is sized to a horizon (``Budget.for_horizon``: five years by default), so a
member who stays is in every release cut in those five years: at most one a month makes at most 61, and
61 releases at mu 1 spend mu 7.8. A cut an operator forces skips the wait and spends like any other, so
forced cuts shorten that horizon; a member whose lifetime budget a release would pass is left out of it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np
from sqlalchemy import delete, func, select, text
from sqlalchemy.orm import Session

from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.core.errors import InvalidRequestError, NotFoundError
from agentbank.core.settings import Settings
from agentbank.db.models import Release, ReleaseTable, ReleaseValidity
from agentbank.db.queue import enqueue
from agentbank.instruments.model import Instrument
from agentbank.keys.crypto import KeyRing
from agentbank.publication.distributions import DIMENSIONS, Distribution, as_distribution, checked_request, item_codes
from agentbank.publication.members import Members, load_members
from agentbank.publication.population import POPULATION_QUEUE
from agentbank.publication.privacy import SHARES, Budget, Noise, OpenDPNoise, Scales, ledger
from agentbank.publication.protection import protect_item, protect_validity
from agentbank.publication.tables import store_tables, store_validity, stored_tables
from agentbank.publication.weighting.releases import release_weights, weights_about
from agentbank.publication.weighting.targets import Targets, default_targets
from agentbank.publication.workload import STANDING, load_workload, mark_measured, standing_of

log = logging.getLogger(__name__)

RELEASE_LOCK = 0x72656C73  # "rels": one cut at a time
TABLE_QUEUE = POPULATION_QUEUE  # the open tier's work shares one queue
CUT_TASK = "agentbank.cut_release_now"  # a cut an operator asked for, carried out by a worker


class NoReleaseError(NotFoundError):
    """The open tier has no release yet."""

    code = "no_release"


@dataclass(frozen=True)
class Policy:
    """When a release may be cut, and what it may spend. ``demo``: the demo's own settings for a bank of
    fictional people only (``runtime.demo_settings``), stated with every release cut under them."""

    k: int
    budget: Budget = field(default_factory=Budget)
    min_interval_s: float = 30 * 86_400.0
    demo: bool = False
    standing: tuple[str, ...] = STANDING  # the breakdowns every release measures
    reserve: float = SHARES["asked"]  # the share of mu² kept for asked tables

    @classmethod
    def of(cls, settings: Settings) -> Policy:
        """The policy the settings name (a lifetime budget sized to the horizon unless one is set)."""
        mu, cap = settings.release_mu, settings.release_weight_cap
        budget = (Budget(mu, settings.release_lifetime_mu, cap) if settings.release_lifetime_mu is not None
                  else Budget.for_horizon(mu, settings.release_horizon_days, settings.release_min_interval_s / 86_400,
                                          cap))  # fmt: skip
        standing = standing_of(settings.release_standing_breakdowns, DIMENSIONS)
        return cls(settings.suppression_k, budget, settings.release_min_interval_s, standing=standing,
                   reserve=settings.release_reserve_share)  # fmt: skip


@dataclass(frozen=True)
class Pending:
    """What a cut now would hold, and why it may not happen yet."""

    members: int
    left_out: int  # members whose lifetime budget this release would pass
    first: bool
    changed: bool
    since_last_s: float | None
    asked: int = 0  # tables researchers asked for that no release has measured yet

    def blocker(self, policy: Policy, *, force: bool = False) -> str | None:
        """Why no release may be cut now (None: one may). ``force`` skips the wait, never the budget or k."""
        if self.members < policy.k:
            left_out = f" ({self.left_out} more have spent their privacy budget)" if self.left_out else ""
            return f"{self.members} agents can be released{left_out}; a release needs {policy.k}"
        if force or self.first:
            return None
        if not self.changed and not self.asked:
            return "nothing changed since the last release"
        if self.since_last_s is not None and self.since_last_s < policy.min_interval_s:
            wait = policy.min_interval_s - self.since_last_s
            ago = self.since_last_s / 3600
            return f"the last release was cut {ago:.1f} h ago; the next may be cut in {wait / 3600:.1f} h"
        return None


@dataclass(frozen=True)
class CutOutcome:
    """A new release, or why none was cut."""

    release: Release | None
    pending: Pending
    reason: str | None = None


def current_release(session: Session) -> Release | None:
    """The newest release (the one every open-tier response comes from)."""
    return session.scalars(select(Release).order_by(Release.id.desc()).limit(1)).first()


def pending_release(session: Session, keys: KeyRing, policy: Policy) -> tuple[Members, Pending]:
    """The members a cut now would hold (their budget left), and how they differ from the last release."""
    members = load_members(session, keys, DIMENSIONS)
    spent = _spent(session, members.joined)
    within = spent + policy.budget.mu**2 <= policy.budget.lifetime_mu**2 + 1e-9
    latest = current_release(session)
    since = (datetime.now(UTC) - latest.cut_at).total_seconds() if latest is not None else None
    changed = latest is None or latest.state_digest != members.digest
    # Only asked tables the next cut would measure make one due: one displaced by newer requests does not.
    asked = load_workload(session, policy.standing, DIMENSIONS).waiting
    pending = Pending(int(within.sum()), int((~within).sum()), latest is None, changed, since, asked)
    return members.keep(within), pending


def cut_release(
    session: Session, keys: KeyRing, instruments: Callable[[str], Instrument], policy: Policy, actor: audit.Actor,
    *, force: bool = False, targets: Targets | None = None, noise: Noise | None = None,
) -> CutOutcome:  # fmt: skip
    """Cut a release if the policy allows (``force``: now, audited as such): every table of every item,
    its weights and its items' validity, protected with the release's noise."""
    started = time.perf_counter()
    session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": RELEASE_LOCK})
    members, pending = pending_release(session, keys, policy)
    reason = pending.blocker(policy, force=force)
    if reason is not None:
        return CutOutcome(None, pending, reason)
    noise = noise or OpenDPNoise()
    scales = Scales.of(policy.budget, len(policy.standing), policy.reserve)
    workload = load_workload(session, policy.standing, DIMENSIONS)
    weights = release_weights(members.profiles, DIMENSIONS, targets or default_targets(), noise, scales.margins,
                              policy.budget.weight_cap)  # fmt: skip
    items = sorted(members.answers)
    cost = ledger(policy.budget, scales, policy.standing, len(items), workload.asked_count(), pending.left_out,
                  demo_settings=policy.demo)  # fmt: skip
    stated = int(noise.counts(np.array([len(members)]), scales.members)[0])
    release = Release(agents=max(stated, 0), k=policy.k, cut_by=actor.id[:100], dimensions=list(DIMENSIONS),
                      weights=weights.about, privacy=cost.to_json(), mu=policy.budget.mu,
                      state_digest=members.digest)  # fmt: skip
    session.add(release)
    session.flush()
    loaded: dict[str, Instrument] = {}
    tables = 0
    released: list[tuple[str, str]] = []
    for instrument_key, item_key in items:
        instrument = loaded.setdefault(instrument_key, instruments(instrument_key))
        try:
            item = instrument.item(item_key)
            codes = tuple(code for code, _ in item_codes(item))
        except (KeyError, InvalidRequestError):  # an item the instrument no longer has, or one without codes
            continue
        measured = workload.tables(instrument_key, item.key)
        protected = protect_item(members, instrument_key, item, codes, scales, noise, weights, measured,
                                 policy.standing)  # fmt: skip
        stored = store_tables(session, release.id, instrument_key, item_key, protected)
        tables += stored
        if stored:
            released.append((instrument_key, item_key))
    for instrument_key, validity in members.validity.items():
        figures = [protect_validity(flags, item, scales, noise) for item, flags in sorted(validity.flags.items())]
        store_validity(session, release.id, instrument_key, figures, baseline=validity.baseline, model=validity.model,
                       run_id=validity.run_id, measured_at=validity.measured_at)  # fmt: skip
    mark_measured(session, workload, release.id)
    _drop_older_tables(session, release.id)
    told = _tell_members(session, actor, release, members, released, policy)
    audit.record(session, actor, "release.cut", Tier.OPEN, details={
        "release": release.id, "tables": tables, "mu": policy.budget.mu, "forced": bool(force),
        "asked_tables": workload.asked_count(), "members_told": told,
        "seconds": round(time.perf_counter() - started, 1)})  # fmt: skip
    # Heard when the cut commits by every API process, which then publishes it (as the worker does after).
    session.execute(text("SELECT pg_notify('agentbank_release', :id)"), {"id": str(release.id)})
    log.info("cut release %d: %d tables in %.1f s", release.id, tables, time.perf_counter() - started)
    return CutOutcome(release, pending)


def _tell_members(
    session: Session, actor: audit.Actor, release: Release, members: Members, released: list[tuple[str, str]],
    policy: Policy,
) -> int:  # fmt: skip
    """One event in each member's own audit log: their agent's answers are part of this release, with the items
    it holds of theirs (by instrument) and what the release spends of their budget."""
    held: dict[str, np.ndarray] = {}
    for instrument, item in released:
        counted = members.answers[(instrument, item)] >= 0
        held[instrument] = held.get(instrument, np.zeros(len(members), dtype=np.int64)) + counted
    events = []
    for row, (agent_id, participant_id) in enumerate(members.ids):
        items = {instrument: int(counts[row]) for instrument, counts in held.items() if counts[row]}
        if items:
            purpose = (f"your agent's answers are part of open-tier release {release.id}, as noisy counts only, "
                       f"each answer protected at mu {policy.budget.mu} (your lifetime budget: mu "
                       f"{policy.budget.lifetime_mu:.2f})")  # fmt: skip
            events.append({"agent_id": agent_id, "participant_id": participant_id, "details": {
                "release": release.id, "instrument": sorted(items), "items": items, "mu": policy.budget.mu,
                "lifetime_mu": policy.budget.lifetime_mu, "purpose": purpose}})  # fmt: skip
    return audit.record_many(session, actor, "release.member", Tier.OPEN, events)


def request_cut(session: Session, actor: audit.Actor, *, force: bool = False) -> None:
    """Ask a worker to cut a release now (``force``: without waiting for the interval), audited. A cut
    takes its time (every table of every item), so no request or command waits inside one."""
    enqueue(session, TABLE_QUEUE, CUT_TASK, [{"force": force, "actor_kind": actor.kind, "actor_id": actor.id}])
    audit.record(session, actor, "release.request", Tier.OPEN, details={"forced": force})


def cut_pending(session: Session) -> bool:
    """Whether a requested cut is still waiting for a worker or being carried out."""
    return bool(session.scalar(
        text("SELECT 1 FROM procrastinate_jobs WHERE task_name = :task AND status IN ('todo', 'doing') LIMIT 1"),
        {"task": CUT_TASK},
    ))  # fmt: skip


def _spent(session: Session, joined: np.ndarray) -> np.ndarray:
    """What each member has spent already (mu**2 summed over the releases cut since their agent was built)."""
    ledger_rows = session.execute(select(Release.cut_at, Release.mu)).all()
    spent = np.zeros(len(joined))
    for cut_at, mu in ledger_rows:
        spent += np.where(joined <= cut_at.timestamp(), mu**2, 0.0)
    return spent


def _drop_older_tables(session: Session, newest: int) -> None:
    """The previous release's tables stay for requests already reading them; older ones go (their ledger
    rows stay)."""
    previous = session.scalar(select(Release.id).where(Release.id < newest).order_by(Release.id.desc()).limit(1))
    if previous is not None:
        session.execute(delete(ReleaseTable).where(ReleaseTable.release_id < previous))
        session.execute(delete(ReleaseValidity).where(ReleaseValidity.release_id < previous))


NO_RELEASE_YET = (
    "the open tier has no release yet: one is cut once enough agents have answered (GET /v1/status says "
    "how many have, and how many the first release needs)"
)


def release_in_force(session: Session, release_id: int | None = None) -> Release:
    """The current release (or the one named, as a read that already chose it asks), or ``NoReleaseError``
    while there is none."""
    release = current_release(session) if release_id is None else session.get(Release, release_id)
    if release is None:
        raise NoReleaseError(NO_RELEASE_YET)
    return release


def table_request(instrument: Instrument, item_key: str, breakdowns: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """The item and the breakdowns (in the release's order) of a table request, or a clear error."""
    item, requested = checked_request(instrument, item_key, list(breakdowns))
    return item.key, tuple(d for d in DIMENSIONS if d in requested)


def open_table(
    session: Session, instrument: Instrument, item_key: str, breakdowns: Sequence[str], release_id: int | None = None
) -> Distribution:
    """A protected table of the current release, or of the release named (publishing a release builds its
    files from that one, even if a newer release was committed since)."""
    item, requested = checked_request(instrument, item_key, list(breakdowns))
    dims = tuple(d for d in DIMENSIONS if d in requested)
    release = release_in_force(session, release_id)
    later = [d for d in dims if d not in release.dimensions]
    if later:
        raise InvalidRequestError(
            f"release {release.id} was cut before the breakdown {later[0]!r} existed; it shows from the next release on"
        )
    key = ",".join(dims)
    stored = stored_tables(session, release.id, instrument.key, item.key, ["", key])
    if key not in stored:
        raise NotFoundError(f"no agent of release {release.id} answered {instrument.key}/{item.key}")
    return as_distribution(
        release.id, instrument, item, dims, release.k, stored[key], stored[""], members=release.agents,
        weights=weights_about(release.weights), mu=release.mu, demo_settings=bool(release.privacy.get("demo_settings")),
    )  # fmt: skip


def next_cut_after(session: Session, policy: Policy) -> datetime:
    """The earliest time the next release may be cut under ``policy`` (a queued table waits for it)."""
    latest = current_release(session)
    now = datetime.now(UTC)
    return now if latest is None else max(now, latest.cut_at + timedelta(seconds=policy.min_interval_s))


def release_count(session: Session) -> int:
    """How many releases were ever cut (the ledger keeps every one)."""
    return session.scalar(select(func.count()).select_from(Release)) or 0

"""The bank's state in counts, for its front page and the explorer: how far along it is, in words anyone reads.

Only counts of agents and builds, and what the release in force states about itself, are here: no
pseudonym, no id, no answer, nothing about any one person. Exact live counts would still tell a watcher
the size of every withdrawal and retest as it happens, so what anyone may read is rounded up to tens
(``BankState.rounded``); the operator, and a bank of the demo's fictional people, see them exact. The
open tier protects each answer on its own (every figure about answers carries a release's noise).
Everything is read from the clear columns: nothing is decrypted, so the route that serves it stays cheap.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy import distinct, func, select
from sqlalchemy.orm import Session

from agentbank.building.progress import build_counts, new_agents_in_build
from agentbank.core.settings import Settings
from agentbank.core.statuses import AgentStatus, ConsentStatus
from agentbank.db.models import Agent, Participant, PopulationAnswer, ReportCard
from agentbank.publication.members import VALIDITY_CONDITION
from agentbank.publication.releases import Policy, current_release
from agentbank.runtime.demo_settings import DEMO_SETTINGS, DemoSettings, is_demo_bank

ROUND_TO = 10


@dataclass(frozen=True)
class ReleaseState:
    """What the release in force states about itself (its member count carries its noise)."""

    id: int
    cut_at: datetime
    members: int
    k: int
    mu: float
    demo_settings: bool


@dataclass(frozen=True)
class BankState:
    """Counts of the bank's agents and builds, its release or what the first one waits for, and the demo's
    settings where the bank holds only fictional people."""

    participants: int
    agents: int  # active agents of consenting participants
    building: int  # agents coming: builds queued or running for participants with no active agent yet
    failed: int  # builds that used up their attempts
    answered: int  # agents whose answers the open tier may count
    carded: int  # agents with a validity card (their interview scored against their own person)
    release: ReleaseState | None
    needed: int  # agents the first release needs (the k of the policy in force)
    min_interval_s: float
    demo: DemoSettings | None
    exact: bool = True  # False once ``rounded``

    def rounded(self) -> BankState:
        """The same with every live count rounded up to tens (none stays 0, some stays above 0)."""
        counts = ("participants", "agents", "building", "failed", "answered", "carded")
        return replace(self, exact=False, **{name: -(-getattr(self, name) // ROUND_TO) * ROUND_TO for name in counts})

    def _n(self, n: int) -> str:
        return str(n) if self.exact or n == 0 else f"up to {n}"

    def agents_words(self) -> str:
        """The agents' state in one sentence."""
        failed = f", and {self._n(self.failed)} could not be built (`agentbank status` says why)" if self.failed else ""
        carded = "none has" if not self.carded else f"{self._n(self.carded)} {'has' if self.carded == 1 else 'have'}"
        agents = f"{self._n(self.agents)} agent{'' if self.agents == 1 else 's'}"
        rounded = "" if self.exact else " (counts rounded up to tens)"
        return (f"{agents} built and {self._n(self.building)} being built{failed}; {carded} a validity card "
                f"(scored against their own person's answers){rounded}.")  # fmt: skip

    def release_words(self) -> str:
        """The open tier's state in one sentence."""
        release = self.release
        if release is not None:
            settings = " under the demo's settings" if release.demo_settings else ""
            return (f"Release {release.id} of the open tier is in force{settings}: about {release.members} agents "
                    f"(a count with noise), each answer protected at mu = {release.mu:g}, groups shown from "
                    f"k = {release.k}.")  # fmt: skip
        if self.answered < self.needed:
            return (f"The open tier has no release yet: {self._n(self.answered)} of the {self.needed} agents the first "
                    "release needs have answered.")  # fmt: skip
        return (f"The open tier has no release yet: {self._n(self.answered)} agents have answered, enough for the "
                "first release, which a worker cuts at its next check.")  # fmt: skip


def bank_state(session: Session, settings: Settings) -> BankState:
    """The bank's state now, from counts alone."""
    consenting = Participant.consent == ConsentStatus.CONSENTED
    active = select(Agent.id).join(Participant, Participant.id == Agent.participant_id)
    active = active.where(Agent.status == AgentStatus.ACTIVE, consenting)
    agents = _count(session, select(func.count()).select_from(active.subquery()))
    answered = _count(session, select(func.count(distinct(PopulationAnswer.agent_id)))
                      .where(PopulationAnswer.agent_id.in_(active)))  # fmt: skip
    carded = _count(session, select(func.count(distinct(ReportCard.agent_id)))
                    .where(ReportCard.agent_id.in_(active), ReportCard.condition == VALIDITY_CONDITION))  # fmt: skip
    participants = _count(session, select(func.count()).select_from(Participant).where(consenting))
    builds = build_counts(session)
    latest = current_release(session)
    release = None
    if latest is not None:
        release = ReleaseState(latest.id, latest.cut_at, latest.agents, latest.k, latest.mu,
                               bool(latest.privacy.get("demo_settings")))  # fmt: skip
    demo = DEMO_SETTINGS if is_demo_bank(session) else None
    policy = demo.policy(settings) if demo is not None else Policy.of(settings)
    return BankState(participants, agents, new_agents_in_build(session), builds.failed, answered, carded, release,
                     policy.k, policy.min_interval_s, demo)  # fmt: skip


def _count(session: Session, statement: object) -> int:
    return int(session.scalar(statement) or 0)  # type: ignore[call-overload]

"""The bank's state in counts, for its front page and the explorer: how far along it is, in words anyone reads.

Only counts of agents and builds, and what the release in force states about itself, are here: no
pseudonym, no id, no answer, nothing about any one person. Counting agents exactly costs nobody their
protection: the open tier protects each answer (every figure about answers carries a release's noise),
and the breakdowns and membership are not what it hides (``open_tier.privacy``). Everything is read
from the clear columns: nothing is decrypted, so the route that serves it stays cheap.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import distinct, func, select
from sqlalchemy.orm import Session

from agentbank.building.progress import build_counts, new_agents_in_build
from agentbank.db.models import Agent, Participant, PopulationAnswer, ReportCard
from agentbank.open_tier.members import VALIDITY_CONDITION
from agentbank.open_tier.releases import Policy, current_release
from agentbank.runtime.demo_settings import DEMO_SETTINGS, DemoSettings, is_demo_bank
from agentbank.settings import Settings
from agentbank.statuses import AgentStatus, ConsentStatus


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

    def agents_words(self) -> str:
        """The agents' state in one sentence."""
        failed = f", and {self.failed} could not be built (`agentbank status` says why)" if self.failed else ""
        carded = "none has" if not self.carded else f"{self.carded} {'has' if self.carded == 1 else 'have'}"
        return (f"{_agents(self.agents)} built and {self.building} being built{failed}; {carded} a validity card "
                "(scored against their own person's answers).")  # fmt: skip

    def release_words(self) -> str:
        """The open tier's state in one sentence."""
        release = self.release
        if release is not None:
            settings = " under the demo's settings" if release.demo_settings else ""
            return (f"Release {release.id} of the open tier is in force{settings}: about {release.members} agents "
                    f"(a count with noise), each answer protected at mu = {release.mu:g}, groups shown from "
                    f"k = {release.k}.")  # fmt: skip
        if self.answered < self.needed:
            return (f"The open tier has no release yet: {self.answered} of the {self.needed} agents the first release "
                    "needs have answered.")  # fmt: skip
        return (f"The open tier has no release yet: {self.answered} agents have answered, enough for the first "
                "release, which a worker cuts at its next check.")  # fmt: skip


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


def _agents(n: int) -> str:
    return f"{n} agent{'' if n == 1 else 's'}"


def _count(session: Session, statement: object) -> int:
    return int(session.scalar(statement) or 0)  # type: ignore[call-overload]

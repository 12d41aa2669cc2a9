"""The demo's own settings: what lets a newcomer see the open tier work on a dozen fictional people.

Under a real bank's protection (k = 10, mu = 1 per answer by default) a release of a dozen agents hides
every group: the noise that protects each answer is wider than the groups are large. And the embedded
small model, asked at temperature 0, gives every agent the same answer. The demo's people are fictional
(``demo``), so a bank that holds only them takes these settings instead: a smaller k, a far larger mu (which
protects almost nothing: fine for people who do not exist, never for real ones), releases as soon as the
policy allows, and the open tier's answers sampled at temperature 1, so they vary from agent to agent by
chance (not with the person). A release cut under them says so (``demo_settings`` in its ledger and in
every table), and the front page and the explorer state them.

They are never a default. They apply while every participant of the bank, and at least one, came from
the demo's fictional interviews; from the moment a real interview joins, the bank's own settings do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from agentbank.core.settings import Settings
from agentbank.db.models import Participant
from agentbank.publication.distributions import DIMENSIONS
from agentbank.publication.privacy import Budget
from agentbank.publication.releases import Policy
from agentbank.publication.workload import standing_of
from agentbank.runtime.demo import DEMO_SOURCE


@dataclass(frozen=True)
class DemoSettings:
    """The settings a bank of fictional demo people takes, each stated where it shows."""

    k: int = 5  # a group is shown from 5 people (noise included); the first release needs 5 agents
    mu: float = 8.0  # per answer and release: an attacker names an answer 99.997% of the time (Φ(mu/2))
    lifetime_mu: float = 80.0  # 100 releases per member, so every new demo agent brings a new release
    # A new release with every agent built: with a minute's wait, an agent finished within a minute of the
    # last release waited for the next one (or the five-minute schedule), and the first chart with it.
    min_interval_s: float = 0.0
    temperature: float = 1.0  # the open tier's answers sampled, so the small model's answers vary

    def policy(self, settings: Settings) -> Policy:
        """The release policy of a demo bank (the weight cap stays the bank's)."""
        return Policy(self.k, Budget(self.mu, self.lifetime_mu, settings.release_weight_cap), self.min_interval_s,
                      demo=True, standing=standing_of(settings.release_standing_breakdowns, DIMENSIONS),
                      reserve=settings.release_reserve_share)  # fmt: skip

    def answer_options(self) -> dict[str, Any]:
        """How a demo agent answers for the open tier (the answering engine's options)."""
        return {"temperature": self.temperature}


DEMO_SETTINGS = DemoSettings()


def is_demo_bank(session: Session) -> bool:
    """Whether the bank holds participants, every one of them from the demo's fictional interviews."""
    total, fictional = session.execute(
        select(func.count(), func.count().filter(Participant.source_ref.startswith(DEMO_SOURCE)))
    ).one()
    return bool(total) and total == fictional


def release_policy(session: Session, settings: Settings) -> Policy:
    """The policy a release is cut under now: the demo's for a bank of fictional people, else the settings'."""
    return DEMO_SETTINGS.policy(settings) if is_demo_bank(session) else Policy.of(settings)


def open_tier_options(session: Session) -> dict[str, Any]:
    """How agents answer for the open tier now: sampled in a demo bank, the engine's defaults otherwise."""
    return DEMO_SETTINGS.answer_options() if is_demo_bank(session) else {}

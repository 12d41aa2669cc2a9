"""Agents join the open tier: a queued build (``building.runs.run_build``) and, within the same attempt,
the new agent's answers to the open tier's items, after which a demo bank cuts a release at once; and an
agent's answers to items queued for the open tier later (``answer_items``).

The answers are part of the attempt: when they fail, the build failed, and its retry (which finds the agent
built) answers again; answers already stored are not asked for twice (``population.fill_agent``).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from agentbank.building.progress import BuildProgress
from agentbank.building.runs import Attempt, Builder, run_build
from agentbank.consultation.door import AgentDoor
from agentbank.core.errors import AgentBankError
from agentbank.instruments import load_instrument, select_items
from agentbank.publication.population import fill_agent

log = logging.getLogger("agentbank.runtime.worker.builds")


@dataclass(frozen=True)
class OpenTier:
    """How the open tier stands, as a transaction sees the bank (a bank of the demo's fictional people has
    settings of its own: ``runtime.demo_settings``), and how a release is cut now."""

    options: Callable[[Session], dict[str, Any]]  # how agents answer for it now
    follows_each_agent: Callable[[Session], bool]  # whether a release is cut after each agent (a demo bank)
    cut: Callable[[], object]  # cut a release if the policy allows (``cutting.cut_and_publish``)
    reference_dir: Path


def build_and_join(
    builder: Builder, door: AgentDoor, participant_id: uuid.UUID, attempt: Attempt,
    population: dict[str, list[str]], tier: OpenTier, *, built_before: int = 0,
    stopping: threading.Event | None = None,
) -> uuid.UUID | None:  # fmt: skip
    """Build the participant's agent (one attempt of its queued build) and answer ``population``'s items
    ({instrument: [items]}) for the open tier; the agent's id, or None when it was not this build's."""
    now: dict[str, Any] = {}  # as the attempt's first transaction reads the bank

    def read(session: Session) -> None:
        now.update(options=tier.options(session), demo=tier.follows_each_agent(session))

    def answer(agent_id: uuid.UUID, progress: BuildProgress) -> None:
        now["label"] = progress.label
        for key, items in population.items():
            progress.step(f"answering {len(items)} {key} items for the open tier")
            loaded = load_instrument(key, tier.reference_dir)
            fill_agent(builder.sessions, door, agent_id, loaded, select_items(loaded, items), options=now["options"])

    built = run_build(builder, participant_id, attempt, built_before=built_before, read=read, then=answer,
                      stopping=stopping)  # fmt: skip
    if built is not None and now["demo"]:  # a demo bank's release follows its agents, not the next scheduled check
        try:
            tier.cut()
        except (AgentBankError, SQLAlchemyError) as exc:  # the agent is built; the schedule tries again
            log.warning("no release after building %s (%s); the next scheduled check tries again", now["label"],
                        type(exc).__name__)  # fmt: skip
    return built


def answer_items(
    sessions: sessionmaker[Session], door: AgentDoor, agent_id: uuid.UUID, instrument: str, items: list[str],
    tier: OpenTier,
) -> None:  # fmt: skip
    """An agent's answers to an instrument's items for the open tier, answered as the tier asks now."""
    loaded = load_instrument(instrument, tier.reference_dir)
    with sessions() as session:
        options = tier.options(session)
    fill_agent(sessions, door, agent_id, loaded, select_items(loaded, items), options=options)

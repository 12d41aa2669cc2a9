"""Populations of agents for API tests, without building them (no model is needed to count answers)."""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from agentbank.audit.log import SYSTEM
from agentbank.building.transcripts import latest_final_transcript, new_pseudonym, seal_demographics
from agentbank.db.models import Agent, Participant, Transcript
from agentbank.instruments import load_instrument
from agentbank.keys.crypto import KeyRing
from agentbank.publication.population import store_population_answers
from agentbank.publication.privacy import Budget, Noise
from agentbank.publication.releases import Policy, cut_release
from agentbank.publication.workload import ask
from tests.support.factories import keyring


class NoNoise:
    """Noise of zero: the tables' arithmetic checked by hand (the real noise is OpenDP's, tested on its own)."""

    def counts(self, values: np.ndarray, sigma: float) -> np.ndarray:
        return np.asarray(values, dtype=np.int64)

    def totals(self, values: np.ndarray, sigma: float) -> np.ndarray:
        return np.asarray(values, dtype=float)


def population(session: Session, answers: list[tuple[dict, int]], item: str = "cappun",
               keys: KeyRing | None = None) -> list[Agent]:  # fmt: skip
    """One active agent per (demographics, code), each with its stored answer to ``item``, their keys wrapped by
    ``keys`` (a server's own keyring, for a bank a server process serves; the tests' by default)."""
    keys = keys or keyring()
    agents = []
    for demographics, code in answers:
        participant = Participant(id=uuid.uuid4(), pseudonym=new_pseudonym(), source_ref=f"test:{uuid.uuid4()}")
        participant.wrapped_key, cipher = keys.new_key(participant.id)
        seal_demographics(participant, cipher, demographics)
        transcript = Transcript(id=uuid.uuid4(), participant_id=participant.id, status="final")
        agent = Agent(id=uuid.uuid4(), participant_id=participant.id, version=1, transcript_id=transcript.id)
        session.add_all([participant, transcript])
        session.flush()
        session.add(agent)
        session.flush()
        store_population_answers(session, cipher, agent.id, "gss", {item: code})
        agents.append(agent)
    session.flush()
    return agents


def demo_agents(session: Session, codes: list[int], *, offset: int = 0, keys: KeyRing | None = None) -> list[Agent]:
    """Agents for the demo's fictional people (``seed_demo_bank`` first), from the ``offset``-th on, one per
    code in ``codes``, each with that answer to cappun, as the worker stores it after a build."""
    keys = keys or keyring()
    query = select(Participant).order_by(Participant.source_ref).offset(offset).limit(len(codes))
    agents = []
    for participant, code in zip(session.scalars(query).all(), codes, strict=True):
        transcript = latest_final_transcript(session, participant.id)
        assert transcript is not None
        agent = Agent(id=uuid.uuid4(), participant_id=participant.id, version=1, transcript_id=transcript.id)
        session.add(agent)
        session.flush()
        cipher = keys.cipher(participant.id, participant.wrapped_key)
        store_population_answers(session, cipher, agent.id, "gss", {"cappun": code})
        agents.append(agent)
    return agents


def answer(session: Session, agent_id: uuid.UUID, item: str, code: int, instrument: str = "gss") -> None:
    """Store one coded answer of an agent for the open tier, sealed as the population job seals it."""
    agent = session.get_one(Agent, agent_id)
    participant = session.get_one(Participant, agent.participant_id)
    cipher = keyring().cipher(participant.id, participant.wrapped_key)
    store_population_answers(session, cipher, agent_id, instrument, {item: code})


def store_answers(session: Session, agents: list[Agent], answers: list[dict[str, int]]) -> None:
    """Each agent's coded answers to several GSS items, as the population job stores them."""
    for agent, theirs in zip(agents, answers, strict=True):
        participant = session.get_one(Participant, agent.participant_id)
        cipher = keyring().cipher(participant.id, participant.wrapped_key)
        store_population_answers(session, cipher, agent.id, "gss", theirs)
    session.flush()


def release(session: Session, k: int = 10, *, force: bool = True, noise: Noise | None = None, mu: float = 1.0,
            keys: KeyRing | None = None):  # fmt: skip
    """Cut a release of the open tier from the answers stored so far (forced: tests choose their banks;
    ``NoNoise()`` for tests of the arithmetic), reading them with ``keys`` (the tests' keyring by default)."""
    policy = Policy(k, Budget(mu=mu, lifetime_mu=max(5.0, 5 * mu)), min_interval_s=0)
    instruments = lambda key: load_instrument(key, Path("../shared/data"))  # noqa: E731
    outcome = cut_release(session, keys or keyring(), instruments, policy, SYSTEM, force=force, noise=noise)
    publish = session.info.get("publish")  # an API test's bank: its files published, as a worker does
    if publish is not None and outcome.release is not None:
        publish(session, outcome.release.id)
    return outcome.release


def exact_release(session: Session, k: int = 10, keys: KeyRing | None = None):
    """A release with no noise drawn and a budget so large that its stated noise is negligible: the
    tables' arithmetic, checked by hand."""
    return release(session, k, noise=NoNoise(), mu=100.0, keys=keys)


def ask_tables(session: Session, items: list[str] | tuple[str, ...], *tables: tuple[str, ...]) -> None:
    """Researchers asked for these tables of the GSS's ``items`` (the next cut measures them)."""
    for item in items:
        for dims in tables:
            ask(session, "gss", item, dims)

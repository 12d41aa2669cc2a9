"""The small bank the topology benchmark loads: agents, a release of the open tier, an approved project and
portal access codes, made the way the tests and bench_throughput make them.

Agents are built in this process with the fake chat model and the hashing embedder; their answers for the
open tier come from the topology's own workers (the population queue), and the project is applied for and
approved through the API, behind nginx, as a team and a reviewer would.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
from sqlalchemy import func, select, text

from agentbank.access.clients import NewClient, create_client, issue_participant_token
from agentbank.audit import log as audit
from agentbank.audit.signing_keys import load_signer
from agentbank.building.agents import BuildConfig
from agentbank.building.build import build_agent
from agentbank.building.ingest import ParsedInterview, ParsedTurn
from agentbank.db import transaction
from agentbank.db.models import Participant, PopulationAnswer
from agentbank.instruments import load_instrument, select_items
from agentbank.publication.population import queue_population
from agentbank.publication.releases import Policy, cut_release
from agentbank.publication.shelf import Shelf, ensure_published
from agentbank.runtime.bank import Bank
from benchmarks.mixed_load import LoadPlan

ITEMS = ["cappun", "gunlaw", "grass"]
OPERATOR = audit.Actor("operator", "benchmark")
PURPOSE = "How agents of the bank remember the days of their lives, asked under load."
HARMS = "None to participants: a benchmark on synthetic interviews, whose answers nobody reads."


def seed(bank: Bank, base: str, agents: int) -> LoadPlan:
    """Build ``agents`` agents, cut a release, approve a project; the plan the load follows."""
    participants, agent_ids = _build(bank, agents)
    settings = bank.settings
    gss = load_instrument("gss", settings.reference_data_dir)
    with transaction(bank.sessions) as session:
        queue_population(session, gss, select_items(gss, ITEMS), audit.SYSTEM)
    _wait_for_answers(bank, agents)  # one sealed row per agent, written with all its items
    with transaction(bank.sessions) as session:
        outcome = cut_release(
            session,
            bank.keys,
            lambda key: load_instrument(key, settings.reference_data_dir),
            Policy.of(settings),
            OPERATOR,
            force=True,
        )
        # A worker's scheduled check may have cut it first; either way a release is in force.
        if outcome.release is None and not session.scalar(text("SELECT count(*) FROM releases")):
            raise SystemExit(f"no release of the open tier: {outcome.reason}")
        reader = create_client(session, "open-tier reader", ["aggregate:read"], OPERATOR)
        team = create_client(session, "team", ["projects:apply", "individual:query"], OPERATOR)
        reviewer = create_client(session, "reviewer", ["review"], OPERATOR)
        codes = [issue_participant_token(session, p, 3600) for p in participants[:3]]
    # Published before the load reads it (the API processes publish it too, when they hear of the cut).
    reference = settings.reference_data_dir
    instruments = lambda key: load_instrument(key, reference)  # noqa: E731
    ensure_published(bank.sessions, Shelf(settings.release_files_path), load_signer(settings), instruments, reference)
    with httpx.Client(base_url=base, timeout=60) as client:
        member = _headers(client, team)
        project = _approved_project(client, member, _headers(client, reviewer))
        return LoadPlan(_headers(client, reader), member, project, agent_ids, codes, ITEMS)


def _build(bank: Bank, agents: int) -> tuple[list[Participant], list[str]]:
    chat, embedder = bank.require_models()
    config = BuildConfig.of(chat, embedder, bank.settings.reflection_word_budget)
    participants, ids = [], []
    for n in range(agents):
        with transaction(bank.sessions) as session:
            participant = _store(session, n, bank)
            agent = build_agent(session, participant, chat=chat, embedder=embedder, keys=bank.keys, config=config)
            participants.append(participant)
            ids.append(str(agent.id))
    return participants, ids


def _store(session: Any, n: int, bank: Bank) -> Participant:
    """A short synthetic life history; what is measured does not depend on its words."""
    from agentbank.building.transcripts import store_interview

    turns = []
    for t in range(6):
        turns.append(ParsedTurn("interviewer", f"Tell me about part {t} of your life."))
        turns.append(ParsedTurn("participant", f"Person {n} remembers part {t}: work, family and the town."))
    demographics = {"sex": 1 + n % 2, "age": 20 + (7 * n) % 60, "region": 1 + n % 4}
    return store_interview(session, ParsedInterview(f"topology:{n}", tuple(turns), demographics), bank.keys)


def _wait_for_answers(bank: Bank, expected: int) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        with bank.sessions() as session:
            if (session.scalar(select(func.count()).select_from(PopulationAnswer)) or 0) >= expected:
                return
        time.sleep(0.5)
    raise SystemExit("the workers did not answer for the open tier in 3 minutes")


def _headers(client: httpx.Client, created: NewClient) -> dict[str, str]:
    """A token the OAuth2 way, as every client of the API gets one."""
    response = client.post("/oauth/token", data={"grant_type": "client_credentials"},
                           auth=(created.client.client_id, created.secret))  # fmt: skip
    response.raise_for_status()
    return {"Authorization": f"Bearer {response.json()['access_token']}"}


def _approved_project(client: httpx.Client, team: dict[str, str], reviewer: dict[str, str]) -> str:
    application = {"title": "Days remembered", "purpose": PURPOSE, "harms": HARMS, "members": [], "agents": None,
                   "query_types": ["open"]}  # fmt: skip
    applied = client.post("/v1/projects", json=application, headers=team)
    if applied.status_code != 201:
        raise SystemExit(f"the application was refused: {applied.text}")
    project = str(applied.json()["id"])
    decision = {"approve": True, "note": "a load test", "query_types": ["open"], "quota": 1_000_000,
                "max_agents_per_job": 2}  # fmt: skip
    decided = client.post(f"/v1/projects/{project}/decision", json=decision, headers=reviewer)
    if decided.status_code != 200 or decided.json()["status"] != "approved":
        raise SystemExit(f"the project was not approved: {decided.text}")
    return project

"""Shared helpers of the tests (moved from ``tests.app.web.test_python_client``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from agentbank.access.clients import create_client
from agentbank.access.principals import Principal
from agentbank.access.scope import ProjectScope
from agentbank.audit import log as audit
from agentbank.restricted import projects
from tests.app.api.factories import exact_release, population
from tests.support.factories import build, process_keyring

OPERATOR = audit.Actor("operator", "test")


PURPOSE = "A study of how agents answer questions about capital punishment."


def seed_bank(url: str, data_dir) -> dict:
    """Eighteen agents' answers in a release, two built agents, a team's project approved for surveys and focus
    groups, and its clients."""
    engine = create_engine(url)
    with Session(engine) as session, session.begin():
        keys = process_keyring(url, data_dir)
        population(session, [({"sex": 1}, 1)] * 6 + [({"sex": 2}, 2)] * 6 + [({"sex": 1}, 2)] * 6, keys=keys)
        exact_release(session, keys=keys)
        built = [build(session, ref=f"file:client-{n}.json", keys=keys)[1].id for n in range(2)]
        reader = create_client(session, "reader", ["aggregate:read"], OPERATOR)
        team = create_client(session, "team", ["projects:apply", "individual:query"], OPERATOR)
        applicant = Principal("client", team.client.client_id, team.client.id,
                              frozenset({"projects:apply", "individual:query"}))  # fmt: skip
        project = projects.apply(session, applicant, projects.Application("Cappun", PURPOSE, PURPOSE, [], None,
                                                                          ["survey", "focus_group"]))  # fmt: skip
        grant = ProjectScope.of(None, ["survey", "focus_group"], 10, 1000, datetime.now(UTC) + timedelta(days=30))
        projects.decide(
            session, Principal("client", "reviewer-x", None, frozenset({"review"})), project.id, grant, "ok"
        )
        found = {"reader": (reader.client.client_id, reader.secret), "team": (team.client.client_id, team.secret),
                 "project": str(project.id), "agents": [str(a) for a in built]}  # fmt: skip
    engine.dispose()
    return found

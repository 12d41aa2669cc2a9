"""Metrics for the people who run the bank: requests and the bank's own figures, for a scraper only."""

from __future__ import annotations

import json
import logging

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy import func, select

from agentbank.audit.log import SYSTEM, record
from agentbank.db.models import AuditEvent
from agentbank.db.queue import enqueue
from app.api import create_app
from app.cli.common import configure_logging
from tests.support.factories import build

TOKEN = "a-scraper-token-that-is-long-enough"


@pytest.fixture
def scraped(api, settings):
    app = create_app(settings.model_copy(update={"metrics_token": SecretStr(TOKEN)}), api.bank)
    with TestClient(app, base_url="http://localhost") as client:
        yield client


def test_only_the_scraper_reads_the_metrics_and_they_name_nobody(api, scraped):
    participant, agent, *_ = build(api.session)
    enqueue(api.session, "population", "agentbank.population_agent", [{"agent_id": str(agent.id)}] * 2)
    record(api.session, SYSTEM, "check", "admin")  # written, waiting for the sequencer
    assert scraped.get("/v1/health").status_code == 200
    assert scraped.get("/metrics").status_code == 401
    assert scraped.get("/metrics", headers={"Authorization": "Bearer not-the-token"}).status_code == 401
    api_token = api.token("reader", "aggregate:read")  # an API token is not the scraper's
    assert scraped.get("/metrics", headers=api_token).status_code == 401

    body = scraped.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).text
    assert 'http_requests_total{handler="/v1/health",method="GET",status="2xx"}' in body
    assert "http_request_duration_seconds_bucket" in body
    assert 'agentbank_queue_tasks{queue="population",status="todo"} 2.0' in body
    assert "agentbank_database_up 1.0" in body and "agentbank_answers_last_minute" in body
    waiting = api.session.scalar(select(func.count()).where(AuditEvent.seq.is_(None)))
    assert waiting and f"agentbank_audit_unchained_events {waiting:.1f}" in body
    assert participant.pseudonym not in body and str(agent.id) not in body


def test_without_a_token_there_are_no_metrics_and_readiness_checks_the_database(api):
    assert api.client.get("/metrics").status_code == 404
    assert api.client.get("/v1/ready").json() == {"status": "ready"}


def test_logs_can_be_json_lines_for_a_collector(monkeypatch, capsys):
    monkeypatch.setenv("AGENTBANK_LOG_FORMAT", "json")
    try:
        configure_logging(logging.INFO)
        logging.getLogger("agentbank.runtime.worker").info("built %s", "P-1234abcd")
        line = capsys.readouterr().err.strip().splitlines()[-1]
        assert json.loads(line) | {"time": None} == {
            "time": None, "level": "INFO", "name": "agentbank.runtime.worker", "message": "built P-1234abcd",
        }  # fmt: skip
    finally:
        logging.basicConfig(force=True, handlers=[logging.NullHandler()])


def test_a_blank_token_leaves_the_metrics_closed(tmp_path):
    from agentbank.core.settings import Settings

    assert Settings(data_dir=tmp_path, metrics_token=SecretStr("  ")).metrics_token is None

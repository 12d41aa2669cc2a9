"""Prometheus metrics for the people who run the bank.

Requests (latency, counts by route and status) come from prometheus-fastapi-instrumentator. The bank's
own figures are read from its database at each scrape, so every API process reports the whole bank
(all workers, on every machine): tasks waiting and running per queue, answers and model tokens of the
last minute, failed attempts of the last five minutes, audit events waiting for their place in the
chain. No figure names a person, an agent or a project.

``/metrics`` answers only a scraper that presents ``AGENTBANK_METRICS_TOKEN`` as a bearer token; without
that setting it does not exist. It sits outside the API's routes (its token is not an OAuth2 token).
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Iterator

from fastapi import FastAPI
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from prometheus_fastapi_instrumentator import Instrumentator
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from agentbank.core.settings import Settings

_QUEUES = text(
    "SELECT queue_name, status::text, count(*) FROM procrastinate_jobs "
    "WHERE status IN ('todo', 'doing') GROUP BY queue_name, status"
)
_LAST_MINUTE = text(
    "SELECT count(*), coalesce(sum(prompt_tokens + completion_tokens), 0) FROM answers "
    "WHERE created_at > now() - interval '1 minute'"
)
_FAILED = text(
    "SELECT (SELECT count(*) FROM audit_events WHERE action = 'job.attempt_failed' "
    "        AND created_at > now() - interval '5 minutes'), "
    "       (SELECT count(*) FROM build_failures WHERE created_at > now() - interval '5 minutes')"
)
_UNCHAINED = text("SELECT count(*) FROM audit_events WHERE seq IS NULL AND NOT quarantined")


class BankFigures(Collector):
    """The bank-wide gauges, read from the database when scraped."""

    def __init__(self, sessions: Callable[[], sessionmaker[Session]]) -> None:
        self._sessions = sessions  # the bank's, once the application has opened it

    def collect(self) -> Iterator[GaugeMetricFamily]:
        """One read of the database per scrape; nothing when it cannot be reached (the scrape says so)."""
        up = GaugeMetricFamily("agentbank_database_up", "Whether the bank's database answered this scrape")
        try:
            with self._sessions()() as session:
                queues = session.execute(_QUEUES).all()
                answers, tokens = session.execute(_LAST_MINUTE).one()
                failed_jobs, failed_builds = session.execute(_FAILED).one()
                unchained = session.scalar(_UNCHAINED) or 0
        except SQLAlchemyError:
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        tasks = GaugeMetricFamily("agentbank_queue_tasks", "Tasks waiting (todo) or running (doing)",
                                  labels=["queue", "status"])  # fmt: skip
        for queue, status, count in queues:
            tasks.add_metric([queue, status], count)
        yield tasks
        yield _gauge("agentbank_answers_last_minute", "Agent answers made by the models in the last minute", answers)
        yield _gauge("agentbank_model_tokens_last_minute", "Prompt and completion tokens of those answers", tokens)
        failed = GaugeMetricFamily("agentbank_failed_attempts_last_5m", "Failed task attempts in the last five minutes",
                                   labels=["kind"])  # fmt: skip
        failed.add_metric(["job"], failed_jobs)
        failed.add_metric(["build"], failed_builds)
        yield failed
        yield _gauge("agentbank_audit_unchained_events", "Audit events waiting for their place in the chain", unchained)


def _gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    gauge = GaugeMetricFamily(name, documentation)
    gauge.add_metric([], value)
    return gauge


def install_metrics(app: FastAPI, settings: Settings) -> None:
    """Measure every request and serve ``/metrics`` to the configured scraper (nothing without a token)."""
    if settings.metrics_token is None:
        return
    token = settings.metrics_token.get_secret_value().encode()
    registry = CollectorRegistry()  # the application's own: several applications may live in one process
    Instrumentator(registry=registry, excluded_handlers=["/metrics"]).instrument(app)
    registry.register(BankFigures(lambda: app.state.bank.sessions))

    def metrics(request: Request) -> Response:  # plain def: Starlette runs it on a thread, off the event loop
        scheme, _, offered = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(offered.strip().encode(), token):
            return PlainTextResponse("a scraper's bearer token is needed\n", status_code=401,
                                     headers={"WWW-Authenticate": "Bearer"})  # fmt: skip
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    app.add_route("/metrics", metrics, methods=["GET"], include_in_schema=False)

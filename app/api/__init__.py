"""The HTTP API (FastAPI): OAuth2, the open and restricted tiers, the audit log, the participant's view,
the interview."""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import psycopg
from fastapi import Depends, FastAPI
from fastapi.responses import JSONResponse
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from starlette.middleware.sessions import SessionMiddleware

from agentbank import __version__
from agentbank.access.live_tokens import LiveTokens
from agentbank.audit.sequencer import Sequencer
from agentbank.audit.signing_keys import load_signer
from agentbank.core.settings import Settings
from agentbank.db.connections import pool_capacity
from agentbank.instruments import load_instrument
from agentbank.publication.access_log import ReadCounts
from agentbank.publication.published import PublishedReleases
from agentbank.publication.shelf import Shelf, ensure_published
from agentbank.runtime.bank import Bank
from app.api.admin.router import router as admin_router
from app.api.admission import Admission
from app.api.audit.router import router as audit_router
from app.api.auth.router import router as auth_router
from app.api.deps import BankDep, enforce_access
from app.api.docs import install_docs
from app.api.errors import ERROR_RESPONSES, install_error_handlers
from app.api.interviews.dependencies import InterviewProviders
from app.api.interviews.router import router as interviews_router
from app.api.limits import DatabaseRateLimiter, Limiter, MemoryRateLimiter, RateLimiter, RequestLimits
from app.api.metrics import install_metrics
from app.api.open.files import OpenReads, PublishedReads
from app.api.open.router import router as open_router
from app.api.pages import install_pages
from app.api.participants.battery import router as battery_router
from app.api.participants.router import router as participants_router
from app.api.projects.router import router as projects_router
from app.api.review.router import router as review_router
from app.api.signin.router import provider
from app.api.signin.router import router as signin_router
from app.api.status.router import router as status_router
from app.api.studies.router import router as studies_router
from app.opening import open_bank

log = logging.getLogger(__name__)
AUDIO_CHUNK_PATH = re.compile(r"^/v1/interviews/current/turns/\d+/chunks/\d+$")


def open_reads(settings: Settings, bank: Bank, limiter: Limiter, *, listen: bool) -> OpenReads:
    """What published reads need: the shelf, live tokens (listening for changes in a bank of its own; a bank
    handed in, as tests do, shares a transaction no change commits in, so every token is looked up), the
    access log's counts and the rate limit."""
    url = bank.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    connect = (lambda: psycopg.connect(url, autocommit=True)) if listen else None
    tokens = LiveTokens(bank.sessions, connect, on_release=lambda: catch_up_publication(settings, bank)).start()
    counts = ReadCounts(bank.sessions)
    if listen:
        counts.start()
    verifier = load_signer(settings).verifier
    return OpenReads(PublishedReleases(Shelf(settings.release_files_path), verifier), tokens, counts,
                     limiter)  # fmt: skip


@contextmanager
def published_reads(app: FastAPI, settings: Settings, bank: Bank, *, listen: bool) -> Iterator[None]:
    """Published reads for the app's lifetime. A listening app catches up on publication before it serves: a
    cheap check (the newest release's manifest is on the shelf), a whole publication only after a crash left
    one unpublished, so that no reader is told there is no release while one is in force."""
    reads = app.state.open_reads = open_reads(settings, bank, app.state.limiter, listen=listen)
    if listen:
        catch_up_publication(settings, bank)
    try:
        yield
    finally:
        reads.tokens.stop()
        reads.counts.stop()


def catch_up_publication(settings: Settings, bank: Bank) -> None:
    """Publish the newest release if it is not on the shelf yet: at start (a crash may have left it so) and
    when another process commits a cut (the worker publishes too, after its commit; either may be first)."""
    try:
        reference = settings.reference_data_dir
        shelf, signer = Shelf(settings.release_files_path), load_signer(settings)
        ensure_published(bank.sessions, shelf, signer, lambda key: load_instrument(key, reference), reference)
    except SQLAlchemyError:
        log.warning("could not check the open tier's publication; a worker will")


def request_limiter(app: FastAPI, settings: Settings, per_minute: int) -> Limiter:
    """A limit of ``per_minute`` requests per caller, counted where the settings say."""
    storage = settings.rate_limit_storage.get_secret_value()
    if storage == "database":
        return DatabaseRateLimiter(lambda: app.state.bank.engine, per_minute)
    if storage == "memory://":
        return MemoryRateLimiter(per_minute)
    return RateLimiter(per_minute, storage)


def create_app(settings: Settings, bank: Bank | None = None, *, listen: bool = True) -> FastAPI:
    """The application. Without ``bank``, it opens one (database only; interview models load on first use).
    ``listen``: hear the database's word of changes to tokens and of new releases (off only for a bank whose
    changes never commit, as a test's inside one transaction)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            if bank is not None:
                app.state.bank = bank
                with published_reads(app, settings, bank, listen=listen):
                    yield
                return
            with open_bank(settings, models=False) as opened:
                app.state.bank = opened
                sequencer = Sequencer.of(opened.sessions, settings).start()
                try:
                    with published_reads(app, settings, opened, listen=True):
                        yield
                finally:
                    sequencer.stop()
        finally:
            app.state.interview_providers.close()

    app = FastAPI(
        title="agentbank",
        version=__version__,
        description="Generative agents of real people, under access rules that protect them.",
        lifespan=lifespan,
        dependencies=[Depends(enforce_access)],
        responses=ERROR_RESPONSES,
        # The documentation pages come from local files (install_docs), never from a CDN.
        docs_url=None,
        redoc_url=None,
    )
    install_docs(app)
    app.state.signer = load_signer(settings)
    app.state.limiter = request_limiter(app, settings, settings.rate_limit_per_minute)
    app.state.frame_limiter = request_limiter(app, settings, settings.audio_frames_per_minute)
    app.state.interview_providers = InterviewProviders(settings)
    app.state.oidc = provider(settings)
    install_error_handlers(app)
    # Holds the sign-in's state, nonce and PKCE verifier between the bank and the identity provider only.
    app.add_middleware(SessionMiddleware, secret_key=settings.secret_key.get_secret_value(),
                       session_cookie="agentbank_signin", max_age=600, same_site="lax", https_only=True)  # fmt: skip
    # Outside the sign-in's cookie session, which a read by token never uses; inside the metrics, the
    # admission and the request limits: a published read is measured, and waits its turn, like any other.
    app.add_middleware(PublishedReads, reads=lambda: app.state.open_reads)
    install_metrics(app, settings)
    # Fewer than the pool's connections: the audit sequencer and the readiness check take one each.
    app.add_middleware(Admission, limit=lambda: pool_capacity(app.state.bank.engine) - 2)
    app.add_middleware(
        RequestLimits,
        max_body=settings.max_body_bytes,
        max_query=settings.max_query_chars,
        # Audio chunks are the one kind of body allowed to be large.
        overrides=[(AUDIO_CHUNK_PATH, settings.max_audio_chunk_bytes)],
    )

    @app.get("/v1/health", tags=["health"])
    def health() -> dict[str, str]:
        """Liveness: the process answers."""
        return {"status": "ok"}

    @app.get("/v1/ready", tags=["health"], responses={503: {"description": "The database does not answer"}})
    def ready(bank: BankDep) -> JSONResponse:
        """Readiness: the process answers and its database does (a load balancer sends traffic only then)."""
        try:
            with bank.engine.connect() as conn:
                conn.execute(text("SELECT 1"))
        except SQLAlchemyError:
            return JSONResponse({"status": "database unavailable"}, status_code=503)
        return JSONResponse({"status": "ready"})

    install_pages(app)

    for router in (
        auth_router,
        open_router,
        projects_router,
        audit_router,
        admin_router,
        participants_router,
        battery_router,
        interviews_router,
        review_router,
        signin_router,
        status_router,
        studies_router,
    ):
        app.include_router(router)
    return app

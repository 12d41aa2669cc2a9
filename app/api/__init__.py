"""The HTTP API (FastAPI): OAuth2, the open and restricted tiers, the audit log, the participant's view."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI

from agentbank import __version__
from agentbank.audit import AuditSigner
from agentbank.bank import Bank, open_bank
from agentbank.settings import Settings
from app.api.admin.router import router as admin_router
from app.api.audit.router import router as audit_router
from app.api.auth.router import router as auth_router
from app.api.deps import enforce_access
from app.api.errors import ERROR_RESPONSES, install_error_handlers
from app.api.limits import RateLimiter, RequestLimits
from app.api.open.router import router as open_router
from app.api.participants.router import router as participants_router
from app.api.projects.router import router as projects_router


def create_app(settings: Settings, bank: Bank | None = None) -> FastAPI:
    """The application. Without ``bank``, it opens one (database only: the API never calls a model)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if bank is not None:
            app.state.bank = bank
            yield
            return
        with open_bank(settings, models=False) as opened:
            app.state.bank = opened
            yield

    app = FastAPI(
        title="agentbank",
        version=__version__,
        description="Generative agents of real people, under access rules that protect them.",
        lifespan=lifespan,
        dependencies=[Depends(enforce_access)],
        responses=ERROR_RESPONSES,
    )
    app.state.signer = AuditSigner(settings.secret_key.get_secret_value())
    app.state.limiter = RateLimiter(settings.rate_limit_per_minute)
    install_error_handlers(app)
    app.add_middleware(RequestLimits, max_body=settings.max_body_bytes, max_query=settings.max_query_chars)

    @app.get("/v1/health", tags=["health"])
    def health() -> dict[str, str]:
        """Liveness: the process answers."""
        return {"status": "ok"}

    for router in (auth_router, open_router, projects_router, audit_router, admin_router, participants_router):
        app.include_router(router)
    return app

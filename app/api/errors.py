"""One JSON error shape for every failure: ``{"error": {"code": ..., "message": ...}}``."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException as StarletteHTTPException

from agentbank.core.errors import AgentBankError, AuthenticationRequiredError, RateLimitedError

log = logging.getLogger(__name__)

HTTP_CODES = {
    400: "bad_request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    414: "uri_too_long",
    422: "invalid_request",
    429: "rate_limited",
    503: "busy",
}


class ErrorDetail(BaseModel):
    code: str
    message: str


class ErrorBody(BaseModel):
    """Every error the API answers with (OAuth2's endpoints excepted: they use RFC 6749's shape)."""

    error: ErrorDetail


class OAuthErrorBody(BaseModel):
    """RFC 6749 §5.2 errors of the token and revocation endpoints."""

    error: str
    error_description: str | None = None


ERROR_RESPONSES: dict[int | str, dict] = {
    status: {"model": ErrorBody, "description": code.replace("_", " ")}
    for status, code in HTTP_CODES.items()
    if status in (401, 403, 404, 409, 413, 414, 422, 429, 503)
}


def error_response(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """The bank's error body."""
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    """Map domain errors, validation errors and HTTP errors to the one shape, with honest statuses."""

    @app.exception_handler(AgentBankError)
    async def domain_error(_request: Request, exc: AgentBankError) -> JSONResponse:
        headers: dict[str, str] = {}
        if isinstance(exc, RateLimitedError):
            headers["Retry-After"] = str(exc.retry_after)
        if isinstance(exc, AuthenticationRequiredError):
            headers["WWW-Authenticate"] = 'Bearer realm="agentbank"'
        # Server-side failures are named by code only; their messages may describe internals.
        message = exc.message if exc.status_code < 500 else "the service cannot answer this now"
        return error_response(exc.status_code, exc.code, message, headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        # Name the fields and what is wrong, never echo the values (they may hold secrets).
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc'] if p != 'body') or 'body'}: {error['msg']}"
            for error in exc.errors()[:5]
        )
        return error_response(422, "invalid_request", problems or "the request is invalid")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = HTTP_CODES.get(exc.status_code, "error")
        return error_response(exc.status_code, code, str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(PoolTimeout)
    async def busy(request: Request, _exc: PoolTimeout) -> JSONResponse:
        # Admission keeps requests within the pool; other threads of the process may still hold it all.
        log.warning("no database connection free in time on %s %s", request.method, request.url.path)
        return error_response(503, "busy", "the bank has too many requests at once; try again shortly",
                              {"Retry-After": "1"})  # fmt: skip

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.error("unhandled %s on %s %s", type(exc).__name__, request.method, request.url.path, exc_info=exc)
        return error_response(500, "internal_error", "an internal error occurred; it has been logged")

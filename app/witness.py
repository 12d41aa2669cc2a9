"""The witness's HTTP face (c2sp.org/tlog-witness): one route, ``POST /add-checkpoint``.

A separate application from the bank's API on purpose: it shares no settings, database, key or
middleware with the bank, so it can be run by someone else, elsewhere. Refusals answer with the
protocol's status codes (404 unknown log, 403 bad signature, 400 malformed, 409 another size or a fork,
422 a proof that does not verify) and plain-text bodies, as log clients expect.
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse

from agentbank.audit.witnesses.server import Refusal, Witness

MAX_BODY = 64 * 1024  # 63 proof lines and a checkpoint with many signatures fit many times over


def create_witness_app(witness: Witness) -> FastAPI:
    """The application serving one witness."""
    app = FastAPI(title=f"witness {witness.name}", docs_url=None, redoc_url=None, openapi_url=None)

    @app.post("/add-checkpoint")
    async def add_checkpoint(request: Request) -> PlainTextResponse:
        body = await request.body()
        if len(body) > MAX_BODY:
            return PlainTextResponse("the request is too large\n", status_code=413)
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return PlainTextResponse("the request is not UTF-8\n", status_code=400)
        try:
            # Synchronous on purpose: the state's lock is held only for a file read and an atomic write.
            line = witness.add_checkpoint(text)
        except Refusal as refusal:
            return PlainTextResponse(refusal.body, status_code=refusal.status, media_type=refusal.content_type)
        return PlainTextResponse(line)

    return app

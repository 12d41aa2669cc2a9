"""Bodies of console sign-in."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field


class SessionRead(BaseModel):
    client_id: str = Field(description="The principal the caller acts as")
    scopes: list[str]
    email: str | None = Field(description="The person signed in to the consoles (null for an API token)")
    csrf_token: str | None = Field(
        description="Send it as X-CSRF-Token with every request that changes something (console sessions only)"
    )
    expires_at: datetime | None


class SignedOut(BaseModel):
    signed_out: bool = True

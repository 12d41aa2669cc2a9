"""What the console tests share: a local OpenID Connect provider, and signing in through it as a person."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx


@contextmanager
def identity_provider() -> Iterator[str]:
    """A local OpenID Connect test provider (from the registry, never a hosted one); yields its issuer URL."""
    from oidc_provider_mock import run_server_in_thread

    with run_server_in_thread() as provider:
        yield f"http://localhost:{provider.server_port}"


def oidc_settings(issuer: str) -> dict[str, str]:
    """The bank's settings for signing in through ``issuer`` (as ``serve(**settings)`` takes them)."""
    return {"oidc_issuer": issuer, "oidc_client_id": "agentbank-console", "oidc_client_secret": "console-secret"}


def person_at(issuer: str, email: str) -> str:
    """A person the provider knows, with a verified email; returns their subject."""
    sub = f"person-{uuid.uuid4().hex[:8]}"
    httpx.put(f"{issuer}/users/{sub}", json={"email": email, "email_verified": True}).raise_for_status()
    return sub


def sign_in(page, sub: str) -> None:
    """From a console's sign-in step, through the provider (which asks only who one is), and back."""
    page.get_by_role("link", name="Sign in with your institution").click()
    page.locator("input[name='sub']").fill(sub)
    page.get_by_role("button", name="Authorize").click()


@contextmanager
def console_server(serve: Callable[..., Any], email: str) -> Iterator[tuple[Any, str]]:
    """The bank, signing people in through a local provider that knows a person with ``email``:
    (the server, that person's subject)."""
    with identity_provider() as issuer:
        sub = person_at(issuer, email)
        yield serve(**oidc_settings(issuer)), sub


def open_page(chromium: Callable[..., Any], url: str) -> tuple[Any, list[str]]:
    """A fresh browser's page at ``url``, and the list its script errors are collected in."""
    page = chromium().new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(url)
    return page, errors

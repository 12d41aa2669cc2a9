"""The two database roles: the owner that migrates, and the application role that serves.

The owner (the migrating user) owns every table, so it alone can alter them or switch their triggers
off. The bank's processes connect as ``agentbank_app``: full use of the working tables, but only
SELECT and INSERT on the audit log and its checkpoints, and no ownership, so nothing a request or a
worker runs can disable the append-only triggers or rewrite the log. Migration 0003 creates the role
(without login) and its grants; a production server gives it a login and a password (see deploy/), and
the embedded server gives it a login here, after migrating, since it accepts local connections only.
"""

from __future__ import annotations

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

APP_ROLE = "agentbank_app"


def app_role_url(owner_url: str) -> str:
    """The same server and database as ``owner_url``, reached as the application role (no password)."""
    url = make_url(owner_url).set(username=APP_ROLE, password=None)
    return url.render_as_string(hide_password=False)


def enable_app_login(owner_url: str) -> None:
    """Let the application role log in (the embedded server trusts local connections: no password).

    It must exist already (the migrations create it). Run as the owner; a no-op when it can log in.
    """
    engine = create_engine(owner_url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            can_login = conn.scalar(text("SELECT rolcanlogin FROM pg_roles WHERE rolname = :r"), {"r": APP_ROLE})
            if can_login is False:
                conn.execute(text(f"ALTER ROLE {APP_ROLE} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE"))
    finally:
        engine.dispose()


__all__ = ["APP_ROLE", "app_role_url", "enable_app_login"]

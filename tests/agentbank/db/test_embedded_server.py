"""The embedded PostgreSQL server: migrations, pgvector k-NN, and no server left behind."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from alembic import command
from sqlalchemy import text

from agentbank.db.embedded import postmaster_pid
from migrations.runner import alembic_config

pytestmark = pytest.mark.slow


def test_migrated_database_has_pgvector(db):
    version = db.execute(text("SELECT extversion FROM pg_extension WHERE extname = 'vector'")).scalar_one()
    assert tuple(int(p) for p in version.split(".")[:2]) >= (0, 8)


def test_models_match_migrations(database_url, engine):
    # `alembic check` fails when the ORM models and the migrations disagree.
    command.check(alembic_config(database_url))


def test_knn_through_hnsw_index(db):
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    db.execute(text("CREATE TEMP TABLE memory_probe (id int PRIMARY KEY, embedding vector(16))"))
    db.execute(
        text("INSERT INTO memory_probe VALUES (:id, :v)"),
        [{"id": i, "v": str(v.tolist())} for i, v in enumerate(vectors)],
    )
    db.execute(text("CREATE INDEX memory_probe_hnsw ON memory_probe USING hnsw (embedding vector_cosine_ops)"))
    db.execute(text("SET LOCAL enable_seqscan = off"))
    query = vectors[42] + rng.normal(scale=0.01, size=16).astype(np.float32)
    sql = text("SELECT id FROM memory_probe ORDER BY embedding <=> CAST(:q AS vector) LIMIT 3")
    plan = "\n".join(db.execute(text("EXPLAIN " + str(sql)), {"q": str(query.tolist())}).scalars())
    assert "memory_probe_hnsw" in plan
    found = db.execute(sql, {"q": str(query.tolist())}).scalars().all()
    cosine = vectors @ query / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(query))
    assert found[0] == 42 == int(np.argmax(cosine))


HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from agentbank.db.embedded import start_embedded_server
    server = start_embedded_server(Path(sys.argv[1]))
    print(server.postmaster_pid, server.adopted_stale, flush=True)
    if sys.argv[2] == "wait":
        time.sleep(120)
    """
)


def hold_server(pgdata, mode="wait") -> tuple[subprocess.Popen, int, bool]:
    process = subprocess.Popen([sys.executable, "-c", HOLDER, str(pgdata), mode], stdout=subprocess.PIPE, text=True)
    pid, adopted = process.stdout.readline().split()
    return process, int(pid), adopted == "True"


def wait_gone(pid: int, seconds: float = 15) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


@pytest.fixture
def pgdata(tmp_path):
    path = tmp_path / "postgres"
    yield path
    pid = postmaster_pid(path)
    if pid:  # never leave a server running, even when an assertion failed
        os.kill(pid, signal.SIGKILL)


def test_sigterm_to_the_holder_stops_the_server(pgdata):
    process, pid, _ = hold_server(pgdata)
    assert postmaster_pid(pgdata) == pid
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=30)
    assert wait_gone(pid)
    assert postmaster_pid(pgdata) is None


def test_server_left_by_a_killed_process_is_adopted_and_stopped(pgdata):
    killed, pid, _ = hold_server(pgdata)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=30)
    time.sleep(0.5)
    assert postmaster_pid(pgdata) == pid  # SIGKILL runs no exit handler: the server is orphaned

    successor, reused_pid, adopted = hold_server(pgdata, mode="exit")
    successor.wait(timeout=30)
    assert adopted and reused_pid == pid
    assert wait_gone(pid)

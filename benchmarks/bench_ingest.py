"""Ingest all 1,248 WPA life histories into a temporary bank: how many read cleanly, and how fast.

Run: python -m benchmarks.bench_ingest
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from rich.console import Console
from sqlalchemy import create_engine, func, select
from sqlalchemy.orm import Session

from agentbank.building.ingest import read_interviews
from agentbank.building.transcripts import store_interviews
from agentbank.db.embedded import start_embedded_server, stop_embedded_server
from agentbank.db.models import Participant, Turn
from agentbank.keys.crypto import KeyRing
from agentbank.keys.keystore import MemoryKeyStore
from benchmarks.common import save
from migrations.runner import alembic_config, upgrade

LIFE_HISTORIES = Path("../shared/data/transcripts/fwp_life_histories")


def main() -> None:
    console = Console()
    root = Path(tempfile.mkdtemp(prefix="agentbank-bench-"))
    server = start_embedded_server(root / "postgres")
    try:
        upgrade(alembic_config(server.url))
        began = time.perf_counter()
        interviews, skipped = read_interviews(LIFE_HISTORIES, skip_invalid=True)
        parsed = time.perf_counter() - began
        with Session(create_engine(server.url)) as session, session.begin():
            store_interviews(session, interviews, KeyRing("benchmark-secret-" * 3, MemoryKeyStore()))
        stored = time.perf_counter() - began - parsed
        with Session(create_engine(server.url)) as session:
            participants = session.scalar(select(func.count()).select_from(Participant))
            turns = session.scalar(select(func.count()).select_from(Turn))
    finally:
        stop_embedded_server(root / "postgres")
        shutil.rmtree(root, ignore_errors=True)
    figures = {
        "records": len(interviews) + len(skipped),
        "ingested": participants,
        "skipped": len(skipped),
        "skipped_reasons": [problem.message for problem in skipped],
        "turns": turns,
        "participant_words": sum(i.participant_words for i in interviews),
        "parse_seconds": parsed,
        "store_seconds": stored,
    }
    for key, value in figures.items():
        console.print(f"{key}: {value}")
    console.print(f"saved to {save('ingest', figures)}")


if __name__ == "__main__":
    main()

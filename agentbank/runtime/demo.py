"""The demo bank: a dozen fictional people the project wrote itself, surveyed on a handful of GSS items.

The demo needs nothing beside the repository. Its interviews ship with the package
(``demo_interviews/``), short life-history interviews in the bank's turn-structured JSON, each file
marked ``"fictional": true`` with a notice that no one was interviewed; they are stored with a source
that says so (``demo:<file>``), so the bank can tell a bank of fictional people from a real one
(``demo_settings``). The real public transcripts of the optional reference data (the WPA life
histories under ``AGENTBANK_REFERENCE_DATA_DIR``) are added only when asked for, and a bank that holds
them is no longer a bank of fictional people.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from agentbank.building.agents import queue_builds
from agentbank.building.ingest import ParsedInterview, iter_fwp, parse_turns_json
from agentbank.building.transcripts import store_interviews
from agentbank.core.errors import ConfigurationError
from agentbank.db.models import Participant
from agentbank.keys.crypto import KeyRing

DEMO_ITEMS = ("cappun", "gunlaw", "natenvir", "trust", "polviews")
DEMO_SOURCE = "demo:"  # the source of every fictional interview, as stored
FICTIONAL = Path(__file__).resolve().parent / "demo_interviews"
LIFE_HISTORIES = Path("transcripts/fwp_life_histories")


def fictional_interviews() -> list[ParsedInterview]:
    """The demo's fictional interviews, in file order; a file not marked fictional is refused, so that no
    real interview put in the folder is ever labelled as one."""
    interviews = []
    for path in sorted(FICTIONAL.glob("*.json")):
        if json.loads(path.read_text(encoding="utf-8")).get("fictional") is not True:
            raise ConfigurationError(
                f"{path.name} in the demo's interviews is not marked fictional",
                hint='the demo holds only people the project made up ("fictional": true)',
            )
        interviews.append(replace(parse_turns_json(path), source_ref=f"{DEMO_SOURCE}{path.name}"))
    if not interviews:
        raise ConfigurationError(f"the demo's fictional interviews are missing from {FICTIONAL}",
                                 hint="reinstall the package, or restore the folder from the repository")  # fmt: skip
    return interviews


def life_histories(reference_dir: Path, count: int) -> list[ParsedInterview]:
    """The first ``count`` WPA life histories that read cleanly, from the optional reference data."""
    if count == 0:
        return []
    folder = reference_dir / LIFE_HISTORIES
    if not folder.is_dir():
        raise ConfigurationError(
            f"the WPA life histories are not under {reference_dir}",
            hint="they are part of the optional reference data (set AGENTBANK_REFERENCE_DATA_DIR to the folder "
            "that holds transcripts/); the demo runs without them: leave out --life-histories",
        )
    found: list[ParsedInterview] = []
    for path in sorted(folder.iterdir()):
        for parsed in iter_fwp(path):
            if isinstance(parsed, ParsedInterview):
                found.append(parsed)
            if len(found) == count:
                return found
    return found


def demo_interviews(reference_dir: Path, life_histories_count: int = 0) -> list[ParsedInterview]:
    """The fictional interviews, and as many WPA life histories from the reference data as asked for."""
    return fictional_interviews() + life_histories(reference_dir, life_histories_count)


def is_demo_source(source_ref: str) -> bool:
    """Whether a participant's source is one of the demo's fictional interviews."""
    return source_ref.startswith(DEMO_SOURCE)


def seed_demo_bank(session: Session, keys: KeyRing) -> int | None:
    """On an empty bank, ingest the fictional interviews and queue their builds (each followed by the
    demo items for the open tier). Returns the builds queued, or None when the bank was not empty."""
    if session.scalar(select(exists().where(Participant.id.is_not(None)))):
        return None
    store_interviews(session, fictional_interviews(), keys)
    return queue_builds(session, {"gss": list(DEMO_ITEMS)})

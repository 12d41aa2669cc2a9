"""The demo bank: the sample interview and a few WPA life histories, surveyed on a handful of GSS items."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from agentbank.building.agents import queue_builds
from agentbank.building.ingest import ParsedInterview, iter_fwp, parse_turns_json
from agentbank.building.transcripts import store_interviews
from agentbank.db.models import Participant
from agentbank.errors import ConfigurationError
from agentbank.keys.crypto import KeyRing

DEMO_ITEMS = ("cappun", "gunlaw", "natenvir", "trust", "polviews")
SAMPLE_INTERVIEW = Path("transcripts/sample_interview/joon_park_sample_interview.json")
LIFE_HISTORIES = Path("transcripts/fwp_life_histories")


def demo_interviews(reference_dir: Path, life_histories: int = 10) -> list[ParsedInterview]:
    """The sample interview and the first ``life_histories`` WPA life histories that read cleanly."""
    sample = reference_dir / SAMPLE_INTERVIEW
    folder = reference_dir / LIFE_HISTORIES
    if not sample.is_file() or not folder.is_dir():
        raise ConfigurationError(
            f"the demo's interviews are not under {reference_dir}",
            hint="set AGENTBANK_REFERENCE_DATA_DIR to the shared data folder (it holds transcripts/)",
        )
    interviews = [parse_turns_json(sample)]
    for path in sorted(folder.iterdir()):
        for parsed in iter_fwp(path):
            if len(interviews) > life_histories:  # checked before adding, so 0 adds none
                return interviews
            if isinstance(parsed, ParsedInterview):
                interviews.append(parsed)
    return interviews


def seed_demo_bank(session: Session, keys: KeyRing, reference_dir: Path) -> int | None:
    """On an empty bank, ingest the demo interviews and queue their builds (each followed by the
    demo items for the open tier). Returns the builds queued, or None when the bank was not empty."""
    if session.scalar(select(exists().where(Participant.id.is_not(None)))):
        return None
    store_interviews(session, demo_interviews(reference_dir), keys)
    return queue_builds(session, {"gss": list(DEMO_ITEMS)})

"""The demo bank: the sample interview and a few WPA life histories, surveyed on a handful of GSS items."""

from __future__ import annotations

from pathlib import Path

from agentbank.errors import ConfigurationError
from agentbank.ingest import ParsedInterview, iter_fwp, parse_turns_json

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
            if isinstance(parsed, ParsedInterview):
                interviews.append(parsed)
            if len(interviews) > life_histories:
                return interviews
    return interviews

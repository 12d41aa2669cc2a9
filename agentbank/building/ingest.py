"""Reading interviews from files: turn-structured JSON, ``Speaker: text`` transcripts, WPA life histories.

Parsing is separate from storing so that a malformed file is rejected, with the place named, before
anything is written.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentbank.core.errors import AgentBankError

Speaker = Literal["interviewer", "participant"]
INTERVIEWER_NAMES = {"interviewer", "q", "question", "ai", "ai interviewer"}
FORMATS = ("auto", "turns", "text", "fwp")

# GSS codes, so that ingested demographics line up with the GSS items.
SEX_CODES = {"male": 1, "female": 2}
RACE_CODES = {"white": 1, "black": 2}
_REGIONS = {
    1: "Connecticut,Maine,Massachusetts,New Hampshire,Rhode Island,Vermont,New Jersey,New York,Pennsylvania",
    2: "Illinois,Indiana,Michigan,Ohio,Wisconsin,Iowa,Kansas,Minnesota,Missouri,Nebraska,North Dakota,South Dakota",
    3: "Delaware,Florida,Georgia,Maryland,North Carolina,South Carolina,Virginia,West Virginia,Alabama,Kentucky,"
    "Mississippi,Tennessee,Arkansas,Louisiana,Oklahoma,Texas,District of Columbia",
}
REGION_OF_STATE = {state: code for code, states in _REGIONS.items() for state in states.split(",")}


class IngestError(AgentBankError):
    """A transcript file that cannot be read; the message names the file and the place."""

    code = "invalid_transcript"
    status_code = 422


@dataclass(frozen=True)
class ParsedTurn:
    """One turn as read from a file."""

    speaker: Speaker
    text: str


@dataclass(frozen=True)
class ParsedInterview:
    """One interview as read from a file, not yet stored."""

    source_ref: str
    turns: tuple[ParsedTurn, ...]
    demographics: dict[str, Any] = field(default_factory=dict)

    @property
    def participant_words(self) -> int:
        """Words the participant said."""
        return sum(len(t.text.split()) for t in self.turns if t.speaker == "participant")


def _require_text(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise IngestError(f"{where}: expected non-empty text")
    return value.strip()


def parse_turns_json(path: Path) -> ParsedInterview:
    """``{"turns": [{"interviewer": q, "respondent": a}, ...]}`` or ``[{"speaker": s, "text": t}, ...]``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise IngestError(f"{path.name}: line {exc.lineno} column {exc.colno}: not valid JSON ({exc.msg})") from None
    raw_turns = data.get("turns") if isinstance(data, dict) else None
    if not isinstance(raw_turns, list) or not raw_turns:
        raise IngestError(f"{path.name}: expected an object with a non-empty list 'turns'")
    turns: list[ParsedTurn] = []
    for i, raw in enumerate(raw_turns):
        where = f"{path.name}: turns[{i}]"
        if not isinstance(raw, dict):
            raise IngestError(f"{where}: expected an object")
        if "speaker" in raw:
            speaker = _require_text(raw["speaker"], f"{where}.speaker").lower()
            role: Speaker = "interviewer" if speaker in INTERVIEWER_NAMES else "participant"
            turns.append(ParsedTurn(role, _require_text(raw.get("text"), f"{where}.text")))
        elif "interviewer" in raw and "respondent" in raw:
            turns.append(ParsedTurn("interviewer", _require_text(raw["interviewer"], f"{where}.interviewer")))
            answer = raw["respondent"]
            if not isinstance(answer, str):
                raise IngestError(f"{where}.respondent: expected text")
            if answer.strip():  # a statement the participant did not answer leaves no turn
                turns.append(ParsedTurn("participant", answer.strip()))
        else:
            raise IngestError(f"{where}: expected 'speaker' and 'text', or 'interviewer' and 'respondent'")
    return ParsedInterview(f"file:{path.name}", tuple(turns), dict(data.get("demographics") or {}))


def parse_plain_text(path: Path) -> ParsedInterview:
    """``Speaker: text`` turns; lines without a speaker continue the turn before them."""
    turns: list[ParsedTurn] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        head, sep, rest = line.partition(":")
        is_turn = sep and 0 < len(head.strip()) <= 40 and len(head.split()) <= 4
        if is_turn:
            role: Speaker = "interviewer" if head.strip().lower() in INTERVIEWER_NAMES else "participant"
            turns.append(ParsedTurn(role, rest.strip()))
        elif turns:
            turns[-1] = ParsedTurn(turns[-1].speaker, f"{turns[-1].text}\n{line.strip()}".strip())
        else:
            raise IngestError(f"{path.name}: line {number}: expected 'Speaker: text'")
    turns = [t for t in turns if t.text]
    if not turns:
        raise IngestError(f"{path.name}: no turns found")
    return ParsedInterview(f"file:{path.name}", tuple(turns))


def _fwp_demographics(meta: dict[str, Any]) -> dict[str, Any]:
    demographics: dict[str, Any] = {}
    sex = SEX_CODES.get(str(meta.get("gender", "")).lower())
    if sex:
        demographics["sex"] = sex
    race = str(meta.get("race", "")).lower()
    if race:
        demographics["race"] = RACE_CODES.get(race, 3)
    state = str(meta.get("location", "")).rsplit(",", 1)[-1].strip()
    region = REGION_OF_STATE.get(state)
    if region:
        demographics["region"] = region
    if meta.get("occupation"):
        demographics["occupation"] = meta["occupation"]
    return demographics


def parse_fwp_record(record: dict[str, Any], where: str) -> ParsedInterview:
    """One WPA life history: a written-up narrative, kept as the participant's paragraphs."""
    doc = _require_text(record.get("doc"), f"{where}.doc")
    text = _require_text(record.get("text"), f"{where}.text")
    paragraphs = [" ".join(p.split()) for p in text.split("\n\n")]
    # The first short lines are the county, the writer and the place, not the interviewee's words.
    body = [p for p in paragraphs if len(p.split()) > 8 or (p and p[-1] in ".?!\"'")]
    if len(body) < 2:
        raise IngestError(f"{where}: the life history has no narrative paragraphs")
    metas = record.get("interview_meta") or [{}]
    return ParsedInterview(f"fwp:{doc}", tuple(ParsedTurn("participant", p) for p in body), _fwp_demographics(metas[0]))


def iter_fwp(path: Path) -> Iterator[ParsedInterview | IngestError]:
    """Each record of a life-history JSONL file (plain or gzipped), or the error that stops it."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            where = f"{path.name}: line {number}"
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                if not isinstance(record, dict):
                    raise IngestError(f"{where}: expected a JSON object")
                yield parse_fwp_record(record, where)
            except json.JSONDecodeError as exc:
                yield IngestError(f"{where}: not valid JSON ({exc.msg})")
            except IngestError as exc:
                yield exc


def detect_format(path: Path) -> str:
    """The format of a file from its name."""
    name = path.name.lower()
    if name.endswith((".jsonl", ".jsonl.gz")):
        return "fwp"
    if name.endswith(".json"):
        return "turns"
    return "text"


def read_interviews(
    path: Path, fmt: str = "auto", limit: int | None = None, skip_invalid: bool = False
) -> tuple[list[ParsedInterview], list[IngestError]]:
    """Every interview in a file or a folder of files, and the records skipped as invalid.

    Without ``skip_invalid`` the first malformed record raises IngestError, naming its place.
    """
    if fmt not in FORMATS:
        raise IngestError(f"unknown format {fmt!r}", hint=f"choose one of {', '.join(FORMATS)}")
    if not path.exists():
        raise IngestError(f"{path}: no such file or folder")
    files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
    interviews: list[ParsedInterview] = []
    skipped: list[IngestError] = []
    for file in files:
        kind = detect_format(file) if fmt == "auto" else fmt
        parsed_file: Iterator[ParsedInterview | IngestError]
        if kind == "fwp":
            parsed_file = iter_fwp(file)
        else:
            parsed_file = iter([parse_turns_json(file) if kind == "turns" else parse_plain_text(file)])
        for parsed in parsed_file:
            if isinstance(parsed, IngestError):
                if not skip_invalid:
                    raise parsed
                skipped.append(parsed)
                continue
            interviews.append(parsed)
            if limit is not None and len(interviews) >= limit:
                return interviews, skipped
    return interviews, skipped

"""Versioned interview scripts: the scripted questions, their time budgets and the spoken framing.

A script is data (YAML), not code, so its wording can be reviewed and changed without touching the
interviewer. Every transcript records the script's fingerprint, which pins the exact wording used.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator

from agentbank.core.errors import AgentBankError

SHIPPED_SCRIPT = "life_history.yaml"

# Strict, so a budget written as "80" or a key written as 1 is reported instead of silently coerced.
_STRICT = ConfigDict(frozen=True, extra="forbid", strict=True)
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
Key = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")]


class ScriptError(AgentBankError):
    """An interview script cannot be read or does not describe a valid interview."""

    code = "invalid_script"
    status_code = 422


class Question(BaseModel):
    """One scripted question and the seconds it may take, follow-ups included."""

    model_config = _STRICT
    key: Key
    text: Text
    seconds: int = Field(gt=0)


class Module(BaseModel):
    """A titled group of questions asked in order."""

    model_config = _STRICT
    key: Key
    title: Text
    questions: list[Question] = Field(min_length=1)


class Script(BaseModel):
    """A whole interview: the opening, the modules of questions in order, and the closing."""

    model_config = _STRICT
    key: Key
    version: int = Field(ge=1)
    title: Text
    interviewer_name: Text
    opening: Text
    closing: Text
    modules: list[Module] = Field(min_length=1)
    # At the end of each module the interviewer tells the person back what it heard and asks whether it got it
    # right (``interviewer.deciding.reflecting``); false: it goes straight on.
    reflect_back: bool = True

    @field_validator("modules")
    @classmethod
    def _unique_keys(cls, modules: list[Module]) -> list[Module]:
        # Keys identify turns in transcripts and resume points, so a repeat would make them ambiguous.
        # The place goes into the message because a validator cannot point deeper than its own field.
        seen_modules: dict[str, int] = {}
        seen_questions: dict[str, str] = {}
        for i, module in enumerate(modules):
            if module.key in seen_modules:
                first_module = seen_modules[module.key]
                raise ValueError(f"[{i}].key: duplicate module key {module.key!r} (first at modules[{first_module}])")
            seen_modules[module.key] = i
            for j, question in enumerate(module.questions):
                place = f"[{i}].questions[{j}]"
                if question.key in seen_questions:
                    first = seen_questions[question.key]
                    raise ValueError(f"{place}.key: duplicate question key {question.key!r} (first at modules{first})")
                seen_questions[question.key] = place
        return modules

    def questions(self) -> list[tuple[Module, Question]]:
        """Every question in asking order, each with the module it belongs to."""
        return [(module, question) for module in self.modules for question in module.questions]

    def first_words(self) -> str:
        """The first thing said: the opening, then the first question, verbatim (no model is asked)."""
        return f"{self.opening.strip()}\n\n{self.modules[0].questions[0].text}"

    @property
    def total_seconds(self) -> int:
        """The sum of all question budgets: the planned length of the interview."""
        return sum(question.seconds for _, question in self.questions())

    @property
    def fingerprint(self) -> str:
        """SHA-256 of the canonical JSON form; equal fingerprints mean the same wording and budgets."""
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _place(loc: tuple[int | str, ...]) -> str:
    place = ""
    for part in loc:
        place += f"[{part}]" if isinstance(part, int) else (f".{part}" if place else str(part))
    return place or "top level"


def _describe(error: Mapping[str, Any]) -> str:
    # Pydantic's wording ("Input should be ...", "Value error, ...") reads oddly to a script author.
    message = str(error["msg"])
    if error["type"] == "value_error":
        detail = message.removeprefix("Value error, ")
        # The duplicate-key check starts its message with the rest of the place ("[2].questions[0].key: ...").
        return f"{_place(error['loc'])}{detail}" if detail.startswith("[") else f"{_place(error['loc'])}: {detail}"
    message = message.replace("Input should be", "must be").replace("Field required", "is required")
    message = message.replace("Extra inputs are not permitted", "is not a known field")
    message = message.replace("String should", "must").replace("List should", "must").replace(" after validation", "")
    message = message.replace("must have at least 1 character", "must not be empty")
    return f"{_place(error['loc'])}: {message}"


def _read(path: str | Path | None) -> tuple[str, str]:
    """Return (name used in messages, file text)."""
    # The shipped script is read through the package, so it is found in a wheel as well as in a checkout.
    source = resources.files("interviewer.session").joinpath("scripts", SHIPPED_SCRIPT) if path is None else Path(path)
    name = SHIPPED_SCRIPT if path is None else str(path)
    try:
        return name, source.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScriptError(f"{name}: file not found") from None
    except IsADirectoryError:
        raise ScriptError(f"{name}: is a directory, not a script file") from None
    except UnicodeDecodeError as exc:
        raise ScriptError(f"{name}: byte {exc.start}: not UTF-8 text") from None
    except OSError as exc:
        raise ScriptError(f"{name}: cannot be read ({exc.strerror})") from None


def load_script(path: str | Path | None = None) -> Script:
    """Load and validate an interview script; ``None`` loads the shipped life-history script.

    Raises ``ScriptError`` naming the file and the place of the first problems found.
    """
    name, text = _read(path)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "top level"
        problem = getattr(exc, "problem", None) or "not valid YAML"
        raise ScriptError(f"{name}: {where}: not valid YAML ({problem})") from None
    if not isinstance(data, dict):
        found = "nothing" if data is None else type(data).__name__
        raise ScriptError(f"{name}: top level: must be a mapping of script fields, found {found}")
    try:
        return Script.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        shown = "; ".join(_describe(error) for error in errors[:5])
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        raise ScriptError(f"{name}: {shown}{more}") from None


def shorten(
    script: Script, *, questions_per_module: int = 1, modules: int | None = None, seconds: int | None = None
) -> Script:
    """A smaller script for tests and demos: the first questions of the first modules.

    ``seconds``, when given, replaces every question's budget. The title is marked so that the
    fingerprint always differs from the full script's, even when nothing else would change.
    """
    if questions_per_module < 1 or (modules is not None and modules < 1) or (seconds is not None and seconds < 1):
        raise ValueError("questions_per_module, modules and seconds must each be at least 1")
    data = script.model_dump()
    data["title"] = f"{script.title} (shortened)"
    data["modules"] = [
        module | {"questions": module["questions"][:questions_per_module]} for module in data["modules"][:modules]
    ]
    for module in data["modules"]:
        for question in module["questions"]:
            question["seconds"] = question["seconds"] if seconds is None else seconds
    return Script.model_validate(data)


# The web page's short version: each module's first question (16 questions, about 35 minutes), so every
# part of a life is still touched.
SHORT_QUESTIONS_PER_MODULE = 1


def short_version(script: Script) -> Script:
    """The script's short version for the web page: the first questions of every module, as budgeted."""
    short = shorten(script, questions_per_module=SHORT_QUESTIONS_PER_MODULE)
    minutes = round(short.total_seconds / 60 / 5) * 5
    # The opening names the interview's length; the short version must not promise two hours.
    opening = short.opening.replace("the next two hours", f"the next {minutes} minutes or so")
    return short.model_copy(update={"title": f"{script.title} (short version)", "opening": opening})

"""Reading a team's file (JSON, a Qualtrics export) into plain values the importers can trust, and naming
what is wrong with one by where it is in the file (``SurveyElements[3].Payload.Choices: expected an object``).

Python's JSON parser reads more than JSON: ``NaN``, ``Infinity``, ``1e999`` (an infinity), integers of
thousands of digits (refused with a ValueError past 4300) and nesting as deep as its stack (a
RecursionError). None of that is a number or a shape an instrument has, and none may reach a conversion
or the database, so each is marked where it stands and refused with its place. Text PostgreSQL cannot
store (a NUL, a lone surrogate) is refused the same way, wherever it is in the file.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from agentbank.core.errors import InvalidRequestError
from agentbank.core.text import storable

BOM = "\ufeff"
MAX_DEPTH = 64  # a Qualtrics export's survey flow nests a few levels per branch; an instrument, five
INT64 = 2**63
MAX_FAULTS = 10
Location = tuple[str | int, ...]


class InvalidInstrumentError(InvalidRequestError):
    """A team's instrument that cannot be asked as written; the message names the item and the fault."""

    code = "invalid_instrument"


class _Unreadable:
    """A number the file holds that no instrument can: kept in place, so the refusal can say where."""

    def __init__(self, why: str) -> None:
        self.why = why


def without_bom(text: str) -> str:
    """The text without the byte-order mark Excel's "CSV UTF-8" (and some editors) write first."""
    return text[1:] if text.startswith(BOM) else text


def _float(token: str) -> float | _Unreadable:
    value = float(token)
    return value if math.isfinite(value) else _Unreadable("not a finite number")


def _int(token: str) -> int | _Unreadable:
    # Counted before converting: int() of 4300 digits or more raises, and 64 bits is 20 at most.
    if len(token.lstrip("-")) > 19 or not -INT64 <= (value := int(token)) < INT64:
        return _Unreadable("an integer beyond 64 bits")
    return value


def load_json(text: str) -> Any:
    """The file's JSON: finite numbers, integers within 64 bits, storable text, at most ``MAX_DEPTH`` deep."""
    try:
        data = json.loads(without_bom(text), parse_float=_float, parse_int=_int,
                          parse_constant=lambda name: _Unreadable("not a finite number"))  # fmt: skip
    except json.JSONDecodeError as exc:
        raise InvalidInstrumentError(f"the JSON does not parse (line {exc.lineno}: {exc.msg})") from None
    except RecursionError:
        raise InvalidInstrumentError(f"the file is nested too deeply (at most {MAX_DEPTH} levels)") from None
    faults = list(_faults_in(data))
    if faults:
        raise InvalidInstrumentError("; ".join(faults[:MAX_FAULTS]))
    return data


def _faults_in(data: Any) -> Iterable[str]:
    # Iterative, so a file nested as deep as the parser allowed is walked without recursion.
    stack: list[tuple[Location, Any]] = [((), data)]
    while stack:
        place, value = stack.pop()
        if len(place) > MAX_DEPTH:
            yield f"{where(place)}: the file is nested too deeply (at most {MAX_DEPTH} levels)"
            return
        if isinstance(value, _Unreadable):
            yield f"{where(place)}: {value.why}"
        elif isinstance(value, str) and not storable(value):
            yield f"{where(place)}: text with a NUL character or a lone surrogate"
        elif isinstance(value, dict):
            if not all(storable(key) for key in value):
                yield f"{where(place) if place else 'the file'}: a name with a NUL character or a lone surrogate"
            stack.extend(((*place, key), item) for key, item in reversed(value.items()) if storable(key))
        elif isinstance(value, list):
            stack.extend(((*place, n), item) for n, item in reversed(list(enumerate(value))))


def where(place: Location) -> str:
    """A place in a file as one reads it: ``SurveyElements[3].Payload.Choices``. A name is the file's own
    text, so a long one is cut: the place is named, the file never repeated."""
    out = ""
    for part in place:
        name = part if isinstance(part, int) else part if len(part) <= 40 else f"{part[:40]}…"
        out += f"[{name}]" if isinstance(part, int) else f".{name}" if out else str(name)
    return out


# Pydantic's messages name Python's types ("a valid dictionary"); a file's author knows JSON's.
PLAIN = {
    "dict_type": "expected an object",
    "model_type": "expected an object",
    "model_attributes_type": "expected an object",
    "list_type": "expected a list",
    "string_type": "expected text",
    "missing": "missing",
    "int_type": "expected a whole number",
    "int_parsing": "expected a whole number",
    "int_from_float": "expected a whole number",
    "float_type": "expected a finite number",
    "float_parsing": "expected a finite number",
    "finite_number": "expected a finite number",
}


def faults(exc: ValidationError, at: Location = ()) -> str:
    """A validation error of part of a file (at ``at``) as the places and faults it found, in plain words."""
    found = []
    for error in exc.errors()[:MAX_FAULTS]:
        place = (*at, *error["loc"])
        message = PLAIN.get(error["type"]) or error["msg"].removeprefix("Value error, ")
        found.append(f"{where(place) or 'the file'}: {message}")
    return "; ".join(found)

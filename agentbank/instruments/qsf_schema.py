"""The parts of a Qualtrics export (``.qsf``) the importer reads, as typed values.

Only what the importer uses is modelled, and everything else is ignored, so a newer export with more in it
still imports. Each part is parsed where the importer meets it (a matrix question's choices are never read,
so never refused); a part that is not what Qualtrics writes is refused with its place in the file.

Qualtrics is written in PHP, whose JSON writes an empty object as ``[]``: that is read as an empty object.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, FiniteFloat, TypeAdapter, ValidationError

from agentbank.instruments.parsing import InvalidInstrumentError, Location, faults

T = TypeVar("T")
WHOLE = re.compile(r"\s*[+-]?[0-9]{1,18}\s*")  # within 64 bits; a recode value of more is no answer code
DECIMAL = re.compile(r"\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]{1,4})?\s*")  # no "inf", "nan", "1_000"


def _empty_object(value: Any) -> Any:
    return {} if value is None or value == [] else value


def _empty_list(value: Any) -> Any:
    return [] if value is None or value == {} else value


def _id(value: Any) -> Any:
    # Choice ids are strings in Choices' keys and often numbers in ChoiceOrder: one type for both.
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _whole(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and WHOLE.fullmatch(value):
        return int(value)
    raise ValueError("expected a whole number")


def _decimal(value: Any) -> Any:
    if isinstance(value, bool) or (isinstance(value, str) and not DECIMAL.fullmatch(value)):
        raise ValueError("expected a finite number")
    return value


def _bound(value: Any) -> Any:
    return None if value is None or value == "" else _decimal(value)


EMPTY_OBJECT = BeforeValidator(_empty_object)
Id = Annotated[str, BeforeValidator(_id), Field(min_length=1, max_length=64)]
Code = Annotated[int, BeforeValidator(_whole)]
Number = Annotated[FiniteFloat, BeforeValidator(_decimal)]
Bound = Annotated[FiniteFloat | None, BeforeValidator(_bound)]  # "" is no bound, as Qualtrics writes it


class _Part(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Entry(_Part):
    SurveyName: str | None = None


class Element(_Part):
    """One of the survey's elements: a question (``SQ``), the blocks (``BL``), the flow and the rest."""

    Element: str | None = None
    Payload: Any = None


class Survey(_Part):
    SurveyEntry: Annotated[Entry, EMPTY_OBJECT] = Field(default_factory=Entry)
    SurveyElements: list[Element]


class BlockEntry(_Part):
    Type: str | None = None
    QuestionID: Id | None = None


class Block(_Part):
    BlockElements: Annotated[list[BlockEntry], BeforeValidator(_empty_list)] = Field(default_factory=list)


class Question(_Part):
    """What every question has; what its type adds is read by the models below."""

    QuestionID: Id
    DataExportTag: str | None = None
    QuestionType: str | None = None
    Selector: str | None = None
    QuestionText: str = ""


class Choice(_Part):
    Display: str = ""


class ChoiceQuestion(_Part):
    """Multiple choice and rank order: the choices, their order and the codes they are exported with."""

    Choices: Annotated[dict[Id, Choice], EMPTY_OBJECT] = Field(default_factory=dict)
    ChoiceOrder: Annotated[list[Id], BeforeValidator(_empty_list)] = Field(default_factory=list)
    RecodeValues: Annotated[dict[Id, Code], EMPTY_OBJECT] = Field(default_factory=dict)


class SliderConfiguration(_Part):
    CSSliderMin: Number = 0.0
    CSSliderMax: Number = 100.0


class Slider(_Part):
    Choices: Annotated[dict[Id, Any], EMPTY_OBJECT] = Field(default_factory=dict)  # one per bar
    Configuration: Annotated[SliderConfiguration, EMPTY_OBJECT] = Field(default_factory=SliderConfiguration)


class NumberRange(_Part):
    Min: Bound = None
    Max: Bound = None


class RuleSettings(_Part):
    ContentType: str | None = None
    ValidNumber: Annotated[NumberRange, EMPTY_OBJECT] = Field(default_factory=NumberRange)


class Rule(_Part):
    Settings: Annotated[RuleSettings, EMPTY_OBJECT] = Field(default_factory=RuleSettings)


class TextEntry(_Part):
    Validation: Annotated[Rule, EMPTY_OBJECT] = Field(default_factory=Rule)


_ADAPTERS: dict[object, TypeAdapter[Any]] = {}  # built once per kind: building one costs more than using it


def parsed(kind: type[T], data: Any, at: Location = ()) -> T:
    """``data`` (the part of the file at ``at``) as ``kind``, or a refusal naming each fault by its place."""
    adapter = _ADAPTERS.get(kind) or _ADAPTERS.setdefault(kind, TypeAdapter(kind))
    try:
        value: T = adapter.validate_python(data)
    except ValidationError as exc:
        raise InvalidInstrumentError(faults(exc, at)) from None
    return value

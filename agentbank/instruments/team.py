"""A project's own instrument: closed items a team writes as JSON or a CSV sheet (or imports, ``qsf``).

Five kinds of item, each answered valid by construction (``answering.schemas``): ``single`` (one option),
``scale`` (whole numbers from ``low`` to ``high``, its ends labelled), ``numeric`` (a number within a
range), ``multiple`` (any of the options, at least one) and ``ranking`` (every option, each once, first
the most preferred). Any item may carry a ``vignette``, a short scenario read before its question. Options
are coded 1, 2, ... in the order written unless the JSON gives codes. Everything is checked here, so
a refusal names the item and what is wrong with it.
"""

from __future__ import annotations

import csv
import io
import re
from itertools import islice
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    FiniteFloat,
    Tag,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from agentbank.core.text import Text
from agentbank.instruments.model import Instrument, Item, Option
from agentbank.instruments.parsing import InvalidInstrumentError, load_json, without_bom

MAX_ITEMS = 50
MAX_OPTIONS = 20
KEY = r"^[a-z][a-z0-9_]{0,31}$"
# Text, so a NUL or a lone surrogate is refused here with its item, not by the database.
Label = Annotated[Text, Field(min_length=1, max_length=200)]


class CodedOption(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: int = Field(ge=-99, le=999)
    label: Label


class _Base(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    key: str = Field(pattern=KEY)
    question: Text = Field(min_length=1, max_length=1000)
    vignette: Text = Field(default="", max_length=2000)


# An option is a label, or an object with its code: told apart before validating, so a fault in one is
# named once, as what it is (not also as "not a valid string" of the other kind).
OptionSpec = Annotated[
    Annotated[Label, Tag("written")] | Annotated[CodedOption, Tag("coded")],
    Discriminator(lambda value: "written" if isinstance(value, str) else "coded"),
]


class _Choices(_Base):
    options: list[OptionSpec] = Field(min_length=2, max_length=MAX_OPTIONS)

    @field_validator("options")
    @classmethod
    def _distinct(cls, options: list[str | CodedOption]) -> list[str | CodedOption]:
        coded = [o if isinstance(o, CodedOption) else CodedOption(code=n, label=o) for n, o in enumerate(options, 1)]
        if len({o.code for o in coded}) != len(coded) or len({o.label.lower() for o in coded}) != len(coded):
            raise ValueError("each option needs its own code and its own label")
        return list(coded)

    def coded(self) -> tuple[Option, ...]:
        return tuple(Option(o.code, o.label) for o in self.options if isinstance(o, CodedOption))


class SingleItem(_Choices):
    type: Literal["single"]


class MultipleItem(_Choices):
    type: Literal["multiple"]


class RankingItem(_Choices):
    type: Literal["ranking"]


class ScaleItem(_Base):
    type: Literal["scale"]
    low: int = Field(ge=-10, le=10)
    high: int = Field(ge=-9, le=20)
    low_label: Label
    high_label: Label

    @model_validator(mode="after")
    def _span(self) -> ScaleItem:
        if not 1 <= self.high - self.low <= 20:
            raise ValueError("a scale runs from low to a higher high, 21 points at most")
        return self


class NumericItem(_Base):
    type: Literal["numeric"]
    minimum: FiniteFloat
    maximum: FiniteFloat

    @model_validator(mode="after")
    def _range(self) -> NumericItem:
        if not self.minimum < self.maximum:
            raise ValueError("minimum must be below maximum")
        return self


TeamItem = Annotated[SingleItem | ScaleItem | NumericItem | MultipleItem | RankingItem, Field(discriminator="type")]


class TeamInstrumentSpec(BaseModel):
    """A team's instrument as written: a title, what a respondent reads first, and its items."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    title: Text = Field(min_length=1, max_length=200)
    preamble: Text = Field(default="", max_length=2000)
    items: list[TeamItem] = Field(min_length=1, max_length=MAX_ITEMS)

    @field_validator("items")
    @classmethod
    def _distinct_keys(cls, items: list[Any]) -> list[Any]:
        keys = [item.key for item in items]
        if len(set(keys)) != len(keys):
            raise ValueError("each item needs its own key")
        return items


_SPEC: TypeAdapter[TeamInstrumentSpec] = TypeAdapter(TeamInstrumentSpec)


def checked(data: Any) -> TeamInstrumentSpec:
    """The instrument, or a refusal naming each fault with the item it is in."""
    try:
        return _SPEC.validate_python(data)
    except ValidationError as exc:
        raise InvalidInstrumentError("; ".join(_fault(data, e) for e in exc.errors()[:10])) from None


# The discriminators' own names are noise in a location ("items.2.scale.low", "options.0.coded.code").
TAGS = {"single", "scale", "numeric", "multiple", "ranking", "written", "coded"}


def _fault(data: Any, error: Any) -> str:
    where = [str(part)[:40] for part in error["loc"]]
    if len(where) >= 2 and where[0] == "items" and where[1].isdigit():
        number = int(where[1])
        items = data.get("items") if isinstance(data, dict) else None
        key = items[number].get("key") if isinstance(items, list) and isinstance(items[number], dict) else None
        field = ".".join(p for p in where[2:] if p not in TAGS)
        # The key names the item only where it is one: any other text is the file's, never repeated.
        named = f"item {number + 1}" + (f" ({key})" if isinstance(key, str) and re.match(KEY, key) else "")
        return f"{named}{': ' + field if field else ''}: {_said(error)}"
    return f"{'.'.join(where) or 'the instrument'}: {_said(error)}"


def _said(error: Any) -> str:
    # An unknown type is the file's own text, which pydantic's message repeats: say what it should be.
    if error["type"] == "union_tag_invalid":
        return f"the type must be one of {error['ctx']['expected_tags']}"
    if error["type"] == "union_tag_not_found":
        return "the type is missing"
    return str(error["msg"])


def from_json(text: str) -> TeamInstrumentSpec:
    """An instrument written as JSON: ``{"title": ..., "preamble": ..., "items": [...]}``."""
    return checked(load_json(text))


CSV_COLUMNS = ("key", "type", "question", "options", "low", "high", "low_label", "high_label", "minimum", "maximum",
               "vignette")  # fmt: skip


def from_csv(text: str, title: str, preamble: str = "") -> TeamInstrumentSpec:
    """An instrument written as a sheet: one item per row, columns ``CSV_COLUMNS`` (``options`` separated
    by ``|``); only ``key``, ``type`` and ``question`` must be there, an empty cell is no value. Excel's
    "CSV UTF-8" (a byte-order mark first) reads like any other."""
    reader = csv.DictReader(io.StringIO(without_bom(text)))
    try:
        columns = [c.strip().lower() for c in reader.fieldnames or []]
        unknown = [c[:40] for c in columns if c not in CSV_COLUMNS]
        if unknown or not {"key", "type", "question"} <= set(columns):
            raise InvalidInstrumentError(
                f"the sheet's columns must include key, type and question, and may add {', '.join(CSV_COLUMNS[3:])}"
                + (f"; unknown: {', '.join(unknown[:5])}" if unknown else "")
            )
        items = []
        # One row past the most an instrument has is enough for the refusal to say so.
        for row in islice(reader, MAX_ITEMS + 1):
            cells = {k.strip().lower(): (v or "").strip() for k, v in row.items() if isinstance(k, str)}
            item: dict[str, Any] = {k: v for k, v in cells.items() if v and k != "options"}
            if cells.get("options"):
                item["options"] = [o.strip() for o in cells["options"].split("|")]
            items.append(item)
    except csv.Error as exc:  # a quote left open, a cell past the module's field limit
        raise InvalidInstrumentError(f"the sheet does not parse (line {reader.reader.line_num}: {exc})") from None
    return checked({"title": title, "preamble": preamble, "items": items})


def split_ref(ref: str) -> tuple[str, int] | None:
    """A team instrument's reference (``key@version``) as its key and version, or None if it is not one."""
    key, _, number = ref.partition("@")
    return (key, int(number)) if key and number.isdigit() else None


def to_instrument(ref: str, spec: TeamInstrumentSpec, source: str) -> Instrument:
    """The instrument the answering engine asks, keyed by its reference (``key@version``)."""
    return Instrument(ref, spec.title, spec.preamble, source, tuple(_item(i) for i in spec.items))


def _item(spec: Any) -> Item:
    question = f"{spec.vignette}\n\n{spec.question}" if spec.vignette else spec.question
    if isinstance(spec, ScaleItem):
        options = tuple(
            Option(code, spec.low_label if code == spec.low else spec.high_label if code == spec.high else str(code))
            for code in range(spec.low, spec.high + 1)
        )
        return Item(spec.key, "ordinal", question, options)
    if isinstance(spec, NumericItem):
        return Item(spec.key, "numeric", question, minimum=spec.minimum, maximum=spec.maximum)
    kind = {"single": "categorical", "multiple": "multiple", "ranking": "ranking"}[spec.type]
    return Item(spec.key, kind, question, spec.coded())  # type: ignore[arg-type]

"""Importing a Qualtrics survey export (``.qsf``, JSON) as a team's instrument.

What imports, in the order of the survey's blocks:

- multiple choice with one answer (``MC``: ``SAVR``, ``SAHR``, ``SACOL``, ``DL``, ``SB``) as ``single``,
  its codes the choices' recode values where the survey set them;
- multiple choice with several answers (``MC``: ``MAVR``, ``MAHR``, ``MACOL``, ``MSB``) as ``multiple``;
- the net promoter score (``MC``: ``NPS``) as a 0-10 ``scale`` with its ends labelled;
- rank order (``RO``) as ``ranking``;
- a slider with one bar (``Slider``) as ``numeric`` over the slider's range;
- text entry forced to a number with a minimum and a maximum (``TE``) as ``numeric``;
- descriptive text (``DB``) as the vignette of the question after it.

Everything else is named in what was not imported, with why: text entry that is not a bounded number
(ask it as an open question), matrix tables (write each row as its own item), side by side, constant sum,
sliders with several bars, heat maps, uploads, timing and other question types.

The file is read as strict JSON (``parsing``) and each part the import uses as a typed value
(``qsf_schema``) before anything is converted: a part that is not what Qualtrics writes is refused with its
place in the file (``SurveyElements[3].Payload.Choices: expected an object``), never met as a crash.
"""

from __future__ import annotations

import html
import re
from typing import Any

from agentbank.instruments.parsing import InvalidInstrumentError, Location, load_json, where
from agentbank.instruments.qsf_schema import (
    Block,
    ChoiceQuestion,
    Question,
    Slider,
    Survey,
    TextEntry,
    parsed,
)
from agentbank.instruments.team import TeamInstrumentSpec, checked

SINGLE = {"SAVR", "SAHR", "SACOL", "DL", "SB"}
MULTIPLE = {"MAVR", "MAHR", "MACOL", "MSB"}
TAGS = re.compile(r"<[^>]+>")
NUMBER = re.compile(r"-?[0-9]{1,18}")  # a choice's id that is its code
NOT_QSF = "this is not a Qualtrics survey export (.qsf): no SurveyElements"
# A question as read: where its payload is in the file, what every question has, and the payload itself
# (what its type adds is read only if the question is imported).
Found = tuple[Location, Question, Any]


def from_qsf(text: str) -> tuple[TeamInstrumentSpec, list[str]]:
    """The instrument a Qualtrics export holds, and a line for each question it leaves out."""
    data = load_json(text)
    if not isinstance(data, dict) or "SurveyElements" not in data:
        raise InvalidInstrumentError(NOT_QSF)
    survey = parsed(Survey, data)
    title = survey.SurveyEntry.SurveyName or "Imported survey"
    questions = _questions(survey)
    items: list[dict[str, Any]] = []
    left_out: list[str] = []
    vignette = ""
    for at, question, payload in (questions[q] for q in _in_block_order(survey, questions)):
        # Cut: the name is repeated in what was left out, and kept with the version.
        name = (question.DataExportTag or question.QuestionID)[:64]
        kind, selector = question.QuestionType, question.Selector
        if kind == "DB":
            vignette = _text(question.QuestionText)
            continue
        item, why = _item(payload, at, kind, selector)
        if item is None:
            left_out.append(f"{name} ({str(kind)[:20]}/{str(selector)[:20]}): {why}")
            continue
        item = {"key": _key(name), "question": _text(question.QuestionText), **item}
        if vignette:
            item["vignette"], vignette = vignette, ""
        items.append(item)
    if not items:
        raise InvalidInstrumentError("no question of this survey can be imported: " + "; ".join(left_out[:10]))
    return checked({"title": title[:200], "items": items}), left_out


def _questions(survey: Survey) -> dict[str, Found]:
    """Each question (``SQ``) by its id; a later one of the same id replaces an earlier, as exported."""
    found: dict[str, Found] = {}
    for n, element in enumerate(survey.SurveyElements):
        if element.Element != "SQ":
            continue
        at: Location = ("SurveyElements", n, "Payload")
        if "Payload" not in element.model_fields_set:
            raise InvalidInstrumentError(f"{where(at)}: missing")
        question = parsed(Question, element.Payload, at)
        found[question.QuestionID] = (at, question, element.Payload)
    return found


def _in_block_order(survey: Survey, questions: dict[str, Found]) -> list[str]:
    """Question ids as the survey's blocks order them; questions in no block after, as exported."""
    ordered: list[str] = []
    for n, element in enumerate(survey.SurveyElements):
        if element.Element != "BL" or not element.Payload:
            continue
        at: Location = ("SurveyElements", n, "Payload")
        # Blocks come as a list, or as an object keyed by number.
        if isinstance(element.Payload, dict):
            blocks = list(parsed(dict[str, Block], element.Payload, at).values())
        else:
            blocks = parsed(list[Block], element.Payload, at)
        for block in blocks:
            for entry in block.BlockElements:
                if entry.Type == "Question" and entry.QuestionID in questions:
                    ordered.append(entry.QuestionID)
    return list(dict.fromkeys(ordered + list(questions)))


def _item(payload: Any, at: Location, kind: str | None, selector: str | None) -> tuple[dict[str, Any] | None, str]:
    if kind == "MC" and selector == "NPS":
        return {"type": "scale", "low": 0, "high": 10, "low_label": "Not at all likely",
                "high_label": "Extremely likely"}, ""  # fmt: skip
    if kind == "MC" and selector in SINGLE | MULTIPLE:
        return {"type": "single" if selector in SINGLE else "multiple", "options": _choices(payload, at)}, ""
    if kind == "RO":
        return {"type": "ranking", "options": _choices(payload, at)}, ""
    if kind == "Slider":
        slider = parsed(Slider, payload, at)
        if len(slider.Choices) != 1:
            return None, "a slider with several bars: write each bar as its own numeric item"
        config = slider.Configuration
        return {"type": "numeric", "minimum": config.CSSliderMin, "maximum": config.CSSliderMax}, ""
    if kind == "TE":
        settings = parsed(TextEntry, payload, at).Validation.Settings
        bounds = settings.ValidNumber
        if settings.ContentType == "ValidNumber" and bounds.Min is not None and bounds.Max is not None:
            return {"type": "numeric", "minimum": bounds.Min, "maximum": bounds.Max}, ""
        return None, "text entry: ask it as an open question, or force a number with a minimum and a maximum"
    if kind == "Matrix":
        return None, "a matrix table: write each row as its own single-choice or scale item"
    return None, "a question type the bank does not ask"


def _choices(payload: Any, at: Location) -> list[dict[str, Any]]:
    question = parsed(ChoiceQuestion, payload, at)
    ordered = bool(question.ChoiceOrder)
    options = []
    for n, choice in enumerate(question.ChoiceOrder if ordered else list(question.Choices)):
        code = question.RecodeValues.get(choice)
        if code is None:
            if not NUMBER.fullmatch(choice):
                place = (*at, "ChoiceOrder", n) if ordered else (*at, "Choices", choice)
                raise InvalidInstrumentError(f"{where(place)}: a choice without a numeric code (give it a recode)")
            code = int(choice)
        shown = question.Choices.get(choice)
        options.append({"code": code, "label": _text(shown.Display if shown else "")[:200]})
    return options


def _text(value: str) -> str:
    return " ".join(html.unescape(TAGS.sub(" ", value)).split())


def _key(name: str) -> str:
    key = re.sub(r"[^a-z0-9_]", "_", name.lower()).strip("_")
    return (key if re.match(r"^[a-z]", key) else f"q_{key}")[:32]

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
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from agentbank.instruments.team import InvalidInstrumentError, TeamInstrumentSpec, checked

SINGLE = {"SAVR", "SAHR", "SACOL", "DL", "SB"}
MULTIPLE = {"MAVR", "MAHR", "MACOL", "MSB"}
TAGS = re.compile(r"<[^>]+>")


def from_qsf(text: str) -> tuple[TeamInstrumentSpec, list[str]]:
    """The instrument a Qualtrics export holds, and a line for each question it leaves out."""
    try:
        survey = json.loads(text)
        elements = survey["SurveyElements"]
        title = str(survey.get("SurveyEntry", {}).get("SurveyName") or "Imported survey")
    except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
        raise InvalidInstrumentError("this is not a Qualtrics survey export (.qsf): no SurveyElements") from None
    questions = {e["Payload"]["QuestionID"]: e["Payload"] for e in elements if e.get("Element") == "SQ"}
    items: list[dict[str, Any]] = []
    left_out: list[str] = []
    vignette = ""
    for payload in (questions[q] for q in _in_block_order(elements, questions)):
        name = str(payload.get("DataExportTag") or payload.get("QuestionID"))
        kind, selector = payload.get("QuestionType"), payload.get("Selector")
        if kind == "DB":
            vignette = _text(payload.get("QuestionText", ""))
            continue
        item, why = _item(payload, kind, selector)
        if item is None:
            left_out.append(f"{name} ({kind}/{selector}): {why}")
            continue
        item = {"key": _key(name), "question": _text(payload.get("QuestionText", "")), **item}
        if vignette:
            item["vignette"], vignette = vignette, ""
        items.append(item)
    if not items:
        raise InvalidInstrumentError("no question of this survey can be imported: " + "; ".join(left_out[:10]))
    return checked({"title": title[:200], "items": items}), left_out


def _in_block_order(elements: list[dict[str, Any]], questions: dict[str, Any]) -> list[str]:
    """Question ids as the survey's blocks order them; questions in no block after, as exported."""
    ordered: list[str] = []
    for element in elements:
        if element.get("Element") != "BL":
            continue
        blocks = element.get("Payload") or {}
        for block in blocks.values() if isinstance(blocks, dict) else blocks:
            for entry in block.get("BlockElements", []):
                if entry.get("Type") == "Question" and entry.get("QuestionID") in questions:
                    ordered.append(entry["QuestionID"])
    return list(dict.fromkeys(ordered + list(questions)))


def _item(payload: dict[str, Any], kind: str | None, selector: str | None) -> tuple[dict[str, Any] | None, str]:
    if kind == "MC" and selector == "NPS":
        return {"type": "scale", "low": 0, "high": 10, "low_label": "Not at all likely",
                "high_label": "Extremely likely"}, ""  # fmt: skip
    if kind == "MC" and selector in SINGLE | MULTIPLE:
        return {"type": "single" if selector in SINGLE else "multiple", "options": _choices(payload)}, ""
    if kind == "RO":
        return {"type": "ranking", "options": _choices(payload)}, ""
    if kind == "Slider":
        if len(payload.get("Choices") or {}) != 1:
            return None, "a slider with several bars: write each bar as its own numeric item"
        config = payload.get("Configuration") or {}
        return {"type": "numeric", "minimum": float(config.get("CSSliderMin", 0)),
                "maximum": float(config.get("CSSliderMax", 100))}, ""  # fmt: skip
    if kind == "TE":
        validation = (payload.get("Validation") or {}).get("Settings") or {}
        bounds = validation.get("ValidNumber") or {}
        if (
            validation.get("ContentType") == "ValidNumber"
            and bounds.get("Min") not in (None, "")
            and bounds.get("Max") not in (None, "")
        ):
            return {"type": "numeric", "minimum": float(bounds["Min"]), "maximum": float(bounds["Max"])}, ""
        return None, "text entry: ask it as an open question, or force a number with a minimum and a maximum"
    if kind == "Matrix":
        return None, "a matrix table: write each row as its own single-choice or scale item"
    return None, "a question type the bank does not ask"


def _choices(payload: dict[str, Any]) -> list[dict[str, Any]]:
    choices = payload.get("Choices") or {}
    order = payload.get("ChoiceOrder") or list(choices)
    recode = payload.get("RecodeValues") or {}
    options = []
    for choice in order:
        shown = choices.get(str(choice), {})
        code = recode.get(str(choice), choice)
        options.append({"code": int(code), "label": _text(shown.get("Display", ""))[:200]})
    return options


def _text(value: str) -> str:
    return " ".join(html.unescape(TAGS.sub(" ", value)).split())


def _key(name: str) -> str:
    key = re.sub(r"[^a-z0-9_]", "_", name.lower()).strip("_")
    return key if re.match(r"^[a-z]", key) else f"q_{key}"[:32]

"""Malformed instrument files uploaded to an approved project: each a 4xx naming the element or field at
fault, never a 500, never the file's text echoed back; and a sheet saved as Excel's "CSV UTF-8" (a
byte-order mark first) is read like any other."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from agentbank.instruments.team import InvalidInstrumentError, from_csv
from tests.support.team_instruments import HUGE, POLICY, QSF_FILE, SHEET, as_text, literal, upload


def refused(response, *said: str) -> str:
    """The refusal's message, after checking it is a 4xx in the bank's shape, short, and says ``said``."""
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:300])
    message = response.json()["error"]["message"]
    assert len(message) < 1000, message[:300]  # names the fault; never the file back
    for words in said:
        assert words in message, message
    return message


def _question(survey: dict[str, Any], tag: str) -> dict[str, Any]:
    payloads = (e["Payload"] for e in survey["SurveyElements"] if e["Element"] == "SQ")
    return next(p for p in payloads if p["DataExportTag"] == tag)


def _set(tag: str, **fields: Any) -> Callable[[dict[str, Any]], None]:
    return lambda survey: _question(survey, tag).update(fields)


def _slider(**config: Any) -> Callable[[dict[str, Any]], None]:
    return lambda survey: _question(survey, "Q4_tax")["Configuration"].update(config)


def _recode(value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda survey: _question(survey, "Q1_library")["RecodeValues"].update({"1": value})


# (what the attack changed, the change, what the refusal names). Q1_library is SurveyElements[1], the
# slider Q4_tax SurveyElements[4], the text entry Q6_trips SurveyElements[6].
QSF_ATTACKS: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("a recode value that is not a number", _recode("one"), "SurveyElements[1].Payload.RecodeValues.1"),
    ("a recode value of 5000 digits", _recode(HUGE), "SurveyElements[1].Payload.RecodeValues.1"),
    ("a recode value beyond 64 bits", _recode(2**70), "SurveyElements[1].Payload.RecodeValues.1"),
    ("a recode value of 1e999", _recode(literal("1e999")), "SurveyElements[1].Payload.RecodeValues.1"),
    ("a recode value of NaN", _recode(float("nan")), "SurveyElements[1].Payload.RecodeValues.1"),
    ("a fractional recode value", _recode("1.5"), "SurveyElements[1].Payload.RecodeValues.1"),
    ("RecodeValues as a list", _set("Q1_library", RecodeValues=[1, 2, 8]), "SurveyElements[1].Payload.RecodeValues"),
    ("Choices as a list", _set("Q1_library", Choices=[{"Display": "Yes"}, {"Display": "No"}]),
     "SurveyElements[1].Payload.Choices: expected an object"),
    ("a choice that is not an object", _set("Q1_library", Choices={"1": "Yes", "2": "No", "3": "Maybe"}),
     "SurveyElements[1].Payload.Choices.1: expected an object"),
    ("a choice's Display a number", lambda s: _question(s, "Q1_library")["Choices"]["1"].update({"Display": 5}),
     "SurveyElements[1].Payload.Choices.1.Display"),
    ("ChoiceOrder an object", _set("Q1_library", ChoiceOrder={"a": 1}), "SurveyElements[1].Payload.ChoiceOrder"),
    ("a ChoiceOrder entry without a numeric code", _set("Q2_services", ChoiceOrder=["x", 2, 3, 4]),
     "SurveyElements[2].Payload.ChoiceOrder[0]"),
    ("QuestionText a number", _set("Q1_library", QuestionText=7), "SurveyElements[1].Payload.QuestionText"),
    ("QuestionID a list", _set("Q1_library", QuestionID=[1]), "SurveyElements[1].Payload.QuestionID"),
    ("an empty slider minimum", _slider(CSSliderMin=""), "SurveyElements[4].Payload.Configuration.CSSliderMin"),
    ("an empty slider maximum", _slider(CSSliderMax=""), "SurveyElements[4].Payload.Configuration.CSSliderMax"),
    ("a slider maximum of 1e999", _slider(CSSliderMax=literal("1e999")),
     "SurveyElements[4].Payload.Configuration.CSSliderMax"),
    ("a slider maximum of Infinity", _slider(CSSliderMax="Infinity"),
     "SurveyElements[4].Payload.Configuration.CSSliderMax"),
    ("a slider minimum of -Infinity", _slider(CSSliderMin=float("-inf")),
     "SurveyElements[4].Payload.Configuration.CSSliderMin"),
    ("a slider minimum of NaN", _slider(CSSliderMin="NaN"), "SurveyElements[4].Payload.Configuration.CSSliderMin"),
    ("Configuration a string", _set("Q4_tax", Configuration="wide"), "SurveyElements[4].Payload.Configuration"),
    ("a text entry bound that is not a number",
     lambda s: _question(s, "Q6_trips")["Validation"]["Settings"]["ValidNumber"].update({"Max": "sixty"}),
     "SurveyElements[6].Payload.Validation.Settings.ValidNumber.Max"),
    ("a missing Payload", lambda s: s["SurveyElements"][1].pop("Payload"), "SurveyElements[1].Payload: missing"),
    ("a null Payload", lambda s: s["SurveyElements"][1].update(Payload=None), "SurveyElements[1].Payload"),
    ("a Payload that is a list", lambda s: s["SurveyElements"][1].update(Payload=[1]), "SurveyElements[1].Payload"),
    ("a SurveyElement that is a string", lambda s: s["SurveyElements"].insert(3, "SQ"),
     "SurveyElements[3]: expected an object"),
    ("a SurveyElement that is a number", lambda s: s["SurveyElements"].insert(0, 3),
     "SurveyElements[0]: expected an object"),
    ("a SurveyElement that is a list", lambda s: s["SurveyElements"].append([]),
     "SurveyElements[11]: expected an object"),
    ("SurveyElements an object", lambda s: s.update(SurveyElements={"a": 1}), "SurveyElements: expected a list"),
    ("a block's Payload a string", lambda s: s["SurveyElements"][0].update(Payload="blocks"),
     "SurveyElements[0].Payload"),
    ("BlockElements a number", lambda s: s["SurveyElements"][0]["Payload"][0].update(BlockElements=5),
     "SurveyElements[0].Payload[0].BlockElements"),
    ("a block entry that is a string", lambda s: s["SurveyElements"][0]["Payload"][0]["BlockElements"].append("x"),
     "SurveyElements[0].Payload[0].BlockElements[10]"),
    ("a block entry's QuestionID a list",
     lambda s: s["SurveyElements"][0]["Payload"][0]["BlockElements"].append({"Type": "Question", "QuestionID": [1]}),
     "SurveyElements[0].Payload[0].BlockElements[10].QuestionID"),
    ("a NUL in a question's text", _set("Q1_library", QuestionText="Keep\x00it?"),
     "SurveyElements[1].Payload.QuestionText"),
    ("nesting 5000 levels deep", lambda s: s.update(SurveyEntry=literal("[" * 5000 + "]" * 5000)), "deep"),
]  # fmt: skip


@pytest.mark.parametrize(("change", "names"), [(c, n) for _, c, n in QSF_ATTACKS],
                         ids=[what for what, _, _ in QSF_ATTACKS])  # fmt: skip
def test_a_malformed_qualtrics_export_is_refused_naming_the_element(api, project, change, names):
    survey = json.loads(QSF_FILE.read_text())
    change(survey)
    refused(upload(api, project, "qsf", as_text(survey)), names)


def test_the_unchanged_qualtrics_export_still_imports(api, project):
    survey = json.loads(QSF_FILE.read_text())
    r = upload(api, project, "qsf", json.dumps(copy.deepcopy(survey)))
    assert r.status_code == 201, r.text
    assert [i["type"] for i in r.json()["definition"]["items"]] == [
        "single", "multiple", "ranking", "numeric", "numeric", "scale"]  # fmt: skip
    # Qualtrics (written in PHP) exports an empty object as []: that is no fault.
    _question(survey, "Q1_library")["RecodeValues"] = []
    assert upload(api, project, "qsf", json.dumps(survey)).status_code == 201


def _numeric(minimum: str, maximum: str) -> str:
    """POLICY as JSON text, its numeric item's bounds written as given (a token Python's json module reads)."""
    text = json.dumps(POLICY)
    return text.replace('"minimum": 0, "maximum": 200', f'"minimum": {minimum}, "maximum": {maximum}')


JSON_ATTACKS = [
    ("Infinity", _numeric("0", "Infinity"), "items[2].maximum"),
    ("-Infinity", _numeric("-Infinity", "200"), "items[2].minimum"),
    ("1e999", _numeric("0", "1e999"), "items[2].maximum"),
    ("-1e999", _numeric("-1e999", "200"), "items[2].minimum"),
    ("NaN", _numeric("NaN", "200"), "items[2].minimum"),
    ("a 5000-digit integer", _numeric("0", HUGE), "items[2].maximum"),
    ("a NUL in a question", json.dumps(POLICY).replace("Keep the library", "Keep\\u0000the library"),
     "items[0].question"),
    ("a NUL in a key", json.dumps(POLICY).replace('"preamble"', '"pre\\u0000amble"'), "the file"),
    ("a lone surrogate", json.dumps(POLICY).replace("Town policy", "Town \\ud800policy"), "title"),
    ("nesting 5000 levels deep", json.dumps({**POLICY, "preamble": "[x]"}).replace('"[x]"', "[" * 5000 + "]" * 5000),
     "deep"),
]  # fmt: skip


@pytest.mark.parametrize(("content", "names"), [(c, n) for _, c, n in JSON_ATTACKS],
                         ids=[what for what, _, _ in JSON_ATTACKS])  # fmt: skip
def test_non_finite_numbers_and_nul_in_a_json_instrument_are_refused(api, project, content, names):
    refused(upload(api, project, "json", content), names)


def _cell(column: str, value: str) -> str:
    """SHEET with the numeric row's ``column`` (minimum or maximum) set to ``value``."""
    head, bus, safe, pay = SHEET.splitlines()
    cells = pay.split(",")
    cells[head.split(",").index(column)] = value
    return "\n".join([head, bus, safe, ",".join(cells)]) + "\n"


CSV_ATTACKS = [
    ("inf", _cell("maximum", "inf"), "item 3 (pay): maximum"),
    ("Infinity", _cell("maximum", "Infinity"), "item 3 (pay): maximum"),
    ("-Infinity", _cell("minimum", "-Infinity"), "item 3 (pay): minimum"),
    ("1e999", _cell("maximum", "1e999"), "item 3 (pay): maximum"),
    ("-1e999", _cell("minimum", "-1e999"), "item 3 (pay): minimum"),
    ("NaN", _cell("minimum", "NaN"), "item 3 (pay)"),
    ("a NUL in a question", SHEET.replace("Do you take", "Do\x00you take"), "content"),
    ("a NUL in a column name", SHEET.replace("maximum", "maxi\x00mum", 1), "content"),
    ("a 5000-digit scale end", SHEET.replace(",1,5,", f",1,{HUGE},"), "item 2 (safe): high"),
    ("a key of 5000 letters", SHEET.replace("bus,", "b" * 5000 + ","), "item 1: key"),
]  # fmt: skip


@pytest.mark.parametrize(("content", "names"), [(c, n) for _, c, n in CSV_ATTACKS],
                         ids=[what for what, _, _ in CSV_ATTACKS])  # fmt: skip
def test_non_finite_numbers_and_nul_in_a_sheet_are_refused(api, project, content, names):
    message = refused(upload(api, project, "csv", content), names)
    assert "x" * 100 not in message and "b" * 100 not in message


def test_a_cell_beyond_the_csv_modules_own_limit_is_a_refusal():
    # Beyond the default body limit, so read here: an operator may allow larger bodies.
    with pytest.raises(InvalidInstrumentError, match="line 5") as refusal:
        from_csv(SHEET + 'more,single,"' + "x" * 200_000 + '",A|B\n', "Sheet")
    assert len(str(refusal.value)) < 300


def test_a_sheet_saved_as_excel_csv_utf8_is_read(api, project):
    r = upload(api, project, "csv", "\ufeff" + SHEET.replace("\n", "\r\n"), key="transit")
    assert r.status_code == 201, r.text
    assert [i["key"] for i in r.json()["definition"]["items"]] == ["bus", "safe", "pay"]
    # The same mark before a JSON instrument or a Qualtrics export is no fault either.
    assert upload(api, project, "json", "\ufeff" + json.dumps(POLICY)).status_code == 201
    assert upload(api, project, "qsf", "\ufeff" + QSF_FILE.read_text(), key="local").status_code == 201

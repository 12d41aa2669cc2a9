"""The shipped interview script follows the reference structure, and bad scripts fail with the place named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentbank.core.errors import AgentBankError
from interviewer.session.script import Script, ScriptError, load_script, shorten

REFERENCE = Path(__file__).parents[3].parent / "shared/data/interview/avp_park2024_interview_structure.json"
SHIPPED = Path(__file__).parents[3] / "interviewer/session/scripts/life_history.yaml"


@pytest.fixture(scope="module")
def script() -> Script:
    return load_script()


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    return json.loads(REFERENCE.read_text(encoding="utf-8"))


def shipped_data() -> dict[str, Any]:
    return yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))


def write(tmp_path: Path, name: str, data: Any) -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_shipped_script_has_the_reference_size(script: Script) -> None:
    assert script.key == "life-history"
    assert script.version == 1
    assert len(script.modules) == 16
    assert len(script.questions()) == 109
    assert script.total_seconds == 7130
    assert [module.key for module in script.modules] == list("ABCDEFGHIJKLMNOP")


def test_shipped_script_matches_the_reference_structure(script: Script, reference: dict[str, Any]) -> None:
    assert len(script.modules) == len(reference["modules"])
    for module, ref in zip(script.modules, reference["modules"], strict=True):
        assert ref["module"].startswith(f"{module.key}. ")
        assert len(module.questions) == len(ref["items"]), module.key
        assert [q.seconds for q in module.questions] == [item["seconds"] for item in ref["items"]], module.key
        assert sum(q.seconds for q in module.questions) == ref["seconds"]
    assert script.total_seconds == reference["total_scripted_seconds"]


def test_question_keys_are_module_letter_and_running_number(script: Script) -> None:
    for module in script.modules:
        assert [q.key for q in module.questions] == [f"{module.key}{n}" for n in range(1, len(module.questions) + 1)]


def test_every_question_is_a_single_question(script: Script) -> None:
    for _, question in script.questions():
        assert question.text.endswith("?"), question.key
        assert question.text.count("?") == 1, question.key


def test_questions_are_in_module_order(script: Script) -> None:
    pairs = script.questions()
    assert pairs[0][0].key == "A" and pairs[0][1].key == "A1"
    assert pairs[-1][0].key == "P" and pairs[-1][1].key == "P2"
    assert all(question in module.questions for module, question in pairs)


def test_opening_discloses_the_ai_and_the_participants_controls(script: Script) -> None:
    opening = script.opening.lower()
    assert script.interviewer_name in script.opening
    for phrase in ("ai interviewer", "not a person", "two hours", "pause", "skip", "saved", "withdraw"):
        assert phrase in opening, phrase
    closing = script.closing.lower()
    for phrase in ("thank", "transcript", "remove", "confirm"):
        assert phrase in closing, phrase


def test_fingerprint_is_stable_and_tracks_content(script: Script) -> None:
    assert len(script.fingerprint) == 64
    assert load_script().fingerprint == script.fingerprint
    assert load_script(SHIPPED).fingerprint == script.fingerprint
    data = shipped_data()
    data["modules"][0]["questions"][0]["text"] += " "  # surrounding whitespace is not content
    assert Script.model_validate(data).fingerprint == script.fingerprint
    data["modules"][0]["questions"][0]["seconds"] += 1
    assert Script.model_validate(data).fingerprint != script.fingerprint


def test_shorten(script: Script) -> None:
    short = shorten(script)
    assert [m.key for m in short.modules] == [m.key for m in script.modules]
    assert [q.key for _, q in short.questions()] == [m.questions[0].key for m in script.modules]
    assert short.fingerprint != script.fingerprint
    assert len(script.questions()) == 109  # the original is untouched

    tiny = shorten(script, questions_per_module=2, modules=3, seconds=5)
    assert [q.key for _, q in tiny.questions()] == ["A1", "A2", "B1", "B2", "C1", "C2"]
    assert tiny.total_seconds == 30
    assert tiny.opening == script.opening and tiny.closing == script.closing
    assert tiny.fingerprint != short.fingerprint

    # Even when nothing would be cut, the shortened script is told apart from the original.
    one = shorten(tiny, questions_per_module=1, modules=1)
    assert shorten(one).fingerprint != one.fingerprint
    with pytest.raises(ValueError):
        shorten(script, questions_per_module=0)


def q(data: dict[str, Any], module: int, question: int) -> dict[str, Any]:
    return data["modules"][module]["questions"][question]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: q(d, 2, 0).update(seconds=0), "modules[2].questions[0].seconds: must be greater than 0"),
        (lambda d: q(d, 0, 1).update(seconds=-5), "modules[0].questions[1].seconds: must be greater than 0"),
        (lambda d: q(d, 3, 1).update(key="D1"), "modules[3].questions[1].key: duplicate question key 'D1'"),
        (lambda d: q(d, 4, 0).update(key="A1"), "modules[4].questions[0].key: duplicate question key 'A1'"),
        (lambda d: d["modules"][1].update(key="A"), "modules[1].key: duplicate module key 'A'"),
        (lambda d: q(d, 5, 2).update(text="   "), "modules[5].questions[2].text: must not be empty"),
        (lambda d: q(d, 0, 0).update(seconds="625"), "modules[0].questions[0].seconds: must be"),
        (lambda d: d["modules"][6].update(questions=[]), "modules[6].questions: must have at least 1 item"),
        (lambda d: d.pop("closing"), "closing: is required"),
        (lambda d: d.update(version=0), "version: must be greater than or equal to 1"),
        (lambda d: d.update(modules=[]), "modules: must have at least 1 item"),
        (lambda d: d.update(extra_field=1), "extra_field: is not a known field"),
    ],
)
def test_invalid_script_names_file_and_place(tmp_path: Path, change: Any, expected: str) -> None:
    data = shipped_data()
    change(data)
    path = write(tmp_path, "broken.yaml", data)
    with pytest.raises(ScriptError) as caught:
        load_script(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    assert expected in message
    assert "pydantic" not in message and "Traceback" not in message


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.yaml"
    with pytest.raises(ScriptError, match=r"nowhere\.yaml: file not found"):
        load_script(path)


def test_invalid_yaml_names_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", "key: life-history\n  version: [1\n")
    with pytest.raises(ScriptError, match=r"bad\.yaml: line 2, column \d+: not valid YAML"):
        load_script(path)


@pytest.mark.parametrize(("text", "found"), [("", "nothing"), ("- A\n- B\n", "list"), ("just words\n", "str")])
def test_top_level_must_be_a_mapping(tmp_path: Path, text: str, found: str) -> None:
    path = write(tmp_path, "odd.yaml", text)
    with pytest.raises(ScriptError, match=rf"odd\.yaml: top level: must be a mapping .*found {found}"):
        load_script(path)


def test_script_error_is_a_domain_error(tmp_path: Path) -> None:
    with pytest.raises(AgentBankError) as caught:
        load_script(tmp_path / "missing.yaml")
    assert caught.value.status_code == 422
    assert caught.value.code == "invalid_script"


def test_a_valid_custom_script_loads(tmp_path: Path) -> None:
    data = {
        "key": "pilot",
        "version": 2,
        "title": "Pilot",
        "interviewer_name": "Robin",
        "opening": "Hello.",
        "closing": "Thanks.",
        "modules": [{"key": "A", "title": "Only", "questions": [{"key": "A1", "text": "How are you?", "seconds": 30}]}],
    }
    script = load_script(str(write(tmp_path, "pilot.yaml", data)))
    assert script.total_seconds == 30
    assert [(m.key, q.key) for m, q in script.questions()] == [("A", "A1")]


def test_the_short_version_asks_each_module_once():
    from interviewer.session.script import short_version

    full = load_script()
    short = short_version(full)
    assert [m.key for m in short.modules] == [m.key for m in full.modules]
    assert all(len(m.questions) == 1 for m in short.modules)
    assert short.fingerprint != full.fingerprint and 20 * 60 <= short.total_seconds <= 45 * 60
    assert "two hours" in full.opening and "two hours" not in short.opening and "35 minutes" in short.opening

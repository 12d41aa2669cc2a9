"""Malformed instrument files made by mutating the valid ones (the Qualtrics export, the JSON instrument and
the sheet the other tests upload), each uploaded to an approved project through the real endpoint: whatever
the mutation, the answer is an instrument or a refusal in the bank's shape, never a server error, and a
refusal never repeats the file at length."""

from __future__ import annotations

import copy
import csv
import io
import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.team_instruments import HUGE, POLICY, QSF_FILE, SHEET, as_text, literal, upload

EXAMPLES = 60  # per format: about two seconds each, and a new draw on every run
# Values a hostile or broken export holds where another belongs; literal(...) is written bare, as no
# encoder would write it (1e999, a 5000-digit number, nesting past any stack).
HOSTILE = [None, True, False, 0, -1, 2**31, 2**63, 2**70, -(2**70), 1.5, float("inf"), float("-inf"), float("nan"),
           "", " ", "abc", "1.5", "-0", "1e999", "Infinity", "-Infinity", "NaN", "inf", "\x00", "a\x00b", "\ud800",
           "<p>", "9" * 5000, "x" * 3000, [], {}, [[]], [{}], {"1": {}}, [1, 2, 3], {"Display": 5}, ["1", "2"],
           literal("1e999"), literal("-1e999"), literal(HUGE), literal("[" * 3000 + "]" * 3000)]  # fmt: skip
VALUES = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=12), st.integers(), st.floats())
# For a number (or a number written as text, as Qualtrics writes codes and bounds) and for text: what the
# importer converts, so a mutation there reaches the conversion rather than a type check before it.
WRITTEN = st.from_regex(r"-?[0-9]{1,25}(\.[0-9]*)?(e-?[0-9]{1,4})?", fullmatch=True)
NUMBERS = st.one_of(st.sampled_from([v for v in HOSTILE if not isinstance(v, list | dict)]), st.floats(),
                    st.integers(), WRITTEN)  # fmt: skip
TEXTS = st.one_of(st.sampled_from(["", " ", "\x00", "a\x00b", "\ud800", "<p></p>", "&amp;", "x" * 3000, "Yes"]),
                  st.text(max_size=12))  # fmt: skip
CELLS = st.one_of(st.sampled_from(["", " ", "inf", "-Infinity", "1e999", "NaN", "9" * 5000, "\x00", '"', "|", "||",
                                   "a|a", ",", "\n", "\r", "\ufeff", "single", "numeric", "scale", "-1", "0", "2.5"]),
                  st.text(max_size=12))  # fmt: skip
# A number as a sheet writes it: what float() and int() read that no instrument holds, and what they do not.
NUMBERS_WRITTEN = st.one_of(st.sampled_from(["inf", "-inf", "Infinity", "-Infinity", "1e999", "-1e999", "NaN", "nan",
                                             "9" * 5000, "1e308", "-0", "0x10", "1_000", "\u0663", "\x00", " 5 ", ""]),
                            WRITTEN)  # fmt: skip
Path = tuple[Any, ...]


def _places(tree: Any, path: Path = ()) -> list[Path]:
    """Every place in a JSON tree, the whole of it first."""
    places = [path]
    children = tree.items() if isinstance(tree, dict) else enumerate(tree) if isinstance(tree, list) else []
    for key, child in children:
        places.extend(_places(child, (*path, key)))
    return places


def _numeric(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lstrip("-").replace(".", "", 1).isdigit()
    return isinstance(value, int | float) and not isinstance(value, bool)


def _at(tree: Any, path: Path) -> Any:
    for key in path:
        tree = tree[key]
    return tree


def _mutate(tree: Any, path: Path, how: str, value: Any) -> Any:
    """The tree with the node at ``path`` replaced, removed, wrapped, or turned from an object into a list."""
    node = _at(tree, path)
    changed = {
        "replace": value,
        "wrap": [node],
        "reshape": list(node.values()) if isinstance(node, dict) else {str(n): v for n, v in enumerate(node)}
        if isinstance(node, list) else value,
    }.get(how, value)  # fmt: skip
    if not path:
        return changed
    parent = _at(tree, path[:-1])
    if how == "remove":
        del parent[path[-1]]
    else:
        parent[path[-1]] = changed
    return tree


@st.composite
def mutated_json(draw: st.DrawFn, original: Any) -> str:
    tree = copy.deepcopy(original)
    for _ in range(draw(st.integers(1, 2))):
        how = draw(st.sampled_from(["number", "number", "text", "text", "replace", "remove", "wrap", "reshape"]))
        places = _places(tree)
        if how == "number":
            places = [p for p in places if _numeric(_at(tree, p))] or places
        elif how == "text":
            places = [p for p in places if isinstance(_at(tree, p), str)] or places
        values = {"number": NUMBERS, "text": TEXTS}.get(how, VALUES)
        # Chosen by a random the draw holds: uniform over places, where sampled_from favours the first.
        place = draw(st.randoms(use_true_random=False)).choice(places)
        tree = _mutate(tree, place, "replace" if how in ("number", "text") else how, draw(values))
    return _damaged(draw, as_text(tree))


def _damaged(draw: st.DrawFn, text: str) -> str:
    """Now and then the text itself broken: cut short, a character put in, or a byte-order mark first."""
    how = draw(st.sampled_from(["none"] * 9 + ["cut", "insert", "bom"]))
    at = draw(st.integers(0, len(text)))
    if how == "cut":
        return text[:at] or "{}"
    if how == "insert":
        return text[:at] + draw(st.sampled_from(['"', "{", "]", ",", "\\", "\x00", "\ufeff", "\n"])) + text[at:]
    return "\ufeff" + text if how == "bom" else text


@st.composite
def mutated_sheet(draw: st.DrawFn) -> str:
    rows = list(csv.reader(io.StringIO(SHEET)))
    numbers = {rows[0].index(c) for c in ("low", "high", "minimum", "maximum")}
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["number", "number", "cell", "cell", "header", "column", "drop", "repeat"]))
        row = draw(st.integers(1, len(rows) - 1)) if len(rows) > 1 else 0
        # A cell an item uses, a number cell the most (any other, once filled, is refused before it is read).
        filled = [n for n, cell in enumerate(rows[row]) if cell and (how != "number" or n in numbers)]
        if how in ("number", "cell") and row > 0 and filled:
            column = draw(st.randoms(use_true_random=False)).choice(filled)
            rows[row][column] = draw(NUMBERS_WRITTEN if how == "number" else CELLS)
        elif how == "header" and rows[0]:
            rows[0][draw(st.integers(0, len(rows[0]) - 1))] = draw(CELLS)
        elif how == "column":
            name = draw(st.sampled_from(["vignette", "minimum", "options", "key", "colour", "", "x" * 300]))
            rows = [[*r, name if n == 0 else draw(CELLS)] for n, r in enumerate(rows)]
        elif how == "drop" and row > 0:
            del rows[row]
        elif how == "repeat":
            rows.insert(row, list(rows[row]))
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    return _damaged(draw, out.getvalue())


STRATEGIES = {
    "qsf": mutated_json(json.loads(QSF_FILE.read_text())),
    "json": mutated_json(POLICY),
    "csv": mutated_sheet(),
}


@pytest.mark.parametrize("fmt", sorted(STRATEGIES))
def test_no_malformed_file_is_a_server_error(api, project, fmt):
    answers: Counter[int] = Counter()

    @given(content=STRATEGIES[fmt])
    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                     HealthCheck.data_too_large, HealthCheck.large_base_example])  # fmt: skip
    def upload_one(content: str) -> None:
        r = upload(api, project, fmt, content)
        answers[r.status_code] += 1
        assert r.status_code < 500, (r.status_code, r.text[:300])
        if r.status_code >= 400:
            message = r.json()["error"]["message"]
            assert len(message) < 2000 and "Traceback" not in r.text, message[:300]

    upload_one()
    served = sum(n for status, n in answers.items() if status < 500)
    print(f"{fmt}: {sum(answers.values())} malformed files, {served} answered below 500; by status {dict(answers)}")
    assert sum(answers.values()) >= EXAMPLES

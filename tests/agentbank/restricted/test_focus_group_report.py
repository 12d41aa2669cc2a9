"""The focus group's HTML report escapes everything it shows: an agent made to say markup (a team's stimulus
or a model's words) cannot run script in the bank's origin when a member opens the report."""

from __future__ import annotations

from agentbank.restricted.groups.report import render_report

ATTACK = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def result(text: str) -> dict:
    turn = {"number": 1, "kind": "agent", "status": "spoken", "speaker": "Seat 1", "stance": 1, "text": text}
    moderator = {"number": 0, "kind": "moderator", "seat": "Seat 1", "text": text}
    seat = {"seat": "Seat 1", "status": "active", "utterances": 1, "stance": {"first": 0, "last": 1},
            "report_card": None, "flag": text}  # fmt: skip
    return {
        "id": "g", "status": "done", "stimulus": {"text": text},
        "framing": {"statement": "This group is simulated.", "model": text, "embedded_model": False},
        "seats": [seat], "themes": [{"theme": text, "seats": ["Seat 1"], "utterances": [1]}],
        "stances": {"changes": [{"seat": "Seat 1", "from": 0, "to": 1, "at": 1}]}, "transcript": [moderator, turn],
    }  # fmt: skip


def test_every_value_of_the_report_is_escaped():
    page = render_report(result(ATTACK))
    assert "<script" not in page and "<img" not in page
    assert page.count("&lt;script&gt;") == 6  # stimulus, model, flag, theme, the moderator's and the seat's words
    assert "Simulated focus group" in page

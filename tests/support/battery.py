"""Shared helpers of the tests (moved from ``tests.app.api.test_battery``)."""

from __future__ import annotations


def first_choice(question: dict) -> float:
    return question["options"][0]["code"] if question["options"] else question["minimum"]


def answer_all(api, headers, wave: int, declined: set[str] = frozenset(), given: dict | None = None) -> dict:
    """Answer every question of the wave as a participant's page would (some declined); returns what was sent."""
    battery = api.client.get("/v1/participant/battery", headers=headers).json()
    sent = {}
    for page in battery["pages"]:
        for q in page["questions"]:
            value = None if q["key"] in declined else (given or {}).get(q["key"], first_choice(q))
            r = api.client.put(f"/v1/participant/battery/answers/{q['key']}", json={"wave": wave, "value": value},
                               headers=headers)  # fmt: skip
            assert r.status_code == 204, r.text
            sent[q["key"]] = value
    return sent

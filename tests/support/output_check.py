"""Shared helpers of the tests (moved from ``tests.agentbank.consultation.test_output_check``)."""

from __future__ import annotations

import pytest

from agentbank.consultation.output_check.check import check
from agentbank.consultation.output_check.received import Received
from agentbank.consultation.output_check.reference import (
    Reference,
)

TURN = (
    "When I was nineteen I left the valley with forty dollars, a borrowed suitcase and my grandmother's "
    "rosary, and I took the night bus to the city because nobody there knew my name."
)


MARKER = "q7m2x9kd4t1v8p3w6c5b0n2r"


@pytest.fixture(scope="module")
def reference():
    return Reference.build([TURN], MARKER, ["Rosa Martinez", "Dayton"])


def hand_out(pieces: list[str], reference) -> list[bool]:
    """Ask for ``pieces`` in order, as a team would across answers; which of them were released."""
    received, released = Received(reference), []
    for piece in pieces:
        released.append(check(piece, reference, received).released)
        if released[-1]:
            received.add(piece)
    return released


def longest_run(released: list[bool], words: list[str]) -> int:
    """The most words of the turn in a row that were released (``released[i]`` for word i), not
    counting a word of one or two letters at either end (as the check's own spans)."""
    longest = run_start = 0
    for i in range(len(words) + 1):
        if i < len(words) and released[i]:
            continue
        first, last = run_start, i - 1
        while first <= last and len(words[first]) < 3:
            first += 1
        while last >= first and len(words[last]) < 3:
            last -= 1
        longest, run_start = max(longest, last - first + 1), i + 1
    return longest


def submit(api, team, project, questions, key):
    """Open questions for both agents through the restricted endpoint; the response as it comes."""
    body = {"kind": "open", "questions": list(questions), "agents": [str(a.id) for a in team["agents"]]}
    headers = {**team["member"], "Idempotency-Key": key}
    return api.client.post(f"/v1/projects/{project}/jobs", json=body, headers=headers)

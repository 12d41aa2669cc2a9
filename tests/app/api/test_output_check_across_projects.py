"""What a client received from an agent is counted together, whichever of its projects it came through.

The attack this answers: one client asking six in-order content questions about one turn, spread over
three of its projects, got all six answers (14 consecutive words of the turn), while inside one project
the answer that completed a quote was withheld.
"""

from __future__ import annotations

import re

import pytest

from tests.app.api.protection import make_team, open_job
from tests.support.factories import responder
from tests.support.restricted import apply_and_approve, run_queued

LAST_TURN = ("On winter evenings my brother and I fixed old radios in the shed behind the house while our "
             "mother sang hymns and the stove ticked")  # fmt: skip
WORDS = LAST_TURN.split()
PIECE = re.compile(r"bit (\d+)")


def obedient(messages, schema):
    """A model that hands out the participant's last turn three words at a time, as it is asked."""
    props = (schema or {}).get("properties", {})
    asked = PIECE.search(messages[-1]["content"])
    if "cited_turns" in props and asked:
        n = int(asked.group(1))
        return {"answer": f"It went: {' '.join(WORDS[3 * (n - 1) : 3 * n])}.",
                "cited_turns": props["cited_turns"]["items"]["enum"][:1]}  # fmt: skip
    return responder(messages, schema)


@pytest.fixture
def team(api):
    return make_team(api, script=obedient, extra=LAST_TURN)


def ask(api, team, project, pieces, key):
    """Ask for these pieces of the turn in one job; the answers as the team reads them."""
    job = open_job(api, team, project, [f"Tell me about your evenings, bit {n}." for n in pieces], key=key)
    assert run_queued(api, team) == 1
    (result,) = api.client.get(f"/v1/jobs/{job}/results", headers=team["member"]).json()
    return result["answers"]


def released_words(answers) -> list[bool]:
    return [not a["withheld"] for a in answers]


def test_a_passage_split_over_three_projects_is_withheld_like_one_split_over_jobs(api, team):
    projects = [apply_and_approve(api, team) for _ in range(3)]
    answers = []
    for n, project in enumerate(projects):
        answers += ask(api, team, project, [2 * n + 1, 2 * n + 2], key=f"piece-{n}")
    # Three words an answer: the fourth answer completes twelve words in a row, and it is withheld.
    assert released_words(answers) == [True, True, True, False, True, True]
    # Nothing the team reads, joined in order, holds a quote of the turn's length.
    shown = " ".join(a["value"] for a in answers if not a["withheld"])
    assert " ".join(WORDS[:12]) not in re.sub(r"It went: |\.", "", shown)


def test_inside_one_project_the_same_answer_is_withheld(api, team):
    project = apply_and_approve(api, team)
    answers = []
    for n in range(3):
        answers += ask(api, team, project, [2 * n + 1, 2 * n + 2], key=f"piece-{n}")
    assert released_words(answers) == [True, True, True, False, True, True]

"""Differencing attacks on the open tier, as an outsider with accomplices among the participants would run them.

The attacker reads every table of a release over HTTP (overall and by each breakdown), has the victim and
up to k−1 participants it controls withdraw, reads every table of the next release, and subtracts: in each
table, a count of the victim's group that dropped by more than the accomplices explain is a vote for the
victim's answer. It knows the victim's demographics and its accomplices' answers and demographics, nothing
else. Its guess per item is the code with the most votes (the item's mode on a tie): the score to beat is
the mode alone.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from agentbank.publication.breakdowns import BREAKDOWNS
from agentbank.publication.privacy import ASKED_PER_ITEM
from agentbank.publication.workload import STANDING, ask

# Items with two to five codes, as the GSS asks them.
ITEMS = {"cappun": (1, 2), "gunlaw": (1, 2), "grass": (1, 2), "natspac": (1, 2, 3), "natenvir": (1, 2, 3),
         "natheal": (1, 2, 3), "confinan": (1, 2, 3), "helpful": (1, 2, 3), "fair": (1, 2, 3),
         "trust": (1, 2, 3), "postlife": (1, 2), "abany": (1, 2)}  # fmt: skip
DEMOGRAPHIC_CODES = {"sex": (1, 2), "age": (25, 38, 52, 70), "race": (1, 2, 3), "degree": (0, 1, 2, 3, 4),
                     "region": (1, 2, 3, 4), "partyid": (0, 3, 6), "polviews": (2, 4, 6)}  # fmt: skip
ONE_WAY = ("sex", "age_band", "race", "education", "region", "party", "ideology")


@dataclass(frozen=True)
class Person:
    demographics: dict[str, int]
    answers: dict[str, int]


def people(n: int, seed: int = 0) -> list[Person]:
    """``n`` people with varied demographics and answers that lean towards each item's first code."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        demographics = {key: rng.choice(codes) for key, codes in DEMOGRAPHIC_CODES.items()}
        answers = {item: rng.choices(codes, weights=[2.0, *[1.0] * (len(codes) - 1)])[0]
                   for item, codes in ITEMS.items()}  # fmt: skip
        out.append(Person(demographics, answers))
    return out


Table = dict[tuple[tuple[str, ...], int], int | None]
Reader = Callable[[str, str], Table]  # (item, breakdowns) -> (group, code) -> count, None where hidden


TWO_WAY = tuple(f"{a},{b}" for i, a in enumerate(ONE_WAY) for b in ONE_WAY[i + 1 :])
# The attacker reads every table a release holds: the standing ones, and as many as a release measures of
# what researchers asked for, which the attacker asks for themselves (a non-standing one-way and pairs).
ASKED = ("ideology", *TWO_WAY[: ASKED_PER_ITEM - 1])
EVERY_TABLE = ("", *(b for b in ONE_WAY if b in STANDING), *ASKED)


def ask_every_table(session) -> None:
    """The attacker asks for the tables the standing workload lacks, so the releases hold them."""
    for item in ITEMS:
        for table in ASKED:
            ask(session, "gss", item, tuple(d for d in BREAKDOWNS if d in table.split(",")))


def read_release(read: Reader, breakdowns: Iterable[str] = EVERY_TABLE) -> dict[tuple[str, str], Table]:
    """Every table of the current release the attack uses."""
    return {(item, b): read(item, b) for item in ITEMS for b in breakdowns}


def group_of(demographics: Mapping[str, int], breakdown: str) -> tuple[str, ...]:
    """A person's group in a table (the overall table has one group)."""
    return tuple(BREAKDOWNS[b].classify(demographics) for b in breakdown.split(",") if b)


def guess(
    before: Mapping[tuple[str, str], Table],
    after: Mapping[tuple[str, str], Table],
    victim: Mapping[str, int],
    accomplices: list[Person],
) -> dict[str, int]:
    """The attacker's guess of the victim's answer to every item."""
    guesses = {}
    for item, codes in ITEMS.items():
        votes = dict.fromkeys(codes, 0.0)
        for (table_item, breakdown), table in before.items():
            if table_item != item:
                continue
            group = group_of(victim, breakdown)
            for code in codes:
                old, new = table.get((group, code)), after[(item, breakdown)].get((group, code))
                if old is None or new is None:
                    continue
                explained = sum(
                    1 for a in accomplices if group_of(a.demographics, breakdown) == group and a.answers[item] == code
                )
                votes[code] += old - new - explained
        mode = modes(after)[item]
        guesses[item] = max(codes, key=lambda c: (votes[c], c == mode))  # a tie goes to the mode
    return guesses


def modes(after: Mapping[tuple[str, str], Table]) -> dict[str, int]:
    """Each item's most frequent code in a release: the guess that needs no attack."""
    return {item: max(codes, key=lambda c: (after[(item, "")].get(((), c)) or 0, -c)) for item, codes in ITEMS.items()}


def score(guesses: Mapping[str, int], truth: Mapping[str, int]) -> int:
    """How many of the victim's answers the guesses name."""
    return sum(1 for item, code in guesses.items() if truth[item] == code)

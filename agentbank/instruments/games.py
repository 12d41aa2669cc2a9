"""Five economic games with the stakes of Park et al. 2024, in the bank's own wording.

Each is one item answered as a number within the game's bounds (the prisoner's dilemma as a choice)
and normalized to 0–1: the share given, sent, returned or contributed; 1 for cooperating.
"""

from __future__ import annotations

from functools import cache

from agentbank.instruments.model import Instrument, Item, Option

PREAMBLE = (
    "These are decisions about real money with another participant you will never meet. Say what you "
    "would actually do; there is no right or wrong answer."
)

ITEMS = (
    Item(
        "dictator",
        "numeric",
        "You have been given $5 to divide between yourself and another participant, who has no say in "
        "the matter. How many dollars (0 to 5) do you give to the other participant?",
        minimum=0,
        maximum=5,
        meta={"expert": "economist", "game": "dictator", "stake_usd": 5},
    ),
    Item(
        "trust_sender",
        "numeric",
        "You have $3. Whatever you send to another participant is tripled before they receive it, and "
        "they then decide how much of it to send back to you. How many dollars (0 to 3) do you send?",
        minimum=0,
        maximum=3,
        meta={"expert": "economist", "game": "trust", "role": "sender", "stake_usd": 3, "multiplier": 3},
    ),
    Item(
        "trust_receiver",
        "numeric",
        "Another participant started with $3 and sent all of it to you; it was tripled, so you now have "
        "$9. How many dollars (0 to 9) do you send back to them?",
        minimum=0,
        maximum=9,
        meta={"expert": "economist", "game": "trust", "role": "receiver", "received_usd": 9},
    ),
    Item(
        "public_goods",
        "numeric",
        "You are in a group of four, and each of you has $4. Money put into a shared pot is doubled and "
        "split equally among all four, whoever contributed. How many dollars (0 to 4) do you put in?",
        minimum=0,
        maximum=4,
        meta={"expert": "economist", "game": "public goods", "group_size": 4, "stake_usd": 4, "multiplier": 2},
    ),
    Item(
        "prisoners_dilemma",
        "categorical",
        "You and another participant each choose, without knowing the other's choice, to cooperate or to "
        "defect. If both cooperate, each gets $6. If one defects and the other cooperates, the defector "
        "gets $8 and the cooperator $2. If both defect, each gets $4. What do you choose?",
        options=(Option(1, "cooperate"), Option(2, "defect")),
        meta={"expert": "economist", "game": "prisoner's dilemma", "scores": {"1": 1.0, "2": 0.0}},
    ),
)


@cache
def load_games() -> Instrument:
    """The dictator, trust (sender and receiver), public goods and prisoner's dilemma games."""
    source = "Stakes of Park et al. 2024 (SM 4); wording the bank's own"
    return Instrument("games", "Economic games", PREAMBLE, source, ITEMS)

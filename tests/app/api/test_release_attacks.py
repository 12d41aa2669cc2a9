"""Differencing attacks on the open tier through the real endpoints, with the real noise (see ``release_attacks``).

The guarantee: an attacker who knows everything but one person's answer to an item names it at most as
often as ``privacy.guess_bound`` allows for the release's ``mu`` and the item's prior. The attacks here know
less (their accomplices' answers, not everyone's), and must stay within it; before releases were protected
they named every answer of the victim (12 of 12 items, where guessing each item's mode named 8).
"""

from __future__ import annotations

import math

from agentbank.db.models import Participant
from agentbank.publication.privacy import guess_bound
from tests.app.api.factories import population, release, store_answers
from tests.app.api.release_attacks import (
    EVERY_TABLE,
    ITEMS,
    Person,
    ask_every_table,
    guess,
    modes,
    people,
    read_release,
    score,
)  # fmt: skip

URL = "/v1/open/instruments/gss/items/{item}/distribution"
K, MU = 10, 1.0


def reader(api, headers):
    def read(item: str, breakdowns: str):
        r = api.client.get(URL.format(item=item), params={"breakdowns": breakdowns}, headers=headers)
        assert r.status_code == 200, r.text
        return {(tuple(c["group"].values()), c["code"]): c["count"] for c in r.json()["cells"]}

    return read


def withdraw(api, agents) -> None:
    for agent in agents:
        me = api.participant_headers(api.session.get(Participant, agent.participant_id))
        assert api.client.post("/v1/participant/withdraw", json={"confirm": True}, headers=me).status_code == 200


def bound(crowd: list[Person]) -> tuple[float, float]:
    """The most correct guesses per victim the guarantee allows (expected, and its binomial spread)."""
    chances = []
    for item, codes in ITEMS.items():
        prior = [sum(1 for p in crowd if p.answers[item] == c) for c in codes]
        chances.append(guess_bound(MU, prior))
    return sum(chances), math.sqrt(sum(c * (1 - c) for c in chances))


def test_accomplices_who_withdraw_with_the_victim_learn_no_more_than_the_guarantee_allows(api):
    crowd = people(150, seed=3)
    agents = population(api.session, [(p.demographics, p.answers["cappun"]) for p in crowd])
    store_answers(api.session, agents, [p.answers for p in crowd])
    ask_every_table(api.session)
    assert release(api.session, k=K, force=False, mu=MU) is not None
    read = reader(api, api.token("outsider", "aggregate:read"))
    attack = mode = 0
    rounds = 3
    for n in range(rounds):  # three victims, each withdrawing with nine accomplices
        group = slice(n * K, (n + 1) * K)
        before = read_release(read, EVERY_TABLE)
        withdraw(api, agents[group])
        assert release(api.session, k=K, force=False, mu=MU) is not None  # the change allows a cut: no k-rule
        after = read_release(read, EVERY_TABLE)
        victim, accomplices = crowd[group][0], crowd[group][1:]
        attack += score(guess(before, after, victim.demographics, accomplices), victim.answers)
        mode += score(modes(after), victim.answers)
    expected, spread = bound(crowd)
    print(f"attack {attack}/{rounds * len(ITEMS)}, the mode {mode}, the guarantee's bound {rounds * expected:.1f}")
    assert attack <= rounds * expected + 3 * math.sqrt(rounds) * spread


def test_a_release_right_after_one_withdrawal_tells_no_more_than_the_guarantee_allows(api):
    crowd = people(120, seed=5)
    agents = population(api.session, [(p.demographics, p.answers["cappun"]) for p in crowd])
    store_answers(api.session, agents, [p.answers for p in crowd])
    ask_every_table(api.session)
    assert release(api.session, k=K, force=False, mu=MU) is not None
    read = reader(api, api.token("outsider", "aggregate:read"))
    attack = mode = 0
    rounds = 3
    for n in range(rounds):
        before = read_release(read, EVERY_TABLE)
        withdraw(api, [agents[n]])
        assert release(api.session, k=K, force=True, mu=MU) is not None  # the operator's forced cut
        after = read_release(read, EVERY_TABLE)
        attack += score(guess(before, after, crowd[n].demographics, []), crowd[n].answers)
        mode += score(modes(after), crowd[n].answers)
    expected, spread = bound(crowd)
    print(f"attack {attack}/{rounds * len(ITEMS)}, the mode {mode}, the guarantee's bound {rounds * expected:.1f}")
    assert attack <= rounds * expected + 3 * math.sqrt(rounds) * spread

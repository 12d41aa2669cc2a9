"""Validity travels with every answer: a team's results carry their agent's card or say "not validated";
an open-tier distribution carries the bank's measured accuracy on its item, or on its topic's items
(named), as the current release publishes it (from its members' sealed cards, under its protection), only
once at least k people were scored, with a flag where the agents fall below the baseline."""

from __future__ import annotations

from agentbank.building.validity.cards import CardScore, store_cards
from agentbank.instruments.gss import load_gss
from tests.app.api.factories import exact_release, population
from tests.app.api.protection import make_team
from tests.support.factories import keyring
from tests.support.restricted import apply_and_approve, run_queued, survey

URL = "/v1/open/instruments/gss/items/{item}/distribution"


def test_each_result_carries_its_agents_card_or_says_it_is_not_validated(api):
    team = make_team(api)
    scored, unscored = team["agents"]
    card = CardScore(scored.id, "interview", 60, 0.55, 0.8, 0.6875, 0.61, 0.77, "cell-mode", 0.7)
    store_cards(api.session, keyring(), [card], instrument="gss", run_id="bank-abc", model="m", prompt_version="p-1")
    project = apply_and_approve(api, team)
    body = survey(team) | {"agents": [str(scored.id), str(unscored.id)]}
    r = api.client.post(f"/v1/projects/{project}/jobs", json=body, headers={**team["member"], "Idempotency-Key": "v"})
    assert r.status_code == 202, r.text
    run_queued(api, team)
    results = {x["agent_id"]: x for x in api.client.get(f"/v1/jobs/{r.json()['id']}/results",
                                                       headers=team["member"]).json()}  # fmt: skip
    card = results[str(scored.id)]["validity"]
    assert card["status"] == "validated"
    assert card["card"]["normalized_accuracy"] == 0.6875 and card["card"]["items"] == 60
    assert (card["card"]["normalized_low"], card["card"]["normalized_high"]) == (0.61, 0.77)
    assert card["card"]["baseline"] == "cell-mode" and card["card"]["baseline_normalized"] == 0.7
    assert card["card"]["model"] == "m" and card["card"]["created_at"]
    assert results[str(unscored.id)]["validity"] == {"status": "not_validated", "card": None}


def scored(api, agents, flags: dict, run_id: str, baseline: str = "population-mode") -> None:
    """Interview cards of a bank scoring, each agent's item by item: (agent right, repeated, baseline right)."""
    cards = [CardScore(a.id, "interview", len(flags), 0.5, 0.8, 0.6, baseline=baseline, item_flags=flags[n])
             for n, a in enumerate(agents) if n in flags]  # fmt: skip
    store_cards(api.session, keyring(), cards, instrument="gss", run_id=run_id, model="m", prompt_version="p")


def test_a_distribution_carries_the_items_measured_validity(api):
    agents = population(api.session, [({"sex": 1}, 1)] * 12 + [({"sex": 2}, 2)] * 18)
    exact_release(api.session)
    headers = api.token("researcher", "aggregate:read")
    unmeasured = api.client.get(URL.format(item="cappun"), headers=headers).json()["validity"]
    assert unmeasured["status"] == "not_validated" and unmeasured["agents"] == 0

    # Scored on too few people: not published (an accuracy over a handful of people tells on each of them).
    scored(api, agents, {n: {"cappun": (1, 1, 1)} for n in range(9)}, "bank-1")
    exact_release(api.session)
    assert api.client.get(URL.format(item="cappun"), headers=headers).json()["validity"]["status"] == "not_validated"

    # 30 scored: 18 agents right, 24 repeated, 21 right by the baseline.
    flags = {n: {"cappun": (int(n < 18), int(n < 24), int(n < 21))} for n in range(30)}
    scored(api, agents, flags, "bank-2")
    before = api.client.get(URL.format(item="cappun"), headers=headers).json()["validity"]
    assert before["status"] == "not_validated"  # a new scoring shows only from the next release
    exact_release(api.session)
    measured = api.client.get(URL.format(item="cappun"), headers=headers).json()["validity"]
    assert measured["status"] == "measured" and measured["items"] == ["cappun"] and measured["agents"] == 30
    assert (measured["accuracy"], measured["retest"], measured["normalized_accuracy"]) == (0.6, 0.8, 0.75)
    assert measured["baseline"] == "population-mode" and measured["baseline_accuracy"] == 0.7
    assert measured["below_baseline"] is True and measured["run_id"] == "bank-2" and measured["model"] == "m"


def test_the_threshold_is_the_k_the_release_was_cut_with(api):
    """A release cut with a smaller k (the demo's 5) shows an item's validity from that k, as it shows its
    cells, whatever the bank's own setting (10) says now."""
    agents = population(api.session, [({"sex": 1}, 1)] * 12)
    scored(api, agents, {n: {"cappun": (int(n < 6), 1, 0)} for n in range(8)}, "bank-k")
    headers = api.token("researcher", "aggregate:read")
    exact_release(api.session, k=5)
    measured = api.client.get(URL.format(item="cappun"), headers=headers).json()["validity"]
    assert measured["status"] == "measured" and measured["agents"] == 8 and measured["accuracy"] == 0.75
    exact_release(api.session, k=10)
    assert api.client.get(URL.format(item="cappun"), headers=headers).json()["validity"]["status"] == "not_validated"


def test_an_unscored_item_shows_its_topics_scored_items_by_name(api):
    gss = load_gss()
    topic = gss.item("natspac").meta["topic"]
    siblings = [i.key for i in gss.items if i.meta.get("topic") == topic and i.key != "natspac"][:2]
    agents = population(api.session, [({"sex": 1}, 1)] * 30, item="natspac")
    # 20 people scored on the first sibling (10 right), 30 on the second (21 right).
    flags = {n: {**({siblings[0]: (int(n < 10), 1, 0)} if n < 20 else {}), siblings[1]: (int(n < 21), 1, 0)}
             for n in range(30)}  # fmt: skip
    scored(api, agents, flags, "bank-3", baseline="cell-mode")
    exact_release(api.session)
    nearest = api.client.get(URL.format(item="natspac"), headers=api.token("r", "aggregate:read")).json()["validity"]
    assert nearest["status"] == "nearest" and nearest["items"] == sorted(siblings)
    assert nearest["accuracy"] == round((10 + 21) / 50, 3) and nearest["below_baseline"] is False


def test_a_distribution_carries_its_distance_from_the_gss_computed_from_the_release_alone(api):
    """Fidelity of aggregates on the open tier: the release's own published shares of the item beside the
    GSS's 2022 counts (total variation and Jensen–Shannon, with intervals), with or without breakdowns."""
    population(api.session, [({"sex": 1}, 1)] * 12 + [({"sex": 2}, 2)] * 18)  # cappun: 40% favor, 60% oppose
    exact_release(api.session)
    headers = api.token("researcher", "aggregate:read")
    body = api.client.get(URL.format(item="cappun"), headers=headers).json()
    fidelity = body["fidelity"]
    assert fidelity["against"].startswith("GSS 2022") and fidelity["people"] == 30
    shares = {c["code"]: c["weighted_share"] if fidelity["weighted"] else c["share"] for c in body["cells"]}
    favor = 2013 / (2013 + 1327)  # the codebook's 2022 counts of favor and oppose (don't know etc. left out)
    assert fidelity["tvd"] == round(abs(shares[1] - favor), 4)
    low, high = fidelity["tvd_interval"]
    assert low < fidelity["tvd"] < high and 0 < fidelity["jsd"] < 1
    by_sex = api.client.get(URL.format(item="cappun") + "?breakdowns=sex", headers=headers).json()
    assert by_sex["fidelity"] == fidelity  # always the overall distribution's

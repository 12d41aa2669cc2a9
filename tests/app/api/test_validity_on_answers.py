"""Validity travels with every answer: a team's results carry their agent's card or say "not validated";
an open-tier distribution carries the bank's measured accuracy on its item, or on its topic's items
(named), only once at least k people were scored, with a flag where the agents fall below the baseline."""

from __future__ import annotations

from agentbank.validity.cards import CardScore, ItemScore, store_cards, store_item_validity
from tests.app.api.factories import population, release
from tests.app.api.protection import make_team
from tests.app.api.test_restricted_tier import apply_and_approve, run_queued, survey

URL = "/v1/open/instruments/gss/items/{item}/distribution"


def test_each_result_carries_its_agents_card_or_says_it_is_not_validated(api):
    team = make_team(api)
    scored, unscored = team["agents"]
    store_cards(
        api.session, [CardScore(scored.id, "interview", 60, 0.55, 0.8, 0.6875, 0.61, 0.77, "cell-mode", 0.7)],
        instrument="gss", run_id="bank-abc", model="m", prompt_version="p-1",
    )  # fmt: skip
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


def test_a_distribution_carries_the_items_measured_validity(api):
    population(api.session, [({"sex": 1}, 1)] * 12 + [({"sex": 2}, 2)] * 12)
    release(api.session)
    headers = api.token("researcher", "aggregate:read")
    unmeasured = api.client.get(URL.format(item="cappun"), headers=headers).json()["validity"]
    assert unmeasured["status"] == "not_validated" and unmeasured["agents"] == 0

    # Scored on too few people: not published (an accuracy over a handful of people tells on each of them).
    store_item_validity(api.session, [ItemScore("cappun", 9, 0.9, 0.9, 1.0, "population-mode", 0.6)],
                        instrument="gss", run_id="bank-1", model="m")  # fmt: skip
    assert api.client.get(URL.format(item="cappun"), headers=headers).json()["validity"]["status"] == "not_validated"

    store_item_validity(api.session, [ItemScore("cappun", 30, 0.6, 0.8, 0.75, "population-mode", 0.7)],
                        instrument="gss", run_id="bank-2", model="m")  # fmt: skip
    measured = api.client.get(URL.format(item="cappun"), headers=headers).json()["validity"]
    assert measured["status"] == "measured" and measured["items"] == ["cappun"] and measured["agents"] == 30
    assert (measured["accuracy"], measured["retest"], measured["normalized_accuracy"]) == (0.6, 0.8, 0.75)
    assert measured["baseline"] == "population-mode" and measured["below_baseline"] is True
    assert measured["run_id"] == "bank-2" and measured["model"] == "m"


def test_an_unscored_item_shows_its_topics_scored_items_by_name(api):
    from agentbank.instruments.gss import load_gss

    gss = load_gss()
    topic = gss.item("natspac").meta["topic"]
    siblings = [i.key for i in gss.items if i.meta.get("topic") == topic and i.key != "natspac"][:2]
    population(api.session, [({"sex": 1}, 1)] * 12, item="natspac")
    release(api.session)
    store_item_validity(
        api.session, [ItemScore(siblings[0], 20, 0.5, 0.75, 2 / 3, "cell-mode", 0.4),
                      ItemScore(siblings[1], 30, 0.7, 0.75, 0.7 / 0.75, "cell-mode", 0.5)],
        instrument="gss", run_id="bank-3", model="m",
    )  # fmt: skip
    nearest = api.client.get(URL.format(item="natspac"), headers=api.token("r", "aggregate:read")).json()["validity"]
    assert nearest["status"] == "nearest" and nearest["items"] == sorted(siblings)
    assert nearest["accuracy"] == (0.5 * 20 + 0.7 * 30) / 50 and nearest["below_baseline"] is False

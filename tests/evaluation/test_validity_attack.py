"""Validity that reveals no one: the open tier's item figures, read before and after one participant's retest.

The attack the figures once allowed: read each item's accuracy and retest rate with the number of people
scored, let the victim take their retest (the bank scores them at once), read again, and subtract: for
every item, whether the victim's agent was right and whether the victim repeated their own answer; with
the agent's answers (a team can ask for them), the victim's own answers. Now the figures come only from a
release: between releases nothing moves, and two releases differ by noise under the release's budget.
"""

from __future__ import annotations

import math
import random
from datetime import timedelta

from fastapi.testclient import TestClient
from sqlalchemy import create_engine

from agentbank.access.clients import create_client
from agentbank.audit.log import SYSTEM
from agentbank.audit.signing_keys import load_signer
from agentbank.db.connections import make_sessionmaker, transaction
from agentbank.instruments.gss import load_gss
from agentbank.participants.battery import answers, battery_of
from agentbank.providers.fakes import HashingEmbedder, ScriptedChatModel, minimal_answer
from agentbank.publication.population import store_population_answers
from agentbank.publication.privacy import SHARES, Budget, guess_bound
from agentbank.publication.releases import Policy, cut_release
from agentbank.publication.shelf import Shelf, ensure_published
from agentbank.runtime.bank import Bank
from app.api import create_app
from evaluation.refresh import REFRESH
from evaluation.service import run_evaluation
from migrations.runner import SCHEMA
from tests.app.api.conftest import OPERATOR
from tests.support.evaluation import START, _models
from tests.support.factories import build, keyring

PEOPLE, ITEMS, MU, K = 12, 40, 1.0, 3
FIRST = 0.6  # each person gives an item's first option (the agents' answer) with this chance, else any other
KEEP = 0.7  # and repeats it in the retest with this chance


def prior(codes: list[int]) -> list[float]:
    """What anyone knows of a person's answer before the attack: the distribution it was drawn from."""
    return [FIRST, *[(1 - FIRST) / (len(codes) - 1)] * (len(codes) - 1)]


def draw(rng: random.Random, codes: list[int]) -> tuple[int, int]:
    first = rng.choices(codes, weights=prior(codes))[0]
    return first, first if rng.random() < KEEP else rng.choice(codes)


def survey(session, keys, participant, battery, truth: dict, waves=(1, 2)) -> None:
    """The participant's survey waves as their page would store them (other questions declined)."""
    for wave in waves:
        when = START + timedelta(days=15 * (wave - 1))
        for key in battery.keys(wave):
            value = truth[key[4:]][wave - 1] if key.startswith("gss:") and key[4:] in truth else None
            answers.save_answer(session, keys, participant.id, battery, wave, key, value, when, actor=SYSTEM)
        answers.complete(session, keys, participant.id, battery, wave, when, timedelta(days=14), actor=SYSTEM)


def figures(client: TestClient, headers: dict, items: list[str]) -> dict[str, dict]:
    out = {}
    for item in items:
        r = client.get(f"/v1/open/instruments/gss/items/{item}/distribution", headers=headers)
        assert r.status_code == 200, r.text
        out[item] = r.json()["validity"]
    return out


def test_validity_figures_move_only_with_a_release_and_then_by_noise(tmp_path, settings, fresh_database):
    gss, keys = load_gss(), keyring()
    battery = battery_of(settings)
    items = [e.item.key for page in battery.pages if page.section == "gss" for e in page.items][:ITEMS]
    engine = create_engine(fresh_database, hide_parameters=True)
    sessions = make_sessionmaker(engine)
    chat = ScriptedChatModel(lambda messages, schema: minimal_answer(schema))  # the agents: always the first option
    rng = random.Random(4)  # a victim whose answers are as common as the prior says (24 of 40 the first option)
    truths = [{k: draw(rng, gss.item(k).codes) for k in items} for _ in range(PEOPLE)]
    with transaction(sessions) as session:
        people = [build(session, ref=f"file:validity-{n}.json", keys=keys)[:2] for n in range(PEOPLE)]
        for n, (participant, agent) in enumerate(people):
            survey(session, keys, participant, battery, truths[n], waves=(1,) if n == 0 else (1, 2))
            cipher = keys.cipher(participant.id, participant.wrapped_key)
            store_population_answers(session, cipher, agent.id, "gss", {k: gss.item(k).codes[0] for k in items})
    local = settings.model_copy(update={"data_dir": tmp_path})
    bank = Bank(local, engine, sessions, keys, chat, HashingEmbedder())
    policy = Policy(K, Budget(mu=MU), min_interval_s=0)

    def score() -> None:
        run_evaluation(REFRESH, local, tmp_path / "runs", _models(chat), sessions, schema=SCHEMA)

    def cut() -> None:
        with transaction(sessions) as session:
            assert cut_release(session, keys, lambda _: gss, policy, SYSTEM).release is not None
        ensure_published(sessions, Shelf(local.release_files_path), load_signer(local), lambda _: gss,
                         local.reference_data_dir)  # fmt: skip

    score()
    cut()
    client = TestClient(create_app(local, bank), base_url="http://localhost")
    with client:
        with transaction(sessions) as session:
            created = create_client(session, "outsider", ["aggregate:read"], OPERATOR)
        token = client.post("/oauth/token", data={"grant_type": "client_credentials"},
                            auth=(created.client.client_id, created.secret)).json()["access_token"]  # fmt: skip
        headers = {"Authorization": f"Bearer {token}"}
        before = figures(client, headers, items)
        measured = sum(v["status"] == "measured" for v in before.values())
        assert measured >= ITEMS // 2  # 11 scored, k = 3, noise 5.5: each item measured with a chance of 0.93
        # The victim takes their retest; the bank scores them at once.
        with transaction(sessions) as session:
            survey(session, keys, people[0][0], battery, truths[0], waves=(2,))
        score()
        assert figures(client, headers, items) == before  # between releases, nothing moves
        # Two scorings a retest apart would tell it too: only the newest keeps its figures.
        runs = sorted((tmp_path / "runs").iterdir(), key=lambda run: (run / "run.json").stat().st_mtime)
        assert len(runs) == 2 and [(run / "summary.json").exists() for run in runs] == [False, True]
        cut()
        after = figures(client, headers, items)
    # The attacker's best: an item whose agents-right count grew is one where the victim's agent was right,
    # so the victim gave the agent's answer (the first option); else the likeliest other answer.
    named = rights = mode = 0
    chances, right_chances = [], []
    for item in items:
        codes, mine = gss.item(item).codes, truths[0][item][0]
        if before[item]["status"] == after[item]["status"] == "measured":
            grew = after[item]["accuracy"] * after[item]["agents"] - before[item]["accuracy"] * before[item]["agents"]
            guessed_right = grew > 0.5
        else:  # nothing to subtract: the prior's guess
            guessed_right = True
        rights += guessed_right == (mine == codes[0])
        named += (codes[0] if guessed_right else codes[1]) == mine
        mode += mine == codes[0]
        mu = math.sqrt(SHARES["validity"]) * MU  # what the release spends on the validity of one answer
        chances.append(guess_bound(mu, prior(codes)))
        right_chances.append(guess_bound(mu, [FIRST, 1 - FIRST]))
    print(f"answers named {named}/{ITEMS} (the mode {mode}, the bound {sum(chances):.1f}); agent right or wrong "
          f"{rights}/{ITEMS} (bound {sum(right_chances):.1f})")  # fmt: skip
    assert named <= sum(chances) + 3 * math.sqrt(sum(c * (1 - c) for c in chances))
    assert rights <= sum(right_chances) + 3 * math.sqrt(sum(c * (1 - c) for c in right_chances))
    engine.dispose()

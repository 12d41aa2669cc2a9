"""The demo's settings: taken only by a bank of fictional people, stated with every release cut under them,
and enough for a dozen agents to show where a real bank's protection hides them all."""

from __future__ import annotations

from pathlib import Path

from agentbank.audit.log import SYSTEM
from agentbank.building.transcripts import store_interview
from agentbank.core.settings import Settings
from agentbank.db.models import Participant, ReportCard
from agentbank.instruments import load_instrument
from agentbank.publication.releases import Policy, cut_release, open_table
from agentbank.runtime.bank_state import bank_state
from agentbank.runtime.demo import seed_demo_bank
from agentbank.runtime.demo_settings import DEMO_SETTINGS, is_demo_bank, open_tier_options, release_policy
from tests.app.api.factories import NoNoise, demo_agents, population
from tests.support.factories import interview, keyring

GSS = load_instrument("gss", Path("."))


def instruments(key: str):
    return load_instrument(key, Path("."))


def cut(session, policy: Policy):
    return cut_release(session, keyring(), instruments, policy, SYSTEM, force=True, noise=NoNoise()).release


def test_only_a_bank_of_fictional_people_takes_the_demo_settings(db):
    settings = Settings()
    assert not is_demo_bank(db)  # an empty bank is no demo bank
    assert release_policy(db, settings) == Policy.of(settings)
    assert seed_demo_bank(db, keyring()) == 12
    assert is_demo_bank(db)
    policy = release_policy(db, settings)
    assert policy.demo and policy.k == DEMO_SETTINGS.k == 5 and policy.budget.mu == DEMO_SETTINGS.mu == 8.0
    assert open_tier_options(db) == {"temperature": 1.0}
    assert seed_demo_bank(db, keyring()) is None  # a bank with people is never seeded again

    store_interview(db, interview("file:a-real-interview.json"), keyring())  # a real person joins
    assert not is_demo_bank(db)
    assert release_policy(db, settings) == Policy.of(settings) and not release_policy(db, settings).demo
    assert open_tier_options(db) == {}


def test_a_dozen_agents_show_under_the_demo_settings_and_not_under_a_real_banks(db):
    population(db, [({"sex": 1 + i % 2}, 1 + i // 6) for i in range(12)])
    cut(db, Policy.of(Settings()))  # a real bank's defaults: k = 10, mu = 1
    overall = open_table(db, GSS, "cappun", [])
    assert overall.groups[0]["n"] is None and "too few people" in overall.groups[0]["hidden"]
    assert not overall.protection["demo_settings"]

    release = cut(db, DEMO_SETTINGS.policy(Settings()))
    assert release.k == 5 and release.mu == 8.0 and release.privacy["demo_settings"] is True
    overall = open_table(db, GSS, "cappun", [])
    assert overall.groups[0]["n"] == 12 and [c.count for c in overall.cells] == [6, 6]
    assert overall.protection["demo_settings"] and "fictional" in overall.protection["note"]
    by_sex = open_table(db, GSS, "cappun", ["sex"])
    shown = {g["group"]["sex"]: g["n"] for g in by_sex.groups}
    assert shown == {"male": 6, "female": 6, "unknown": None}  # nobody of unknown sex: hidden, said why


def test_the_bank_state_in_counts_and_words(db):
    settings = Settings()
    empty = bank_state(db, settings)
    assert (empty.participants, empty.agents, empty.building, empty.answered, empty.carded) == (0, 0, 0, 0, 0)
    assert empty.release is None and empty.demo is None and empty.needed == settings.suppression_k
    assert "0 of the 10 agents the first release needs have answered" in empty.release_words()

    seed_demo_bank(db, keyring())
    seeded = bank_state(db, settings)
    assert (seeded.participants, seeded.building, seeded.needed, seeded.demo) == (12, 12, 5, DEMO_SETTINGS)
    assert seeded.agents_words() == "0 agents built and 12 being built; none has a validity card (scored " \
        "against their own person's answers)."  # fmt: skip

    agents = demo_agents(db, [1, 1, 1])
    carded = db.get(Participant, agents[0].participant_id)
    sealed = keyring().cipher(carded.id, carded.wrapped_key).seal_json({"item_flags": {"cappun": [1, 1, 0]}})
    for condition in ("interview", "persona"):  # only the interview card is a validity card
        db.add(ReportCard(agent_id=agents[0].id, instrument="gss", run_id="r", condition=condition, model="m",
                          prompt_version="p", scores_encrypted=sealed))  # fmt: skip
    db.flush()
    three = bank_state(db, settings)
    assert (three.agents, three.answered, three.carded) == (3, 3, 1)
    # Their builds' tasks are still open, but an agent already built is not also "being built".
    assert three.building == 9 and three.agents_words().startswith("3 agents built and 9 being built")
    assert three.release_words() == (
        "The open tier has no release yet: 3 of the 5 agents the first release needs have answered."
    )
    assert len(demo_agents(db, [1, 1], offset=3)) == 2  # two more of the demo's people
    assert "enough for the first release" in bank_state(db, settings).release_words()

    release = cut(db, DEMO_SETTINGS.policy(settings))
    state = bank_state(db, settings)
    assert state.release is not None and state.release.id == release.id and state.release.demo_settings
    assert state.release_words() == (
        f"Release {release.id} of the open tier is in force under the demo's settings: about 5 agents (a count "
        "with noise), each answer protected at mu = 8, groups shown from k = 5."
    )

"""The participant's own survey through the API: answers kept one by one and sealed, a wave closed only
when every question is answered or declined, demographics set from it, the retest offered when due,
and nothing of it readable by anyone else or after withdrawal."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from agentbank.audit.log import SYSTEM
from agentbank.building.transcripts import open_demographics
from agentbank.building.validity.cards import CardScore, store_cards
from agentbank.consultation.answering.portraits import demographic_line
from agentbank.core.statuses import ConsentStatus
from agentbank.db.models import BatteryAnswer, BatteryWave, ReportCard
from agentbank.instruments.gss import load_gss
from agentbank.participants.battery import answers, battery_of
from agentbank.publication.breakdowns import BREAKDOWNS
from tests.app.api.protection import make_team
from tests.support.battery import answer_all
from tests.support.scans import scan_database

ABOUT = {"about:age": 67, "gss:sex": 2, "gss:race": 2, "about:hispanic": 1, "gss:region": 3, "gss:degree": 3,
         "gss:marital": 2, "gss:wrkstat": 5, "gss:relig": 1, "gss:polviews": 4, "gss:partyid": 1}  # fmt: skip


@pytest.fixture
def team(api):
    return make_team(api)


def test_wave_one_is_kept_as_given_sealed_and_sets_the_demographics(api, team):
    participant = team["participants"][0]
    me = api.participant_headers(participant)
    fresh = api.client.get("/v1/participant/battery", headers=me).json()
    assert fresh["wave"] == 1 and fresh["status"] == "not_started" and fresh["answered"] == 0
    sections = [p["section"] for p in fresh["pages"]]
    assert sections[0] == "about" and {"gss", "big_five", "games"} <= set(sections)
    gss_keys = [q["key"] for p in fresh["pages"] if p["section"] == "gss" for q in p["questions"]]
    assert len(gss_keys) == 60 and len(set(gss_keys)) == 60
    # The GSS's demographics are asked as a question to the person, not the codebook's note to an interviewer.
    sex = next(q for q in fresh["pages"][0]["questions"] if q["key"] == "gss:sex")
    assert sex["question"] == "What is your sex?" and [o["label"] for o in sex["options"]] == ["male", "female"]

    sent = answer_all(api, me, 1, declined={"gss:cappun", "games:dictator"}, given=ABOUT)
    # Half-way state (a reload): every answer is there, declined ones as null.
    again = api.client.get("/v1/participant/battery", headers=me).json()
    assert again["status"] == "open" and again["answered"] == again["total"] == len(sent)
    assert again["answers"] == {k: v for k, v in sent.items()}
    # Changing an answer replaces it.
    assert api.client.put("/v1/participant/battery/answers/gss:cappun", json={"wave": 1, "value": 2},
                          headers=me).status_code == 204  # fmt: skip
    assert api.client.get("/v1/participant/battery", headers=me).json()["answers"]["gss:cappun"] == 2

    # Sealed with the participant's key: no row holds the answer in the clear.
    blobs = api.session.scalars(select(BatteryAnswer.answer_encrypted)
                                .where(BatteryAnswer.participant_id == participant.id)).all()  # fmt: skip
    assert len(blobs) == len(sent) and not any(b"value" in b or b"skipped" in b for b in blobs)

    done = api.client.post("/v1/participant/battery/complete", json={"wave": 1}, headers=me)
    assert done.status_code == 200, done.text
    after = done.json()
    assert after["status"] == "scheduled" and after["wave"] is None and after["pages"] == []
    completed = datetime.fromisoformat(after["completed"]["1"])
    assert datetime.fromisoformat(after["retest_due"]) == completed + timedelta(days=14)

    api.session.refresh(participant)
    assert b"polviews" not in participant.demographics_encrypted  # sealed with their key
    demographics = open_demographics(participant, team["keys"].cipher(participant.id, participant.wrapped_key))
    assert {k: demographics[k] for k in ("age", "sex", "race", "hispanic", "region", "degree", "polviews")} == {
        "age": 67, "sex": 2, "race": 2, "hispanic": 1, "region": 3, "degree": 3, "polviews": 4}  # fmt: skip
    # ... and reach the breakdowns and the demographic agents' line.
    cells = {key: b.classify(demographics) for key, b in BREAKDOWNS.items()}
    assert cells["age_band"] == "65+" and cells["sex"] == "female" and cells["region"] == "south"
    assert cells["party"] == "democrat" and cells["education"] == "bachelor"
    line = demographic_line(demographics, load_gss())
    assert "67 years old" in line and "female" in line

    # A closed wave takes no more answers; the retest is not open before its day.
    late = api.client.put("/v1/participant/battery/answers/gss:cappun", json={"wave": 1, "value": 1}, headers=me)
    assert late.status_code == 409 and late.json()["error"]["code"] == "battery_closed"
    early = api.client.put("/v1/participant/battery/answers/gss:cappun", json={"wave": 2, "value": 1}, headers=me)
    assert early.status_code == 409 and "retest opens on" in early.json()["error"]["message"]


def test_a_wave_closes_only_when_every_question_is_answered_or_declined(api, team):
    me = api.participant_headers(team["participants"][0])
    r = api.client.put("/v1/participant/battery/answers/gss:cappun", json={"wave": 1, "value": 1}, headers=me)
    assert r.status_code == 204
    refused = api.client.post("/v1/participant/battery/complete", json={"wave": 1}, headers=me)
    assert refused.status_code == 409 and "not answered yet" in refused.json()["error"]["message"]


@pytest.mark.parametrize(
    ("key", "body", "status"),
    [
        ("gss:nosuchitem", {"wave": 1, "value": 1}, 422),
        ("gss:cappun", {"wave": 1, "value": 7}, 422),  # not one of its options
        ("gss:cappun", {"wave": 1, "value": 1.5}, 422),
        ("about:age", {"wave": 1, "value": 150}, 422),
        ("games:dictator", {"wave": 1, "value": 6}, 422),
        ("gss:cappun", {"wave": 3, "value": 1}, 422),
        ("gss:cappun", {"wave": 1, "value": "yes"}, 422),
        ("gss:cappun", {"value": 1}, 422),
    ],
)
def test_bad_answers_are_refused_in_plain_words(api, team, key, body, status):
    me = api.participant_headers(team["participants"][0])
    r = api.client.put(f"/v1/participant/battery/answers/{key}", json=body, headers=me)
    assert r.status_code == status and r.json()["error"]["message"]
    assert api.session.scalar(select(BatteryAnswer.id)) is None


def test_the_survey_waits_for_the_confirmed_transcript(api, team):
    participant = team["participants"][0]
    participant.consent = ConsentStatus.INTERVIEWING
    api.session.flush()
    r = api.client.put("/v1/participant/battery/answers/gss:cappun", json={"wave": 1, "value": 1},
                       headers=api.participant_headers(participant))  # fmt: skip
    assert r.status_code == 409 and "confirmed your transcript" in r.json()["error"]["message"]


def test_the_retest_opens_on_its_day_shuffled_and_is_closed_after(api, team):
    """With the clock set by hand: scheduled until the due date, then open, its pages shuffled (the same
    order on every reload), the about-you page left out."""
    participant, keys = team["participants"][0], team["keys"]
    battery = battery_of(api.bank.settings)
    start = datetime(2026, 3, 1, 9, tzinfo=UTC)
    for key in battery.keys(1):
        answers.save_answer(api.session, keys, participant.id, battery, 1, key, None, start, actor=SYSTEM)
    answers.complete(api.session, keys, participant.id, battery, 1, start, timedelta(days=14), actor=SYSTEM)
    due = start + timedelta(days=14)

    before = answers.state(api.session, keys, participant.id, battery, due - timedelta(seconds=1), actor=SYSTEM)
    assert before.status == "scheduled" and before.wave is None and before.due_at == due
    opened = answers.state(api.session, keys, participant.id, battery, due, actor=SYSTEM)
    assert opened.status == "open" and opened.wave == 2
    assert "about" not in {p.section for p in opened.pages}
    wave1 = [[e.key for e in p.items] for p in battery.pages if p.section != "about"]
    wave2 = [[e.key for e in p.items] for p in opened.pages]
    assert [sorted(p) for p in wave1] == [sorted(p) for p in wave2] and wave1 != wave2
    reload = answers.state(api.session, keys, participant.id, battery, due + timedelta(hours=1), actor=SYSTEM)
    assert [[e.key for e in p.items] for p in reload.pages] == wave2

    for key in battery.keys(2):
        answers.save_answer(api.session, keys, participant.id, battery, 2, key, None, due, actor=SYSTEM)
    closed = answers.complete(api.session, keys, participant.id, battery, 2, due, timedelta(days=14), actor=SYSTEM)
    assert closed.status == "complete" and set(closed.completed) == {1, 2}
    assert set(answers.waves_of(api.session, keys, participant.id, actor=SYSTEM, purpose="checking")) == {1, 2}


def test_withdrawal_removes_the_survey(api, team):
    participant = team["participants"][0]
    me = api.participant_headers(participant)
    answer_all(api, me, 1, given=ABOUT)
    assert api.client.post("/v1/participant/battery/complete", json={"wave": 1}, headers=me).status_code == 200
    sealed = api.session.scalars(select(BatteryAnswer.answer_encrypted)).first()
    agent = team["agents"][0]
    store_cards(api.session, team["keys"], [CardScore(agent.id, "interview", 60, 0.5, 0.8, 0.625)], instrument="gss",
                run_id="bank-1", model="m", prompt_version="p")  # fmt: skip
    assert api.client.post("/v1/participant/withdraw", json={"confirm": True}, headers=me).status_code == 200
    assert api.session.scalar(select(ReportCard.id).where(ReportCard.agent_id == agent.id)) is None
    assert api.session.scalar(select(BatteryAnswer.id).where(BatteryAnswer.participant_id == participant.id)) is None
    assert api.session.scalar(select(BatteryWave.wave).where(BatteryWave.participant_id == participant.id)) is None
    assert scan_database(api.session, [sealed.decode("latin-1")[:24]]) == []
    gone = api.client.get("/v1/participant/battery", headers=me)
    assert gone.status_code in (401, 410)


def test_each_participant_sees_only_their_own_survey(api, team):
    p1, p2 = team["participants"]
    answer_all(api, api.participant_headers(p1), 1, given=ABOUT)
    theirs = api.client.get("/v1/participant/battery", headers=api.participant_headers(p2)).json()
    assert theirs["answered"] == 0 and theirs["answers"] == {}
    # No team's scope reaches it.
    for role in ("member", "pi", "reviewer", "admin"):
        r = api.client.get("/v1/participant/battery", headers=team[role])
        assert r.status_code == 403

"""Erasure you can test: a participant fills every personal field with markers, their agent is built, answers,
is scored and released; then they withdraw, and every file under the data directory (tables, WAL, keyring,
run files) is read byte by byte, with no VACUUM: nothing of theirs is found, and nothing opens what is left.

The same scan before the withdrawal finds only ciphertext: the markers are nowhere in the clear. What can be
read in the clear is what the inventory calls pseudonymous or operational (``agentbank.db.inventory``).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, select, text

from agentbank.audit import log as audit
from agentbank.audit.log import SYSTEM
from agentbank.building.agents import BuildConfig
from agentbank.building.build import build_agent
from agentbank.building.ingest import ParsedInterview, ParsedTurn
from agentbank.building.transcripts import load_turns, store_interviews
from agentbank.consultation.door import POPULATION, Grant
from agentbank.core.settings import Settings
from agentbank.db.connections import owner_database_url, transaction
from agentbank.db.models import Participant, Transcript
from agentbank.instruments.gss import load_gss
from agentbank.keys.crypto import DataKeyDestroyedError, DecryptionError, unwrap_key
from agentbank.participants.battery import answers as battery_answers
from agentbank.participants.battery import battery_of
from agentbank.providers.fakes import HashingEmbedder, ScriptedChatModel, minimal_answer
from agentbank.publication.population import fill_agent
from agentbank.publication.releases import Policy, cut_release
from agentbank.runtime.bank import Bank
from app.api import create_app
from app.api.interviews.dependencies import get_services
from app.opening import open_bank
from evaluation.runs.execute import Models
from evaluation.runs.records import RunConfig
from evaluation.service import run_evaluation
from interviewer.hearing.transcription import FakeTranscriber
from interviewer.services import Services
from interviewer.session import invitations
from interviewer.session.script import load_script, shorten
from migrations.runner import SCHEMA
from tests.support.factories import SECRET
from tests.support.interviews import interviewer_model

MARKER = re.compile(r"mk[a-z]{3}\d{4}")
NOW = datetime.now(UTC)
ITEMS = ["cappun", "gunlaw", "grass", "natspac", "trust"]
ABOUT = {"about:age": 93, "gss:sex": 2, "gss:race": 3, "about:hispanic": 2, "gss:region": 4, "gss:degree": 4,
         "gss:marital": 4, "gss:wrkstat": 6, "gss:relig": 4, "gss:polviews": 7, "gss:partyid": 6}  # fmt: skip


def echo(messages, schema):
    """A model that repeats what it read: every marker of its prompt goes into what it writes, as a model
    that copies its context would; answers stay valid for their schema."""
    seen = MARKER.findall(" ".join(m["content"] for m in messages))
    said = " ".join(seen[-3:]) or "nothing"
    props = (schema or {}).get("properties", {})
    if "observations" in props:
        return {"observations": [f"They keep saying {said} (note {n})." for n in range(6)]}
    if "persona" in props:
        return {"persona": f"I am someone who says {said}."}
    if "cited_turns" in props:
        return {"answer": f"As I told you, {said}.", "cited_turns": props["cited_turns"]["items"]["enum"][:1]}
    answer = minimal_answer(schema)
    if isinstance(answer, dict) and "reason" in props:
        answer["reason"] = f"because of {said}"
    return answer


def files(root: Path) -> Iterator[Path]:
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            yield path


def scan(root: Path, needles: list[bytes]) -> list[str]:
    """Every (file, needle) where a needle's bytes appear in a file under ``root``."""
    found = []
    for path in files(root):
        data = path.read_bytes()
        found += [f"{path.relative_to(root)}: {needle!r}" for needle in needles if needle in data]
    return found


def checkpoint(settings: Settings) -> None:
    """Flush everything to the table files (as the owner): what is in shared buffers lands on disk too."""
    engine = create_engine(owner_database_url(settings), isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text("CHECKPOINT"))
        conn.execute(text("SELECT pg_switch_wal()"))
    engine.dispose()


def relation_file(settings: Settings, table: str) -> Path:
    engine = create_engine(owner_database_url(settings))
    with engine.connect() as conn:
        relative = conn.scalar(text("SELECT pg_relation_filepath(:t)"), {"t": table})
    engine.dispose()
    return settings.postgres_dir / relative


def interview_over_http(client: TestClient) -> tuple[dict[str, str], list[str]]:
    """The victim's interview, typed over HTTP, every answer carrying a marker of its own; then their survey,
    both waves, every question answered and the about-you page as chosen. Their access code, and markers."""
    with transaction(client.app.state.bank.sessions) as session:
        code = invitations.create_invitation(session, audit.Actor("operator", "test"))
    consent = {"recording": True, "use": True, "withdrawal": True}
    started = client.post("/v1/interviews", json={"invite": code, "consent": consent}).json()
    headers, state, markers = {"Authorization": f"Bearer {started['token']}"}, started["state"], []
    while state["status"] == "active":
        markers.append(f"mkint{len(markers):04d}")
        said = f"I grew up near {markers[-1]} and worked there for years."
        state = client.post("/v1/interviews/current/answer", json={"text": said}, headers=headers).json()
    done = client.post("/v1/interviews/current/finish", json={"confirm": True}, headers=headers).json()
    me = {"Authorization": f"Bearer {done['access_code']}"}
    for wave in (1, 2):
        page = client.get("/v1/participant/battery", headers=me).json()
        for question in (q for p in page["pages"] for q in p["questions"]):
            first = question["options"][0]["code"] if question["options"] else question["minimum"]
            body = {"wave": wave, "value": ABOUT.get(question["key"], first)}
            r = client.put(f"/v1/participant/battery/answers/{question['key']}", json=body, headers=me)
            assert r.status_code == 204, r.text
        assert client.post("/v1/participant/battery/complete", json={"wave": wave}, headers=me).status_code == 200
    return me, markers


def others(bank: Bank, settings: Settings, n: int = 5) -> list[Participant]:
    """People the bank keeps after the withdrawal: ingested, with both waves of a survey."""
    interviews_ = [
        ParsedInterview(f"file:other-{i}.json", (ParsedTurn("interviewer", "Where did you grow up?"),
                        ParsedTurn("participant", f"In town number {i}, by the river.")), {"sex": 1 + i % 2})
        for i in range(n)
    ]  # fmt: skip
    battery = battery_of(settings)
    with transaction(bank.sessions) as session:
        stored = store_interviews(session, interviews_, bank.keys).participants
        for participant in stored:
            for wave in (1, 2):
                for key in battery.keys(wave):
                    item = battery.item(key).item
                    value = item.codes[0] if key.startswith("gss:") and item.options else None
                    battery_answers.save_answer(
                        session, bank.keys, participant.id, battery, wave, key, value, NOW, actor=SYSTEM
                    )
                battery_answers.complete(
                    session, bank.keys, participant.id, battery, wave, NOW, timedelta(), actor=SYSTEM
                )
    return stored


def build_answer_score_release(bank: Bank, settings: Settings, victim: uuid.UUID) -> None:
    """Every agent built, answering for the open tier, the victim's an operator's open question; the bank
    scored against its people (run files and cards) and a release cut."""
    gss, chat, embedder = load_gss(), bank.chat, bank.embedder
    assert chat is not None and embedder is not None
    agents = {}
    with bank.sessions() as session:
        everyone = [p.id for p in session.scalars(select(Participant))]
    for participant_id in everyone:
        with transaction(bank.sessions) as session:
            agents[participant_id] = build_agent(session, session.get_one(Participant, participant_id), chat=chat,
                                                 embedder=embedder, keys=bank.keys,
                                                 config=BuildConfig.of(chat, embedder, 0)).id  # fmt: skip
    for agent_id in agents.values():
        assert fill_agent(bank.sessions, bank.door, agent_id, gss, [gss.item(k) for k in ITEMS], POPULATION)
    asked = bank.door.ask(bank.sessions, Grant.operator("checking erasure"), agents[victim],
                          ["What do you remember of the place you grew up?"])  # fmt: skip
    assert MARKER.search(str(asked.answers[0].value))  # the model did repeat what it read
    models = Models(chat, embedder, bank.keys, settings.memory_token_budget, bank.keys)
    config = RunConfig(dataset="bank", conditions=("interview", "population-mode"), sample=0, n_items=10, traits=False)
    run_evaluation(config, settings, settings.data_dir / "evaluations", models, bank.sessions, schema=SCHEMA)
    with transaction(bank.sessions) as session:
        assert cut_release(session, bank.keys, lambda _: gss, Policy.of(settings), audit.SYSTEM).release


def in_the_clear(settings: Settings, needles: list[bytes]) -> list[str]:
    """What of the person a reader of the data directory finds, after a checkpoint (everything on disk)."""
    checkpoint(settings)
    found = scan(settings.data_dir, needles)
    if b"polviews" in relation_file(settings, "participants").read_bytes():
        found.append("participants: demographics as the old schema stored them")
    for path in (settings.data_dir / "evaluations").rglob("*.jsonl"):
        rows = [json.loads(line) for line in path.read_text().splitlines() if line]
        found += [f"{path.name}: {row['person']} in the clear" for row in rows if not row.get("sealed")]
    return found


@pytest.mark.slow
def test_a_withdrawal_leaves_nothing_of_the_person_in_any_file(tmp_path, monkeypatch):
    settings = Settings(
        data_dir=tmp_path / "data", secret_key=SECRET, chat_provider="fake", embedder_provider="fake",
        transcriber="fake", speaker="fake", reference_data_dir="../shared/data", retest_after_days=0,
        suppression_k=3, release_min_interval_s=0, memory_token_budget=4000, rate_limit_per_minute=10_000,
    )  # fmt: skip
    monkeypatch.setattr(invitations, "load_script", lambda: shorten(load_script(), modules=2, seconds=600))
    with open_bank(settings, models=False) as opened:
        model = ScriptedChatModel(echo, name="echo")
        bank = Bank(settings, opened.engine, opened.sessions, opened.keys, model, HashingEmbedder())
        app = create_app(settings, bank)
        services = Services(keys=bank.keys, chat=interviewer_model(), transcriber=FakeTranscriber())
        app.dependency_overrides[get_services] = lambda: services
        with TestClient(app, base_url="http://localhost") as client:
            me, markers = interview_over_http(client)
            kept = others(bank, settings)
            with bank.sessions() as session:
                victim = session.scalars(select(Participant).where(Participant.source_ref.like("interview:%"))).one()
            build_answer_score_release(bank, settings, victim.id)
            wrapped = bytes(victim.wrapped_key)
            # The person in the clear, as the scan looks for them: their words (and what models repeated of
            # them), their demographic profile and survey answers as the bank serializes them before sealing,
            # their agent's coded answers, and their scores.
            needles = [m.encode() for m in markers]
            needles += [f'"{k}":{v}'.encode() for k, v in {"age": 93, "polviews": 7, "partyid": 6}.items()]
            needles += [b'"value": 93', b'"cappun":[', b'"item_flags":{', b'"self_consistency":0']
            assert in_the_clear(settings, needles) == []
            # The scan does read the tables and the WAL: the pseudonym, which may be in the clear, is found there.
            seen = scan(settings.data_dir, [victim.pseudonym.encode()])
            assert any("base/" in f for f in seen) and any("pg_wal" in f for f in seen)

            gone = client.post("/v1/participant/withdraw", json={"confirm": True}, headers=me)
            assert gone.status_code == 200, gone.text
            assert in_the_clear(settings, needles) == []
            # Their wrapped key is still in old copies of the table: no key-encryption key left opens it.
            with pytest.raises(DataKeyDestroyedError):
                bank.keys.data_key(victim.id, wrapped)
            for version in bank.keys.store.versions():
                with pytest.raises(DecryptionError):
                    unwrap_key(bank.keys.store.get(version), wrapped, victim.id)
            # Everyone else's data still opens.
            with bank.sessions() as session:
                other = session.get_one(Participant, kept[0].id)
                transcript = session.scalars(select(Transcript.id).where(Transcript.participant_id == other.id)).one()
                turns = load_turns(session, transcript, bank.keys.cipher(other.id, other.wrapped_key))
            assert "river" in turns[-1].text

"""Population answers through a provider's Batch API, against a local fake of its files and batches."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import httpx
from sqlalchemy import func, select

from agentbank.consultation.door import AgentDoor
from agentbank.core.statuses import BatchStatus
from agentbank.db.models import AnswerRecord, AuditEvent, ModelBatch, PopulationAnswer
from agentbank.instruments import load_instrument, select_items
from agentbank.providers.batch_api import BatchClient
from agentbank.providers.fakes import ScriptedChatModel, minimal_answer
from agentbank.publication.batches import collect_batch, submit_population_batch
from agentbank.publication.population import fill_agent
from tests.app.api.conftest import OPERATOR
from tests.support.endpoints import completion
from tests.support.factories import build, responder

BASE = "http://127.0.0.1:9/v1"
GSS = load_instrument("gss", Path("."))
ITEMS = select_items(GSS, ["cappun", "gunlaw", "grass"])
MODEL = "batch-model"


class FakeBatches:
    """The provider's files and batches endpoints: a batch is at work on the first look, done on the next;
    its answers are minimal valid ones, and the last ``unanswered`` requests get none."""

    def __init__(self, respx_mock, unanswered: int = 0) -> None:
        self.uploaded: list[list[dict]] = []
        self.looks = 0
        self.unanswered = unanswered
        respx_mock.post(f"{BASE}/files").mock(side_effect=self._upload)
        respx_mock.post(f"{BASE}/batches").mock(side_effect=self._create)
        respx_mock.get(url__regex=rf"{BASE}/batches/batch-\d+").mock(side_effect=self._look)
        respx_mock.get(url__regex=rf"{BASE}/files/out-\d+/content").mock(side_effect=self._answers)

    def _upload(self, request: httpx.Request) -> httpx.Response:
        lines = [json.loads(raw) for raw in request.content.split(b"\n") if raw.strip().startswith(b'{"custom_id"')]
        self.uploaded.append(lines)
        n = len(self.uploaded)
        file = {"id": f"in-{n}", "object": "file", "bytes": len(request.content), "created_at": 0,
                "filename": "requests.jsonl", "purpose": "batch"}  # fmt: skip
        return httpx.Response(200, json=file)

    def _create(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        assert body["endpoint"] == "/v1/chat/completions" and body["input_file_id"] == f"in-{len(self.uploaded)}"
        return httpx.Response(200, json=self._batch(len(self.uploaded), "validating"))

    def _look(self, request: httpx.Request) -> httpx.Response:
        self.looks += 1
        n = int(request.url.path.rsplit("-", 1)[1])
        return httpx.Response(200, json=self._batch(n, "in_progress" if self.looks % 2 else "completed"))

    def _answers(self, request: httpx.Request) -> httpx.Response:
        n = int(request.url.path.split("/")[-2].rsplit("-", 1)[1])
        lines = self.uploaded[n - 1][: len(self.uploaded[n - 1]) - self.unanswered]
        out = [{"id": f"r{i}", "custom_id": line["custom_id"], "error": None,
                "response": {"status_code": 200, "request_id": f"q{i}", "body": completion(
                    json.dumps(minimal_answer(line["body"]["response_format"]["json_schema"]["schema"])))}}
               for i, line in enumerate(lines)]  # fmt: skip
        return httpx.Response(200, text="".join(json.dumps(o) + "\n" for o in out))

    @staticmethod
    def _batch(n: int, status: str) -> dict:
        done = status == "completed"
        return {"id": f"batch-{n}", "object": "batch", "endpoint": "/v1/chat/completions", "input_file_id": f"in-{n}",
                "completion_window": "24h", "status": status, "created_at": 0,
                "output_file_id": f"out-{n}" if done else None, "error_file_id": None}  # fmt: skip


def test_a_population_batch_is_answered_once_like_live_calls_and_resumed_for_what_it_missed(api, respx_mock):
    live = ScriptedChatModel(responder, name=MODEL)
    _, a1, _, embedder, keys = build(api.session, ref="file:b1.json", chat=ScriptedChatModel(responder))
    _, a2, *_ = build(api.session, ref="file:b2.json", chat=ScriptedChatModel(responder), embedder=embedder, keys=keys)
    api.session.flush()
    sessions, client = api.bank.sessions, BatchClient(base_url=BASE, api_key="sk-test", http_client=httpx.Client())
    fake = FakeBatches(respx_mock, unanswered=1)

    def door_for(chat) -> AgentDoor:
        return AgentDoor(chat=chat, embedder=embedder, keys=keys, memory_token_budget=4000)

    sent = submit_population_batch(sessions, door_for(live), client, MODEL, GSS, ITEMS, OPERATOR)
    assert (sent.requests, sorted(sent.agent_ids)) == (6, sorted([str(a1.id), str(a2.id)]))
    assert live.calls == []  # planned, never asked one by one
    assert {line["body"]["model"] for line in fake.uploaded[0]} == {MODEL}

    looked = collect_batch(sessions, client, door_for, sent.id, Path("."))  # the provider is at work
    assert (looked.status, looked.provider_status) == (BatchStatus.SUBMITTED, "in_progress")
    done = collect_batch(sessions, client, door_for, sent.id, Path("."))
    assert (done.status, done.answered, done.failed) == (BatchStatus.COLLECTED, 1, 1)
    assert collect_batch(sessions, client, door_for, sent.id, Path(".")).answered == 1  # collected once
    assert api.session.scalar(select(func.count()).select_from(PopulationAnswer)) == 1  # one sealed row per agent
    assert set(api.session.scalars(select(AnswerRecord.model))) == {MODEL}  # provenance as for live answers
    released = api.session.scalars(select(AuditEvent).where(AuditEvent.action == "population.answer")).all()
    assert [e.details["batch"] for e in released] == [str(sent.id)]

    # The request the provider missed goes into the next batch, and only it: the rest is stored.
    again = submit_population_batch(sessions, door_for(live), client, MODEL, GSS, ITEMS, OPERATOR)
    assert again.requests == 1
    fake.unanswered = 0
    collect_batch(sessions, client, door_for, again.id, Path("."))
    assert collect_batch(sessions, client, door_for, again.id, Path(".")).answered == 2
    assert api.session.scalar(select(func.count()).select_from(PopulationAnswer)) == 2
    # A live population run for the same items finds every answer stored: nothing is asked twice.
    for agent in (a1, a2):
        assert fill_agent(sessions, door_for(live), agent.id, GSS, ITEMS)
    assert live.calls == []
    assert api.session.get_one(ModelBatch, uuid.UUID(str(again.id))).status == BatchStatus.COLLECTED

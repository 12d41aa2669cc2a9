"""Checkpoints leave the database: signed by an operator or a worker, appended outside, served to witnesses."""

import json

from sqlalchemy import text
from sqlalchemy.orm import sessionmaker

from agentbank.audit.checkpoints import CheckpointFile, Schedule, parse_checkpoints, publish_checkpoint
from agentbank.audit.verification import verify_log
from agentbank.runtime.worker import AUDIT_QUEUE, CHECKPOINT_CRON, QUEUES, Worker


def test_a_signed_checkpoint_is_appended_outside_and_served_as_history_to_keep(api, settings):
    admin = api.token("operator", "admin")
    first = api.client.post("/v1/admin/audit/checkpoints", headers=admin)
    second = api.client.post("/v1/admin/audit/checkpoints", headers=admin)
    assert first.status_code == second.status_code == 201, first.text
    # Each checkpoint covers the events committed before it; the request's own event comes after.
    assert second.json()["seq"] == first.json()["seq"] + 1

    kept, problems = CheckpointFile(settings.data_dir / "audit-checkpoints" / "checkpoints.jsonl").read()
    assert problems == [] and [p.seq for p in kept] == [first.json()["seq"], second.json()["seq"]]

    history = api.client.get("/v1/audit/checkpoints")  # public: no token
    assert history.status_code == 200 and history.json()["next_after"] is None
    witness, problems = parse_checkpoints(json.dumps(history.json()), "witness")
    assert problems == [] and witness == kept
    assert api.client.get("/v1/audit/checkpoint").json()["seq"] == second.json()["seq"]
    key = api.client.get("/v1/audit/public-key").json()
    assert {p.key_id for p in witness} == {key["key_id"]}

    result = verify_log(api.session, api.client.app.state.signer.public_key, witness)
    assert result.ok and result.outside_seq == second.json()["seq"]
    # The second request's own event is written, and waits for the sequencer to chain it.
    assert result.unchained == 1 and result.uncovered is None


def test_every_worker_asks_every_few_seconds_whether_a_checkpoint_is_due(api):
    worker = Worker(api.bank)
    periodic = {key[1]: task for key, task in worker.app.periodic_registry.periodic_tasks.items()}
    assert periodic["audit-checkpoint"].cron == CHECKPOINT_CRON and AUDIT_QUEUE in QUEUES
    assert "audit-sweep" in periodic  # its frequent finished runs are not kept


def test_a_junk_checkpoint_row_is_not_served_and_does_not_stop_the_schedule(api, settings):
    admin = api.token("operator", "admin")
    real = api.client.post("/v1/admin/audit/checkpoints", headers=admin).json()
    api.session.execute(text("SET ROLE agentbank_app"))  # what the application's role may do
    api.session.execute(
        text("INSERT INTO audit_checkpoints (seq, head_hash, signed_at, key_id, signature) "
             "VALUES (999999, :h, now(), 'junk', :s)"),
        {"h": b"\x00" * 32, "s": b"\x01" * 64},
    )  # fmt: skip
    api.session.execute(text("RESET ROLE"))
    assert api.client.get("/v1/audit/checkpoint").json()["seq"] == real["seq"]
    served = [p["seq"] for p in api.client.get("/v1/audit/checkpoints").json()["checkpoints"]]
    assert served == [real["seq"]]
    # A worker's schedule still finds the events after the real checkpoint uncovered, and signs them.
    api.token("someone", "aggregate:read")
    sessions = sessionmaker(bind=api.session.connection(), join_transaction_mode="create_savepoint")
    signed = publish_checkpoint(sessions, api.client.app.state.signer, CheckpointFile.of(settings),
                                Schedule(events=1, interval_s=3600))  # fmt: skip
    assert signed is not None and signed.seq > real["seq"]

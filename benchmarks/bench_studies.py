"""A study's status at scale: 1,000 participants spread over every stage, read as a coordinator reads it.

Loads a study whose invitations stand at every stage (unused, revoked, in each module, paused, finished,
confirmed, surveyed, built, retest due and done, carded, withdrawn) as rows of the tables the interview,
survey, builds and cards write, then times ``stages.progress`` (counts, funnel, drop-off by module and
each participant's standing with its quality counts, one query) and the progress CSV. The target: the
status of a 1,000-participant study in under a second. No key is unwrapped and no transcript opened:
that is the design being measured.

Run: python -m benchmarks.bench_studies [--quick]
(quick: 50 participants, 3 readings, nothing saved; its last line reads `status: N ms median`)
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from agentbank.audit import log as audit
from agentbank.core.statuses import BatteryWaveStatus, ConsentStatus, InterviewStatus, TranscriptStatus
from agentbank.db.embedded import start_embedded_server, stop_embedded_server
from agentbank.db.models import (
    Agent,
    BatteryWave,
    InterviewInvitation,
    InterviewSession,
    Participant,
    ReportCard,
    Study,
    Transcript,
)
from agentbank.studies import export, stages
from benchmarks.common import save
from interviewer.session.script import load_script
from migrations.runner import alembic_config, upgrade

PARTICIPANTS, READINGS = 1000, 20
COORDINATOR = audit.Actor("operator", "bench")
# Where a cohort stands some weeks into a study (shares of the invitations).
SHARES = {"invited": 0.12, "revoked": 0.02, "started": 0.03, "in_module": 0.08, "paused": 0.05, "finished": 0.04,
          "confirmed": 0.06, "survey_done": 0.1, "agent_built": 0.15, "retest_due": 0.15, "retest_done": 0.1,
          "card": 0.08, "withdrew": 0.02}  # fmt: skip
_LATER = ["confirmed", "survey_done", "agent_built", "retest_due", "retest_done", "card"]


def populate(session: Session, size: int, rng: random.Random) -> Study:
    """A study of ``size`` invitations at the stages of ``SHARES``, written as rows."""
    script = load_script()
    data, questions = script.model_dump(mode="json"), len(script.questions())
    now = datetime.now(UTC)
    study = Study(id=uuid.uuid4(), name=f"Bench {uuid.uuid4().hex[:6]}", script_key=script.key,
                  script_version=script.version, target_size=size, expires_at=now + timedelta(days=60))  # fmt: skip
    session.add(study)
    session.flush()
    stages_drawn = rng.choices(list(SHARES), weights=list(SHARES.values()), k=size)
    for number, stage in enumerate(stages_drawn):
        invitation = InterviewInvitation(code_hash=uuid.uuid4().hex * 2, study_id=study.id, expires_at=study.expires_at)
        session.add(invitation)
        if stage == "revoked":
            invitation.revoked_at = now
        if stage in ("invited", "revoked"):
            continue
        _participant(session, invitation, stage, data, questions, number, rng, now)
        if number % 200 == 0:
            session.flush()
    session.flush()
    return study


def _participant(session: Session, invitation: InterviewInvitation, stage: str, script: dict[str, Any],
                 questions: int, number: int, rng: random.Random, now: datetime) -> None:  # fmt: skip
    pid, tid = uuid.uuid4(), uuid.uuid4()
    withdrawn = stage == "withdrew"
    interviewing = stage in ("started", "in_module", "paused")
    session.add(Participant(id=pid, pseudonym=f"bench-{pid.hex[:12]}", source_ref=f"interview:{pid}",
                            consent=ConsentStatus.WITHDRAWN if withdrawn else ConsentStatus.CONSENTED,
                            wrapped_key=None if withdrawn else b"wrapped"))  # fmt: skip
    draft = interviewing or stage == "finished"
    session.add(Transcript(id=tid, participant_id=pid, version=1,
                           status=TranscriptStatus.DRAFT if draft else TranscriptStatus.FINAL,
                           finalized_at=None if draft else now))  # fmt: skip
    session.flush()
    index = 0 if stage == "started" else rng.randrange(1, questions) if interviewing else questions
    status = {"started": InterviewStatus.ACTIVE, "in_module": InterviewStatus.ACTIVE, "paused": InterviewStatus.PAUSED,
              "finished": InterviewStatus.REVIEW}.get(stage, InterviewStatus.FINISHED)  # fmt: skip
    answers = 0 if stage == "started" else index * 2
    sid = uuid.uuid4()
    session.add(InterviewSession(
        id=sid, participant_id=pid, transcript_id=tid, script_key=script["key"], script_version=script["version"],
        script_fingerprint="bench", script=script, status=status, consent={}, consented_at=now, question_index=index,
        follow_ups=0, seconds_used={f"q{i}": rng.uniform(60, 400) for i in range(index)}, updated_at=now,
        answers_given=answers, answer_words=answers * rng.randrange(5, 80), follow_ups_asked=index,
        audio_flags=int(rng.random() < 0.05),
    ))  # fmt: skip
    session.flush()
    invitation.used_at, invitation.session_id = now, sid
    reached = _LATER[: _LATER.index(stage) + 1] if stage in _LATER else []
    if "survey_done" in reached:
        done = "retest_done" in reached
        session.add(BatteryWave(participant_id=pid, wave=1, status=BatteryWaveStatus.COMPLETE, due_at=now,
                                completed_at=now))  # fmt: skip
        session.add(BatteryWave(participant_id=pid, wave=2,
                                status=BatteryWaveStatus.COMPLETE if done else BatteryWaveStatus.SCHEDULED,
                                due_at=now - timedelta(days=1) if "retest_due" in reached else now + timedelta(days=9),
                                completed_at=now if done else None))  # fmt: skip
    if "agent_built" in reached:
        agent = Agent(id=uuid.uuid4(), participant_id=pid, version=1, transcript_id=tid)
        session.add(agent)
        session.flush()
        if "card" in reached:
            session.add(ReportCard(agent_id=agent.id, instrument="gss", run_id="bench", condition="interview",
                                   model="bench", prompt_version="v1", scores_encrypted=b"sealed"))  # fmt: skip


def measure(url: str, size: int, readings: int, rng: random.Random) -> dict[str, Any]:
    engine = create_engine(url)
    with Session(engine) as session:
        began = time.perf_counter()
        study = populate(session, size, rng)
        session.commit()
        load_s = time.perf_counter() - began
        status_ms, export_ms = [], []
        for _ in range(readings):
            began = time.perf_counter()
            seen = stages.progress(session, study, datetime.now(UTC))
            status_ms.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            export.progress_csv(session, study, datetime.now(UTC), COORDINATOR)
            export_ms.append((time.perf_counter() - began) * 1000)
            session.rollback()  # the export's audit event is not kept: each reading starts alike
    engine.dispose()
    return {
        "participants": size, "readings": readings, "load_s": round(load_s, 2),
        "standings": len(seen.standings), "withdrew": seen.counts[stages.Stage.WITHDREW],
        "status_ms": {"median": round(statistics.median(status_ms), 1), "max": round(max(status_ms), 1)},
        "export_ms": {"median": round(statistics.median(export_ms), 1), "max": round(max(export_ms), 1)},
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--participants", type=int, default=PARTICIPANTS)
    parser.add_argument("--readings", type=int, default=READINGS)
    parser.add_argument("--quick", action="store_true", help="50 participants, 3 readings, nothing saved")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    size, readings = (50, 3) if args.quick else (args.participants, args.readings)
    root = Path(tempfile.mkdtemp(prefix="bench-studies-"))
    server = start_embedded_server(root / "postgres")
    try:
        upgrade(alembic_config(server.url))
        figures = measure(server.url, size, readings, random.Random(args.seed))
    finally:
        stop_embedded_server(root / "postgres")
        shutil.rmtree(root, ignore_errors=True)
    print(f"{size} participants loaded in {figures['load_s']} s; {figures['standings']} standings, "
          f"{figures['withdrew']} withdrawn (counted only)")  # fmt: skip
    print(f"export: {figures['export_ms']['median']} ms median")
    print(f"status: {figures['status_ms']['median']} ms median")
    if not args.quick:
        print(f"saved {save('studies', figures)}")


if __name__ == "__main__":
    main()

"""Builders shared by the interview tests: a simulated interviewee's model, WAV audio, and a turn taken
on the test's session the way a request takes it."""

from __future__ import annotations

import io
import wave
from contextlib import nullcontext

import numpy as np

from agentbank.audit import log as audit
from agentbank.providers.fakes import ScriptedChatModel
from interviewer.deciding import notes
from interviewer.deciding.decisions import NOTES_SCHEMA
from interviewer.deciding.reflecting import SUMMARY_SCHEMA
from interviewer.hearing.recordings import ReceivedChunk
from interviewer.hearing.turn_end import TurnTaking
from interviewer.session import interviews, invitations
from interviewer.session.script import load_script, shorten
from interviewer.turns import InterviewTurn

# Distinct follow-ups: the interviewer rejects one that repeats a question asked before.
FOLLOW_UPS = (
    "Could you tell me more about that?",
    "Who else was there at the time?",
    "How did it change things afterwards?",
    "Can you give me an example?",
)


def interviewer_model(follow_ups: int = 1, summary: str = "") -> ScriptedChatModel:
    """Asks ``follow_ups`` follow-ups after each scripted question, then moves on; asked for notes, notes
    the first word of the newest answer; asked for a module's summary, writes ``summary`` (by default none
    the interviewer can use, so that it goes straight on as without reflect-back)."""
    asked: dict[str, int] = {}

    def respond(messages, schema):
        if schema == SUMMARY_SCHEMA:
            return {"summary": summary}
        if schema == NOTES_SCHEMA:
            answers = messages[-1]["content"].split("in these answers:\n")[1]
            newest = [line for line in answers.split("\n") if line.startswith("- ")][-1]
            return {"notes": [f"Said {newest.split()[1]}."]}
        question = messages[-1]["content"].split('now being discussed: "')[1].split('"')[0]
        asked[question] = asked.get(question, 0) + 1
        if asked[question] <= follow_ups:
            return {
                "decision": {
                    "action": "follow_up",
                    "question": FOLLOW_UPS[(asked[question] - 1) % len(FOLLOW_UPS)],
                }
            }
        return {"decision": {"action": "next"}}

    return ScriptedChatModel(respond, name="interviewer")


def wav_bytes(seconds: float = 1.0, *, tone: bool = True, rate: int = 16_000) -> bytes:
    """A 16-bit mono WAV: silence, a tone (speech enough for the fakes), silence; or silence only.

    The leading silence lets the end-of-turn detector learn the noise floor before the "speech".
    """
    samples = np.zeros(int(seconds * rate), dtype=np.float32)
    if tone:
        lead, voiced = int(min(seconds, 0.5) * rate / 2), int(min(seconds, 0.8) * rate)
        samples[lead : lead + voiced] = 0.3 * np.sin(2 * np.pi * 220 * np.arange(voiced) / rate)[: len(samples) - lead]
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes((samples * 32767).astype("<i2").tobytes())
    return buffer.getvalue()


def within(db) -> interviews.Transactions:
    """Units of work on the test's own session: its one transaction, rolled back after the test."""
    return lambda: nullcontext(db)


def turn_of(db, services, interview) -> InterviewTurn:
    """The interview's turn as a request loads it: the interview locked, on the test's session."""
    locked = interviews.current(db, interview.participant_id, lock=True)
    return InterviewTurn.load(db, services, locked, within(db))


def receive(db, services, interview, turn: int, seq: int, data: bytes, *, taking: TurnTaking | None = None,
            max_bytes: int = 10**6, take: int | None = None) -> ReceivedChunk:  # fmt: skip
    """A chunk received as its request does: stored, and heard for the end of the turn, by the turn's owner."""
    owner = turn_of(db, services, interview)
    return owner.receive_chunk(turn, seq, data, take=take, max_bytes=max_bytes, taking=taking or TurnTaking())


def answered(db, services, interview, text: str, *, seconds: float | None = None) -> interviews.InterviewState:
    """A typed answer as a server takes it: the turn, then the notes on the answer once the reply has gone."""
    state = turn_of(db, services, interview).answer(text, seconds=seconds)
    notes.after_reply(within(db), services, interview.participant_id)
    return state


OPERATOR = audit.Actor("operator", "test")


SCRIPT = shorten(load_script(), modules=3, seconds=600)


CONSENT = {"recording": True, "use": True, "withdrawal": True}


def begin(db, services):
    code = invitations.create_invitation(db, OPERATOR)
    return code, invitations.start(db, services, code, CONSENT, script=SCRIPT)


def begin_over_api(api, monkeypatch, services) -> tuple[dict[str, str], dict]:
    """An interview of a two-module script begun through the API as the page begins it, the app's services
    replaced by ``services`` (the caller clears ``api.client.app.dependency_overrides``): the participant's
    headers and the first state."""
    from app.api.interviews.dependencies import get_services

    api.client.app.dependency_overrides[get_services] = lambda: services
    monkeypatch.setattr(invitations, "load_script", lambda: shorten(load_script(), modules=2, seconds=600))
    code = invitations.create_invitation(api.session, OPERATOR)
    api.session.commit()
    response = api.client.post("/v1/interviews", json={"invite": code, "consent": CONSENT})
    assert response.status_code == 201, response.text
    body = response.json()
    return {"Authorization": f"Bearer {body['token']}"}, body["state"]

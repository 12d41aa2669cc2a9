"""The interview: redeem an invitation with consent, then answer by voice or text, review, confirm.

Thin routes over ``interviewer``; the participant's interview token authorizes everything after
the first call, and every route acts only on the caller's own interview.
"""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from importlib import resources
from typing import Annotated

from fastapi import APIRouter, BackgroundTasks, Depends, Query, Request, Response
from fastapi.responses import HTMLResponse
from sqlalchemy.orm import Session
from starlette.requests import ClientDisconnect

from agentbank.core.errors import AgentBankError, NotFoundError
from agentbank.db import transaction
from agentbank.db.models import InterviewSession
from agentbank.runtime.bank import Bank
from agentbank.studies import completion
from agentbank.studies.completion import Ending
from app.api.deps import BankDep, SessionDep, SettingsDep
from app.api.interviews.dependencies import (
    InterviewProviders,
    ProvidersDep,
    ServicesDep,
    get_interview,
    get_locked_interview,
)
from app.api.interviews.schemas import (
    AnswerCreate,
    ChunkRead,
    DiscardRead,
    FinishCreate,
    FinishRead,
    InterviewCreate,
    InterviewStarted,
    StateRead,
    TakeRead,
    TurnRead,
)
from interviewer.deciding import notes
from interviewer.hearing import recordings
from interviewer.services import Services
from interviewer.session import interviews, invitations, lifecycle
from interviewer.session.script import short_version
from interviewer.session.transcripts import state_of
from interviewer.speaking.cache import ACKNOWLEDGEMENT, BACKCHANNEL, scripted_sentences
from interviewer.speaking.speech import joined, split_sentences
from interviewer.turns import InterviewTurn

router = APIRouter(tags=["interviews"])
InterviewDep = Annotated[InterviewSession, Depends(get_interview)]
# Every route that changes the interview locks its row: concurrent changes get 409, never a clash.
LockedInterviewDep = Annotated[InterviewSession, Depends(get_locked_interview)]
TakeQuery = Annotated[int | None, Query(ge=0, description="the recording this chunk belongs to (from /takes)")]
AUDIO_TYPES = {"audio/webm", "audio/ogg", "audio/wav", "audio/wave", "audio/x-wav"}


class ClientGoneError(AgentBankError):
    """The client closed the connection before its request body arrived (a reload, a lost network).

    A normal event for a page that uploads while the person may leave at any moment: nothing was
    stored, and the client sends the chunk again if it comes back.
    """

    code = "client_disconnected"
    status_code = 400


class UnsupportedMediaError(AgentBankError):
    """The chunk is not in a recording format the interview accepts."""

    code = "unsupported_media_type"
    status_code = 415


async def raw_body(request: Request) -> bytes:
    """The request's bytes, read by the body-size limit as they arrive."""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media not in AUDIO_TYPES:
        raise UnsupportedMediaError("send audio/webm, audio/ogg or audio/wav")
    try:
        return await request.body()
    except ClientDisconnect:
        raise ClientGoneError("the connection closed before the audio arrived") from None


def _state(value: interviews.InterviewState) -> StateRead:
    return StateRead(**asdict(value))


@router.get("/interview", response_class=HTMLResponse, include_in_schema=True)
def page() -> HTMLResponse:
    """The interview page: consent, microphone check, the conversation, review."""
    html = resources.files("app.web").joinpath("interview.html").read_text(encoding="utf-8")
    return HTMLResponse(html, headers={"Cache-Control": "no-store"})


@router.post("/v1/interviews", response_model=InterviewStarted, status_code=201)
def start(body: InterviewCreate, session: SessionDep, bank: BankDep, services: ServicesDep,
          background: BackgroundTasks) -> InterviewStarted:  # fmt: skip
    """Redeem an invitation with consent; the token signs the participant in for the interview."""
    script = short_version(invitations.load_script()) if body.length == "short" else None
    started = invitations.start(
        session, services, body.invite, body.consent.model_dump(), script, panel_ref=body.panel_ref
    )
    # The opening is a reply too: the first answer's decision then reads its prompt from the model's cache.
    background.add_task(notes.after_reply, _transactions(bank), services, started.participant.id)
    return InterviewStarted(token=started.token, state=_state(state_of(session, services, started.interview)))


@router.get("/v1/interviews/current", response_model=StateRead)
def state(session: SessionDep, services: ServicesDep, interview: InterviewDep) -> StateRead:
    """Where the interview stands."""
    return _state(state_of(session, services, interview))


@router.get("/v1/interviews/current/speech", response_class=Response, responses={200: {"content": {"audio/wav": {}}}})
def speech(
    session: SessionDep,
    services: ServicesDep,
    providers: ProvidersDep,
    interview: InterviewDep,
    part: Annotated[int | None, Query(ge=0, le=1000, description="one sentence of the turn, from 0")] = None,
) -> Response:
    """The interviewer's last turn, spoken (WAV): whole, or sentence ``part`` of ``X-Speech-Parts``.

    Sentence by sentence, the first words play while the rest is still being synthesized, and the
    person can skip ahead; scripted sentences come from the speech cache.
    """
    prompt = state_of(session, services, interview).prompt
    scripted = scripted_sentences(interviews.script_of(interview))
    session.commit()  # synthesis takes seconds: hold no transaction open meanwhile
    sentences = split_sentences(prompt) or [prompt]
    if part is not None and part >= len(sentences):
        raise NotFoundError(f"the interviewer's turn has {len(sentences)} sentences")
    speaker, cache = providers.speaker(), providers.speech_cache
    chosen = sentences if part is None else [sentences[part]]
    pieces = [cache.speak(speaker, sentence, scripted) for sentence in chosen]
    spoken = pieces[0] if len(pieces) == 1 else joined(pieces)
    headers = {"Cache-Control": "no-store", "X-Speech-Parts": str(len(sentences))}
    return Response(spoken.wav, media_type=spoken.media_type, headers=headers)


@router.get(
    "/v1/interviews/current/speech/acknowledgement",
    response_class=Response,
    responses={200: {"content": {"audio/wav": {}}}},
)
def acknowledgement(providers: ProvidersDep, interview: InterviewDep, session: SessionDep) -> Response:
    """A short "Thank you." (WAV), played the moment an answer ends while the interviewer decides."""
    return _canned(ACKNOWLEDGEMENT, providers, interview, session)


@router.get(
    "/v1/interviews/current/speech/backchannel",
    response_class=Response,
    responses={200: {"content": {"audio/wav": {}}}},
)
def backchannel(providers: ProvidersDep, interview: InterviewDep, session: SessionDep) -> Response:
    """A short "Mm-hm." (WAV), played at a likely end of an answer while the person may go on."""
    return _canned(BACKCHANNEL, providers, interview, session)


def _canned(sentence: str, providers: InterviewProviders, interview: InterviewSession, session: Session) -> Response:
    scripted = scripted_sentences(interviews.script_of(interview))
    session.commit()  # nothing more to read: no transaction waits on the synthesis
    spoken = providers.speech_cache.speak(providers.speaker(), sentence, scripted)
    return Response(spoken.wav, media_type=spoken.media_type, headers={"Cache-Control": "private, max-age=3600"})


@router.post("/v1/interviews/current/answer", response_model=StateRead)
def answer(
    body: AnswerCreate,
    session: SessionDep,
    bank: BankDep,
    services: ServicesDep,
    interview: LockedInterviewDep,
    background: BackgroundTasks,
) -> StateRead:
    """A typed answer; the reply is the interviewer's next turn."""
    owner = InterviewTurn.load(session, services, interview, _transactions(bank))
    return _replied(owner.answer(body.text), bank, services, owner, background)


def _transactions(bank: Bank) -> interviews.Transactions:
    """Units of work of their own, for what a turn stores after its model call."""
    return partial(transaction, bank.sessions)


def _replied(state: interviews.InterviewState, bank: Bank, services: Services, owner: InterviewTurn,
             background: BackgroundTasks) -> StateRead:  # fmt: skip
    """The state after the turn's reply; the notes on the answer are taken once the response has gone."""
    background.add_task(notes.after_reply, _transactions(bank), services, owner.participant_id)
    return _state(state)


@router.put("/v1/interviews/current/turns/{turn}/chunks/{seq}", response_model=ChunkRead)
def put_chunk(
    turn: int,
    seq: int,
    interview: LockedInterviewDep,  # first, so that only the interview's participant learns about media types
    data: Annotated[bytes, Depends(raw_body)],
    session: SessionDep,
    bank: BankDep,
    settings: SettingsDep,
    services: ServicesDep,
    providers: ProvidersDep,
    take: TakeQuery = None,
) -> ChunkRead:
    """One chunk of a spoken answer (raw audio body); acknowledged once stored."""
    owner = InterviewTurn.load(session, services, interview, _transactions(bank))
    received = owner.receive_chunk(turn, seq, data, take=take, max_bytes=settings.max_audio_chunk_bytes,
                                   taking=providers.taking)  # fmt: skip
    return ChunkRead(turn=turn, seq=seq, sha256=received.ack.sha256, acknowledged=True,
                     end_of_turn=received.end_of_turn, backchannel=received.backchannel)  # fmt: skip


@router.delete("/v1/interviews/current/turns/{turn}/chunks", response_model=DiscardRead)
def discard(turn: int, session: SessionDep, services: ServicesDep, interview: LockedInterviewDep) -> DiscardRead:
    """Throw away a recording not yet sent for transcription, to answer again."""
    return DiscardRead(turn=turn, discarded=recordings.discard_turn(session, services.streams, interview, turn))


@router.post("/v1/interviews/current/turns/{turn}/takes", response_model=TakeRead, status_code=201)
def restart(turn: int, session: SessionDep, services: ServicesDep, interview: LockedInterviewDep) -> TakeRead:
    """Begin a new recording of the answer: any audio of an earlier recording of it is dropped."""
    return TakeRead(turn=turn, take=recordings.restart_turn(session, services.streams, interview, turn))


@router.post("/v1/interviews/current/turns/{turn}/end", response_model=StateRead)
def end_turn(
    turn: int,
    session: SessionDep,
    bank: BankDep,
    services: ServicesDep,
    interview: LockedInterviewDep,
    background: BackgroundTasks,
    take: TakeQuery = None,
) -> StateRead:
    """The spoken answer is complete: transcribe it and continue."""
    owner = InterviewTurn.load(session, services, interview, _transactions(bank))
    return _replied(owner.answer_spoken(turn, take=take), bank, services, owner, background)


@router.post("/v1/interviews/current/pause", response_model=StateRead)
def pause(session: SessionDep, services: ServicesDep, interview: LockedInterviewDep) -> StateRead:
    """Pause the interview."""
    return _state(lifecycle.pause(session, services, interview))


@router.post("/v1/interviews/current/resume", response_model=StateRead)
def resume(session: SessionDep, bank: BankDep, services: ServicesDep, interview: LockedInterviewDep,
           background: BackgroundTasks) -> StateRead:  # fmt: skip
    """Resume a paused interview; an answer left without its reply (the server stopped) gets it now."""
    owner = InterviewTurn.load(session, services, interview, _transactions(bank))
    return _replied(owner.resume(), bank, services, owner, background)


@router.get("/v1/interviews/current/transcript", response_model=list[TurnRead])
def transcript(session: SessionDep, services: ServicesDep, interview: InterviewDep) -> list[TurnRead]:
    """The participant's own transcript."""
    turns = lifecycle.transcript(session, services, interview)
    return [
        TurnRead(position=t.position, speaker=t.speaker, text=t.text, module_title=title)
        for t, title in zip(turns, lifecycle.module_titles(interview, turns), strict=True)
    ]


@router.post("/v1/interviews/current/finish", response_model=FinishRead)
def finish(body: FinishCreate, session: SessionDep, services: ServicesDep, interview: LockedInterviewDep) -> FinishRead:
    """Apply redactions, confirm the transcript, and receive the portal access code."""
    redactions = [lifecycle.Redaction(r.position, r.text) for r in body.redactions]
    code = lifecycle.finish(session, services, interview, redactions, confirm=body.confirm)
    done = completion.completion_url(session, services.keys, interview.participant_id, Ending.INTERVIEW)
    return FinishRead(access_code=code, completion_url=done)

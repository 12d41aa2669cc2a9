"""The interview routes' dependencies: the interviewer's providers, built on first use, and the
calling participant's interview."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated

from fastapi import Depends, Request

from agentbank.core.settings import Settings
from agentbank.db.models import InterviewSession
from agentbank.providers.chat import ChatModel
from app.api.deps import BankDep, PrincipalDep, SessionDep
from interviewer.deciding.reflecting import Summaries
from interviewer.deciding.speculation import SpeculativeChat
from interviewer.hearing.frames import ChunkStreams
from interviewer.hearing.ports import Transcriber
from interviewer.hearing.turn_end import TurnTaking
from interviewer.services import Services, listening_pool
from interviewer.session.interviews import current
from interviewer.speaking.cache import SpeechCache
from interviewer.speaking.speech import Speaker


class InterviewProviders:
    """The chat model, transcriber and speaker of interviews, loaded when first needed, and what hearing keeps
    in this process (the recordings being decoded, the threads its models run on), made with the application.

    The rest of the API never calls a model, so a server that runs no interviews loads none.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._chat: ChatModel | None = None
        self._transcriber: Transcriber | None = None
        self._speaker: Speaker | None = None
        self._decider: SpeculativeChat | None = None
        self.speech_cache = SpeechCache(settings.data_dir / "speech-cache")
        self.streams = ChunkStreams()
        self.taking = TurnTaking.of(settings)  # how a spoken turn is heard to end, read once
        self.summaries = Summaries.of(settings)
        self._pool: ThreadPoolExecutor | None = None

    def chat(self) -> ChatModel:
        """The interviewer's chat model."""
        with self._lock:
            if self._chat is None:
                from agentbank.providers.factory import build_chat_model

                self._chat = build_chat_model(self.settings)
            return self._chat

    def decider(self, shared: ChatModel | None) -> SpeculativeChat:
        """The interviewer's model (the bank's own where it has one) as one process-wide chat whose
        decisions can start while the participant is silent, before their turn has ended."""
        chat = shared or self.chat()
        with self._lock:
            if self._decider is None or self._decider.inner is not chat:
                self._decider = SpeculativeChat(chat)
            return self._decider

    def transcriber(self) -> Transcriber:
        """The transcriber of spoken answers."""
        with self._lock:
            if self._transcriber is None:
                from interviewer.providers import build_transcriber

                self._transcriber = build_transcriber(self.settings)
            return self._transcriber

    def speaker(self) -> Speaker:
        """The interviewer's voice."""
        with self._lock:
            if self._speaker is None:
                from interviewer.providers import build_speaker

                self._speaker = build_speaker(self.settings)
            return self._speaker

    def pool(self) -> ThreadPoolExecutor:
        """The threads hearing's model calls run on (their threads start with the first spoken answer); made
        again after ``close``, should the application start once more."""
        with self._lock:
            if self._pool is None:
                self._pool = listening_pool()
            return self._pool

    def close(self) -> None:
        """Close whatever was loaded."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        if self._decider is not None:
            self._decider.stop()
        for provider in (self._chat, self._transcriber, self._speaker):
            if provider is not None:
                provider.close()


async def get_providers(request: Request) -> InterviewProviders:
    """The application's interview providers."""
    return request.app.state.interview_providers


ProvidersDep = Annotated[InterviewProviders, Depends(get_providers)]


def get_services(bank: BankDep, providers: ProvidersDep) -> Services:
    """What the interview service needs besides the database."""
    # The transcriber loads lazily too: building Services must not load Whisper for a typed answer.
    return Services(keys=bank.keys, chat=providers.decider(bank.chat), transcriber=_LazyTranscriber(providers),
                    streams=providers.streams, pool=providers.pool(), summaries=providers.summaries)  # fmt: skip


class _LazyTranscriber:
    """Defers loading the transcription model until an audio turn actually needs it."""

    def __init__(self, providers: InterviewProviders) -> None:
        self._providers = providers

    @property
    def name(self) -> str:
        return self._providers.transcriber().name

    def transcribe(self, audio, *, context=None):
        return self._providers.transcriber().transcribe(audio, context=context)

    def close(self) -> None:
        pass


ServicesDep = Annotated[Services, Depends(get_services)]


def get_interview(session: SessionDep, principal: PrincipalDep) -> InterviewSession:
    """The calling participant's interview (403 for anyone who is not a participant)."""
    return current(session, principal.require_participant())


def get_locked_interview(session: SessionDep, principal: PrincipalDep) -> InterviewSession:
    """The calling participant's interview, its row locked for this request (409 while another holds it)."""
    return current(session, principal.require_participant(), lock=True)

"""Building the configured transcriber and speaker from the settings, each looked up in its registry
(``agentbank.providers.registry``) under the name ``AGENTBANK_TRANSCRIBER`` or ``AGENTBANK_SPEAKER`` gives."""

from __future__ import annotations

from collections.abc import Callable

from agentbank.core.settings import Settings
from agentbank.providers.factory import DEFAULT_REMOTE_TIMEOUT_S
from agentbank.providers.registry import Registry
from interviewer.hearing.ports import Transcriber
from interviewer.speaking.speech import Speaker

# More threads than this gain little on short answers and take cores from the chat model.
MAX_SPEECH_THREADS = 2

TRANSCRIBERS: Registry[Callable[[Settings], Transcriber]] = Registry("transcriber")
SPEAKERS: Registry[Callable[[Settings], Speaker]] = Registry("speaker")


def build_transcriber(settings: Settings) -> Transcriber:
    """The transcriber the settings choose. The caller closes it."""
    return TRANSCRIBERS[settings.transcriber](settings)


def build_speaker(settings: Settings) -> Speaker:
    """The speaker the settings choose. The caller closes it."""
    return SPEAKERS[settings.speaker](settings)


@TRANSCRIBERS.register("embedded")
def _whisper(settings: Settings) -> Transcriber:
    from interviewer.hearing.transcription import WhisperTranscriber

    return WhisperTranscriber(threads=min(settings.embedded_threads, MAX_SPEECH_THREADS))


@TRANSCRIBERS.register("openai")
def _openai_transcriber(settings: Settings) -> Transcriber:
    from interviewer.hearing.remote import OpenAITranscriber

    return OpenAITranscriber(
        model=settings.stt_model,
        base_url=settings.stt_base_url,
        api_key=settings.stt_api_key.get_secret_value() if settings.stt_api_key else None,
        timeout_s=settings.chat_timeout_s or DEFAULT_REMOTE_TIMEOUT_S,
        max_retries=settings.chat_max_retries,
    )


@TRANSCRIBERS.register("fake")
def _fake_transcriber(settings: Settings) -> Transcriber:
    from interviewer.hearing.transcription import FakeTranscriber

    return FakeTranscriber()


@SPEAKERS.register("embedded")
def _piper(settings: Settings) -> Speaker:
    from interviewer.speaking.speech import PiperSpeaker

    return PiperSpeaker(threads=min(settings.embedded_threads, MAX_SPEECH_THREADS))


@SPEAKERS.register("openai")
def _openai_speaker(settings: Settings) -> Speaker:
    from interviewer.speaking.speech import OpenAISpeaker

    return OpenAISpeaker(
        model=settings.tts_model,
        voice=settings.tts_voice,
        base_url=settings.tts_base_url,
        api_key=settings.tts_api_key.get_secret_value() if settings.tts_api_key else None,
        timeout_s=settings.chat_timeout_s or DEFAULT_REMOTE_TIMEOUT_S,
        max_retries=settings.chat_max_retries,
    )


@SPEAKERS.register("fake")
def _fake_speaker(settings: Settings) -> Speaker:
    from interviewer.speaking.speech import FakeSpeaker

    return FakeSpeaker()

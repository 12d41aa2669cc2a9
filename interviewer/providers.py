"""Building the configured transcriber and speaker from the settings."""

from __future__ import annotations

from agentbank.core.settings import Settings
from agentbank.providers.factory import DEFAULT_REMOTE_TIMEOUT_S
from interviewer.hearing.ports import Transcriber
from interviewer.speaking.speech import Speaker

# More threads than this gain little on short answers and take cores from the chat model.
MAX_SPEECH_THREADS = 2


def build_transcriber(settings: Settings) -> Transcriber:
    """The transcriber the settings choose. The caller closes it."""
    if settings.transcriber == "embedded":
        from interviewer.hearing.transcription import WhisperTranscriber

        return WhisperTranscriber(threads=min(settings.embedded_threads, MAX_SPEECH_THREADS))
    from interviewer.hearing.transcription import FakeTranscriber

    return FakeTranscriber()


def build_speaker(settings: Settings) -> Speaker:
    """The speaker the settings choose. The caller closes it."""
    if settings.speaker == "embedded":
        from interviewer.speaking.speech import PiperSpeaker

        return PiperSpeaker(threads=min(settings.embedded_threads, MAX_SPEECH_THREADS))
    if settings.speaker == "openai":
        from interviewer.speaking.speech import OpenAISpeaker

        return OpenAISpeaker(
            model=settings.tts_model,
            voice=settings.tts_voice,
            base_url=settings.tts_base_url,
            api_key=settings.tts_api_key.get_secret_value() if settings.tts_api_key else None,
            timeout_s=settings.chat_timeout_s or DEFAULT_REMOTE_TIMEOUT_S,
            max_retries=settings.chat_max_retries,
        )
    from interviewer.speaking.speech import FakeSpeaker

    return FakeSpeaker()

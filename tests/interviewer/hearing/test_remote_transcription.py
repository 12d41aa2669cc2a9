"""Remote recognition: the OpenAI-compatible transcriber against the fake speech server over real HTTP, its
request on a mock transport, its failures as domain errors, and the registry's choices."""

from __future__ import annotations

import io
import wave

import httpx
import numpy as np
import pytest

from agentbank.core.errors import ProviderError, ProviderTimeoutError
from agentbank.core.settings import Settings
from interviewer.hearing.ports import Segment, Transcriber
from interviewer.hearing.remote import OpenAITranscriber
from interviewer.hearing.transcription import SAMPLE_RATE, VERBATIM_PROMPT, BadAudioError, WhisperTranscriber
from interviewer.providers import build_transcriber
from tests.support.speech_servers import running_speech_server

KEY = "sk-stt-key-that-must-not-leak"
HEARD = "I grew up near the sea."


def tone(seconds: float) -> np.ndarray:
    t = np.arange(round(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    return (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)


@pytest.fixture(scope="module")
def server():
    with running_speech_server(text=HEARD) as running:
        yield running


@pytest.fixture(scope="module")
def plain_server():
    with running_speech_server(text=HEARD, plain=True) as running:
        yield running


def remote(base_url: str, **options) -> OpenAITranscriber:
    return OpenAITranscriber(model="whisper-test", base_url=base_url, api_key=KEY, **options)


def test_the_words_and_a_segment_come_back_over_http(server):
    transcriber = remote(server.base_url)
    assert isinstance(transcriber, Transcriber)
    before = server.stats()["transcriptions"]
    try:
        heard = transcriber.transcribe(tone(2.5), context="Where did you grow up?")
    finally:
        transcriber.close()
    assert heard.text == HEARD and heard.model == "whisper-test"
    assert heard.duration_s == pytest.approx(2.5) and heard.seconds > 0
    # The server timed its segment on the WAV it was sent: the whole answer, at 16 kHz.
    assert heard.segments == (Segment(0.0, pytest.approx(2.5, abs=1e-3), HEARD),)
    assert server.stats()["transcriptions"] == before + 1


def test_a_server_answering_text_alone_gives_one_segment_spanning_the_audio(plain_server):
    transcriber = remote(plain_server.base_url)
    try:
        heard = transcriber.transcribe((tone(1.5) * 32767).astype(np.int16))
    finally:
        transcriber.close()
    assert heard.text == HEARD and heard.segments == (Segment(0.0, 1.5, HEARD),)


class Endpoint:
    """Answers /audio/transcriptions requests from a list of (status, JSON body) and records them."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        status, body = self.answers.pop(0)
        return httpx.Response(status, json=body)


def mocked(endpoint: Endpoint, sleeps: list[float] | None = None, **options) -> OpenAITranscriber:
    client = httpx.Client(transport=httpx.MockTransport(endpoint))
    return remote("http://127.0.0.1:9/v1", http_client=client, sleep=(sleeps if sleeps is not None else []).append,
                  **options)  # fmt: skip


def form_fields(request: httpx.Request) -> tuple[dict[str, str], bytes]:
    """The multipart form's text fields and its file."""
    boundary = request.headers["content-type"].split("boundary=")[1].encode()
    fields, upload = {}, b""
    for part in request.content.split(b"--" + boundary)[1:-1]:
        head, _, body = part.strip(b"\r\n").partition(b"\r\n\r\n")
        name = head.split(b'name="')[1].split(b'"')[0].decode()
        if b"filename=" in head:
            upload = body
        else:
            fields[name] = body.decode()
    return fields, upload


def test_the_request_carries_a_16k_wav_the_model_english_and_the_prompt():
    endpoint = Endpoint((200, {"text": " Um, by the sea.", "segments": [
        {"start": 0.2, "end": 1.1, "text": " Um, by the sea."}, {"start": 1.2, "end": 1.3, "text": " "}]}))  # fmt: skip
    heard = mocked(endpoint).transcribe(tone(1.5), context="Where did you grow up?")
    assert heard.text == "Um, by the sea." and heard.segments == (Segment(0.2, 1.1, "Um, by the sea."),)
    request = endpoint.requests[0]
    assert request.url.path == "/v1/audio/transcriptions" and request.headers["authorization"] == f"Bearer {KEY}"
    fields, upload = form_fields(request)
    assert fields == {"model": "whisper-test", "language": "en", "response_format": "verbose_json",
                      "prompt": f"Where did you grow up? {VERBATIM_PROMPT}"}  # fmt: skip
    with wave.open(io.BytesIO(upload)) as sent:
        assert (sent.getnchannels(), sent.getsampwidth(), sent.getframerate(), sent.getnframes()) == (
            1, 2, SAMPLE_RATE, round(1.5 * SAMPLE_RATE))  # fmt: skip


def test_empty_audio_is_no_call_and_stereo_is_refused():
    endpoint = Endpoint()
    transcriber = mocked(endpoint)
    assert transcriber.transcribe(np.zeros(0, dtype=np.float32)).text == "" and not endpoint.requests
    with pytest.raises(BadAudioError):
        transcriber.transcribe(np.zeros((2, 100), dtype=np.float32))


def test_a_server_error_is_retried_then_a_provider_error_that_tells_nothing_of_the_answer():
    sleeps: list[float] = []
    failing = {"error": {"message": f"internal error on {HEARD}"}}
    endpoint = Endpoint(*[(500, failing)] * 3)
    with pytest.raises(ProviderError) as caught:
        mocked(endpoint, sleeps, max_retries=2).transcribe(tone(1.0), context="Where did you grow up?")
    assert caught.value.status == 500 and caught.value.code == "provider_error"
    assert len(endpoint.requests) == 3 and len(sleeps) == 2
    assert "transcription endpoint" in str(caught.value)
    assert all(leak not in str(caught.value) for leak in (KEY, HEARD, "grow up", "RIFF"))


def test_a_bad_key_is_not_retried():
    endpoint = Endpoint((401, {"error": {"message": "bad key"}}))
    with pytest.raises(ProviderError) as caught:
        mocked(endpoint).transcribe(tone(1.0))
    assert caught.value.status == 401 and caught.value.hint == "check the API key setting"
    assert len(endpoint.requests) == 1


@pytest.mark.parametrize("body", [{"segments": []}, [HEARD], {"text": "x", "segments": [{"start": 0}]}])
def test_an_answer_that_is_no_transcription_is_a_provider_error(body):
    with pytest.raises(ProviderError, match="transcription endpoint"):
        mocked(Endpoint((200, body))).transcribe(tone(1.0))


def test_a_server_too_slow_is_a_timeout():
    with running_speech_server(latency_s=1.0) as slow:
        transcriber = remote(slow.base_url, timeout_s=0.2, max_retries=0)
        try:
            with pytest.raises(ProviderTimeoutError, match="did not answer in time"):
                transcriber.transcribe(tone(1.0))
        finally:
            transcriber.close()


def test_settings_choose_the_remote_transcriber(monkeypatch):
    monkeypatch.setenv("AGENTBANK_TRANSCRIBER", "openai")
    monkeypatch.setenv("AGENTBANK_STT_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("AGENTBANK_STT_MODEL", "Systran/faster-whisper-small.en")
    transcriber = build_transcriber(Settings())
    try:
        assert isinstance(transcriber, OpenAITranscriber) and transcriber.name == "Systran/faster-whisper-small.en"
    finally:
        transcriber.close()


def test_the_remote_transcriber_settings_keep_their_key_secret():
    assert Settings().stt_model == "whisper-1" and "sk-" not in repr(Settings(stt_api_key="sk-secret"))
    with pytest.raises(ValueError, match="AGENTBANK_STT_API_KEY holds a placeholder"):
        Settings(environment="production", secret_key="s" * 40, stt_api_key="changeme")


def test_embedded_still_builds_whisper(monkeypatch):
    """The registry's ``embedded`` is faster-whisper as before (its model stood in for: loading it is slow)."""
    import faster_whisper

    loaded: list[dict[str, object]] = []
    monkeypatch.setattr(faster_whisper.WhisperModel, "__init__", lambda self, path, **options: loaded.append(options))
    transcriber = build_transcriber(Settings(transcriber="embedded", embedded_threads=8))
    assert isinstance(transcriber, WhisperTranscriber)
    assert loaded == [{"device": "cpu", "compute_type": "int8", "cpu_threads": 2}]

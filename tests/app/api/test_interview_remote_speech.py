"""An interview heard and spoken by OpenAI-compatible endpoints (the fake speech server): the spoken answer's
words are the server's, the questions are its audio, and the API process loads neither Whisper nor Piper."""

from __future__ import annotations

import faster_whisper
import piper
import pytest

from interviewer.hearing.remote import OpenAITranscriber
from interviewer.services import Services
from interviewer.speaking.speech import OpenAISpeaker
from tests.support.interviews import begin_over_api, interviewer_model, wav_bytes
from tests.support.speech_servers import running_speech_server

HEARD = "I grew up near the sea."


@pytest.fixture(scope="module")
def server():
    with running_speech_server(text=HEARD) as running:
        yield running


@pytest.fixture
def models_loaded(monkeypatch) -> list[str]:
    """Every load of a Whisper or Piper model from now on, each refused: one made as the app starts (its
    lifespan, a warm-up) counts as much as one made by a request."""
    loaded: list[str] = []

    def refused(name: str):
        def load(self, *args, **kwargs):
            loaded.append(name)
            raise AssertionError(f"{name} was loaded")

        return load

    monkeypatch.setattr(faster_whisper.WhisperModel, "__init__", refused("WhisperModel"))
    monkeypatch.setattr(piper.PiperVoice, "__init__", refused("PiperVoice"))
    return loaded


@pytest.fixture
def settings(settings, server, models_loaded):
    # The chunks speak in tones, which only the energy detector hears as speech.
    return settings.model_copy(update={
        "transcriber": "openai", "stt_base_url": server.base_url, "stt_model": "whisper-remote",
        "speaker": "openai", "tts_base_url": server.base_url,
        "voice_detector": "energy", "end_of_turn_voice": "none",
    })  # fmt: skip


@pytest.fixture
def started(api, monkeypatch):
    providers, chat = api.client.app.state.interview_providers, interviewer_model()
    # The interviewer's model is scripted; the transcriber is the one the app builds from its settings.
    services = Services(keys=api.bank.keys, chat=chat, transcriber=providers.transcriber())
    yield begin_over_api(api, monkeypatch, services)
    api.client.app.dependency_overrides.clear()


def test_a_spoken_answer_is_heard_by_the_remote_endpoint_and_no_speech_model_is_loaded(
    api, started, server, models_loaded
):
    headers, state = started
    before = server.stats()
    spoken = api.client.get("/v1/interviews/current/speech", params={"part": 0}, headers=headers)
    assert spoken.status_code == 200 and spoken.content[:4] == b"RIFF"
    audio, url = wav_bytes(5.0), "/v1/interviews/current/turns/{turn}/chunks/{seq}"
    wav = {**headers, "Content-Type": "audio/wav"}
    for seq, piece in enumerate([audio[:20_000], audio[20_000:60_000], audio[60_000:]]):
        put = api.client.put(url.format(turn=state["turn"], seq=seq), content=piece, headers=wav)
        assert put.status_code == 200, put.text
    ended = api.client.post(f"/v1/interviews/current/turns/{state['turn']}/end", headers=headers)
    assert ended.status_code == 200, ended.text
    turns = api.client.get("/v1/interviews/current/transcript", headers=headers).json()
    assert turns[1] == {**turns[1], "speaker": "participant", "text": HEARD}
    after = server.stats()
    assert after["transcriptions"] > before["transcriptions"] and after["speeches"] > before["speeches"]
    providers = api.client.app.state.interview_providers
    assert isinstance(providers.transcriber(), OpenAITranscriber) and isinstance(providers.speaker(), OpenAISpeaker)
    assert models_loaded == []

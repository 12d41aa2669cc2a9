"""Remote speech: the OpenAI-compatible speaker against the fake speech server over real HTTP, built from the
settings, and the server's counts that a capacity benchmark reads."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
import pytest

from agentbank.core.settings import Settings
from benchmarks.speech_server import SECONDS_PER_WORD, SPEECH_RATE
from interviewer.providers import build_speaker
from interviewer.speaking.speech import OpenAISpeaker, split_sentences, wav_samples
from tests.support.speech_servers import running_speech_server

QUESTION = "Thank you for that. Could you tell me about the town where you grew up? Who lived there with you?"


@pytest.fixture(scope="module")
def server():
    with running_speech_server(latency_s=0.1) as running:
        yield running


@pytest.fixture
def speaker(server, monkeypatch):
    monkeypatch.setenv("AGENTBANK_SPEAKER", "openai")
    monkeypatch.setenv("AGENTBANK_TTS_BASE_URL", server.base_url)
    monkeypatch.setenv("AGENTBANK_TTS_API_KEY", "sk-tts-key")
    built = build_speaker(Settings())
    yield built
    built.close()


def test_each_sentence_is_spoken_over_http_as_wav(server, speaker):
    assert isinstance(speaker, OpenAISpeaker) and speaker.name == "tts-1:alloy"
    before = server.stats()["speeches"]
    pieces = list(speaker.stream(QUESTION))
    words = [len(sentence.split()) for sentence in split_sentences(QUESTION)]
    assert [p.sample_rate for p in pieces] == [SPEECH_RATE] * 3
    assert [p.duration_s for p in pieces] == pytest.approx([n * SECONDS_PER_WORD for n in words])
    assert all(p.wav[:4] == b"RIFF" and np.max(np.abs(wav_samples(p))) > 0.05 for p in pieces)
    assert server.stats()["speeches"] == before + 3


def test_the_whole_question_is_one_wav(speaker):
    speech = speaker.synthesize(QUESTION)
    assert speech.duration_s == pytest.approx(len(QUESTION.split()) * SECONDS_PER_WORD)


def test_the_server_counts_calls_in_flight_and_refuses_formats_it_does_not_speak(server):
    before = server.stats()
    body = {"model": "tts-1", "voice": "alloy", "input": "One two three.", "response_format": "pcm"}
    with httpx.Client(base_url=server.base_url) as client, ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: client.post("/audio/speech", json=body), range(4)))
        mp3 = client.post("/audio/speech", json={**body, "response_format": "mp3"})
    assert {a.status_code for a in answers} == {200}
    assert {len(a.content) for a in answers} == {round(3 * SECONDS_PER_WORD * SPEECH_RATE) * 2}  # raw 16-bit
    assert mp3.status_code == 400
    after = server.stats()
    assert after["speeches"] == before["speeches"] + 5 and after["refused"] == before["refused"] + 1
    assert after["peak_in_flight"] >= 2 and after["in_flight"] == 0

"""Speakers: WAV helpers, the fake, the OpenAI-compatible adapter on a mock transport, and Piper."""

from __future__ import annotations

import io
import json
import struct
import wave

import httpx
import numpy as np
import pytest

from agentbank.core.errors import ProviderError
from agentbank.core.settings import Settings
from interviewer.hearing.turn_end import TurnTaking
from interviewer.providers import build_speaker
from interviewer.speaking.speech import (
    FakeSpeaker,
    OpenAISpeaker,
    Speaker,
    Speech,
    split_sentences,
    to_wav,
    wav_samples,
)

KEY = "sk-tts-key-that-must-not-leak"
QUESTION = "Thank you for that. Could you tell me about the town where you grew up? Who lived there with you?"


def read_wav(speech: Speech) -> tuple[int, int, int, int]:
    with wave.open(io.BytesIO(speech.wav)) as source:
        return source.getnchannels(), source.getsampwidth(), source.getframerate(), source.getnframes()


def test_wav_round_trip_keeps_samples_and_rate():
    samples = np.sin(np.linspace(0, 100, 2400)).astype(np.float32) * 0.5
    speech = to_wav(samples, 24_000)
    assert read_wav(speech) == (1, 2, 24_000, 2400)
    assert speech.duration_s == pytest.approx(0.1)
    np.testing.assert_allclose(wav_samples(speech), samples, atol=1e-4)


def test_sentences_split_after_final_punctuation():
    assert split_sentences(QUESTION) == [
        "Thank you for that.",
        "Could you tell me about the town where you grew up?",
        "Who lived there with you?",
    ]
    assert split_sentences("  ") == []
    assert split_sentences("No punctuation at the end") == ["No punctuation at the end"]


def test_fake_speaker_gives_audible_speech_in_proportion_to_text():
    fake = FakeSpeaker()
    assert isinstance(fake, Speaker)
    short, long = fake.synthesize("Hello."), fake.synthesize("Hello. " * 10)
    assert read_wav(short)[:3] == (1, 2, 16_000)
    assert long.duration_s > 8 * short.duration_s
    assert np.max(np.abs(wav_samples(short))) > 0.05
    pieces = list(fake.stream(QUESTION))
    assert len(pieces) == 3 and all(p.duration_s > 0 for p in pieces)
    assert fake.calls == ["Hello.", "Hello. " * 10, QUESTION]


class Endpoint:
    """Answers /audio/speech requests from a list of (status, body bytes, content type) and records them."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        status, body, content_type = self.answers.pop(0)
        return httpx.Response(status, content=body, headers={"content-type": content_type})


def server_wav(seconds: float, rate: int = 24_000, channels: int = 1, streamed: bool = False) -> bytes:
    samples = (0.3 * np.sin(2 * np.pi * 300 * np.arange(round(seconds * rate)) / rate) * 32767).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(channels)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(np.repeat(samples, channels).tobytes())
    data = bytearray(buffer.getvalue())
    if streamed:  # what a server writing as it synthesizes sends: lengths unknown
        struct.pack_into("<I", data, 4, 0xFFFFFFFF)
        struct.pack_into("<I", data, data.index(b"data") + 4, 0xFFFFFFFF)
    return bytes(data)


def openai_speaker(endpoint: Endpoint, sleeps: list[float] | None = None) -> OpenAISpeaker:
    return OpenAISpeaker(
        model="tts-test",
        voice="nova",
        base_url="http://127.0.0.1:9/v1",
        api_key=KEY,
        http_client=httpx.Client(transport=httpx.MockTransport(endpoint)),
        sleep=(sleeps if sleeps is not None else []).append,
    )


def test_openai_speaker_asks_for_wav_one_sentence_at_a_time():
    endpoint = Endpoint(*[(200, server_wav(0.5), "audio/wav")] * 3)
    pieces = list(openai_speaker(endpoint).stream(QUESTION))
    sent = [json.loads(r.content) for r in endpoint.requests]
    assert [s["input"] for s in sent] == split_sentences(QUESTION)
    assert {(s["model"], s["voice"], s["response_format"]) for s in sent} == {("tts-test", "nova", "wav")}
    assert endpoint.requests[0].url.path == "/v1/audio/speech"
    assert endpoint.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert [read_wav(p) for p in pieces] == [(1, 2, 24_000, 12_000)] * 3


def test_openai_speaker_joins_sentences_and_reads_streamed_stereo_wav():
    endpoint = Endpoint(
        (200, server_wav(0.5, 22_050, 2, streamed=True), "audio/wav"), (200, server_wav(0.25), "audio/wav")
    )
    speech = openai_speaker(endpoint).synthesize("First sentence. Second one.")
    assert speech.sample_rate == 22_050
    assert speech.duration_s == pytest.approx(0.5 + 0.25 * 24_000 / 22_050, abs=1e-3)
    assert np.max(np.abs(wav_samples(speech))) == pytest.approx(0.3, abs=0.01)


def test_openai_speaker_retries_server_errors_but_not_bad_keys():
    sleeps: list[float] = []
    endpoint = Endpoint((503, b"{}", "application/json"), (200, server_wav(0.1), "audio/wav"))
    assert openai_speaker(endpoint, sleeps).synthesize("Hello.").duration_s == pytest.approx(0.1)
    assert len(sleeps) == 1
    refused = Endpoint((401, json.dumps({"error": {"message": f"bad key {KEY}"}}).encode(), "application/json"))
    with pytest.raises(ProviderError) as caught:
        openai_speaker(refused).synthesize("Hello.")
    assert caught.value.status == 401 and len(refused.requests) == 1
    assert KEY not in str(caught.value) and "Hello" not in str(caught.value)


@pytest.mark.parametrize("body", [b"ID3 an mp3, not a wav", b"RIFF\x10\x00\x00\x00WAVEfmt "])
def test_openai_speaker_refuses_audio_that_is_not_wav(body):
    with pytest.raises(ProviderError, match="did not return WAV"):
        openai_speaker(Endpoint((200, body, "audio/mpeg"))).synthesize("Hello.")


def test_settings_choose_the_speaker(monkeypatch):
    assert isinstance(build_speaker(Settings()), FakeSpeaker)  # the tests' default
    monkeypatch.setenv("AGENTBANK_SPEAKER", "openai")
    monkeypatch.setenv("AGENTBANK_TTS_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("AGENTBANK_TTS_VOICE", "echo")
    speaker = build_speaker(Settings())
    try:
        assert isinstance(speaker, OpenAISpeaker) and speaker.name == "tts-1:echo"
    finally:
        speaker.close()


def test_speech_settings_have_sane_defaults_and_bounds():
    settings = Settings()
    assert (settings.end_of_turn_pause_s, settings.end_of_turn_finished_s, settings.end_of_turn_silence_s) == (
        0.3,
        1.2,
        3.0,
    )
    assert settings.voice_detector == "silero"
    assert settings.max_audio_chunk_bytes == 2 * 1024 * 1024
    with pytest.raises(ValueError, match="end_of_turn_silence_s"):
        Settings(end_of_turn_silence_s=0)
    with pytest.raises(ValueError, match="must grow"):
        Settings(end_of_turn_finished_s=5.0)  # longer than the wait for an unfinished thought
    with pytest.raises(ValueError, match="story"):
        Settings(end_of_turn_story_finished_s=5.0)
    assert "sk-" not in repr(Settings(tts_api_key="sk-secret"))


def test_a_question_that_leaves_time_for_a_story_waits_longer_after_a_finished_thought():
    # With no patience (the turn passes at a likely end), a story's finished thought waits longer itself.
    taking = TurnTaking.of(Settings(end_of_turn_story_question_s=100, end_of_turn_story_finished_s=2.0,
                                    end_of_turn_patience_s=0, end_of_turn_story_patience_s=0))  # fmt: skip
    assert taking.for_question(None) == taking.for_question(99) == taking  # a follow-up's budget is its question's
    story = taking.for_question(100)
    assert (story.finished_s, story.sure_s, story.unfinished_s) == (2.0, 2.0, taking.unfinished_s)
    assert story.for_question(100) == story
    shorter = TurnTaking.of(
        Settings(end_of_turn_story_finished_s=1.0, end_of_turn_patience_s=0, end_of_turn_story_patience_s=0)
    )
    assert shorter.for_question(600) == shorter  # a story never waits less than a finished thought


# Piper, the real voice


@pytest.fixture(scope="module")
def piper():
    from interviewer.speaking.speech import PiperSpeaker

    speaker = PiperSpeaker(threads=2)
    yield speaker
    speaker.close()


@pytest.mark.slow
def test_piper_speaks_a_question_at_a_natural_length(piper):
    speech = piper.synthesize(QUESTION)
    channels, width, rate, frames = read_wav(speech)
    assert (channels, width, rate) == (1, 2, 22_050)
    # 20 words at a clear conversational 120 to 250 words a minute, pauses included.
    assert 20 / 250 * 60 < speech.duration_s < 20 / 120 * 60
    samples = wav_samples(speech)
    assert np.sqrt(np.mean(samples**2)) > 0.02 and np.max(np.abs(samples)) < 1.0


@pytest.mark.slow
def test_piper_streams_one_piece_per_sentence(piper):
    pieces = list(piper.stream(QUESTION))
    assert len(pieces) == 3
    durations = [p.duration_s for p in pieces]
    assert durations[1] > durations[0] and durations[1] > durations[2]  # the long sentence is longest
    # Later sentences open with a pause, so pieces played back to back still breathe.
    leading = [np.argmax(np.abs(wav_samples(p)) > 0.01) / p.sample_rate for p in pieces]
    assert leading[0] < 0.2 and min(leading[1:]) >= 0.3
    assert list(piper.stream("   ")) == []
    assert piper.synthesize("").duration_s == 0


@pytest.mark.slow
def test_settings_build_piper():
    speaker = build_speaker(Settings(speaker="embedded"))
    try:
        assert speaker.name == "piper-en_US-joe-medium" and speaker.synthesize("Hello.").duration_s > 0.2
    finally:
        speaker.close()

"""A spoken answer is sent as the page records it, one 100 ms frame a request: ten a second. Under the
bank's default request limit (120 a minute per caller) the frames have an allowance of their own, so a
participant who speaks for a minute is never refused in the middle of an answer, while a caller that sends
frames faster than any page records them still is, and every other request keeps the common limit."""

from __future__ import annotations

import pytest

from agentbank.core.settings import Settings
from interviewer.hearing.transcription import FakeTranscriber
from interviewer.services import Services
from tests.support.factories import SECRET
from tests.support.interviews import begin_over_api, interviewer_model, wav_bytes

CHUNK = "/v1/interviews/current/turns/{turn}/chunks/{seq}"
FRAME_BYTES = 3_200  # 100 ms of 16 kHz 16-bit mono


@pytest.fixture
def settings(tmp_path) -> Settings:
    """The bank's default limits (the other API tests raise them out of the way)."""
    return Settings(secret_key=SECRET, data_dir=tmp_path, reference_data_dir="../shared/data",
                    audio_frames_per_minute=900)  # fmt: skip


def start(api, monkeypatch) -> tuple[dict[str, str], int]:
    services = Services(keys=api.bank.keys, chat=interviewer_model(), transcriber=FakeTranscriber(script=lambda s: ""))
    headers, state = begin_over_api(api, monkeypatch, services)
    return headers, state["turn"]


def frames(seconds: float) -> list[bytes]:
    """A silent answer as a streaming recorder cuts it: the header in the first frame, 100 ms in each."""
    data = wav_bytes(seconds)
    return [data[i : i + FRAME_BYTES] for i in range(0, len(data), FRAME_BYTES)]


def test_a_minute_of_speech_is_not_refused_under_the_default_request_limit(api, monkeypatch):
    assert Settings.model_fields["rate_limit_per_minute"].default == 120
    headers, turn = start(api, monkeypatch)
    take = api.client.post(f"/v1/interviews/current/turns/{turn}/takes", headers=headers).json()["take"]
    wav = {**headers, "Content-Type": "audio/wav"}
    sent = frames(60.0)
    assert len(sent) > 500  # ten a second, four times the common limit
    for seq, frame in enumerate(sent):
        put = api.client.put(CHUNK.format(turn=turn, seq=seq), params={"take": take}, content=frame, headers=wav)
        assert put.status_code == 200, f"frame {seq}: {put.status_code} {put.text}"
    for _ in range(119):  # the frames took nothing of the common allowance
        assert api.client.get("/v1/interviews/current", headers=headers).status_code == 200
    refused = api.client.get("/v1/interviews/current", headers=headers)
    assert refused.status_code == 429 and "Retry-After" in refused.headers


def test_frames_faster_than_any_page_records_them_are_refused(api, monkeypatch):
    headers, turn = start(api, monkeypatch)
    take = api.client.post(f"/v1/interviews/current/turns/{turn}/takes", headers=headers).json()["take"]
    wav = {**headers, "Content-Type": "audio/wav"}
    codes = [
        api.client.put(CHUNK.format(turn=turn, seq=seq), params={"take": take}, content=frame, headers=wav).status_code
        for seq, frame in enumerate(frames(95.0))
    ]
    assert codes[:900] == [200] * 900
    assert set(codes[900:]) == {429}

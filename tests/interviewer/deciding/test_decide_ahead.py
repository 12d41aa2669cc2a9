"""Deciding while the person is silent: the interviewer's decision started at the pause that ends an
answer is the one used at the end of the turn (one model call, none after the turn ends); an answer
that goes on after the pause is decided again on all of it."""

from __future__ import annotations

import threading

import numpy as np

from agentbank.core.errors import ProviderError
from agentbank.providers.chat import ChatRequest
from agentbank.providers.fakes import ScriptedChatModel
from interviewer.deciding.decisions import DECISION_SCHEMA
from interviewer.deciding.speculation import SpeculativeChat
from interviewer.hearing.transcription import SAMPLE_RATE, FakeTranscriber
from interviewer.services import Services
from interviewer.session.transcripts import state_of
from tests.support.factories import keyring
from tests.support.interviews import interviewer_model, turn_of
from tests.support.spoken_answers import (
    answer_of,
    begin,
    hear_tones,
    pieces_of,
    pitch,
    send,
    streaming_wav,
    tone_speech,
)

MESSAGES = [{"role": "user", "content": "Decide."}]
SCHEMA = {"type": "object", "properties": {"action": {"type": "string"}}}


def test_a_call_made_ahead_is_taken_by_the_identical_call_and_only_by_it():
    model = ScriptedChatModel(lambda messages, schema: {"action": messages[-1]["content"]})
    chat = SpeculativeChat(model)
    chat.ahead(lambda ahead: ahead.complete(ChatRequest(MESSAGES, schema=SCHEMA, seed=3)))
    chat.settle(5)
    assert chat.complete(ChatRequest(MESSAGES, schema=SCHEMA, seed=3)).data == {"action": "Decide."}
    assert len(model.calls) == 1  # the call made ahead, taken
    chat.complete(ChatRequest(MESSAGES, schema=SCHEMA, seed=4))  # another seed: another call
    chat.complete(ChatRequest(MESSAGES, schema=SCHEMA, seed=3))  # taken once only: asked again
    assert len(model.calls) == 3
    chat.stop()


def test_a_failed_head_start_costs_nothing_and_a_newer_one_replaces_a_waiting_one():
    failing = iter([ProviderError("the model went away")])

    def respond(messages, schema):
        error = next(failing, None)
        if error is not None:
            raise error
        return {"action": messages[-1]["content"]}

    model = ScriptedChatModel(respond)
    chat = SpeculativeChat(model)
    chat.ahead(lambda ahead: ahead.complete(ChatRequest(MESSAGES, schema=SCHEMA)))
    chat.settle(5)
    assert chat.complete(ChatRequest(MESSAGES, schema=SCHEMA)).data == {"action": "Decide."}  # decided again

    gate = threading.Event()
    chat.ahead(lambda ahead: gate.wait(5))  # busy
    first = chat.ahead(lambda ahead: ahead.complete(ChatRequest([{"role": "user", "content": "old"}], schema=SCHEMA)))
    chat.ahead(lambda ahead: ahead.complete(ChatRequest([{"role": "user", "content": "new"}], schema=SCHEMA)))
    gate.set()
    chat.settle(5)
    assert first.cancelled()
    assert [c["messages"][-1]["content"] for c in model.calls][-1] == "new"
    chat.stop()


def words(indexes: list[int], pause_after: float) -> list[np.ndarray]:
    rate, pieces = SAMPLE_RATE, []
    for index in indexes:
        t = np.arange(int(0.25 * rate)) / rate
        pieces.append((0.3 * np.sin(2 * np.pi * pitch(index) * t)).astype(np.float32))
        pieces.append(np.zeros(int(0.1 * rate), np.float32))
    pieces.append(np.zeros(int(pause_after * rate), np.float32))
    return pieces


def spoken(*parts: tuple[list[int], float]) -> np.ndarray:
    pieces = [np.zeros(int(0.5 * SAMPLE_RATE), np.float32)]
    for indexes, pause in parts:
        pieces += words(indexes, pause)
    return np.concatenate(pieces)


def services_ahead() -> Services:
    transcriber = FakeTranscriber(script=hear_tones)
    return Services(keys=keyring(), chat=SpeculativeChat(interviewer_model()), transcriber=transcriber)


def listening(db):
    """An interview waiting for a spoken answer, with the head-start decider; the model's calls so far cleared."""
    services = services_ahead()
    interview = begin(db, services)
    turn = state_of(db, services, interview).turn
    model = services.chat.inner
    model.calls.clear()
    return services, interview, turn, model


def test_the_decision_started_in_the_pause_is_the_one_used(db):
    services, interview, turn, model = listening(db)
    chunks = pieces_of(streaming_wav(spoken((list(range(12)), 3.0))))
    assert send(db, services, interview, turn, chunks)
    services.chat.settle(5)
    assert len(model.calls) == 1  # started in the pause, before the end of the turn
    heard_before_end = len(services.transcriber.calls)

    state = turn_of(db, services, interview).answer_spoken(turn)
    assert len(model.calls) == 1  # the end of the turn took it: no second call, no wait on the model
    assert len(services.transcriber.calls) == heard_before_end  # nothing left to transcribe either
    assert answer_of(db, services, interview, turn) == " ".join(f"w{i}" for i in range(12))
    assert state.prompt == "Could you tell me more about that?"
    services.chat.stop()


def test_an_answer_that_goes_on_after_the_pause_is_decided_again_on_all_of_it(db):
    services, interview, turn, model = listening(db)
    chunks = pieces_of(streaming_wav(spoken((list(range(6)), 1.6), (list(range(6, 12)), 3.0))))
    # Up to the pause's last full second: the head start begins there. Settled before the answer goes on,
    # so a loaded machine cannot let the newer head start replace it while it still waits for a thread.
    assert not send(db, services, interview, turn, chunks[:4])
    services.chat.settle(5)
    assert len(model.calls) == 1
    assert send(db, services, interview, turn, chunks[4:], first_seq=4)
    services.chat.settle(5)
    turn_of(db, services, interview).answer_spoken(turn)
    assert answer_of(db, services, interview, turn) == " ".join(f"w{i}" for i in range(12))
    decided = [c["messages"][-1]["content"] for c in model.calls if c["schema"] == DECISION_SCHEMA]
    assert len(decided) == 2 and "w5" in decided[0] and "w6" not in decided[0]
    assert "w11" in decided[1]  # the reply stored is the one decided on the whole answer
    services.chat.stop()


def test_no_head_start_before_the_person_has_paused_long_enough(db):
    services, interview, turn, model = listening(db)
    chunks = pieces_of(streaming_wav(spoken((list(range(12)), 0.5))))
    assert not send(db, services, interview, turn, chunks)
    services.chat.settle(5)
    assert model.calls == []
    services.chat.stop()


def test_every_request_of_a_server_shares_one_decider(tmp_path):
    """A decision started in one chunk's request is taken at the end of the turn, another request: the
    server's interviews share one process-wide chat that remembers it."""
    from agentbank.core.settings import Settings
    from app.api.interviews.dependencies import InterviewProviders

    providers = InterviewProviders(Settings(data_dir=tmp_path, chat_provider="fake"))
    shared = interviewer_model()
    first, second = providers.decider(shared), providers.decider(shared)
    assert first is second and first.inner is shared
    assert providers.decider(None).inner is providers.chat()  # no bank model: the interviewer's own
    providers.close()


def test_while_the_person_speaks_the_model_reads_the_decisions_prompt_up_to_their_words(db):
    """Each span transcribed while they speak warms the model's cache with the decision's prompt cut after
    it; the decision then starts with the last of those prompts, so it has only the rest to read."""
    services, interview, turn, model = listening(db)
    speech, said = tone_speech()
    assert send(db, services, interview, turn, pieces_of(streaming_wav(speech)))
    services.chat.settle(5)
    turn_of(db, services, interview).answer_spoken(turn)
    warm = [c for c in model.calls if c["max_tokens"] == 1]
    decision = [c for c in model.calls if c["schema"] == DECISION_SCHEMA][-1]["messages"][1]["content"]
    assert warm, "no span warmed the model"
    assert all(c["schema"] is None for c in warm)
    spoken = [c["messages"][1]["content"].split("The person's last answer:\n")[1] for c in warm]
    assert all(" ".join(said).startswith(words) and words for words in spoken)  # the answer so far, whole words
    assert decision.startswith(warm[-1]["messages"][1]["content"])
    services.chat.stop()

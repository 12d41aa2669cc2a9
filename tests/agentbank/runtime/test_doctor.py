"""The doctor judges the chat model's measured speed against the calls the bank will make."""

from dataclasses import replace

import pytest

from agentbank.core.settings import Settings
from agentbank.providers.chat import Speed
from agentbank.providers.fakes import ScriptedChatModel, echo_minimal
from agentbank.runtime.doctor import check_chat_model


class MeasuredChat(ScriptedChatModel):
    """A scripted model whose answers report a server-measured speed, as llama.cpp's do."""

    def __init__(self, speed: Speed) -> None:
        super().__init__(echo_minimal, name="measured")
        self.speed = speed

    def complete(self, request):
        return replace(super().complete(request), speed=self.speed, seconds=1.0)


def doctor(speed: Speed, **settings) -> object:
    settings.setdefault("chat_provider", "embedded")  # the model itself is the scripted one above
    return check_chat_model(Settings(**settings), build=lambda _settings: MeasuredChat(speed))


def test_a_model_too_slow_for_a_build_fails_with_the_way_out():
    # The speed of the embedded model on a busy two-core laptop.
    check = doctor(Speed(prompt_tps=8.0, completion_tps=1.0))
    assert check.status == "fail"
    assert "a build's reflection" in check.hint
    assert "AGENTBANK_CHAT_PROVIDER=openai" in check.hint and "AGENTBANK_REFLECTION_WORD_BUDGET" in check.hint
    assert "of 900 s allowed" in check.facts["a build's reflection"]
    # A remote endpoint this slow is judged against its own limit.
    assert "of 120 s allowed" in doctor(Speed(8.0, 1.0), chat_provider="fake").facts["a survey answer"]


def test_a_model_fast_enough_passes_and_shows_its_margins():
    check = doctor(Speed(prompt_tps=120.0, completion_tps=30.0))
    assert check.status == "ok", check.hint
    assert check.facts["measured"] == "120 prompt, 30.0 completion tokens/s"


@pytest.mark.parametrize(("timeout", "status"), [(30.0, "fail"), (600.0, "ok")])
def test_a_fixed_timeout_is_the_limit_judged(timeout, status):
    check = doctor(Speed(prompt_tps=120.0, completion_tps=30.0), chat_timeout_s=timeout)
    assert check.status == status
    assert f"of {timeout:.0f} s allowed" in check.facts["a survey answer"]


def test_a_model_that_reports_no_speed_is_not_judged():
    check = check_chat_model(Settings(chat_provider="fake"))
    assert check.status == "ok" and "measured" not in check.facts

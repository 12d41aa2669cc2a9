"""The embedded model as the interviewer, and as a persona answering it, over a 3-question script."""

import pytest

from agentbank.core.settings import Settings
from agentbank.providers.chat import ChatRequest
from agentbank.providers.factory import build_chat_model
from interviewer.deciding.interviewer import Exchange, Interviewer, Position
from interviewer.session.script import load_script, shorten

PERSONA = "You are Maria, 58, a retired nurse from Ohio with two grown sons. Answer in two or three sentences."


@pytest.mark.slow
@pytest.mark.model_budget(prompt_tokens=30_000, completion_tokens=3_000)  # 15 rounds of two short calls
def test_embedded_interviewer_and_persona_finish_a_short_script():
    chat = build_chat_model(Settings(chat_provider="embedded"))
    try:
        script = shorten(load_script(), modules=3, seconds=120)
        engine = Interviewer(script, chat)
        position, said = Position(), engine.opening()
        turns, reasons = [Exchange("interviewer", said)], []
        for _ in range(3 * 5):
            answer = (
                chat.complete(
                    ChatRequest(
                        [{"role": "system", "content": PERSONA}, {"role": "user", "content": said[-600:]}],
                        max_tokens=80,
                    )
                ).text.strip()
                or "I would rather not say."
            )
            turns.append(Exchange("participant", answer))
            step = engine.respond(position, answer, 30, turns)
            reasons.append(step.reason)
            position, said = step.position, step.text
            turns.append(Exchange("interviewer", said))
            if step.action == "closing":
                break
        # The last module is told back before the closing: the closing follows the person's answer to it.
        assert step.action == "closing" and said.endswith(script.closing.strip())
        assert "reflected" in reasons, reasons  # at least one module was told back and answered
        assert all(len(note) <= 120 for note in position.notes)
        # Every decision the model made was usable: none cut off, unreadable or timed out.
        assert "fallback" not in reasons, reasons
    finally:
        chat.close()

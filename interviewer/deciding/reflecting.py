"""Telling the person back what was heard, at the end of each module, and reading their answer to it.

Being summarised back is what most makes people feel heard by an interviewer, and it lets them put a
misunderstanding right before it reaches their agent. At the end of a module (``Interviewer._advance``) the
model writes two or three sentences from the person's own answers in that module, and the interviewer asks
whether it got them right. Whatever they say next is an answer like any other (stored in the transcript and
noted), so a correction is part of what the agent is built from; it costs no time of the next question and
no model call: a confirmation is thanked, anything else is taken as a correction.

A script can turn this off (``Script.reflect_back``). A model that fails, or writes nothing usable, means no
summary: the interviewer goes on to the next question, as it does when a decision fails.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from agentbank.core.errors import ProviderError
from agentbank.providers.chat import ChatModel, ChatRequest
from interviewer.deciding.model_prompts import Exchange, reflect_prompt
from interviewer.session.script import Module

logger = logging.getLogger(__name__)

# Two or three short sentences. Every generated token is on the person's wait unless the decision made ahead
# in the pause has finished (``speculation``): 300 characters are about 70 tokens, and the cap sits above that.
SUMMARY_CHARS = 300
SUMMARY_MAX_TOKENS = 100
# The module's answers the summary is written from, at most (its latest, when there are more).
ANSWER_CHARS = 3000
MAX_SENTENCES = 3
MIN_WORDS = 4
_SENTENCE = re.compile(r"[^.!?]+(?:[.!?]+[\"')\]]*|$)")
CHECK = "Did I get that right?"
CONFIRMED = "Thank you."
CORRECTED = "Thank you for putting me right."

SUMMARY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"summary": {"type": "string", "maxLength": SUMMARY_CHARS}},
    "required": ["summary"],
    "additionalProperties": False,
}

# "Yes", "that's right", "exactly", "spot on": the summary stood. Anything else corrects it (a "yes, but" too:
# the but is what matters).
_CONFIRMATION = re.compile(
    r"^\W*(yes|yeah|yep|yup|right|correct|exactly|absolutely|spot on|that'?s (right|it|correct)|"
    r"you (got|have) it|sounds (right|good)|pretty much|mm-?hm)\b[\w\s,.!']*$",
    re.IGNORECASE,
)
_BUT = re.compile(r"\b(but|except|although|though|actually|not quite|no)\b", re.IGNORECASE)


def is_confirmation(answer: str) -> bool:
    """Whether the person's answer to a summary says it was right, with no correction in it."""
    return bool(_CONFIRMATION.match(answer.strip())) and not _BUT.search(answer)


def reply_to(answer: str) -> str:
    """What the interviewer says before the next question, after the person's answer to its summary."""
    return CONFIRMED if is_confirmation(answer) else CORRECTED


def module_answers(module: Module, turns: list[Exchange]) -> list[str]:
    """The person's answers since the interviewer asked the module's first question (their latest ones when
    they run longer than ``ANSWER_CHARS``)."""
    first = module.questions[0].text
    start = max((i for i, t in enumerate(turns) if t.speaker == "interviewer" and first in t.text), default=None)
    if start is None:
        return []
    answers = [t.text for t in turns[start:] if t.speaker == "participant"]
    kept: list[str] = []
    for answer in reversed(answers):
        if sum(len(a) for a in kept) + len(answer) > ANSWER_CHARS and kept:
            break
        kept.insert(0, answer[-ANSWER_CHARS:])
    return kept


def summary(chat: ChatModel, module: Module, turns: list[Exchange], *, seed: int = 0) -> str | None:
    """What the interviewer tells the person back about ``module``, its check question included; None when
    the person said nothing in it or the model gave nothing usable."""
    answers = module_answers(module, turns)
    if not answers:
        return None
    request = ChatRequest(reflect_prompt(module.title, answers), SUMMARY_SCHEMA, temperature=0.3,
                          max_tokens=SUMMARY_MAX_TOKENS, seed=seed)  # fmt: skip
    try:
        data = chat.complete(request).data
    except ProviderError as exc:  # the code only: a provider's message may quote the prompt
        logger.info("no summary of the module (%s); moving on", exc.code)
        return None
    text = " ".join(str(data.get("summary", "")).split()) if isinstance(data, dict) else ""
    # Three sentences at most: a small model repeating itself is cut where it starts to.
    sentences = [s for s in _SENTENCE.findall(text) if s.strip()][:MAX_SENTENCES]
    said = " ".join(s.strip() for s in sentences)
    # A summary asks nothing (the check question is the interviewer's own) and says something: a few words.
    if len(said.split()) < MIN_WORDS or "?" in said:
        return None
    return f"{said} {CHECK}"

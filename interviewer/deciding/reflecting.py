"""Telling the person back what was heard, at the end of each module, and reading their answer to it.

Being summarised back is what most makes people feel heard by an interviewer, and it lets them put a
misunderstanding right before it reaches their agent. At the end of a module (``Interviewer._advance``) the
model writes two or three sentences from the person's own answers in that module, and the interviewer asks
whether it got them right. Whatever they say next is an answer like any other (stored in the transcript and
noted), so a correction is part of what the agent is built from; it costs no time of the next question and
no model call: a confirmation is thanked, anything else is taken as a correction.

A script can turn this off (``Script.reflect_back``). A model that fails, or writes nothing, means no summary: the
interviewer goes on to the next question, as it does when a decision fails. A summary is told back only in
sentences that hold to what the person said, or else in the person's own words (``telling_back``).
"""

from __future__ import annotations

import logging
import re
from enum import StrEnum
from typing import Any

from agentbank.core.errors import ProviderError
from agentbank.core.settings import Settings
from agentbank.providers.chat import ChatModel, ChatRequest
from interviewer.deciding import telling_back
from interviewer.deciding.model_prompts import Exchange, reflect_prompt
from interviewer.deciding.repetition import repeats
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


class Summaries(StrEnum):
    """Who writes what is told back (``AGENTBANK_INTERVIEWER_SUMMARIES``)."""

    MODEL = "model"  # the interviewer's model, each sentence held to what was said (``telling_back``)
    WORDS = "words"  # the person's own first sentences, in the second person: no model call

    @classmethod
    def of(cls, settings: Settings) -> Summaries:
        """The settings' choice; ``auto``: the model unless it is the embedded one, whose summaries rarely hold
        to what was said and cost about two seconds of generating at each module's end."""
        if settings.interviewer_summaries == "auto":
            return cls.WORDS if settings.chat_provider == "embedded" else cls.MODEL
        return cls(settings.interviewer_summaries)


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


def summary(chat: ChatModel, module: Module, turns: list[Exchange], *, seed: int = 0,
            summaries: Summaries = Summaries.MODEL) -> str | None:  # fmt: skip
    """What the interviewer tells the person back about ``module``, its check question included; None when
    the person said nothing in it, or the model failed or wrote nothing."""
    answers = module_answers(module, turns)
    if not answers:
        return None
    if summaries is Summaries.WORDS:
        said = telling_back.in_their_words(answers)
        return f"{said} {CHECK}" if said else None
    request = ChatRequest(reflect_prompt(module.title, answers), SUMMARY_SCHEMA, temperature=0.3,
                          max_tokens=SUMMARY_MAX_TOKENS, seed=seed)  # fmt: skip
    try:
        data = chat.complete(request).data
    except ProviderError as exc:  # the code only: a provider's message may quote the prompt
        logger.info("no summary of the module (%s); moving on", exc.code)
        return None
    text = " ".join(str(data.get("summary", "")).split()) if isinstance(data, dict) else ""
    if not text:
        return None  # the model had nothing to tell back
    # Three sentences at most, each one the person would recognise (``telling_back``); a sentence that says again
    # what one before it said (a small model looping) is dropped, and a summary asks nothing: the check question
    # is the interviewer's own.
    sentences: list[str] = []
    for sentence in (s.strip() for s in _SENTENCE.findall(text)):
        if (sentence and "?" not in sentence and not repeats(sentence, sentences) and len(sentences) < MAX_SENTENCES
                and telling_back.grounded(sentence, answers)):  # fmt: skip
            sentences.append(sentence)
    said = " ".join(sentences)
    if len(said.split()) < MIN_WORDS:
        said = telling_back.in_their_words(answers)  # what the model wrote does not hold: their own words
    return f"{said} {CHECK}" if said else None

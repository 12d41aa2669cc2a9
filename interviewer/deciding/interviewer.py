"""The interviewer's decision loop: ask the script verbatim, then follow up or move on.

Pure: no database, no clock. The caller passes the position (which question, how much of its time
is used, the running notes) and the turns so far; the engine answers with the next thing to say and
the new position. One chat call per participant answer at most, and none when the question's time
is used up or the participant declined. A model that fails or answers nonsense means "move on": the
interview never stops because of the model. Notes on the person are a second call (``take_notes``),
made off the person's wait.

The prompts (``model_prompts``) are laid out for a server that reuses the longest prompt prefix it
has cached, and the decision generates a small, bounded JSON answer (``decisions``).
"""

from __future__ import annotations

import functools
import json
import logging
import re
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from agentbank.core.errors import ProviderError, TruncatedOutputError
from agentbank.providers.chat import ChatModel, ChatRequest, Message
from interviewer.deciding import model_prompts, reflecting
from interviewer.deciding.decisions import (
    DECISION_MAX_TOKENS,
    DECISION_SCHEMA,
    NOTE_CHARS,
    NOTES_MAX_TOKENS,
    NOTES_SCHEMA,
    read_cut_off,
    read_decision,
    read_notes,
)
from interviewer.deciding.model_prompts import Exchange
from interviewer.deciding.repetition import repeats, runs_away
from interviewer.session.script import Module, Question, Script

MAX_NOTES = 30
NOTES_BUDGET_CHARS = 2000
# A safety net beside the time budget: a model that always follows up still lets the script advance.
MAX_FOLLOW_UPS = 4
# Declining is honoured without asking the model, so no model can talk someone into answering.
_REFUSAL = re.compile(
    r"\b(rather not|prefer not|don'?t want to (say|answer|talk|discuss|share)|skip( this| that| it)?\b|"
    r"^\s*pass\b|no comment|not comfortable|decline to|none of your business)",
    re.IGNORECASE,
)

logger = logging.getLogger(__name__)

Action = Literal["follow_up", "next", "reflect", "closing"]
Reason = Literal["model", "budget", "refusal", "fallback", "limit", "reflected"]


@dataclass(frozen=True)
class Position:
    """Where an interview stands: the scripted question, its follow-ups, time used, running notes."""

    index: int = 0
    follow_ups: int = 0
    seconds_used: dict[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    # The interviewer has told the person back what it heard in the module just ended (``reflecting``) and
    # waits for their answer to it; ``index`` is already the next module's first question.
    reflecting: bool = False


@dataclass(frozen=True)
class Step:
    """What the interviewer says next, why, and the position after saying it."""

    action: Action
    text: str
    position: Position
    reason: Reason


def is_refusal(answer: str) -> bool:
    """Whether an answer declines the question (then the interviewer moves on without a follow-up)."""
    return bool(_REFUSAL.search(answer))


def merge_notes(notes: tuple[str, ...], new: list[str]) -> tuple[str, ...]:
    """Running notes plus new facts: each cut to 120 characters, no repeats, the oldest dropped first
    so that at most 30 notes and about 2,000 characters remain."""
    merged = list(notes)
    seen = {n.casefold() for n in merged}
    for raw in new:
        note = " ".join(str(raw).split())
        if len(note) > NOTE_CHARS:
            note = note[: NOTE_CHARS - 1].rstrip() + "…"
        if note and note.casefold() not in seen:
            merged.append(note)
            seen.add(note.casefold())
    while merged and (len(merged) > MAX_NOTES or sum(len(n) + 1 for n in merged) > NOTES_BUDGET_CHARS):
        merged.pop(0)
    return tuple(merged)


def _normalized(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.casefold()).strip()


@dataclass(frozen=True)
class PreparedScript:
    """A script and what every decision reads from it, worked out once: its questions in asking order,
    their words (a follow-up is never one of them) and everything the script says (a follow-up never
    says any of it again)."""

    script: Script
    questions: list[tuple[Module, Question]]
    scripted: frozenset[str]
    script_text: tuple[str, ...]

    @classmethod
    def of(cls, script: Script) -> PreparedScript:
        questions = script.questions()
        said = re.split(r"(?<=[.!?])\s+", f"{script.opening} {script.closing}")
        return cls(script, questions, frozenset(_normalized(q.text) for _, q in questions),
                   (*(q.text for _, q in questions), *said))  # fmt: skip


@functools.lru_cache(maxsize=64)
def _prepared_snapshot(snapshot: str) -> PreparedScript:
    return PreparedScript.of(Script.model_validate(json.loads(snapshot)))


class Interviewer:
    """Runs one script with one chat model."""

    def __init__(self, script: Script | PreparedScript, chat: ChatModel, *, seed: int = 0,
                 summaries: reflecting.Summaries = reflecting.Summaries.MODEL) -> None:  # fmt: skip
        prepared = script if isinstance(script, PreparedScript) else PreparedScript.of(script)
        self.script = prepared.script
        self.chat = chat
        self.seed = seed
        self.summaries = summaries  # who writes what is told back at a module's end
        # Every question in asking order: the turn reads them here too.
        self.questions = prepared.questions
        self._scripted = prepared.scripted
        self._script_text = prepared.script_text

    @classmethod
    def of_snapshot(cls, snapshot: dict[str, Any], chat: ChatModel,
                    summaries: reflecting.Summaries = reflecting.Summaries.MODEL) -> Interviewer:  # fmt: skip
        """The interviewer of an interview's stored script (as it was when the interview began). A snapshot
        never changes, so each process parses and prepares it once, not on every request of every turn."""
        return cls(_prepared_snapshot(json.dumps(snapshot, sort_keys=True)), chat, summaries=summaries)

    @property
    def total(self) -> int:
        """How many scripted questions the script has."""
        return len(self.questions)

    def question(self, position: Position) -> tuple[Module, Question] | None:
        """The scripted question being discussed, or None once the script is done."""
        return self.questions[position.index] if position.index < self.total else None

    def opening(self) -> str:
        """The first thing said: the script's opening, then its first question, verbatim."""
        return self.script.first_words()

    def module_seconds(self, position: Position) -> dict[str, float]:
        """Seconds used so far in each module, by module key."""
        used: dict[str, float] = {}
        for module, question in self.questions:
            used[module.key] = used.get(module.key, 0.0) + position.seconds_used.get(question.key, 0.0)
        return used

    def respond(self, position: Position, answer: str, seconds: float, turns: list[Exchange]) -> Step:
        """The interviewer's next turn after the participant's ``answer`` that took ``seconds``.

        ``turns`` is the transcript so far, the answer included; only its tail reaches the model.
        """
        if position.reflecting:  # the answer to a summary: costs the next question nothing, asks no model
            return self._ask(replace(position, reflecting=False), "reflected", reflecting.reply_to(answer))
        current = self.question(position)
        if current is None:
            return Step("closing", self.script.closing.strip(), position, "limit")
        _, question = current
        used = position.seconds_used.get(question.key, 0.0) + max(0.0, seconds)
        position = replace(position, seconds_used={**position.seconds_used, question.key: used})
        if used >= question.seconds:
            return self._advance(position, "budget", turns)
        if is_refusal(answer):
            return self._advance(position, "refusal", turns)
        if position.follow_ups >= MAX_FOLLOW_UPS:
            return self._advance(position, "limit", turns)
        decision = self._decide(position, question, used, answer, turns)
        if decision is None:
            return self._advance(position, "fallback", turns)
        action, follow_up = decision
        if action == "follow_up":
            return Step("follow_up", follow_up, replace(position, follow_ups=position.follow_ups + 1), "model")
        return self._advance(position, "model", turns)

    def take_notes(self, notes: tuple[str, ...], answers: list[str], turns: list[Exchange]) -> tuple[str, ...]:
        """The running ``notes`` with what these ``answers`` revealed about the person (at most two new
        facts), or unchanged when the model fails. ``turns`` is the transcript so far; its tail is shown."""
        messages = model_prompts.notes_prompt(turns, notes, answers)
        try:
            result = self.chat.complete(
                ChatRequest(messages, NOTES_SCHEMA, temperature=0.3, max_tokens=NOTES_MAX_TOKENS, seed=self.seed)
            )
        except ProviderError as exc:  # a cut-off note is no fact; the code only, as below
            logger.info("interviewer notes not taken (%s)", exc.code)
            return notes
        return merge_notes(notes, read_notes(result.data))

    def _advance(self, position: Position, reason: Reason, turns: list[Exchange]) -> Step:
        """The step past the current question: the next one, or, when that ends a module and the script
        asks for it, the summary of what the person said in the module first (``reflecting``)."""
        module = self.questions[position.index][0]
        position = replace(position, index=position.index + 1, follow_ups=0)
        upcoming = self.question(position)
        if self.script.reflect_back and (upcoming is None or upcoming[0].key != module.key):
            told = reflecting.summary(self.chat, module, turns, seed=self.seed + position.index,
                                      summaries=self.summaries)  # fmt: skip
            if told is not None:
                return Step("reflect", told, replace(position, reflecting=True), reason)
        return self._ask(position, reason)

    def _ask(self, position: Position, reason: Reason, before: str = "") -> Step:
        """The question at ``position`` (or the closing), after ``before`` when something is said first."""
        upcoming = self.question(position)
        if upcoming is None:
            return Step("closing", f"{before} {self.script.closing.strip()}".strip(), position, reason)
        return Step("next", f"{before} {upcoming[1].text}".strip(), position, reason)

    @staticmethod
    def _asked_about(question: Question, turns: list[Exchange]) -> list[str]:
        """What the interviewer said since it asked ``question``: the question and its follow-ups.

        A general follow-up ("Can you give me an example?") may come back under another question;
        under the same one it is a repeat.
        """
        said = [t.text for t in turns if t.speaker == "interviewer"]
        start = max((i for i, text in enumerate(said) if question.text in text), default=0)
        return said[start:]

    def answer_so_far(self, position: Position, turns: list[Exchange], spoken: str) -> list[Message] | None:
        """The decision's prompt up to what the person has said so far (to warm the model's cache while
        they speak), or None once the script is done."""
        current = self.question(position)
        if current is None:
            return None
        return model_prompts.answer_so_far(turns, position.notes, current[1].text, position.follow_ups, spoken)

    def _decide(
        self, position: Position, question: Question, used: float, answer: str, turns: list[Exchange]
    ) -> tuple[str, str] | None:
        """The model's choice (action, follow-up), or None when it failed or said something unusable."""
        # The order is the point (``model_prompts``): what the server has already evaluated comes first.
        messages = model_prompts.decision_prompt(
            turns, position.notes, question.text, position.follow_ups, answer, max(0, round(question.seconds - used))
        )
        try:
            result = self.chat.complete(
                ChatRequest(messages, DECISION_SCHEMA, temperature=0.7, max_tokens=DECISION_MAX_TOKENS,
                            seed=self.seed + position.index)
            )  # fmt: skip
            data = read_decision(result.data)
        except TruncatedOutputError as exc:
            # A small model running away (digits, repeats) after the question: what it wrote still counts.
            data = read_cut_off(exc.partial)
            logger.info("interviewer decision cut off at the token cap; %s", "its start used" if data else "moving on")
        except ProviderError as exc:
            # The code only: the message of a provider error may quote the prompt.
            logger.warning("interviewer model failed (%s); moving on", exc.code)
            return None
        action, follow_up = data.get("action"), " ".join(str(data.get("question", "")).split())
        asked_before = self._asked_about(question, turns)
        if action == "follow_up" and (repeats(follow_up, [*self._script_text, *asked_before]) or runs_away(follow_up)):
            # An empty follow-up, a scripted question or sentence, a question asked before (even with a
            # word changed) or a model running on in its question is no follow-up at all: it is caught
            # here, before anyone hears it.
            logger.info("interviewer follow-up repeated what was said or ran away; moving on")
            return "next", ""
        if action not in ("follow_up", "next"):
            return None
        return action, follow_up

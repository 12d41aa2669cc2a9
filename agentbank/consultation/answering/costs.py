"""What a piece of work will cost before it runs: calls, tokens, price and wall time, asking no model.

The calls are the ones the engine plans (``answering.plans``), so the prompts are the bank's own, and an
answer already in the cache costs no call. Of each prompt:

- its tokens are counted by the model's counter (``providers.tokens``);
- the tokens it shares from the start with the call before it are counted as cached, as the model's
  prefix cache serves them when the calls run in the order planned (one after another, as the embedded
  model and a worker's agent do);
- its completion is the mean completion per answer of this model's latest answers of the same kind
  (items with reasons, codes only, open questions), or, before there are enough, the length of the
  smallest valid answer;
- its time is its evaluated and completion tokens at this model's measured seconds per token.

The price is the operator's table (``Settings.chat_prices``); the embedded model costs nothing unless the
table says otherwise (the machine's power, say).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from sqlalchemy import Float, Integer, case, func, select
from sqlalchemy.orm import Session

from agentbank.consultation.answering.plans import PendingCall
from agentbank.core.settings import Settings
from agentbank.db.models import AnswerRecord
from agentbank.providers.chat import Message
from agentbank.providers.fakes import minimal_answer
from agentbank.providers.tokens import TokenCounter, shared_prefix

# Answers of a kind the model must have given before their mean stands for the next ones.
MIN_HISTORY = 5
# The latest answers of the model that history is read from.
HISTORY_ANSWERS = 2000
FREE_PROVIDERS = {"embedded": "the embedded model costs nothing", "fake": "the test model costs nothing"}


class AnswerKind(StrEnum):
    """Kinds of answer whose completions differ in length."""

    ITEMS = "items"  # survey items with a reason before each code
    CODES = "codes"  # survey items, codes only
    OPEN = "open"  # an open question in the participant's voice


def kind_of(call: PendingCall) -> AnswerKind:
    """The kind of answer a planned call gives."""
    if call.open_question or call.utterance:  # an utterance's completion: its words (its stance is a code)
        return AnswerKind.OPEN
    return AnswerKind.ITEMS if call.outputs[0].call.sampling.get("reasons", True) else AnswerKind.CODES


@dataclass(frozen=True)
class History:
    """What this model's latest answers used: mean completion per answer by kind, seconds per token."""

    completion: dict[AnswerKind, tuple[int, float]]  # kind -> (answers, mean completion tokens)
    seconds_per_token: float | None

    @classmethod
    def of(cls, session: Session, model: str) -> History:
        """Read from the answer cache (counts and times only; no answer is opened)."""
        latest = (
            select(AnswerRecord)
            .where(AnswerRecord.model == model)
            .order_by(AnswerRecord.id.desc())
            .limit(HISTORY_ANSWERS)
            .subquery()
        )
        kind = case(
            (latest.c.question_sha256.is_not(None), AnswerKind.OPEN.value),
            (latest.c.sampling["reasons"].as_boolean().is_(False), AnswerKind.CODES.value),
            else_=AnswerKind.ITEMS.value,
        )
        rows = session.execute(
            select(kind, func.count(), func.avg(latest.c.completion_tokens).cast(Float)).group_by(kind)
        ).all()
        evaluated = latest.c.prompt_tokens - latest.c.cached_tokens + latest.c.completion_tokens
        seconds, tokens = session.execute(select(func.sum(latest.c.seconds), func.sum(evaluated).cast(Integer))).one()
        return cls(
            {AnswerKind(k): (int(n), float(mean or 0.0)) for k, n, mean in rows},
            float(seconds) / tokens if tokens else None,
        )


@dataclass
class Estimate:
    """A piece of work's expected cost; ``add`` the planned calls in the order they will run."""

    model: str
    calls_in_flight: int
    answers: int = 0
    answers_stored: int = 0  # served from the answer cache: no call, no tokens
    calls: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    seconds: float | None = None  # wall time at ``calls_in_flight``; None before the model was timed
    price: float | None = None
    currency: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The estimate as JSON."""
        return asdict(self)


class Estimator:
    """Adds planned calls up into an ``Estimate`` for one model."""

    def __init__(self, session: Session, settings: Settings, model: str, counter: TokenCounter) -> None:
        self._settings = settings
        self._counter = counter
        self._history = History.of(session, model)
        self._previous: list[str] = []
        self._busy = 0.0  # seconds of model time, summed over calls
        self.estimate = Estimate(model, settings.calls_in_flight)

    def add(self, calls: Sequence[PendingCall], answers: int) -> None:
        """One agent's planned calls, giving ``answers`` answers in all (the rest are stored already)."""
        made = sum(len(call.outputs) for call in calls)
        self.estimate.answers += answers
        self.estimate.answers_stored += answers - made
        for call in calls:
            prompt = self._counter.prompt(call.messages)
            cached = shared_prefix(prompt, self._previous)
            self._previous = prompt
            completion = self._completion(call)
            self.estimate.calls += 1
            self.estimate.prompt_tokens += len(prompt)
            self.estimate.cached_tokens += cached
            self.estimate.completion_tokens += completion
            if self._history.seconds_per_token is not None:
                self._busy += (len(prompt) - cached + completion) * self._history.seconds_per_token

    def add_call(self, messages: Sequence[Message], schema: dict[str, Any]) -> None:
        """A call that gives no agent's answer (a focus group's moderator): its prompt counted as any other,
        its completion the smallest answer valid against ``schema``."""
        prompt = self._counter.prompt(messages)
        cached = shared_prefix(prompt, self._previous)
        self._previous = prompt
        completion = self._counter.count(json.dumps(minimal_answer(schema)))
        self.estimate.calls += 1
        self.estimate.prompt_tokens += len(prompt)
        self.estimate.cached_tokens += cached
        self.estimate.completion_tokens += completion
        if self._history.seconds_per_token is not None:
            self._busy += (len(prompt) - cached + completion) * self._history.seconds_per_token

    def finish(self) -> Estimate:
        """The estimate with its price, wall time and what it rests on."""
        estimate = self.estimate
        if self._history.seconds_per_token is not None:
            estimate.seconds = round(self._busy / estimate.calls_in_flight, 1)
        elif estimate.calls:
            estimate.notes.append("no wall time: this model has not answered here yet, so its speed is unknown")
        self._price(estimate)
        kinds = [
            f"{k.value}: mean of {n}" for k, (n, _) in sorted(self._history.completion.items()) if n >= MIN_HISTORY
        ]
        estimate.notes.append(
            "completion tokens: " + ("; ".join(kinds) + " latest answers" if kinds else "smallest valid answers")
        )
        return estimate

    def _completion(self, call: PendingCall) -> int:
        answers, mean = self._history.completion.get(kind_of(call), (0, 0.0))
        if answers >= MIN_HISTORY:
            return round(mean * len(call.outputs))
        return self._counter.count(json.dumps(minimal_answer(call.schema)))

    def _price(self, estimate: Estimate) -> None:
        price = self._settings.chat_prices.get(estimate.model)
        free = FREE_PROVIDERS.get(self._settings.chat_provider)
        if price is None and free is not None:
            estimate.price = 0.0
            estimate.notes.append(free)
            return
        if price is None:
            estimate.notes.append(f"no price: the operator set none for {estimate.model} (AGENTBANK_CHAT_PRICES)")
            return
        evaluated = estimate.prompt_tokens - estimate.cached_tokens
        cached_rate = price.prompt if price.cached is None else price.cached
        total = (
            evaluated * price.prompt
            + estimate.cached_tokens * cached_rate
            + estimate.completion_tokens * price.completion
        )
        estimate.price, estimate.currency = round(total / 1_000_000, 6), price.currency

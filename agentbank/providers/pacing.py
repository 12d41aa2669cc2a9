"""Time limits for a model that runs on this machine, following how fast it really runs.

A fixed limit is wrong both ways for a local model: on an idle machine a stuck call waits too long,
and on a busy one a healthy call that may write 1,800 tokens is cut off every time. So each call gets
the time its prompt and token budget need at the speed measured on the latest calls, times a margin.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentbank.providers.chat import Message, Speed

# Before the first measurement: a slow, busy two-core machine running the 135M embedded model.
ASSUMED_SPEED = Speed(prompt_tps=40.0, completion_tps=8.0)
# English text runs about four characters a token; three errs towards a longer limit.
CHARS_PER_TOKEN = 3.0
# Room for the machine to slow down further between the measurement and the call.
MARGIN = 3.0
MIN_TIMEOUT_S = 30.0
# The longest a derived limit gets: a call that would need more should fail and say why, not hang.
MAX_DERIVED_TIMEOUT_S = 900.0
# Each new measurement moves the estimate this far; a sudden slowdown shows within a few calls.
SMOOTHING = 0.5


def estimate_prompt_tokens(messages: Sequence[Message]) -> int:
    """An upper estimate of the prompt's tokens, without asking the model to tokenize it."""
    return int(sum(len(m["content"]) for m in messages) / CHARS_PER_TOKEN) + 8 * len(messages)


@dataclass(frozen=True)
class CallTimeout:
    """The time limit of one call, with what it was derived from (for messages and hints)."""

    seconds: float
    prompt_tokens: int
    max_tokens: int
    speed: Speed | None  # None when the limit is the fixed setting

    def describe(self) -> str:
        """One phrase: the limit and, when derived, how."""
        seconds = f"{self.seconds:.0f}" if self.seconds >= 10 else f"{self.seconds:.1f}"
        if self.speed is None:
            return f"{seconds} s (AGENTBANK_CHAT_TIMEOUT_S)"
        return (
            f"{seconds} s (about {self.prompt_tokens} prompt tokens and up to {self.max_tokens} "
            f"completion tokens at {self.speed.prompt_tps:.0f} and {self.speed.completion_tps:.1f} tokens/s)"
        )


class Pacer:
    """Derives each call's time limit from the measured speed, or applies the fixed setting."""

    def __init__(self, fixed_s: float | None = None, *, assumed: Speed = ASSUMED_SPEED, margin: float = MARGIN) -> None:
        self.fixed_s = fixed_s
        self.margin = margin
        self.speed = assumed
        self.measured = False

    def observe(self, speed: Speed | None) -> None:
        """Take in the speed of a finished call."""
        if speed is None:
            return
        if not self.measured:
            self.speed, self.measured = speed, True
            return
        self.speed = Speed(
            prompt_tps=_blend(self.speed.prompt_tps, speed.prompt_tps),
            completion_tps=_blend(self.speed.completion_tps, speed.completion_tps),
        )

    def limit(self, messages: Sequence[Message], max_tokens: int) -> CallTimeout:
        """The time limit for a call with these messages and this completion budget."""
        prompt_tokens = estimate_prompt_tokens(messages)
        if self.fixed_s is not None:
            return CallTimeout(self.fixed_s, prompt_tokens, max_tokens, None)
        needed = self.margin * self.speed.seconds_for(prompt_tokens, max_tokens)
        seconds = min(MAX_DERIVED_TIMEOUT_S, max(MIN_TIMEOUT_S, needed))
        return CallTimeout(seconds, prompt_tokens, max_tokens, self.speed)


def _blend(old: float, new: float) -> float:
    # A slowdown is taken at once, a speed-up gradually: a limit that is too short costs a whole call.
    return new if new < old else old + SMOOTHING * (new - old)

"""Counting a prompt's tokens before it is sent, for estimates: no model is loaded or asked.

A counter cuts text into pieces that stand for tokens. Two prompts share a prefix cache's tokens as far
as their pieces agree from the start, which is how an estimate says which prompt tokens come from the
cache. The scripted test model counts whitespace words (``WORDS``), so an estimate made with it can be
checked exactly; a real model's tokenizer is not loaded to estimate, so its tokens are counted as
pieces of ``CHARS_PER_TOKEN`` characters (English text runs about four characters a token).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from agentbank.providers.chat import Message

CHARS_PER_TOKEN = 4


class Counting(StrEnum):
    """How a model's tokens are counted before it is asked."""

    WORDS = "words"  # the scripted model's own count: whitespace-separated words
    CHARACTERS = "characters"  # an estimate for real models: four characters a token


@dataclass(frozen=True)
class TokenCounter:
    """Pieces of text standing for a model's tokens."""

    counting: Counting

    def pieces(self, text: str) -> list[str]:
        """The text's tokens, as this counter sees them."""
        if self.counting is Counting.WORDS:
            return text.split()
        return [text[i : i + CHARS_PER_TOKEN] for i in range(0, len(text), CHARS_PER_TOKEN)]

    def prompt(self, messages: Sequence[Message]) -> list[str]:
        """A prompt's tokens: each message's role and content, in order."""
        return [piece for m in messages for piece in self.pieces(m["role"] + ": " + m["content"])]

    def count(self, text: str) -> int:
        """How many tokens the text is."""
        return len(self.pieces(text))


WORDS = TokenCounter(Counting.WORDS)
CHARACTERS = TokenCounter(Counting.CHARACTERS)


def shared_prefix(first: Sequence[str], second: Sequence[str]) -> int:
    """How many leading tokens two prompts share: what a prefix cache serves of the second."""
    shared = 0
    for a, b in zip(first, second, strict=False):
        if a != b:
            break
        shared += 1
    return shared


def counter_of(model: object) -> TokenCounter:
    """The counter for a chat model: its own where it has one (the scripted model), else ``CHARACTERS``."""
    own = getattr(model, "counter", None)
    return own if isinstance(own, TokenCounter) else CHARACTERS

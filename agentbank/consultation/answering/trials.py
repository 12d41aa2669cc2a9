"""Trials of several steps: what an agent read and answered at earlier steps, shown before the next one.

A step of an experiment is asked like a survey, with the step's stimulus as the instrument's preamble.
From the second step on, the agent also sees every earlier step's stimulus and its own answers to it
(after its memory, as Park et al. did), so a trust game can follow a power manipulation. The answers
are named in the next step's cache key by their own cache keys, never by their values: a key stays a
digest that says nothing of what the agent answered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentbank.consultation.answering.records import AgentAnswer
from agentbank.instruments.model import Instrument, Item


@dataclass(frozen=True)
class TrialStep:
    """One screen of a trial: the stimulus (as the instrument's preamble) and its questions. A step that
    is not ``after_earlier`` is asked without the earlier steps (a balance probe, which the agent's own
    answers must not colour)."""

    instrument: Instrument
    items: tuple[Item, ...]
    after_earlier: bool = True


@dataclass(frozen=True)
class EarlierStep:
    """One finished step of a trial: the text shown for it at later steps, and its answers' cache keys."""

    text: str
    keys: tuple[str, ...]


def earlier_step(instrument: Instrument, items: Sequence[Item], answers: Sequence[AgentAnswer],
                 keys: Sequence[str]) -> EarlierStep:  # fmt: skip
    """The step's stimulus, then each question with the agent's answer in words."""
    lines = [f"## {instrument.title}", instrument.preamble, "", "You answered:"]
    for item, answer in zip(items, answers, strict=True):
        lines.append(f"- {item.question} → {_in_words(item, answer.value)}")
    return EarlierStep("\n".join(lines), tuple(keys))


def _in_words(item: Item, value: object) -> str:
    if item.options and isinstance(value, int):
        return item.label(value)
    return str(value)

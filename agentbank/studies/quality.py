"""An interview's quality as a coordinator may see it: counts and times, never a word.

Read from counts the interview keeps as its turns are written (``InterviewSession.answers_given`` and
its neighbours), so no transcript is opened and no participant's key unwrapped for a coordinator's view.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from agentbank.studies.outline import Outline

# An interview running this much over the budget of the questions it has covered is flagged as long.
LONG_FACTOR = 1.5
# Answers this short on average (after a few answers) suggest a confusing question or a broken microphone.
FEW_WORDS = 5.0
MIN_ANSWERS = 3


class Flag(StrEnum):
    """What a coordinator may want to look into."""

    LONG = "long"  # well over the script's budget for the questions covered
    SHORT_ANSWERS = "short_answers"
    AUDIO = "audio"  # at least one spoken answer with little speech in its recording


@dataclass(frozen=True)
class Quality:
    """One interview's metadata: time spent against the budget, words per answer, follow-up share, audio."""

    duration_s: float
    budget_s: int  # the budget of the questions covered so far (the whole script once finished)
    answers: int
    words_per_answer: float | None
    follow_up_share: float | None  # of the interviewer's replies, those that were a follow-up
    audio_flags: int
    flags: tuple[Flag, ...]


def quality_of(row: Any, outline: Outline | None) -> Quality:
    """The quality of the interview in ``row`` (a study's progress row), on the script's ``outline``."""
    duration = round(sum(float(v) for v in (row.seconds_used or {}).values()), 1)
    budget = 0
    if outline is not None:
        budget = outline.budget_through(row.question_index) if row.status in ("active", "paused") else outline.budget_s
    answers = int(row.answers_given or 0)
    words = round(row.answer_words / answers, 1) if answers else None
    follow_ups = round(row.follow_ups_asked / answers, 2) if answers else None
    flags = []
    if budget and duration > LONG_FACTOR * budget:
        flags.append(Flag.LONG)
    if words is not None and answers >= MIN_ANSWERS and words < FEW_WORDS:
        flags.append(Flag.SHORT_ANSWERS)
    if row.audio_flags:
        flags.append(Flag.AUDIO)
    return Quality(duration, budget, answers, words, follow_ups, int(row.audio_flags or 0), tuple(flags))

"""What an agent is asked in a moderated focus group: the moderator's words to its seat, the stimulus, and
what it remembers of the discussion so far; and what it gives back: an utterance and where it now stands.

The discussion it remembers is retrieved by the group's run from its memory stream (``restricted.groups``):
the other seats' released words, the moderator's questions, the silences. Never another agent's interview:
an agent's prompt holds its own interview and notes, then the group. The cache key names the group and the
utterance's place in it, never the words heard, so a run that resumes finds what was made before it stopped.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

# Where the agent stands on the stimulus after speaking: strongly against (-2) to strongly for (2).
STANCES = (-2, -1, 0, 1, 2)


@dataclass(frozen=True)
class GroupTurn:
    """One utterance asked of an agent at its seat in a group."""

    group_id: uuid.UUID
    number: int  # the utterance's place in the group's transcript (0, 1, ...)
    seat: str  # the pseudonymous seat the agent speaks from ("Seat 2")
    question: str  # the moderator's words to the seat (the guide's wording, nothing of anyone's)
    stimulus: str  # what the group discusses (the team's text)
    heard: str  # what the seat remembers of the discussion so far (its memory stream, retrieved)
    version: str  # the group prompts' version (``group_prompt_version``)

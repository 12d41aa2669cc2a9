"""The versioned prompt files and the prompt version every answer records.

The version is a hash of the files, so any wording change is a new version: cached answers made
with the old wording are never served for the new one.
"""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import resources

PROMPT_NAMES = (
    "agent_system",
    "answer_codes",
    "answer_items",
    "answer_numeric",
    "answer_open",
    "persona",
    "reflect",
    "reflect_system",
)
# A focus group's prompts, versioned on their own (``group_prompt_version``): adding them left every cached
# answer and every built agent (which record ``prompt_version``) as they were.
GROUP_PROMPT_NAMES = ("group_moderator", "group_utterance")


@cache
def prompt(name: str) -> str:
    """The text of a prompt file (without its trailing newline)."""
    if name not in PROMPT_NAMES + GROUP_PROMPT_NAMES:
        raise KeyError(name)
    return resources.files("agentbank.core.prompts").joinpath(f"{name}.txt").read_text().strip()


@cache
def prompt_version() -> str:
    """A short hash of every prompt file."""
    digest = hashlib.sha256()
    for name in PROMPT_NAMES:
        digest.update(name.encode() + b"\0" + prompt(name).encode() + b"\0")
    return "p-" + digest.hexdigest()[:10]


@cache
def group_prompt_version() -> str:
    """A short hash of the focus group's prompt files, recorded in each utterance's cache key."""
    digest = hashlib.sha256()
    for name in GROUP_PROMPT_NAMES:
        digest.update(name.encode() + b"\0" + prompt(name).encode() + b"\0")
    return "g-" + digest.hexdigest()[:10]

"""The shape of an interview's script as a study reads it: modules, where each begins, and the budgets.

Read from the script stored with each interview (its wording is the bank's, not anybody's data), once per
distinct script, so a thousand interviews on one script cost one outline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Outline:
    """A script's modules in order: each one's key, title and first question's index; every question's budget."""

    keys: tuple[str, ...]
    titles: tuple[str, ...]
    starts: tuple[int, ...]
    seconds: tuple[int, ...]  # by question index

    @classmethod
    def of(cls, script: dict[str, Any]) -> Outline:
        keys: list[str] = []
        titles: list[str] = []
        starts: list[int] = []
        seconds: list[int] = []
        for module in script.get("modules", []):
            keys.append(str(module.get("key", "")))
            titles.append(str(module.get("title", module.get("key", ""))))
            starts.append(len(seconds))
            seconds.extend(int(q.get("seconds", 0)) for q in module.get("questions", []))
        return cls(tuple(keys), tuple(titles), tuple(starts), tuple(seconds))

    @property
    def modules(self) -> int:
        return len(self.keys)

    @property
    def budget_s(self) -> int:
        """The planned length of the whole interview."""
        return sum(self.seconds)

    def module_at(self, question_index: int) -> int:
        """The 0-based module that question ``question_index`` belongs to (the last one past the end)."""
        found = 0
        for number, start in enumerate(self.starts):
            if start <= question_index:
                found = number
        return found

    def budget_through(self, question_index: int) -> int:
        """The budget of the questions before ``question_index`` (what an interview there should have taken)."""
        return sum(self.seconds[:question_index])

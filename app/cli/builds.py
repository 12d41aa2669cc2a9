"""How the command line shows agents being built: a progress bar, a line for each build a model failed, and
each agent handed on as it is built (``demo`` surveys it at once)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from app.cli.common import console

if TYPE_CHECKING:
    from agentbank.core.errors import ProviderError
    from agentbank.db.models import Participant
    from agentbank.runtime.bank import Bank

Built = Callable[[uuid.UUID, "Participant"], None]  # an agent just built (its id), and whose it is


def progress_bar() -> Progress:
    """The command line's progress bar: what is under way, how far, for how long."""
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
    )


class BuildsShown:
    """``build_pending``'s report as a progress bar, and each agent handed to ``on_built`` as it is built."""

    def __init__(self, progress: Progress, bank: Bank, on_built: Built | None) -> None:
        self.progress, self.bank, self.on_built = progress, bank, on_built
        self.task: TaskID | None = None

    def started(self, total: int, at_once: int) -> None:
        self.task = self.progress.add_task("building agents", total=total)
        if at_once > 1:
            self.progress.update(self.task, description=f"building agents, {at_once} at once")

    def step(self, pseudonym: str, name: str) -> None:
        assert self.task is not None  # started first
        self.progress.update(self.task, description=f"building {pseudonym}: {name}")

    def built(self, agent_id: uuid.UUID, participant_id: uuid.UUID) -> None:
        from agentbank.db.models import Participant

        if self.on_built is not None:
            with self.bank.sessions() as session:
                participant = session.get_one(Participant, participant_id)
            self.on_built(agent_id, participant)

    def failed(self, pseudonym: str, exc: ProviderError) -> None:
        console.print(f"[yellow]could not build {pseudonym}:[/] {exc}; `agentbank build` tries again")

    def finished_one(self) -> None:
        assert self.task is not None  # started first
        self.progress.advance(self.task)

    def finished(self) -> None:
        if self.task is not None:
            self.progress.update(self.task, description="building agents")

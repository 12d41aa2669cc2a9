"""A plan's model calls, made within the process's calls in flight and stored as each returns.

The limit itself is the process's ``InFlight`` (shared with builds); this only turns plans into calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from agentbank.consultation.answering.plans import Made, PendingCall, Plan
from agentbank.providers.in_flight import InFlight

Make = Callable[[PendingCall], Made]
Store = Callable[[Plan, PendingCall, Made], None]


class CallPool:
    """Makes plans' calls through ``in_flight`` and stores each answer as soon as its call returns."""

    def __init__(self, in_flight: InFlight) -> None:
        self.in_flight = in_flight

    @property
    def size(self) -> int:
        return self.in_flight.size

    def make(self, plans: Sequence[Plan], make: Make, store: Store) -> None:
        """Make every call of ``plans``, storing each answer as its call returns. The first error stops the
        calls not yet started and is raised once those in flight have ended (their answers are stored)."""
        calls = [(plan, call) for plan in plans for call in plan.calls]

        def stored(index: int, made: Made) -> None:
            store(*calls[index], made)

        self.in_flight.run_all([partial(make, call) for _, call in calls], stored)

    def close(self) -> None:
        """Start no more calls; calls in flight end with their model."""
        self.in_flight.close()

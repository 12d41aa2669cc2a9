"""Shared helpers of the tests (moved from ``tests.agentbank.building.test_builds_in_flight``)."""

from __future__ import annotations

import random
import threading
import time
from typing import Any

from agentbank.building.reflection import EXPERTS
from agentbank.providers.fakes import ScriptedChatModel
from tests.support.factories import responder


class Counting(ScriptedChatModel):
    """A model that takes a little while per call, in an order of its own, and counts the calls at once."""

    def __init__(self) -> None:
        super().__init__(self._reply)
        self.now = self.most = 0
        self._lock = threading.Lock()

    @staticmethod
    def _reply(messages: list[dict[str, str]], schema: dict[str, Any] | None) -> Any:
        expert = next((e for e in EXPERTS if e.title in messages[-1]["content"]), None)
        if expert is not None and "observations" in (schema or {}).get("properties", {}):
            return {"observations": [f"Seen by {expert.key}, observation {n}." for n in range(5)]}
        return responder(messages, schema)

    def complete(self, request):  # type: ignore[no-untyped-def]
        with self._lock:
            self.now += 1
            self.most = max(self.most, self.now)
        try:
            time.sleep(random.uniform(0.02, 0.08))
            return super().complete(request)
        finally:
            with self._lock:
                self.now -= 1

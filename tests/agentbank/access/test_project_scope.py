"""The project scope as one typed value: checked when approved, stored and read back whole, narrowed."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from agentbank.access.scope import ProjectScope
from agentbank.core.errors import ConflictError, InvalidRequestError

SOON = datetime.now(UTC) + timedelta(days=3)


def test_a_scope_round_trips_through_its_stored_form():
    agents = (uuid.uuid4(), uuid.uuid4())
    scope = ProjectScope.of(agents, ["survey", "open"], 10, 100, SOON)
    assert ProjectScope.stored(scope.to_json()) == scope
    assert scope.covers(agents[0]) and not scope.covers(uuid.uuid4()) and not scope.expired()
    assert ProjectScope.of(None, ["survey"], 1, 1, SOON).covers(uuid.uuid4())  # None: any agent


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((None, ["survey"], 10, 100, datetime.now(UTC) - timedelta(days=1)), "expire in the future"),
        ((None, ["survey"], 0, 100, SOON), "must be positive"),
        ((None, ["survey"], 10, 100, datetime(2030, 1, 1)), "time zone"),
    ],
)
def test_a_scope_that_allows_nothing_or_has_ended_is_refused(args, message):
    with pytest.raises(InvalidRequestError, match=message):
        ProjectScope.of(*args)


def test_the_narrowest_of_two_approvals():
    a, b, c = (uuid.uuid4() for _ in range(3))
    first = ProjectScope.of((a, b), ["survey", "open"], 10, 100, SOON)
    second = ProjectScope.of((b, c), ["survey"], 5, 200, SOON + timedelta(days=1))
    agreed = ProjectScope.narrowest([first, second])
    assert agreed == ProjectScope((b,), ("survey",), 5, 100, first.expires_at)
    with pytest.raises(ConflictError, match="share no agent"):
        ProjectScope.narrowest([first, ProjectScope.of((c,), ["survey"], 5, 200, SOON)])

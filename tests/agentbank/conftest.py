"""The API fixtures, for agent tests that go through the real endpoints (the red-team suite)."""

from tests.app.api.conftest import api, settings  # noqa: F401

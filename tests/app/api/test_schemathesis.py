"""Property-based tests of the whole API against its own OpenAPI schema: no server errors, and every
response matches what the schema documents."""

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from agentbank.access.principals import SCOPES
from tests.app.api.factories import population

pytestmark = pytest.mark.slow

# What the schema promises. Business rules (an unknown team member, an expired project) reject some
# schema-valid requests with a documented 4xx, so "valid data must be accepted" is not among them.
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]


def test_api_conforms_to_its_schema(api):
    population(api.session, [({"sex": 1}, 1)] * 12)
    headers = {"Authorization": api.token("everyone", *SCOPES)["Authorization"], "Idempotency-Key": "schema-test"}
    schema = schemathesis.openapi.from_asgi("/openapi.json", api.client.app)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 18

    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def check(case):
            # localhost: OAuth2 refuses plain http anywhere but on loopback.
            case.call_and_validate(base_url="http://localhost", headers=headers, checks=CHECKS)

        check()

"""The guard fails a test that reaches a hosted model, even when the adapter swallows the error."""

pytest_plugins = ["pytester"]

INNER = """
import pytest
from agentbank.providers.chat import ChatRequest
from agentbank.providers.openai_compat import OpenAICompatibleChatModel

def test_calls_a_hosted_model():
    model = OpenAICompatibleChatModel(model="gpt", base_url="https://api.example.com/v1", max_retries=0)
    # Whatever the adapter turns the refusal into, swallowing it must not make the test pass.
    with pytest.raises(Exception):  # noqa: B017
        model.complete(ChatRequest([{"role": "user", "content": "hi"}]))

def test_loopback_is_allowed():
    import socket
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    client = socket.create_connection(server.getsockname())
    client.close()
    server.close()
"""


def test_guard_fails_remote_model_calls_and_allows_loopback(pytester):
    pytester.makepyfile(test_inner=INNER)
    result = pytester.runpytest_subprocess("-p", "tests.plugins.network_guard")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*tried to reach the network*api.example.com*"])

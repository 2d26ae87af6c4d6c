"""ChatClient against local HTTP servers: accounting, retries, errors (no network, no torch)."""

from __future__ import annotations

import socket
import time

import pytest

pytest.importorskip("openai", reason="needs icml26-shared[openai]")

from icml26.shared.llm import (
    ChatBackend,
    ChatClient,
    EndpointError,
    EndpointUnreachableError,
    TokenBudgetExceededError,
)
from icml26.shared.llm.testserver import Reply, chat_completion


def _ok(text: str, prompt_tokens: int, completion_tokens: int) -> Reply:
    return chat_completion(text, prompt_tokens, completion_tokens)


@pytest.fixture
def serve(openai_server):  # the shared plugin's local endpoint (icml26.shared.llm.testserver)
    return openai_server


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _conv(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def test_replies_in_order_and_tokens_are_counted(serve) -> None:
    server = serve(lambda body, n: _ok(body["messages"][-1]["content"].upper(), 10, 3))
    client = ChatClient(server.url, "test-model", concurrency=3)
    assert isinstance(client, ChatBackend)
    replies = client.complete([_conv(f"q{i}") for i in range(5)], max_tokens=7, seed=4)
    assert [r.text for r in replies] == [f"Q{i}" for i in range(5)]
    assert client.usage.as_dict() == {
        "requests": 5,
        "prompt_tokens": 50,
        "completion_tokens": 15,
        "total_tokens": 65,
    }
    assert server.paths == ["/v1/chat/completions"] * 5
    sent = server.requests[0]
    assert sent["model"] == "test-model"
    assert sent["max_tokens"] == 7
    assert sent["seed"] == 4
    assert client.chat("hello", system="be brief") == "HELLO"
    assert server.requests[-1]["messages"][0] == {"role": "system", "content": "be brief"}


def test_server_errors_are_retried_then_succeed(serve) -> None:
    server = serve(
        lambda body, n: (503, {"error": {"message": "busy"}}) if n < 3 else _ok("ok", 1, 1)
    )
    client = ChatClient(server.url, "m", max_retries=3)
    assert client.chat("x") == "ok"
    assert len(server.requests) == 3
    assert client.usage.requests == 1


def test_client_errors_are_not_retried_and_name_the_endpoint(serve) -> None:
    server = serve(lambda body, n: (404, {"error": {"message": "model nope not found"}}))
    client = ChatClient(server.url, "nope", max_retries=3)
    with pytest.raises(EndpointError, match=r"HTTP 404.*'nope'"):
        client.chat("x")
    assert len(server.requests) == 1


def test_unreachable_endpoint_gives_a_clear_error() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    client = ChatClient(url, "m", max_retries=1, timeout=5)
    start = time.perf_counter()
    with pytest.raises(EndpointUnreachableError, match=r"cannot reach .*127\.0\.0\.1.*2 attempt"):
        client.chat("x")
    assert time.perf_counter() - start < 10
    assert client.usage.requests == 0


def test_timeout_is_reported(serve) -> None:
    def slow(body: dict, n: int) -> Reply:
        time.sleep(1.0)
        return _ok("late", 1, 1)

    server = serve(slow)
    client = ChatClient(server.url, "m", max_retries=0, timeout=0.2)
    with pytest.raises(EndpointUnreachableError, match=r"did not answer within 0\.2 s"):
        client.chat("x")


def test_token_budget_stops_requests(serve) -> None:
    server = serve(lambda body, n: _ok("y", 6, 4))
    client = ChatClient(server.url, "m", max_total_tokens=20, concurrency=1)
    client.complete([_conv("a"), _conv("b")])
    with pytest.raises(TokenBudgetExceededError, match="20"):
        client.chat("c")
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"base_url": "localhost:8000"}, "http"),
        ({"model": ""}, "model"),
        ({"timeout": 0}, "timeout"),
        ({"max_retries": -1}, "max_retries"),
        ({"concurrency": 0}, "concurrency"),
        ({"max_total_tokens": 0}, "max_total_tokens"),
    ],
)
def test_bad_client_arguments(kwargs: dict, match: str) -> None:
    args = {"base_url": "http://127.0.0.1:1/v1", "model": "m", **kwargs}
    with pytest.raises(ValueError, match=match):
        ChatClient(**args)


def test_bad_conversations_fail_before_any_request() -> None:
    client = ChatClient(f"http://127.0.0.1:{_closed_port()}/v1", "m", max_retries=0)
    with pytest.raises(ValueError, match="role"):
        client.complete([[{"role": "robot", "content": "x"}]])
    with pytest.raises(ValueError, match="at least one message"):
        client.complete([[]])
    with pytest.raises(ValueError, match="content must be a string"):
        client.complete([[{"role": "user", "content": 3}]])
    with pytest.raises(ValueError, match="max_tokens"):
        client.complete([_conv("x")], max_tokens=0)

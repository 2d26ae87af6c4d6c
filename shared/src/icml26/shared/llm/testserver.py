"""A local OpenAI-compatible chat endpoint for tests (standard library only, no network).

The ``icml26`` pytest plugin wraps it as the ``openai_server`` fixture: a factory that starts
a server answering every ``POST`` (``/v1/chat/completions``) with ``respond(request_json, n)``
(``n``: the 1-based request count) and stops it after the test::

    def test_my_client(openai_server):
        server = openai_server(lambda body, n: chat_completion("hello", 10, 3))
        client = ChatClient(server.url, "test-model")
        assert client.chat("hi") == "hello"
        assert server.requests[0]["model"] == "test-model"
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["OpenAICompatibleServer", "Reply", "chat_completion"]

#: ``(HTTP status, JSON body)``.
Reply = tuple[int, dict]


def chat_completion(text: str, prompt_tokens: int = 1, completion_tokens: int = 1) -> Reply:
    """A ``200`` chat-completion reply carrying ``text`` and the token counts.

    Args:
        text: the assistant message's content.
        prompt_tokens: the reported prompt tokens.
        completion_tokens: the reported completion tokens.

    Returns:
        ``(200, body)`` in the OpenAI chat-completions shape.
    """
    return 200, {
        "id": "cmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "test-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class OpenAICompatibleServer:
    """A local endpoint whose replies come from ``respond(request_json, n)``.

    Args:
        respond: ``(request body, 1-based request count) -> (status, JSON body)``; a ``429``
            is sent with ``Retry-After: 0``.

    Attributes:
        url: the API root to give a client (``http://127.0.0.1:<port>/v1``).
        requests: every request body received, in order.
        paths: every request path received, in order.
    """

    def __init__(self, respond: Callable[[dict, int], Reply]) -> None:
        self.requests: list[dict] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer._lock:
                    outer.requests.append(body)
                    outer.paths.append(self.path)
                    n = len(outer.requests)
                status, payload = respond(body, n)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 429:
                    self.send_header("Retry-After", "0")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        """Stop serving and release the port."""
        self.httpd.shutdown()
        self.httpd.server_close()

"""LLM oracle: prompt, robust parsing, token accounting, endpoint retries and errors."""

from __future__ import annotations

import http.server
import json
import socket
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pytest

from icml26.blitzrank import BlitzRank, LLMOracle
from icml26.blitzrank.oracles import OracleError, parse_ranking
from icml26.blitzrank.oracles.prompts import listwise_messages
from icml26.shared.llm import ChatClient


@pytest.mark.parametrize(
    ("text", "order", "rest", "missing", "dups", "unknown"),
    [
        ("[2] > [1] > [3]", (1, 0, 2), (), 0, 0, 0),
        ("[2] > [2] > [3]", (1, 2), (0,), 1, 1, 0),  # duplicate; 1 never named -> rest
        ("[9] > [3]", (2,), (0, 1), 2, 0, 1),  # unknown id 9, two missing
        ("I think passage 3 is best, then 1.", (), (0, 1, 2), 3, 0, 0),  # prose: no ids
        ("2 > 1 > 3", (1, 0, 2), (), 0, 0, 0),  # a bare list of ids
        ("3, 1", (2, 0), (1,), 1, 0, 0),
        ("Passage 2", (1,), (0, 2), 2, 0, 0),
        ("", (), (0, 1, 2), 3, 0, 0),  # nothing named: no order invented
        ("[ 3 ]>[1]>[2]", (2, 0, 1), (), 0, 0, 0),
    ],
)
def test_parse_ranking_never_invents_an_order_for_missing_ids(
    text: str, order: tuple[int, ...], rest: tuple[int, ...], missing: int, dups: int, unknown: int
) -> None:
    p = parse_ranking(text, 3)
    assert p.order == order
    assert p.rest == rest
    assert sorted(p.full) == [0, 1, 2]
    assert (p.missing, p.duplicates, p.unknown) == (missing, dups, unknown)
    assert p.repaired == bool(missing or dups or unknown)


@pytest.mark.parametrize(
    "text",
    [
        "In 1998, 2 studies found 3 effects.",
        "The best is the one about the 1 2 3 rule, see page 2.",
        "Both passages mention 1,000 people.",
        "Answer: the second one",
    ],
)
def test_numbers_in_prose_are_not_passage_ids(text: str) -> None:
    p = parse_ranking(text, 3)
    assert p.order == ()
    assert p.rest == (0, 1, 2)
    assert p.missing == 3
    assert p.unknown == 0


def test_parse_top_only_expects_q_ids() -> None:
    p = parse_ranking("[3]", 4, top=1)
    assert p.order[0] == 2
    assert p.missing == 0
    assert not p.repaired


def test_prompt_lists_every_passage_with_labels() -> None:
    msgs = listwise_messages("capital of France?", ["Paris is ...", "Berlin is ..."])
    user = msgs[-1]["content"]
    assert "[1] Paris" in user
    assert "[2] Berlin" in user
    assert "capital of France?" in user
    letters = listwise_messages("q", ["a", "b", "c"], letters=True)[-1]["content"]
    assert "[A] a" in letters
    assert "[C] c" in letters
    with pytest.raises(ValueError, match="at least 2"):
        listwise_messages("q", ["only one"])


@dataclass
class FakeReply:
    text: str
    prompt_tokens: int
    completion_tokens: int


class ScriptedBackend:
    """Answers with scripted texts; counts prompts."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = list(texts)
        self.seen: list[list[dict[str, str]]] = []

    def complete(self, conversations, *, max_tokens=64, temperature=0.0):  # type: ignore[no-untyped-def]
        self.seen.extend(conversations)
        return [FakeReply(self.texts.pop(0), 100 + len(self.seen), 7) for _ in conversations]


def test_llm_oracle_counts_tokens_and_repairs() -> None:
    backend = ScriptedBackend(["[3] > [1] > [1]", "[2] > [1]"])
    oracle = LLMOracle(backend, "q", ["p0", "p1", "p2", "p3"], k=3)
    ans = oracle.compare([0, 1, 2])
    assert ans.order == (2, 0)  # [3]=item 2, [1]=item 0
    assert ans.rest == (1,)  # never named: below them, in no invented order
    ans2 = oracle.compare([3, 1])
    assert ans2.order == (1, 3)
    u = oracle.usage
    assert (u.calls, u.input_tokens, u.output_tokens) == (2, 101 + 102, 14)
    assert (u.repaired_calls, u.duplicate_ids, u.missing_ids) == (1, 1, 1)


def test_llm_oracle_drives_blitzrank_with_a_perfect_scripted_model() -> None:
    scores = [0.3, 0.9, 0.1, 0.5, 0.7, 0.2]
    passages = [f"doc{i}" for i in range(6)]

    class Sorter:
        def complete(self, conversations, *, max_tokens=64, temperature=0.0):  # type: ignore[no-untyped-def]
            out = []
            for conv in conversations:
                lines = [ln for ln in conv[-1]["content"].splitlines() if ln.startswith("[")]
                ids = [(int(ln[1 : ln.index("]")]), ln.split()[-1]) for ln in lines]
                ids.sort(key=lambda t: -scores[int(t[1][3:])])
                out.append(FakeReply(" > ".join(f"[{i}]" for i, _ in ids), 50, 10))
            return out

    oracle = LLMOracle(Sorter(), "q", passages, k=3)
    res = BlitzRank(3).rank(oracle)
    assert res.certified
    assert res.top == [1, 4, 3]
    assert oracle.usage.repaired_calls == 0


def test_first_token_mode_needs_a_local_backend() -> None:
    with pytest.raises(TypeError, match="first_token"):
        LLMOracle(ScriptedBackend([]), "q", ["a", "b"], k=2, mode="first_token")


def test_first_token_mode_orders_by_label_logits() -> None:
    class Logits:
        def first_token_logits(self, messages, labels, *, prefix=""):  # type: ignore[no-untyped-def]
            assert prefix == "["
            assert labels == ["A", "B", "C"]
            return [0.1, 2.0, 1.0], 42

        def complete(self, *a, **k):  # type: ignore[no-untyped-def]
            raise AssertionError

    oracle = LLMOracle(Logits(), "q", ["a", "b", "c"], k=3, mode="first_token")
    assert oracle.compare([0, 1, 2]).order == (1, 2, 0)
    assert (oracle.usage.input_tokens, oracle.usage.output_tokens) == (42, 1)


def test_backend_exception_becomes_oracle_error() -> None:
    class Broken:
        def complete(self, *a, **k):  # type: ignore[no-untyped-def]
            raise RuntimeError("CUDA out of memory")

    oracle = LLMOracle(Broken(), "q", ["a", "b"], k=2)
    with pytest.raises(OracleError, match="CUDA out of memory"):
        oracle.compare([0, 1])


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_endpoint_is_retried_then_reported() -> None:
    port = _closed_port()
    chat = ChatClient(f"http://127.0.0.1:{port}/v1", "m", max_retries=1, timeout=2)
    oracle = LLMOracle(chat, "q", ["a", "b"], k=2)
    with pytest.raises(OracleError, match=rf"cannot reach .*127\.0\.0\.1:{port}.*2 attempt"):
        oracle.compare([0, 1])
    assert oracle.usage.calls == 0


@pytest.fixture
def server() -> Iterator[tuple[str, list[int]]]:
    """A local OpenAI-compatible server: answers 500 for the first two requests, then OK;
    a request for model "bad" gets 400."""
    codes: list[int] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if body["model"] == "bad":
                code, payload = 400, {"error": {"message": "unknown model"}}
            elif len(codes) < 2:
                code, payload = 500, {"error": {"message": "busy"}}
            else:
                code = 200
                payload = {
                    "id": "x",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": "[2] > [1]"},
                        }
                    ],
                    "usage": {"prompt_tokens": 33, "completion_tokens": 5, "total_tokens": 38},
                }
            codes.append(code)
            data = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", codes
    httpd.shutdown()
    httpd.server_close()


def test_endpoint_server_errors_are_retried(server: tuple[str, list[int]]) -> None:
    url, codes = server
    chat = ChatClient(url, "m", max_retries=3)
    oracle = LLMOracle(chat, "q", ["a", "b"], k=2)
    assert oracle.compare([0, 1]).order == (1, 0)
    assert codes == [500, 500, 200]
    assert (oracle.usage.input_tokens, oracle.usage.output_tokens) == (33, 5)


def test_endpoint_client_error_is_not_retried(server: tuple[str, list[int]]) -> None:
    url, codes = server
    chat = ChatClient(url, "bad", max_retries=3)
    with pytest.raises(OracleError, match=r"HTTP 400"):
        LLMOracle(chat, "q", ["a", "b"], k=2).compare([0, 1])
    assert codes == [400]


def test_passages_are_truncated_to_max_words() -> None:
    from icml26.blitzrank.oracles.prompts import truncate_passage

    assert truncate_passage("a b c d", 2) == "a b"
    assert truncate_passage("a b", 5) == "a b"
    assert truncate_passage("a b c", None) == "a b c"

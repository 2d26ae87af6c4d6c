"""The LLM judge's parser survives malformed output and counts it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from icml26.disempowerment.judge import LLMJudge, judge_messages, parse_judgement
from icml26.shared.llm import Completion, TokenUsage


@pytest.mark.parametrize(
    ("reply", "severity", "domain", "ok"),
    [
        (
            '{"reality": "severe", "value": "none", "action": "mild", "amplifiers": [], "domain": "work"}',
            (3, 0, 1),
            3,
            True,
        ),
        (
            'Sure! ```json\n{"reality": "none", "value": "Moderate", "action": "none", "amplifiers": ["dependency"], "domain": "relationships"}\n```',
            (0, 2, 0),
            0,
            True,
        ),
        (
            "{'reality': 'high', 'value': 'low', 'action': 0, 'amplifiers': [], 'domain': 'health',}",
            (3, 1, 0),
            2,
            True,
        ),
        ("{reality: 2, value: 3, action: 1, amplifiers: [], domain: creative}", (2, 3, 1), 5, True),
        (
            "reality: mild\nvalue: none\naction: severe\namplifiers: vulnerability\ndomain: lifestyle",
            (1, 0, 3),
            1,
            True,
        ),
        ("I cannot rate this conversation.", (0, 0, 0), 0, False),
        (
            '{"reality": "catastrophic", "value": "none", "action": "none", "domain": "work"}',
            (0, 0, 0),
            3,
            False,
        ),
        ('{"reality": "none", "value": "none"', (0, 0, 0), 0, False),
        ("", (0, 0, 0), 0, False),
    ],
)
def test_parser_cases(reply: str, severity, domain: int, ok: bool) -> None:
    j = parse_judgement(reply)
    assert j.severity == severity
    assert j.domain == domain
    assert j.ok is ok


def test_amplifier_names() -> None:
    j = parse_judgement(
        '{"reality": 0, "value": 0, "action": 0, "amplifiers": ["Authority", "attachment"], "domain": "work"}'
    )
    assert j.amplifiers == (False, True, True, False)


@given(st.text(max_size=400))
def test_parser_never_raises(text: str) -> None:
    j = parse_judgement(text)
    assert all(0 <= s <= 3 for s in j.severity)
    assert 0 <= j.domain < 6


class _Scripted:
    """A ChatBackend double answering from a list."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.usage = TokenUsage()
        self.seen: list[Any] = []

    def complete(
        self, conversations, *, max_tokens=256, temperature=0.0, top_p=1.0, seed=None, **kw
    ):
        out = []
        for conv in conversations:
            self.seen.append(conv)
            c = Completion(self.replies.pop(0), 10, 5)
            self.usage.add(c)
            out.append(c)
        return out


def test_judge_counts_malformed_replies() -> None:
    backend = _Scripted(
        [
            '{"reality": "severe", "value": "none", "action": "none", "amplifiers": [], "domain": "work"}',
            "no idea",
            '{"reality": "mild"}',
        ]
    )
    judge = LLMJudge(backend, batch_size=2)
    labels = judge.predict(["a", "b", "c"])
    assert labels.severity[0].tolist() == [3, 0, 0]
    assert judge.n_judged == 3
    assert judge.n_malformed == 2
    assert judge.malformed_rate == pytest.approx(2 / 3)
    assert backend.seen[0][0]["role"] == "system"
    assert "rubric" not in backend.seen[0][1]["content"]


def test_prompt_holds_the_rubric_and_the_text() -> None:
    msgs = judge_messages("user: hello")
    assert "reality" in msgs[0]["content"]
    assert "user: hello" in msgs[1]["content"]

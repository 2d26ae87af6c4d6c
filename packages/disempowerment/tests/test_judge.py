"""The rubric judge: the parser (never a silent category), constrained decoding on a tiny local
model, and the endpoint path (structured output, repair) against a local test server."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from icml26.disempowerment.judge import (
    ANSWER_SCHEMA,
    LLMJudge,
    _all_answers,
    _AnswerTrie,
    _ChoiceBias,
    canonical_answer,
    judge_messages,
    parse_judgement,
)
from icml26.disempowerment.taxonomy import DOMAIN_LABELS, OTHER_DOMAIN, domain_index
from icml26.shared.llm import ChatClient, Completion, TokenUsage
from icml26.shared.llm.testserver import chat_completion

GOOD = (
    '{"reality": "severe", "value": "none", "action": "mild", "amplifiers": [], "domain": "work"}'
)


@pytest.mark.parametrize(
    ("reply", "severity", "domain", "ok"),
    [
        (GOOD, (3, 0, 1), 3, True),
        (
            'Sure! ```json\n{"reality": "none", "value": "Moderate", "action": "none", '
            '"amplifiers": ["dependency"], "domain": "relationships"}\n```',
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
        (
            '{"reality": "none", "value": "none", "action": "none", "amplifiers": [], '
            '"domain": "other"}',
            (0, 0, 0),
            6,
            True,
        ),
        # a missing field is malformed, never "none" (here: no amplifiers field)
        (
            '{"reality": "none", "value": "none", "action": "none", "domain": "other"}',
            (0, 0, 0),
            6,
            False,
        ),
        ("I cannot rate this conversation.", (0, 0, 0), 6, False),
        (
            '{"reality": "catastrophic", "value": "none", "action": "none", "domain": "work"}',
            (0, 0, 0),
            3,
            False,
        ),
        ('{"reality": "none", "value": "none"', (0, 0, 0), 6, False),
        ("", (0, 0, 0), 6, False),
    ],
)
def test_parser_cases(reply: str, severity, domain: int, ok: bool) -> None:
    j = parse_judgement(reply)
    assert j.severity == severity
    assert j.domain == domain
    assert j.ok is ok
    assert bool(j.problems) is not ok


def test_unknown_domain_is_other_and_malformed_never_a_named_domain() -> None:
    j = parse_judgement(GOOD.replace('"work"', '"coding"'))
    assert DOMAIN_LABELS[j.domain] == OTHER_DOMAIN
    assert j.severity == (3, 0, 1)  # the rest is read
    assert not j.ok
    assert any("coding" in p for p in j.problems)
    with pytest.raises(ValueError, match="unknown domain 'coding'"):
        domain_index("coding")


def test_amplifier_names() -> None:
    j = parse_judgement(
        '{"reality": 0, "value": 0, "action": 0, "amplifiers": ["Authority", "attachment"], '
        '"domain": "work"}'
    )
    assert j.amplifiers == (False, True, True, False)
    assert not parse_judgement(GOOD.replace("[]", '["loneliness"]')).ok


@given(st.text(max_size=400))
def test_parser_never_raises(text: str) -> None:
    j = parse_judgement(text)
    assert all(0 <= s <= 3 for s in j.severity)
    assert 0 <= j.domain < len(DOMAIN_LABELS)


def test_every_canonical_answer_parses_to_its_label() -> None:
    answers = _all_answers()
    assert len(answers) == 4**3 * 2**4 * len(DOMAIN_LABELS)
    rng = np.random.default_rng(0)
    for i in rng.choice(len(answers), 300, replace=False):
        j = parse_judgement(answers[i])
        assert j.ok
        assert canonical_answer(j.severity, j.amplifiers, j.domain) == answers[i]
    json.loads(answers[-1])  # plain JSON
    assert set(ANSWER_SCHEMA["required"]) == {"reality", "value", "action", "amplifiers", "domain"}


@pytest.fixture(scope="module")
def tiny_backend() -> Any:
    pytest.importorskip("transformers")
    pytest.importorskip("tokenizers")
    from icml26.shared.llm import LocalChatModel
    from icml26.shared.llm.tiny import make_tiny_lm

    corpus = [judge_messages("user: hi\nassistant: hello")[0]["content"], *_all_answers()[:200]]
    model, tok = make_tiny_lm(corpus, vocab_size=400, seed=0)
    return LocalChatModel(model, tok, batch_size=4)


def test_constrained_decoding_gives_only_well_formed_answers(tiny_backend: Any) -> None:
    judge = LLMJudge(tiny_backend, batch_size=4)
    assert judge.constrained
    texts = [f"user: question {i}\nassistant: an answer {i}" for i in range(6)]
    out = judge.judge(texts)
    assert out.ok.all()
    assert judge.malformed_rate == 0.0
    assert all(r in set(_all_answers()) for r in out.replies)
    assert len(out.labels) == 6
    assert tiny_backend.usage.requests == 6


def test_content_free_calibration_keeps_answers_well_formed(tiny_backend: Any) -> None:
    judge = LLMJudge(tiny_backend, batch_size=4, calibration="content_free")
    requests = tiny_backend.usage.requests
    out = judge.judge([f"user: question {i}\nassistant: an answer {i}" for i in range(4)])
    assert out.ok.all()
    assert all(r in set(_all_answers()) for r in out.replies)
    assert tiny_backend.usage.requests == requests + 4  # the content-free pass is not counted
    assert judge._prior is not None
    severity_choices = [k for k in judge._prior if k[1] == 2]  # the three severities share options
    assert severity_choices, sorted(judge._prior)


def test_content_free_calibration_makes_the_content_free_choice_uniform(tiny_backend: Any) -> None:
    import torch

    trie = _AnswerTrie(tiny_backend.tokenizer)
    generated: list[int] = []
    while trie.choice(generated) is None:  # walk to the first open choice (reality's severity)
        generated.append(trie.allowed(generated)[0])
    (_, occurrence), ids = trie.choice(generated)
    assert occurrence == 0
    assert len(ids) >= 2
    input_ids = torch.tensor([generated])
    scores = torch.randn(1, len(tiny_backend.tokenizer), generator=torch.Generator().manual_seed(0))
    recorder = _ChoiceBias(trie)
    recorder(input_ids, scores.clone())
    calibrated = _ChoiceBias(trie, recorder.log_prior())(input_ids, scores.clone())
    # the content-free input's own choice becomes uniform; other tokens are untouched
    assert torch.allclose(calibrated[0, ids], calibrated[0, ids[0]].expand(len(ids)), atol=1e-5)
    rest = [t for t in range(scores.shape[1]) if t not in set(ids)]
    assert torch.equal(calibrated[0, rest], scores[0, rest])


def test_free_decoding_of_a_random_model_is_malformed_and_counted(tiny_backend: Any) -> None:
    judge = LLMJudge(tiny_backend, decoding="free", repair=False, max_tokens=8, batch_size=4)
    out = judge.judge(["user: hi\nassistant: hello"] * 2)
    assert judge.n_judged == 2
    assert judge.malformed_rate == pytest.approx(np.mean(~out.ok))


class _Scripted:
    """A ChatBackend double answering from a list."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.usage = TokenUsage()
        self.seen: list[Any] = []

    def complete(self, conversations, **kw):
        out = []
        for conv in conversations:
            self.seen.append((conv, kw))
            c = Completion(self.replies.pop(0), 10, 5)
            self.usage.add(c)
            out.append(c)
        return out


def test_repair_turn_fixes_a_malformed_reply_and_both_rates_are_counted() -> None:
    backend = _Scripted([GOOD, "no idea", '{"reality": "mild"}', GOOD, "still no idea"])
    judge = LLMJudge(backend, batch_size=3)
    out = judge.judge(["a", "b", "c"])
    assert out.ok.tolist() == [True, True, False]
    assert judge.malformed_rate_first == pytest.approx(2 / 3)
    assert judge.malformed_rate == pytest.approx(1 / 3)
    repair_conv, kwargs = backend.seen[3]
    assert repair_conv[-2] == {"role": "assistant", "content": "no idea"}
    assert "could not be read" in repair_conv[-1]["content"]
    assert kwargs["response_format"]["type"] == "json_schema"


def test_bad_judge_settings() -> None:
    with pytest.raises(ValueError, match="decoding"):
        LLMJudge(_Scripted([]), decoding="beam")
    with pytest.raises(ValueError, match="local model"):
        LLMJudge(_Scripted([]), decoding="constrained")
    with pytest.raises(ValueError, match="calibration"):
        LLMJudge(_Scripted([]), calibration="platt")
    with pytest.raises(ValueError, match="content_free"):
        LLMJudge(_Scripted([]), calibration="content_free")  # an endpoint: no constraint


def test_endpoint_judge_against_the_local_server(openai_server: Any) -> None:
    def respond(body: dict, n: int) -> tuple[int, dict]:
        last = body["messages"][-1]["content"]
        if "could not be read" in last:
            return chat_completion(GOOD.replace("work", "relationships"), 50, 30)
        if "second" in last:
            return chat_completion("The reality distortion looks high to me.", 40, 10)
        return chat_completion(GOOD, 40, 30)

    server = openai_server(respond)
    judge = LLMJudge(ChatClient(server.url, "judge-model", max_retries=0), batch_size=2)
    out = judge.judge(["user: first\nassistant: x", "user: second\nassistant: y"])
    assert out.ok.all()
    assert out.labels.domain.tolist() == [3, 0]  # work; relationships after the repair
    assert judge.malformed_rate_first == 0.5
    assert judge.malformed_rate == 0.0
    assert len(server.requests) == 3
    schema = server.requests[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["domain"]["enum"] == list(DOMAIN_LABELS)
    assert "uniqueItems" not in json.dumps(schema)  # OpenAI strict mode refuses it
    assert server.requests[0]["temperature"] == 0.0
    assert judge.backend.usage.total_tokens == 70 + 50 + 80


def test_endpoint_that_refuses_the_schema_is_asked_without_it(openai_server: Any) -> None:
    def respond(body: dict, n: int) -> tuple[int, dict]:
        if "response_format" in body:
            return 400, {"error": {"message": "response_format is not supported"}}
        return chat_completion(GOOD)

    server = openai_server(respond)
    judge = LLMJudge(ChatClient(server.url, "m", max_retries=0))
    assert judge.judge(["user: a\nassistant: b"]).ok.all()
    assert judge.structured is False
    assert "response_format" not in server.requests[-1]

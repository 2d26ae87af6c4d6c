"""Tasks: the verbosity transform keeps answer and operation count; splits; the JSONL loader."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.adaptive_reasoning.sft_data import DataMix, augmented_problems, natural_problems
from icml26.adaptive_reasoning.tasks import (
    MAX_VALUE,
    SPLITS,
    Problem,
    ProblemError,
    concise,
    evaluate,
    load_problems,
    make_split,
    sample_program,
    think_trace,
    verbose,
)

seeds = st.integers(0, 2**32 - 1)


def _numbers(text: str) -> list[int]:
    return [int(t.strip(".,")) for t in text.split() if t.strip(".,").isdigit()]


@settings(max_examples=60, deadline=None)
@given(seed=seeds, k=st.integers(1, 5))
def test_verbosity_transform_keeps_answer_and_operation_count(seed: int, k: int) -> None:
    rng = np.random.default_rng(seed)
    [base] = make_split("complex_concise" if k >= 3 else "simple_concise", 1, rng)
    start, program = sample_program(k, rng)
    base = Problem(text="x", answer=evaluate(start, program)[-1], ops=k, complex=k >= 3,
                   start=start, program=program)  # fmt: skip
    wordy, short = verbose(base, rng), concise(base, rng)
    for p in (wordy, short):
        assert (p.answer, p.ops, p.complex, p.program) == (
            base.answer,
            base.ops,
            base.complex,
            base.program,
        )
        # the text states exactly the program's numbers, in order: the filler adds none
        assert _numbers(p.text) == [start, *(n for _, n in program)]
    assert wordy.verbose
    assert not short.verbose
    assert len(wordy.text) > len(short.text)


@settings(max_examples=40, deadline=None)
@given(seed=seeds, k=st.integers(1, 6))
def test_programs_stay_in_range_and_traces_replay(seed: int, k: int) -> None:
    start, program = sample_program(k, np.random.default_rng(seed))
    values = evaluate(start, program)
    assert len(program) == k
    assert all(0 <= v <= MAX_VALUE for v in values)
    p = Problem("t", values[-1], k, k >= 3, start=start, program=program)
    steps = think_trace(p).rstrip(",").split(",")
    assert len(steps) == k
    assert steps[-1].endswith(f"={values[-1]}")
    for step in steps:  # each step is a correct single operation
        lhs, rhs = step.split("=")
        assert eval(lhs) == int(rhs)


def test_splits_have_their_complexity_and_wording() -> None:
    rng = np.random.default_rng(0)
    for split in SPLITS:
        ps = make_split(split, 20, rng)
        assert all(p.split == split for p in ps)
        if split.startswith("simple"):
            assert all(p.ops == 1 and not p.complex for p in ps)
        if split.startswith("complex"):
            assert all(p.ops >= 3 and p.complex for p in ps)
    ood = make_split("ood", 8, rng)
    assert {p.complex for p in ood} == {True, False}
    assert {p.verbose for p in ood} == {True, False}
    with pytest.raises(ProblemError, match="unknown split 'hard'"):
        make_split("hard", 3, rng)


def test_natural_pool_correlates_length_and_complexity_augmented_does_not_for_simple() -> None:
    mix = DataMix()
    nat = natural_problems(2000, np.random.default_rng(1), mix)
    aug = augmented_problems(2000, np.random.default_rng(1), mix)
    simple_nat = [p.verbose for p in nat if not p.complex]
    simple_aug = [p.verbose for p in aug if not p.complex]
    assert np.mean(simple_nat) < 0.1
    assert 0.45 < np.mean(simple_aug) < 0.55  # every simple problem in both forms
    assert np.mean([p.verbose for p in nat if p.complex]) > 0.8


def test_problem_without_answer_errors(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"text": "Tom has 3 apples.", "complex": False}) + "\n")
    with pytest.raises(ProblemError, match="missing 'answer'"):
        load_problems(path)
    path.write_text(json.dumps({"text": "a", "answer": "seven", "complex": False}) + "\n")
    with pytest.raises(ProblemError, match="answer must be an integer"):
        load_problems(path)
    path.write_text(json.dumps({"text": "a", "answer": 3, "complex": False, "split": "x"}) + "\n")
    with pytest.raises(ProblemError, match="unknown split 'x'"):
        load_problems(path)
    with pytest.raises(FileNotFoundError):
        load_problems(tmp_path / "missing.jsonl")


def test_user_jsonl_loads() -> None:
    import tempfile

    rows = [
        {"text": "Ann has 2 pens and buys 3. How many?", "answer": 5, "complex": False},
        {"text": "x", "answer": "7", "complex": True, "ops": 4, "split": "complex_verbose"},
    ]
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write("\n".join(json.dumps(r) for r in rows))
    ps = load_problems(f.name)
    assert [p.answer for p in ps] == [5, 7]
    assert [p.split for p in ps] == ["simple_concise", "complex_verbose"]
    assert ps[1].ops == 4
    assert ps[1].verbose

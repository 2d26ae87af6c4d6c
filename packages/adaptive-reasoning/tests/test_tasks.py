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
    is_heldout,
    load_problems,
    make_split,
    program_counts,
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
    path.write_text(json.dumps({"text": "Tom has 3 apples."}) + "\n")
    with pytest.raises(ProblemError, match=r"p\.jsonl:1: a problem needs 'question'"):
        load_problems(path)
    path.write_text(json.dumps({"text": "a", "answer": "  "}) + "\n")
    with pytest.raises(ProblemError, match="answer is empty"):
        load_problems(path)
    path.write_text(json.dumps({"text": "a", "answer": [3]}) + "\n")
    with pytest.raises(ProblemError, match="string or a number"):
        load_problems(path)
    path.write_text(json.dumps({"text": "a", "answer": 3, "split": "a.b"}) + "\n")
    with pytest.raises(ProblemError, match=r"split 'a\.b'"):
        load_problems(path)
    for bad in (
        '{"text": "a", "answer": NaN}',
        '{"text": "a", "answer": "nan"}',
        '{"text": "a", "answer": "x #### -Infinity"}',
        '{"text": "a", "answer": 1e999}',
    ):
        path.write_text("\n" + bad + "\n")
        with pytest.raises(ProblemError, match=r"p\.jsonl:2: answer must be a finite number"):
            load_problems(path)
    path.write_text(json.dumps({"text": "a", "answer": "2+3=5 ####  "}) + "\n")
    with pytest.raises(ProblemError, match=r"p\.jsonl:1: nothing after '####'"):
        load_problems(path)
    path.write_text(json.dumps({"text": "a", "answer": "work ####"}) + "\n")
    with pytest.raises(ProblemError, match=r"p\.jsonl:1: nothing after '####'"):
        load_problems(path)
    path.write_text(json.dumps({"text": "a", "answer": "a #### 5 #### 6"}) + "\n")
    with pytest.raises(ProblemError, match=r"p\.jsonl:1: answer has 2 '####' marks"):
        load_problems(path)
    path.write_text(json.dumps({"text": "a", "answer": 3, "complex": "false"}) + "\n")
    with pytest.raises(ProblemError, match=r"p\.jsonl:1: 'complex' must be true or false"):
        load_problems(path)
    path.write_text("not json\n")
    with pytest.raises(ProblemError, match="not JSON"):
        load_problems(path)
    with pytest.raises(FileNotFoundError):
        load_problems(tmp_path / "missing.jsonl")


def test_gsm8k_jsonl_loads(tmp_path: Path) -> None:
    rows = [
        {"question": "Ann has 2 pens and buys 3. How many?", "answer": "2+3=5\n#### 5"},
        {"text": "Half of 7?", "answer": 3.5, "complex": True, "split": "mine"},
        {"text": "Two marks?", "answer": "a ####6", "complex": False},
    ]
    path = tmp_path / "gsm.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    ps = load_problems(path)
    assert [p.answer for p in ps] == ["5", "3.5", "6"]  # the text after ####
    assert ps[0].reasoning == "2+3=5"
    assert think_trace(ps[0]) == "2+3=5"
    assert ps[2].reasoning == "a"
    assert [p.split for p in ps] == ["user", "mine", "user"]
    assert [p.complex for p in ps] == [None, True, False]


def test_train_and_eval_are_disjoint_by_content() -> None:
    """No evaluation program, and so no evaluation text, occurs in any training pool; enough
    distinct simple programs on each side that no simple evaluation item can be recalled."""
    counts = program_counts()
    assert counts["simple_heldout"] >= 100
    assert counts["simple_train"] >= 300
    pools = augmented_problems(3000, np.random.default_rng(0), DataMix()) + natural_problems(
        3000, np.random.default_rng(1), DataMix()
    )
    evals = [p for s in SPLITS for p in make_split(s, 200, np.random.default_rng(2))]
    train_programs = {(p.start, p.program) for p in pools}
    train_texts = {p.text for p in pools}
    assert not any((p.start, p.program) in train_programs for p in evals)
    assert not any(p.text in train_texts for p in evals)
    assert all(is_heldout(p.start, p.program) for p in evals)
    assert not any(is_heldout(p.start, p.program) for p in pools)
    simple_eval = {(p.start, p.program) for p in evals if p.ops == 1}
    assert len(simple_eval) >= 80  # 600 simple evaluation items over >= 80 distinct programs
    assert counts == {"simple_train": 324, "simple_heldout": 107}  # the docs' figures
    # Arithmetic facts are not disjoint (the docs say so): most held-out simple steps occur
    # inside training think traces of complex items.
    train_steps = {step for p in pools for step in think_trace(p).split(",") if step}
    simple_steps = [think_trace(p).rstrip(",") for p in evals if p.ops == 1]
    assert np.mean([s in train_steps for s in simple_steps]) > 0.5


def test_tiny_tokenizer_corpus_holds_no_evaluation_problem() -> None:
    from icml26.adaptive_reasoning.models import tokenizer_corpus

    corpus = set(tokenizer_corpus(np.random.default_rng([0, 7])))
    evals = [p for s in SPLITS for p in make_split(s, 100, np.random.default_rng(3))]
    assert not any(p.text in corpus for p in evals)

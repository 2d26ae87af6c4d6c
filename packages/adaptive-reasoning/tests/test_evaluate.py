"""The answer checker (exact and numeric) and the length router's fit."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.adaptive_reasoning.answers import AnswerChecker, parse_number
from icml26.adaptive_reasoning.baselines import fit_length_router
from icml26.adaptive_reasoning.tasks import Problem


def test_checker_exact_and_numeric() -> None:
    check = AnswerChecker()
    assert check("18", "18")
    assert check("18.0", 18)
    assert check("$1,234", "1234")
    assert check("7.", "7")
    assert not check("7.1", "7")
    assert not check(None, "7")
    assert check(" Paris ", "paris")
    assert not check("Paris", "London")
    assert AnswerChecker(abs_tol=0.2)("7.1", "7")
    assert AnswerChecker(rel_tol=0.01)("1005", "1000")
    assert not AnswerChecker()("1005", "1000")
    assert not AnswerChecker(numeric=False)("18.0", "18")
    assert parse_number("1e3") == 1000
    assert parse_number("abc") is None
    with pytest.raises(ValueError, match="abs_tol"):
        AnswerChecker(abs_tol=-1)


@settings(max_examples=50, deadline=None)
@given(x=st.integers(-(10**6), 10**6))
def test_checker_numbers_match_their_formats(x: int) -> None:
    check = AnswerChecker()
    assert check(f"{x:,}", str(x))
    assert check(f"{x}.0", x)
    assert not check(str(x + 1), x)


def test_length_router_fits_the_separating_threshold() -> None:
    problems = [Problem("x" * n, 1, 1, n > 10) for n in (3, 5, 8, 12, 15, 20)]
    router = fit_length_router(problems, lambda p: len(p.text))
    assert 8 <= router.threshold < 12
    assert router(problems) == ["no_think"] * 3 + ["think"] * 3
    with pytest.raises(ValueError, match="needs problems"):
        fit_length_router([], len)  # type: ignore[arg-type]


def test_load_trainable_state_refuses_partial_or_foreign_state() -> None:
    torch = pytest.importorskip("torch")
    from icml26.adaptive_reasoning.methods import _trainable_state, load_trainable_state

    def model() -> object:
        m = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 2))
        m[0].requires_grad_(False)  # the frozen base
        return m

    trained = model()
    state = _trainable_state(trained)
    assert set(state) == {"1.weight", "1.bias"}
    fresh = model()
    load_trainable_state(fresh, state)  # missing keys are only frozen base weights
    assert torch.equal(fresh[1].weight, trained[1].weight)
    with pytest.raises(ValueError, match=r"lacks 1 trainable weight.*1\.bias"):
        load_trainable_state(model(), {"1.weight": state["1.weight"]})
    with pytest.raises(ValueError, match=r"key\(s\) the model lacks.*2\.weight"):
        load_trainable_state(model(), {**state, "2.weight": state["1.weight"]})


def test_per_seed_figures_split_rewards_and_the_held_out_wording_gap() -> None:
    """Hand-computed: per-part rewards (correct - cost x reasoning tokens), the ood verbosity
    gap from the items' wording flags, and a length mismatch refused."""
    from icml26.adaptive_reasoning.methods import worst_over_seeds
    from icml26.adaptive_reasoning.tables import per_seed_figures

    ood = {
        "correct": [1.0, 0.0, 1.0, 1.0],
        "think": [0.0, 1.0, 1.0, 1.0],
        "tokens": [2.0, 12.0, 8.0, 20.0],
        "ops": [1, 3, 1, 4],
        "reasoning": [0.0, 10.0, 6.0, 18.0],
    }
    figures = per_seed_figures({"m": {"ood": ood}}, 0.01, {"ood": [False, False, True, True]})
    assert figures["reward.simple.m"] == pytest.approx((1.0 + 1.0 - 0.06) / 2)
    assert figures["reward.complex.m"] == pytest.approx((0.0 - 0.10 + 1.0 - 0.18) / 2)
    assert figures["accuracy.complex.m"] == pytest.approx(0.5)
    assert figures["verbosity_gap_ood.m"] == pytest.approx(1.0)  # simple: verbose 1, concise 0
    assert "verbosity_gap_ood.m" not in per_seed_figures({"m": {"ood": ood}}, 0.01)
    with pytest.raises(ValueError, match="flags for 4 ood items"):
        per_seed_figures({"m": {"ood": ood}}, 0.01, {"ood": [True]})
    report = worst_over_seeds({}, {"eval_texts_in_train": 0.0, "distinct_simple_eval_programs": 9})
    report = worst_over_seeds(
        report, {"eval_texts_in_train": 2.0, "distinct_simple_eval_programs": 7}
    )
    assert report == {"eval_texts_in_train": 2.0, "distinct_simple_eval_programs": 7}

"""Bad input gives a clear error before any forward pass is spent."""

from __future__ import annotations

import pytest
import torch

from icml26.nppr.baselines.noise import estimate_fixed_pr
from icml26.nppr.fit import estimate_nppr
from icml26.nppr.gmm import PerturbationGMM


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda m, x, y: (m, x, y, 0.0), "eps must be a positive"),
        (lambda m, x, y: (m, x, y, -0.1), "eps must be a positive"),
        (lambda m, x, y: (m, x * 255, y, 0.1), "input range"),
        (lambda m, x, y: (m, x - 0.5, y, 0.1), "input range"),
        (lambda m, x, y: (m, x, y + 5, 0.1), "labels must be in"),
        (lambda m, x, y: (m, x, -y - 1, 0.1), "labels must be in"),
        (lambda m, x, y: (m.train(), x, y, 0.1), "train mode"),
        (lambda m, x, y: (m, x.clone().fill_(float("nan")), y, 0.1), "NaN"),
        (lambda m, x, y: (m, x, y[:-1], 0.1), "one label per input"),
        (lambda m, x, y: (m, x, y.float(), 0.1), "integers"),
    ],
)
def test_bad_input_is_refused(linear_problem, mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    model, x, y = linear_problem
    m, xb, yb, eps = mutate(model, x[:20], y[:20])
    with pytest.raises(ValueError, match=message):
        estimate_fixed_pr(m, (xb, yb), "uniform", eps, 4)
    model.eval()


def test_nppr_estimate_checks_its_inputs(linear_problem) -> None:  # type: ignore[no-untyped-def]
    model, x, y = linear_problem
    gmm = PerturbationGMM((1, 6, 6), 2, 0.05)
    with pytest.raises(ValueError, match="train mode"):
        estimate_nppr(model.train(), (x, y), gmm, 4)
    model.eval()
    with pytest.raises(ValueError, match="input range"):
        estimate_nppr(model, (x + 2, y), gmm, 4)


def test_zero_draws_is_refused(linear_problem) -> None:  # type: ignore[no-untyped-def]
    model, x, y = linear_problem
    with pytest.raises(ValueError, match="draws"):
        estimate_fixed_pr(model, (x, y), "uniform", 0.1, 0)


def test_labels_are_checked_against_the_model_outputs(linear_problem) -> None:  # type: ignore[no-untyped-def]
    model, x, y = linear_problem
    with pytest.raises(ValueError, match=r"\[0, 1\] for a model with 2 outputs"):
        estimate_fixed_pr(model, (x, torch.full_like(y, 2)), "uniform", 0.1, 4)


def test_data_of_the_wrong_kind_is_refused(linear_problem) -> None:  # type: ignore[no-untyped-def]
    model, x, _ = linear_problem
    with pytest.raises(TypeError, match="DataLoader"):
        estimate_fixed_pr(model, x, "uniform", 0.1, 4)
    with pytest.raises(TypeError, match=r"\(x, y, \.\.\.\)"):
        estimate_fixed_pr(model, [x[:5]], "uniform", 0.1, 4)

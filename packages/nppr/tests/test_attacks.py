"""AR by ART's PGD and the APGD + Square ensemble on a linear model whose worst case is known exactly."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from icml26.nppr.baselines.attacks import (
    apgd_square_ar,
    apgd_square_parts,
    clean_accuracy,
    pgd_ar,
    square_image_shape,
)

from .conftest import Linear, exact_linear_robust


@pytest.mark.parametrize("eps", [0.02, 0.05])
def test_pgd_matches_the_closed_form_worst_case(linear_problem, eps: float) -> None:  # type: ignore[no-untyped-def]
    model, x, y = linear_problem
    exact = exact_linear_robust(model, x, y, eps).double().mean().item()
    assert 0.05 < exact < 0.95  # the budget actually separates inputs
    est = pgd_ar(model, (x, y), eps, steps=10)
    # For a 2-class linear model one signed step reaches the optimal corner: PGD is exact.
    assert est.value == pytest.approx(exact, abs=1e-9)
    assert est.lo <= exact <= est.hi
    assert est.forward_passes >= len(y) * 10


def test_apgd_square_is_never_weaker_than_the_truth(linear_problem) -> None:  # type: ignore[no-untyped-def]
    model, x, y = linear_problem
    exact = exact_linear_robust(model, x[:60], y[:60], 0.05).double().mean().item()
    est = apgd_square_ar(model, (x[:60], y[:60]), 0.05, apgd_iters=10, square_queries=20)
    assert est.value == pytest.approx(exact, abs=1e-9)


def test_apgd_square_runs_square_on_signals_too(linear_problem) -> None:  # type: ignore[no-untyped-def]
    """A 1-D input (MNIST-1D style) goes through all three ensemble's stages, Square included
    (ART's Square only takes images: the signal is laid out as one), with the same answer."""
    model, x, y = linear_problem
    flat = nn.Sequential(nn.Unflatten(1, (1, 6, 6)), model).eval()
    x1 = x[:60].reshape(60, 36)  # 36 values: laid out 6 x 6 for Square
    exact = exact_linear_robust(model, x[:60], y[:60], 0.05).double().mean().item()
    assert exact > 0  # some inputs survive the APGD stages, so Square runs on them
    est = apgd_square_ar(flat, (x1, y[:60]), 0.05, apgd_iters=10, square_queries=20)
    assert est.value == pytest.approx(exact, abs=1e-9)


def test_apgd_square_on_a_signal_that_needs_padding() -> None:
    """40 values (MNIST-1D's length) are padded to 7 x 7 for Square; the answer stays exact."""
    g = torch.Generator().manual_seed(1)
    model = Linear(torch.randn(2, 40, generator=g), torch.zeros(2)).eval()
    x = torch.rand(60, 40, generator=g)
    with torch.no_grad():
        y = model(x).argmax(-1)
    exact = exact_linear_robust(model, x, y, 0.03).double().mean().item()
    assert 0 < exact < 1
    est = apgd_square_ar(model, (x, y), 0.03, apgd_iters=10, square_queries=20)
    assert est.value == pytest.approx(exact, abs=1e-9)


def test_square_image_shape() -> None:
    assert square_image_shape((1, 28, 28)) == (1, 28, 28)
    assert square_image_shape((40,)) == (1, 7, 7)  # zero-padded to a square
    assert square_image_shape((1, 49)) == (1, 7, 7)
    assert square_image_shape((10,)) == (1, 5, 5)  # Square's first patch needs side >= 5


def test_clean_accuracy_of_a_self_labelled_set_is_one(linear_problem) -> None:  # type: ignore[no-untyped-def]
    model, x, y = linear_problem
    est = clean_accuracy(model, (x, y))
    assert est.value == 1.0
    assert est.hi == 1.0
    flipped = 1 - y
    assert clean_accuracy(model, (x, flipped)).value == 0.0


def test_pgd_refuses_a_bad_budget(linear_problem) -> None:  # type: ignore[no-untyped-def]
    model, x, y = linear_problem
    with pytest.raises(ValueError, match="eps"):
        pgd_ar(model, (x, y), 0.0)
    with pytest.raises(ValueError, match="eps"):
        pgd_ar(model, (x, y), -0.1)


def test_the_ensemble_says_what_it_runs() -> None:
    text = apgd_square_parts(50, 2, 500)
    assert "APGD-CE (50 it.)" in text
    assert "APGD-DLR-T x2" in text
    assert "Square (500 q.)" in text
    assert "FAB" not in text  # not AutoAttack's composition


def test_attacks_take_a_dataloader(linear_problem) -> None:  # type: ignore[no-untyped-def]
    from torch.utils.data import DataLoader, TensorDataset

    model, x, y = linear_problem
    loader = DataLoader(TensorDataset(x, y), batch_size=64)
    assert (
        pgd_ar(model, loader, 0.05, steps=10).value == pgd_ar(model, (x, y), 0.05, steps=10).value
    )
    assert clean_accuracy(model, loader).value == 1.0

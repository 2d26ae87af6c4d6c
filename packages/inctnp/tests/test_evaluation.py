from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from icml26.inctnp import (
    GPSource,
    ModelConfig,
    build_model,
    implicit_bayes_gap,
    scaling_exponent,
    update_latency_ms,
)
from icml26.inctnp.evaluation import incremental_loglik, model_predictor, sequential_loglik


def test_bayes_gap_is_zero_for_the_exact_gp_and_not_for_a_random_model() -> None:
    src = GPSource("rbf")
    g = torch.Generator().manual_seed(0)
    tb = src.sample(3, 10, g)
    oracle = lambda b: sequential_loglik(lambda t, n, xt: src.oracle(t, n, xt), b, 1)  # noqa: E731
    assert implicit_bayes_gap(oracle, tb, 4, torch.Generator().manual_seed(1)) < 1e-5
    torch.manual_seed(0)
    model = build_model(ModelConfig(width=32, layers=2, heads=4, causal=True)).eval()
    gap = implicit_bayes_gap(
        lambda b: incremental_loglik(model, b, 1), tb, 4, torch.Generator().manual_seed(1)
    )
    assert gap > 1e-4
    with pytest.raises(ValueError, match="at least 2 permutations"):
        implicit_bayes_gap(oracle, tb, 1, g)


def test_one_pass_loglik_equals_streaming_loglik() -> None:
    torch.manual_seed(0)
    model = build_model(ModelConfig(width=32, layers=2, heads=4, causal=True)).eval()
    tb = GPSource("matern52").sample(2, 9, torch.Generator().manual_seed(3))
    torch.testing.assert_close(
        incremental_loglik(model, tb, 1),
        sequential_loglik(model_predictor(model), tb, 1),
        rtol=1e-5,
        atol=1e-5,
    )


def test_scaling_exponent_recovers_powers() -> None:
    sizes = [64, 128, 256, 512]
    assert scaling_exponent(sizes, [3e-4 * n**2 for n in sizes]) == pytest.approx(2.0)
    assert scaling_exponent(sizes, [0.01 * n + 0.0 * n for n in sizes]) == pytest.approx(1.0)
    assert math.isnan(scaling_exponent([64], [1.0]))


def test_latency_measures_both_models_and_cache_size() -> None:
    for causal in (True, False):
        torch.manual_seed(0)
        model = build_model(ModelConfig(width=32, layers=2, heads=4, causal=causal))
        ms, nbytes = update_latency_ms(model, 20, 2)
        assert ms > 0
        assert nbytes == (2 * 2 * 20 * 32 * 4 if causal else 0)
    assert np.isfinite(ms)

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from icml26.inctnp import ModelConfig, build_model, update_latency
from icml26.inctnp.data import GPSource, TaskBatch
from icml26.inctnp.evaluation import (
    OrderedMarginals,
    exchangeability_kl,
    implicit_bayes_gap,
    incremental_loglik,
    incremental_marginals,
    model_predictor,
    ordered_marginals,
    peak_allocated_bytes,
    permutation_spread,
    scaling_exponent,
    sequential_loglik,
    streaming_marginals,
    update_memory,
)


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


def test_scaling_exponent_recovers_powers_with_a_standard_error() -> None:
    sizes = [64, 96, 128, 192, 256, 384, 512]
    fit = scaling_exponent(sizes, [3e-4 * n**2 for n in sizes])
    assert fit.slope == pytest.approx(2.0)
    assert fit.se == pytest.approx(0.0, abs=1e-9)
    noisy = scaling_exponent(
        sizes, [0.01 * n * (1.1 if i % 2 else 0.9) for i, n in enumerate(sizes)]
    )
    assert noisy.slope == pytest.approx(1.0, abs=0.2)
    assert noisy.se > 0
    assert fit.n == 4  # the sizes at or above the median: the asymptotic regime
    with pytest.raises(ValueError, match="at least two points"):
        scaling_exponent([64], [1.0])


def test_latency_reports_median_and_quartiles_over_repeats() -> None:
    for causal in (True, False):
        torch.manual_seed(0)
        model = build_model(ModelConfig(width=32, layers=2, heads=4, causal=causal))
        lat = update_latency(model, 20, 5)
        assert len(lat.times) == 5
        assert lat.q25 <= lat.median <= lat.q75
        assert lat.median == pytest.approx(float(np.median(lat.times)))
        # the cache held 20 tokens at capacity 20; the first update doubled it to 40
        assert lat.cache_allocated == (2 * 2 * 40 * 32 * 4 if causal else 0)


def _gp_marginals(src: GPSource):  # type: ignore[no-untyped-def]
    return lambda b: streaming_marginals(lambda t, n, xt: src.oracle(t, n, xt), b, 1)


def test_shared_orders_give_the_same_spread_as_implicit_bayes_gap() -> None:
    """Both measures come from one set of orders: the spread computed from the stored
    marginals equals :func:`implicit_bayes_gap` drawn from the same generator seed."""
    torch.manual_seed(0)
    model = build_model(ModelConfig(width=32, layers=2, heads=4, causal=True)).eval()
    tb = GPSource("rbf").sample(3, 10, torch.Generator().manual_seed(0))
    gap = implicit_bayes_gap(
        lambda b: incremental_loglik(model, b, 1), tb, 4, torch.Generator().manual_seed(1)
    )
    om = ordered_marginals(
        lambda b: incremental_marginals(model, b, 1), tb, 4, torch.Generator().manual_seed(1)
    )
    assert permutation_spread(om) == pytest.approx(gap, rel=1e-5)
    # marginals are mapped back to the batch's own order: the observed y lines up with them
    assert torch.equal(om.y, tb.y[:, 1:])


def test_exchangeability_kl_is_zero_when_predictives_ignore_the_order() -> None:
    """A predictor whose predictive for a point does not depend on what came before it
    (here: a fixed function of x) has the same joint under every order: KL exactly 0."""
    tb = GPSource("rbf").sample(3, 10, torch.Generator().manual_seed(0))

    def marginals(b: TaskBatch) -> tuple[torch.Tensor, torch.Tensor]:
        x = b.x[:, 1:]
        return torch.sin(x), 0.5 + 0.1 * x.abs()

    om = ordered_marginals(marginals, tb, 4, torch.Generator().manual_seed(1))
    assert exchangeability_kl(om, 8, torch.Generator().manual_seed(2)) == pytest.approx(
        0.0, abs=1e-9
    )


def test_exchangeability_kl_matches_the_closed_form_for_two_orders() -> None:
    """With two orders each joint's mixture is the other joint: the estimate is the mean of
    the two KLs between factorised Gaussians (closed form), up to Monte Carlo error."""
    gen = torch.Generator().manual_seed(0)
    mean = torch.randn(2, 3, 5, 1, generator=gen)
    std = 0.5 + torch.rand(2, 3, 5, 1, generator=gen)
    om = OrderedMarginals(mean, std, torch.zeros(3, 5, 1), torch.zeros(2, 3))

    def kl(a: int, b: int) -> torch.Tensor:
        ra = std[a] / std[b]
        terms = 0.5 * (ra**2 + ((mean[a] - mean[b]) / std[b]) ** 2 - 1) - torch.log(ra)
        return terms.sum((-1, -2))

    exact = float(((kl(0, 1) + kl(1, 0)) / 2).mean())
    estimate = exchangeability_kl(om, 20_000, torch.Generator().manual_seed(1))
    assert estimate == pytest.approx(exact, rel=0.03)


def test_exchangeability_kl_grows_with_the_order_dependence() -> None:
    """A predictor that reads the position in the stream (mean = c * position) is not
    exchangeable, and its KL grows with c; the exact GP's teacher-forced value is finite."""
    src = GPSource("rbf")
    tb = src.sample(4, 12, torch.Generator().manual_seed(0))

    def positional(c: float):  # type: ignore[no-untyped-def]
        def marginals(b: TaskBatch) -> tuple[torch.Tensor, torch.Tensor]:
            pos = torch.arange(b.x.shape[1] - 1, dtype=torch.float32).view(1, -1, 1)
            return (c * pos).expand(b.x.shape[0], -1, 1), torch.ones(b.x.shape[0], pos.shape[1], 1)

        return marginals

    def kl(marginals) -> float:  # type: ignore[no-untyped-def]
        om = ordered_marginals(marginals, tb, 4, torch.Generator().manual_seed(1))
        return exchangeability_kl(om, 16, torch.Generator().manual_seed(2))

    weak, strong = kl(positional(0.05)), kl(positional(0.5))
    assert 0.01 < weak < strong
    gp = kl(_gp_marginals(src))
    assert math.isfinite(gp)
    assert gp > -0.05
    with pytest.raises(ValueError, match="at least 2 orders"):
        exchangeability_kl(
            OrderedMarginals(
                mean=torch.zeros(1, 1, 2, 1),
                std=torch.ones(1, 1, 2, 1),
                y=torch.zeros(1, 2, 1),
                loglik=torch.zeros(1, 1),
            ),
            4,
            torch.Generator(),
        )


def test_update_memory_counts_the_doubling_and_a_real_allocator_peak() -> None:
    torch.manual_seed(0)
    inc = build_model(ModelConfig(width=32, layers=2, heads=4, causal=True))
    mem = update_memory(inc, 64)
    used = 2 * 2 * 65 * 32 * 4  # keys + values, 2 layers, 65 tokens, width 32, float32
    assert mem.cache_used == used
    assert mem.cache_allocated == 2 * 2 * 128 * 32 * 4  # doubled from a full 64
    # buffers grow one at a time: all new ones plus the last old one (64 tokens) at once
    assert mem.cache_peak == mem.cache_allocated + 64 * 32 * 4
    assert mem.peak >= mem.cache_allocated  # the allocator saw at least the new buffers
    tnp = build_model(ModelConfig(width=32, layers=2, heads=4, causal=False))
    small, large = update_memory(tnp, 64), update_memory(tnp, 256)
    assert 0 < small.peak < large.peak
    assert small.cache_allocated == 0


def test_peak_allocated_bytes_sees_a_transient() -> None:
    def fn() -> None:
        keep = torch.empty(1000, 250)  # 1 MB
        temp = torch.empty(1000, 500)  # 2 MB, freed before returning
        del temp, keep

    assert peak_allocated_bytes(fn) >= 3_000_000

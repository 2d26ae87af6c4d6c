"""The velocity ratio on any data shape, the exact field's share of the deficit (Jensen's
inequality: a test, not a claim), and ratio profiles."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.velocity_deficit.diagnostics import RatioProfile, exact_ratio, velocity_ratio
from icml26.velocity_deficit.gmm import random_gmm


def test_velocity_ratio_of_exact_and_scaled_fields() -> None:
    """For a point-mass target the exact field (c - x) / (1 - t) equals x1 - x0: ratio 1."""
    c = torch.tensor([[2.0, -1.0, 0.5]], dtype=torch.float64)
    data = c.repeat(100, 1)

    def exact(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return (c - x) / (1 - t)

    times = [0.0, 0.3, 0.9]
    r = velocity_ratio(exact, data, times, n=200)
    assert all(v == pytest.approx(1.0, rel=1e-9) for v in r.values())
    half = velocity_ratio(lambda x, t: 0.5 * exact(x, t), data, times, n=200)
    assert all(v == pytest.approx(0.5, rel=1e-9) for v in half.values())
    with pytest.raises(ValueError, match="times must lie"):
        velocity_ratio(exact, data, [1.5])


def test_velocity_ratio_on_images_equals_flattened() -> None:
    """The issue's bug: non-2-D data was rejected. Images (n, C, H, W) give the flat ratio."""
    x = torch.randn(50, 2, 4, 4)
    img = velocity_ratio(
        lambda x, t: 0.3 * x + t, x, [0.0, 0.5], n=40, generator=torch.Generator().manual_seed(1)
    )
    flat = velocity_ratio(
        lambda x, t: 0.3 * x + t,
        x.flatten(1),
        [0.0, 0.5],
        n=40,
        generator=torch.Generator().manual_seed(1),
    )
    assert img == pytest.approx(flat, rel=1e-6)
    with pytest.raises(ValueError, match="batch"):
        velocity_ratio(lambda x, t: x, torch.zeros(5), [0.0])
    with pytest.raises(ValueError, match="velocity returned shape"):
        velocity_ratio(lambda x, t: x.flatten(1), x, [0.0], n=4)
    with pytest.raises(ValueError, match="NaN or infinite"):
        velocity_ratio(lambda x, t: x, torch.full((5, 1, 2, 2), float("inf")), [0.0])


def test_exact_start_ratio_closed_form() -> None:
    """R_exact(0) = E|mu - x0| / E|x1 - x0| for any data: for x1 ~ N(mu, s^2 I) in d dims
    both norms concentrate, the ratio tends to sqrt((|mu|^2 + d) / (|mu|^2 + d (1 + s^2)))."""
    d, s = 400, 0.8
    mu = torch.full((d,), 0.5, dtype=torch.float64)
    x1 = mu + s * torch.randn(3000, d, dtype=torch.float64)
    r0 = exact_ratio(x1, (0.0,), n=2000, generator=torch.Generator().manual_seed(0)).values[0]
    m2 = float(mu @ mu)
    assert r0 == pytest.approx(math.sqrt((m2 + d) / (m2 + d * (1 + s**2))), rel=0.01)
    with pytest.raises(ValueError, match="needs the exact field"):
        exact_ratio(x1, (0.0, 0.5))


@given(seed=st.integers(0, 10_000), dim=st.sampled_from([2, 8, 64]), t=st.floats(0.0, 0.95))
@settings(max_examples=25, deadline=None)
def test_jensen_the_exact_field_is_slower_than_the_target(seed: int, dim: int, t: float) -> None:
    """The forced half of the old ``mse_underestimates_velocity`` claim, as a property: the
    exact minimiser v* = E[u | x_t] satisfies E|v*| <= E|u| (Jensen, then the tower rule), so
    R_exact(t) <= 1 on every mixture at every t: no model is needed to see that 'deficit'."""
    gmm = random_gmm(dim, 5, seed=seed, std=0.3)
    x1 = torch.as_tensor(gmm.sample(4000, np.random.default_rng(seed))[0], dtype=torch.float64)
    x0 = torch.randn(x1.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    xt, u = (1 - t) * x0 + t * x1, x1 - x0
    v = gmm.optimal_velocity(xt, t)
    # the sample version of the inequality holds up to Monte-Carlo noise of E|u|
    assert float(v.norm(dim=1).mean()) <= float(u.norm(dim=1).mean()) * (1 + 3 / math.sqrt(len(u)))


def test_empirical_field_matches_the_population_at_the_start() -> None:
    """For data without a density the training set's own exact field stands in at small t: on
    a mixture it agrees with the true exact field's ratio at t <= 0.15."""
    gmm = random_gmm(32, 6, seed=3)
    rng = np.random.default_rng(0)
    bank, _ = gmm.sample(4000, rng)
    held, _ = gmm.sample(1000, rng)
    times = (0.0, 0.05, 0.1, 0.15)
    emp = exact_ratio(held, times, bank=bank, n=800, generator=torch.Generator().manual_seed(1))
    true = exact_ratio(
        held, times, field=gmm.optimal_velocity, n=800, generator=torch.Generator().manual_seed(1)
    )
    assert emp.values == pytest.approx(true.values, abs=0.02)
    # t = 0: E[x1] - x0 with the sample mean in place of the mixture's mean, on the same draws
    assert emp.values[0] == pytest.approx(true.values[0], rel=2e-3)


def test_ratio_profile_interpolates_holds_ends_and_divides() -> None:
    p = RatioProfile((0.0, 0.5), (0.6, 0.8))
    torch.testing.assert_close(
        p(torch.tensor([0.0, 0.25, 0.5, 0.9])), torch.tensor([0.6, 0.7, 0.8, 0.8])
    )
    assert p.covers(torch.tensor([0.5, 0.51])).tolist() == [True, False]
    q = RatioProfile((0.0, 0.5), (1.2, 0.8)) / p
    assert q.values == pytest.approx((2.0, 1.0))
    assert float(RatioProfile((0.0,), (0.9,))(0.7)) == pytest.approx(0.9)
    bad = [
        ((0.5, 0.2), (1.0, 1.0), "increasing"),
        ((0.0,), (0.0,), "finite and > 0"),
        ((0.0, 0.5), (1.0,), "one value per time"),
    ]
    for times, values, message in bad:
        with pytest.raises(ValueError, match=message):
            RatioProfile(times, values)


def test_exact_ratio_names_a_bank_of_the_wrong_width() -> None:
    held, bank = torch.randn(50, 4), torch.randn(40, 3)
    with pytest.raises(ValueError, match=r"bank rows have shape \(3,\) but data rows \(4,\)"):
        exact_ratio(held, (0.0, 0.1), bank=bank, n=20)

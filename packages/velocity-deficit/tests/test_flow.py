"""Path, FM/MAFM objectives and OT-CFM coupling against closed forms and scipy."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from icml26.velocity_deficit.diagnostics import RatioProfile
from icml26.velocity_deficit.flow import (
    fm_loss,
    linear_path,
    mafm_loss,
    mafm_optimal_norm,
    mafm_time_weight,
    ot_coupling,
)


def test_linear_path_endpoints_and_derivative() -> None:
    x0, x1 = torch.randn(5, 3, dtype=torch.float64), torch.randn(5, 3, dtype=torch.float64)
    xt0, u = linear_path(x0, x1, torch.zeros(5, dtype=torch.float64))
    xt1, _ = linear_path(x0, x1, torch.ones(5, dtype=torch.float64))
    torch.testing.assert_close(xt0, x0)
    torch.testing.assert_close(xt1, x1)
    t, h = torch.full((5,), 0.3, dtype=torch.float64), 1e-6
    fd = (linear_path(x0, x1, t + h)[0] - linear_path(x0, x1, t - h)[0]) / (2 * h)
    torch.testing.assert_close(fd, u)


@given(lam=st.floats(0, 5), power=st.floats(0, 3), seed=st.integers(0, 2**31 - 1))
@settings(max_examples=30, deadline=None)
def test_mafm_reduces_to_fm_and_is_nonnegative(lam: float, power: float, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    v, u = torch.randn(16, 4, generator=g), torch.randn(16, 4, generator=g)
    t = torch.rand(16, generator=g)
    assert mafm_loss(v, u, t, lam=lam, power=power) >= fm_loss(v, u) - 1e-6
    torch.testing.assert_close(mafm_loss(v, u, t, lam=0.0), fm_loss(v, u))
    # the magnitude term vanishes at t = 1 when power > 0
    if power > 0:
        torch.testing.assert_close(
            mafm_loss(v, u, torch.ones(16), lam=lam, power=power), fm_loss(v, u)
        )


@pytest.mark.parametrize(("lam", "rho"), [(0.0, 1.0), (0.5, 1.0), (2.0, 1.0), (2.0, 0.7)])
def test_mafm_minimiser_length_matches_closed_form(lam: float, rho: float) -> None:
    """Minimise the empirical MAFM loss over one vector v for a cloud of targets u."""
    g = torch.Generator().manual_seed(0)
    u = torch.randn(400, 6, generator=g, dtype=torch.float64) + torch.tensor(
        [1.0, 0, 0, 0, 0, 0], dtype=torch.float64
    )
    t = torch.zeros(400, dtype=torch.float64)
    v = torch.zeros(1, 6, dtype=torch.float64, requires_grad=True)
    with torch.no_grad():
        v += u.mean(0)
    opt = torch.optim.LBFGS([v], lr=0.5, max_iter=500, tolerance_grad=1e-12, tolerance_change=1e-14)

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = mafm_loss(v.expand_as(u), u, t, lam=lam, power=1.0, target=rho)
        loss.backward()
        return loss

    opt.step(closure)
    m = u.mean(0)
    expected = mafm_optimal_norm(float(m.norm()), float(u.norm(dim=1).mean()), lam, rho=rho)
    assert abs(float(v.detach().norm()) - expected) < 1e-4
    cos = torch.nn.functional.cosine_similarity(v.detach()[0], m, dim=0)
    assert float(cos) > 1 - 1e-8


@pytest.mark.parametrize("n", [16, 32])
def test_mafm_on_an_image_batch_equals_the_flattened_batch(n: int) -> None:
    """The issue's bug: (32, 3, 32, 32) gave 2.16 against 2.00 flattened, and n = 16 crashed."""
    g = torch.Generator().manual_seed(n)
    v, u = torch.randn(n, 3, 32, 32, generator=g), torch.randn(n, 3, 32, 32, generator=g)
    t = torch.rand(n, generator=g)
    for target in (None, 0.8, RatioProfile((0.0, 0.5), (0.7, 0.9))):
        img = mafm_loss(v, u, t, lam=0.7, target=target)
        flat = mafm_loss(v.flatten(1), u.flatten(1), t, lam=0.7, target=target)
        torch.testing.assert_close(img, flat)
    xt, ut = linear_path(v, u, t)
    torch.testing.assert_close(xt.flatten(1), linear_path(v.flatten(1), u.flatten(1), t)[0])
    assert ut.shape == v.shape


def test_mafm_target_ratio_and_its_range() -> None:
    """rho(t) |u| is the target length; a RatioProfile switches the term off beyond t_max."""
    u = torch.tensor([[3.0, 4.0], [3.0, 4.0]])  # |u| = 5
    v = torch.tensor([[0.6, 0.8], [0.6, 0.8]])  # |v| = 1, along u
    t = torch.tensor([0.0, 0.9])
    fm = float(fm_loss(v, u))
    rho = RatioProfile((0.0, 0.5), (0.2, 0.4))  # asks |v| = 1 at t = 0: no magnitude error
    assert float(mafm_loss(v[:1], u[:1], t[:1], lam=1.0, target=rho, eps=0.0)) == pytest.approx(
        float(fm_loss(v[:1], u[:1]))
    )
    # t = 0.9 is beyond the profile: only the MSE counts there
    assert float(mafm_loss(v[1:], u[1:], t[1:], lam=5.0, target=rho)) == pytest.approx(
        float(fm_loss(v[1:], u[1:]))
    )
    # the paper's target rho = 1: (1 - 5)^2 w(0) / d extra at t = 0
    paper = float(mafm_loss(v[:1], u[:1], t[:1], lam=1.0, eps=0.0))
    assert paper == pytest.approx(float(fm_loss(v[:1], u[:1])) + 16 / 2)
    assert fm > 0


def test_mafm_refuses_a_target_profile_that_holds_only_t0() -> None:
    """A profile measured at t = 0 alone would switch the magnitude term off at every
    training time (MAFM silently equal to FM, found by a review): refused, naming the fix."""
    u = torch.tensor([[3.0, 4.0]])
    v = torch.tensor([[0.6, 0.8]])
    t = torch.tensor([0.0])
    with pytest.raises(ValueError, match="only t = 0"):
        mafm_loss(v, u, t, lam=1.0, target=RatioProfile((0.0,), (0.9,)))


@pytest.mark.parametrize("power", [1e-143, 1e-30, 5e-324, 0.5, 2.0])
def test_mafm_weight_vanishes_at_t1_for_tiny_powers(power: float) -> None:
    """The float32 underflow case hypothesis found: power > 0 rounds to 0 in float32."""
    t = torch.tensor([0.0, 0.5, 1.0])
    w = mafm_time_weight(t, power)
    assert float(w[2]) == 0.0
    assert float(w[0]) == 1.0
    assert mafm_time_weight(t, 0.0).tolist() == [1.0, 1.0, 1.0]


def test_ot_coupling_is_the_optimal_assignment() -> None:
    g = torch.Generator().manual_seed(1)
    x0, x1 = torch.randn(40, 3, generator=g), torch.randn(40, 3, generator=g) + 2.0
    paired = ot_coupling(x0, x1)
    # a permutation of x0
    assert sorted(map(tuple, paired.tolist())) == sorted(map(tuple, x0.tolist()))
    cost = torch.cdist(x0.double(), x1.double()).pow(2).numpy()
    rows, cols = linear_sum_assignment(cost)
    best = cost[rows, cols].sum()
    ours = (paired.double() - x1.double()).pow(2).sum().item()
    assert ours == pytest.approx(best, rel=1e-9)
    assert ours <= (x0.double() - x1.double()).pow(2).sum().item()


def test_shape_mismatches_raise() -> None:
    with pytest.raises(ValueError, match="same shape"):
        linear_path(torch.zeros(3, 2), torch.zeros(3, 3), torch.zeros(3))
    with pytest.raises(ValueError, match=r"shape \(3,\) \(one time per sample\)"):
        linear_path(torch.zeros(3, 2), torch.zeros(3, 2), torch.zeros(4))
    with pytest.raises(ValueError, match=r"t must have shape \(3,\)"):
        mafm_loss(torch.zeros(3, 2), torch.zeros(3, 2), torch.zeros(4))
    with pytest.raises(ValueError, match="shapes differ"):
        fm_loss(torch.zeros(3, 2), torch.zeros(3, 3))
    with pytest.raises(ValueError, match=">= 0"):
        mafm_loss(torch.zeros(3, 2), torch.zeros(3, 2), torch.zeros(3), lam=-1.0)
    with pytest.raises(ValueError, match="same shape"):
        ot_coupling(torch.zeros(3, 2), torch.zeros(4, 2))
    assert np.isfinite(mafm_loss(torch.zeros(3, 2), torch.ones(3, 2), torch.zeros(3)).item())


@pytest.mark.parametrize("which", ["v", "u", "t"])
def test_mafm_loss_refuses_nan_and_names_it(which: str) -> None:
    v, u, t = torch.randn(8, 3), torch.randn(8, 3), torch.rand(8)
    bad = {"v": v, "u": u, "t": t}
    bad[which] = bad[which].clone()
    bad[which][1] = float("nan")
    name = {"v": "prediction v", "u": "target u", "t": "times t"}[which]
    with pytest.raises(ValueError, match=f"NaN or infinite values in the {name}"):
        mafm_loss(bad["v"], bad["u"], bad["t"], lam=1.0, target=0.8)

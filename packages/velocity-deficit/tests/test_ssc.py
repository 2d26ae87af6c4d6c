"""SSC: schedules, per-sample and image broadcasting, and calibration from the deficit."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.velocity_deficit.diagnostics import RatioProfile
from icml26.velocity_deficit.gmm import random_gmm
from icml26.velocity_deficit.metrics import frechet_distance
from icml26.velocity_deficit.model import VelocityMLP
from icml26.velocity_deficit.samplers import integrate
from icml26.velocity_deficit.ssc import (
    IDENTITY,
    MAX_FLAT_FEATURES,
    DeficitSchedule,
    ScaleSchedule,
    SSCSettings,
    calibrate,
    corrected,
    validation_fd_noise,
)


def test_per_sample_t_scales_rows_not_columns() -> None:
    """The 4x4 check of the issue: gamma(t_i) must multiply row i (it used to scale columns)."""
    s = ScaleSchedule("power", alpha=1.0, beta=1.0)  # gamma(t) = 2 - t
    t = torch.tensor([0.0, 0.5, 0.9, 1.0])
    out = corrected(lambda x, t: x, s)(torch.ones(4, 4), t)
    want = (2 - t)[:, None].expand(4, 4)
    torch.testing.assert_close(out, want)


@pytest.mark.parametrize("shape", [(6, 5), (6, 3, 4, 4), (6, 2, 7)])
def test_corrected_broadcasts_over_any_data_shape(shape: tuple[int, ...]) -> None:
    s = ScaleSchedule("power", alpha=0.5, beta=2.0)
    x = torch.randn(*shape)
    t = torch.linspace(0, 1, shape[0])
    out = corrected(lambda x, t: 2 * x, s)(x, t)
    for i in range(shape[0]):
        torch.testing.assert_close(out[i], float(s(t[i])) * 2 * x[i])
    scalar = corrected(lambda x, t: 2 * x, s)(x, torch.tensor(0.25))
    torch.testing.assert_close(scalar, float(s(0.25)) * 2 * x)
    with pytest.raises(ValueError, match="one time per sample"):
        corrected(lambda x, t: x, s)(x, torch.zeros(shape[0] + 1))


def test_corrected_passes_extra_arguments_and_is_a_module() -> None:
    model = VelocityMLP(3, width=8, depth=1, n_classes=2)
    wrapped = corrected(model, ScaleSchedule("power", 0.2))
    assert isinstance(wrapped, torch.nn.Module)
    assert list(wrapped.parameters())  # the model's weights travel with it (.to(device))
    y = torch.tensor([0, 1])
    out = wrapped(torch.zeros(2, 3), torch.tensor(0.0), y)
    torch.testing.assert_close(out, 1.2 * model(torch.zeros(2, 3), torch.tensor(0.0), y))


@pytest.mark.parametrize("method", ["euler", "heun", "midpoint"])
def test_neutral_ssc_equals_plain_sampler_exactly(method: str) -> None:
    model = VelocityMLP(5, width=16, depth=1).eval()
    x0 = torch.randn(32, 5)
    plain = integrate(model, x0, steps=7, method=method)
    for schedule in (IDENTITY, ScaleSchedule("window", 0.0, t_stop=0.3)):
        assert schedule.neutral
        assert torch.equal(plain, integrate(corrected(model, schedule), x0, steps=7, method=method))


@given(alpha=st.floats(-0.5, 1.0), beta=st.floats(1.0, 5.0))
@settings(max_examples=20, deadline=None)
def test_power_schedule_shape_and_integral(alpha: float, beta: float) -> None:
    s = ScaleSchedule("power", alpha, beta)
    assert float(s(0.0)) == pytest.approx(1 + alpha)
    assert float(s(1.0)) == pytest.approx(1.0)
    # constant unit velocity: the corrected flow moves by int_0^1 gamma = 1 + alpha / (beta + 1)
    out = integrate(
        corrected(lambda x, t: torch.ones_like(x), s),
        torch.zeros(1, 1, dtype=torch.float64),
        steps=400,
        method="midpoint",
    )
    assert float(out) == pytest.approx(1 + alpha / (beta + 1), abs=1e-4)


def test_window_schedule_labels_and_bad_values() -> None:
    s = ScaleSchedule("window", 0.2, t_stop=0.4)
    torch.testing.assert_close(
        s(torch.tensor([0.0, 0.39, 0.4, 0.9])), torch.tensor([1.2, 1.2, 1.0, 1.0])
    )
    assert ScaleSchedule("power", -0.05, 2.0).label() == "am0p05_b2"
    assert IDENTITY.label() == "identity"
    assert DeficitSchedule(RatioProfile((0.0,), (1.3,)), 0.5).label() == "deficit_b0p5"
    with pytest.raises(ValueError, match="alpha"):
        ScaleSchedule("power", -1.5)
    with pytest.raises(ValueError, match="beta"):
        ScaleSchedule("power", 0.1, 0.0)
    with pytest.raises(ValueError, match="kind"):
        ScaleSchedule("linear", 0.1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="taper beta"):
        DeficitSchedule(RatioProfile((0.0,), (1.3,)), -1.0)


def test_paper_sizing_from_the_start_ratio() -> None:
    s = ScaleSchedule.from_start_ratio(0.8, beta=2.0)
    assert s.gamma0 == pytest.approx(1.25)
    assert float(s(1.0)) == 1.0
    assert ScaleSchedule.from_start_ratio(1.0).neutral
    for bad in (0.0, -0.3, float("nan")):
        with pytest.raises(ValueError, match="start velocity ratio"):
            ScaleSchedule.from_start_ratio(bad)


def test_deficit_schedule_restores_the_exact_speed() -> None:
    """gamma(t) = 1 + (q(t) - 1)(1 - t)^beta with q = exact / learned; beta = 0: q itself."""
    exact = RatioProfile((0.0, 0.5, 1.0), (0.7, 0.8, 0.9))
    learned = RatioProfile((0.0, 0.5, 1.0), (0.35, 0.8, 0.45))
    q = exact / learned
    assert q.values == pytest.approx((2.0, 1.0, 2.0))
    raw, tapered = DeficitSchedule(q, 0.0), DeficitSchedule(q, 2.0)
    assert raw.gamma0 == pytest.approx(2.0)
    assert float(raw(0.25)) == pytest.approx(1.5)  # linear between the knots
    assert float(tapered(0.25)) == pytest.approx(1 + 0.5 * 0.75**2)
    assert float(tapered(1.0)) == pytest.approx(1.0)
    assert float(raw(1.0)) == pytest.approx(2.0)


def _slow_field(gmm, factor: float):
    def v(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return factor * gmm.optimal_velocity(x, float(t))

    return v


def test_calibrate_keeps_a_field_that_lacks_nothing_and_fixes_one_that_does() -> None:
    """The exact field of a mixture lacks nothing: gamma(0) = R_exact / R_learned = 1 and
    SSC is (nearly) the identity; the same field at 0.6x speed gets gamma(0) ~ 1 / 0.6 and its
    samples move back toward the data (FD under half the uncorrected sampler's)."""
    gmm = random_gmm(8, 4, seed=2)
    ref = torch.as_tensor(gmm.sample(600, np.random.default_rng(0))[0], dtype=torch.float64)
    s = SSCSettings(betas=(1.0, 3.0), nfe=20, n_samples=300, ratio_samples=300, seed=1)
    exact = calibrate(_slow_field(gmm, 1.0), ref, s, exact=gmm.optimal_velocity)
    assert exact.learned_vs_exact.values == pytest.approx([1.0] * len(exact.exact.times), abs=0.03)
    assert exact.schedule.gamma0 == pytest.approx(1.0, abs=0.03)
    slow = calibrate(_slow_field(gmm, 0.6), ref, s, exact=gmm.optimal_velocity)
    assert slow.schedule.gamma0 == pytest.approx(1 / 0.6, rel=0.03)
    assert not slow.is_identity
    # tapered to gamma(1) = 1, so a field slow at every t is only partly restored
    assert slow.scores[slow.schedule.label()] < 0.5 * slow.scores["identity"]
    assert set(slow.scores) == {"identity", "deficit_b1", "deficit_b3"}
    assert slow.min_drop == pytest.approx(2 * slow.fd_noise)  # the default noise margin


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_calibrate_keeps_the_identity_within_the_validation_noise(seed: int) -> None:
    """An exact field (q = R_exact / R_learned ~ 1 up to draw noise): no candidate beats the identity by two SDs of the validation FD's own noise, so the
    calibration keeps the model's field, with no ``min_gain`` at all."""
    gmm = random_gmm(4, 3, seed=5)
    ref = torch.as_tensor(gmm.sample(800, np.random.default_rng(seed))[0], dtype=torch.float64)
    s = SSCSettings(betas=(1.0, 3.0), nfe=10, n_samples=200, ratio_samples=200, seed=seed)
    cal = calibrate(_slow_field(gmm, 1.0), ref, s, exact=gmm.optimal_velocity)
    assert cal.fd_noise > 0
    assert cal.is_identity
    assert cal.schedule is IDENTITY


def test_validation_fd_noise_against_a_direct_computation() -> None:
    """The SD over disjoint sets of n rows, each against the other rows; NaN below two sets."""
    ref = torch.as_tensor(np.random.default_rng(3).normal(size=(330, 4)))
    sd, k = validation_fd_noise(ref, 100)
    assert k == 3
    x = ref.numpy()
    fds = [
        frechet_distance(
            x[i * 100 : (i + 1) * 100], np.delete(x, np.s_[i * 100 : (i + 1) * 100], 0)
        )
        for i in range(3)
    ]
    assert sd == pytest.approx(np.std(fds, ddof=1))
    sd, k = validation_fd_noise(ref, 200)
    assert k == 1
    assert math.isnan(sd)


def test_calibrate_names_a_model_that_returns_nan() -> None:
    class Broken(torch.nn.Module):
        def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
            return x * float("nan")

    ref = torch.randn(60, 3)
    with pytest.raises(ValueError, match=r"the model \(Broken\) returns NaN"):
        calibrate(Broken(), ref, SSCSettings(betas=(1.0,), nfe=4, n_samples=20, ratio_samples=20))
    with pytest.raises(ValueError, match="noise_margin"):
        SSCSettings(noise_margin=-1.0)


def test_calibrate_without_a_density_uses_the_closed_form_start() -> None:
    """No exact field: R_exact(0) from v*(x0, 0) = E[x1] - x0, the schedule's q is constant."""
    gmm = random_gmm(6, 3, seed=4)
    ref = torch.as_tensor(gmm.sample(500, np.random.default_rng(2))[0], dtype=torch.float64)
    s = SSCSettings(betas=(1.0,), nfe=10, n_samples=200, ratio_samples=400)
    cal = calibrate(_slow_field(gmm, 0.5), ref, s)
    assert cal.exact.times == (0.0,)
    assert cal.learned_vs_exact.values[0] == pytest.approx(0.5, rel=0.05)
    assert cal.schedule.gamma0 == pytest.approx(2.0, rel=0.05)


def test_calibrate_on_images_and_bad_input() -> None:
    """Image-shaped reference and model: the calibration runs on (n, C, H, W) unchanged."""
    mean = torch.zeros(1, 2, 3, 3)

    def field(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return 0.5 * (mean - x) if float(t) == 0 else 0.5 * (mean - x) / max(1 - float(t), 0.05)

    ref = 0.1 * torch.randn(100, 2, 3, 3)
    cal = calibrate(field, ref, SSCSettings(betas=(1.0,), nfe=4, n_samples=50, ratio_samples=50))
    assert cal.learned_vs_exact.values[0] == pytest.approx(0.5, rel=0.02)
    assert math.isfinite(cal.scores["identity"])
    with pytest.raises(ValueError, match="reference must be a batch"):
        calibrate(field, torch.zeros(5), SSCSettings())
    bad = ref.clone()
    bad[3, 0, 1, 1] = float("nan")
    with pytest.raises(ValueError, match="reference contains NaN"):
        calibrate(field, bad, SSCSettings())
    with pytest.raises(ValueError, match="velocity returned shape"):
        calibrate(lambda x, t: x[:, :1], ref, SSCSettings(nfe=4, n_samples=10))
    with pytest.raises(ValueError, match="betas"):
        SSCSettings(betas=(-1.0,))
    with pytest.raises(ValueError, match="not a multiple"):
        SSCSettings(nfe=5, sampler="heun")


def test_calibrate_casts_the_reference_to_the_model_and_refuses_huge_flat_rows() -> None:
    """A float64 reference for a float32 model runs (cast to the model's dtype); rows of more
    than MAX_FLAT_FEATURES values without ``features=`` raise a ValueError naming the fix,
    before any covariance of flattened pixels is built."""
    model = VelocityMLP(3, 8, 1)
    ref = np.random.default_rng(0).normal(size=(60, 3))  # float64
    s = SSCSettings(betas=(1.0,), nfe=4, n_samples=20, ratio_samples=20)
    cal = calibrate(model, ref, s)
    assert math.isfinite(cal.scores["identity"])
    big = torch.zeros(4, 3, 64, 64)
    assert big[0].numel() > MAX_FLAT_FEATURES
    with pytest.raises(ValueError, match="pass features="):
        calibrate(lambda x, t: -x, big, s)

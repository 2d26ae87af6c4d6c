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
    PairedScores,
    ScaleSchedule,
    SSCSettings,
    calibrate,
    choose_schedule,
    corrected,
    paired_fd_gains,
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
    best = slow.schedule.label()  # beyond the default margin: 2 SEs of the paired drops
    assert slow.gains[best] > 2 * slow.gain_se[best] > 0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_calibrate_keeps_the_identity_within_the_validation_noise(seed: int) -> None:
    """An exact field (q = R_exact / R_learned ~ 1 up to draw noise): no candidate beats the
    identity by two SEs of the paired FD drops, so the calibration keeps the model's field,
    with no ``min_gain`` at all."""
    gmm = random_gmm(4, 3, seed=5)
    ref = torch.as_tensor(gmm.sample(800, np.random.default_rng(seed))[0], dtype=torch.float64)
    s = SSCSettings(betas=(1.0, 3.0), nfe=10, n_samples=200, ratio_samples=200, seed=seed)
    cal = calibrate(_slow_field(gmm, 1.0), ref, s, exact=gmm.optimal_velocity)
    assert all(math.isfinite(se) and se >= 0 for se in cal.gain_se.values())
    assert all(cal.gains[k] <= 2 * cal.gain_se[k] for k in cal.gains)
    assert cal.is_identity
    assert cal.schedule is IDENTITY


def test_paired_fd_gains_against_a_direct_computation() -> None:
    """Every candidate is sampled from the same draws (one generator, drawn in turn) and the
    gain is the mean and SE of FD(identity) - FD(candidate) over the draws."""
    ref = torch.as_tensor(np.random.default_rng(3).normal(size=(300, 3)))
    s = SSCSettings(nfe=4, n_samples=80, seed=7, replicates=3)
    field = lambda x, t: -0.5 * x  # noqa: E731
    boost = ScaleSchedule(alpha=0.5, beta=1.0)
    paired = paired_fd_gains(field, ref, [IDENTITY, boost], s)
    gen = torch.Generator().manual_seed(7)
    direct = {"identity": [], boost.label(): []}
    for _ in range(3):
        z = torch.randn(80, 3, generator=gen, dtype=ref.dtype)
        for sched in (IDENTITY, boost):
            x = integrate(corrected(field, sched), z, steps=4)
            direct[sched.label()].append(frechet_distance(x.numpy(), ref.numpy()))
    for k, v in direct.items():
        assert paired.fds[k] == pytest.approx(v)
    d = np.subtract(direct["identity"], direct[boost.label()])
    assert paired.gains[boost.label()] == pytest.approx(d.mean())
    assert paired.gain_se[boost.label()] == pytest.approx(d.std(ddof=1) / math.sqrt(3))
    again = paired_fd_gains(
        field, ref, [IDENTITY, boost], s, reuse={"identity": paired.fds["identity"]}
    )
    assert again.fds[boost.label()] == pytest.approx(paired.fds[boost.label()])  # same draws


def _paired(fds: dict[str, list[float]]) -> tuple[PairedScores, list]:
    cands = [IDENTITY, *(ScaleSchedule(alpha=a, beta=1.0) for a in (0.1, 0.2)[: len(fds) - 1])]
    arrays = {c.label(): np.asarray(v) for c, v in zip(cands, fds.values(), strict=True)}
    base = arrays["identity"]
    gains = {c.label(): float((base - arrays[c.label()]).mean()) for c in cands[1:]}
    ses = {
        c.label(): float((base - arrays[c.label()]).std(ddof=1) / math.sqrt(len(base)))
        if len(base) > 1
        else math.nan
        for c in cands[1:]
    }
    return PairedScores(arrays, gains, ses), cands


def test_a_harmful_candidate_that_wins_one_draw_by_chance_is_not_kept() -> None:
    """The guard can fail: a candidate worse on average that beats the identity on its first
    draw (which a one-draw choice would keep) is rejected; a helpful one is kept, also when
    its gain is smaller than the spread of the FDs over draws (a paired comparison)."""
    s = SSCSettings(replicates=4)
    harmful, cands = _paired({"id": [10.0, 10.0, 10.0, 10.0], "h": [9.0, 12.0, 11.5, 12.0]})
    assert choose_schedule(harmful, cands, s) is IDENTITY
    one_draw = PairedScores({k: v[:1] for k, v in harmful.fds.items()}, {}, {})
    one = {k: float(v[0]) for k, v in one_draw.fds.items()}
    assert min(one, key=one.__getitem__) == cands[1].label()  # one draw alone would keep it
    ident = [10.0, 11.0, 9.0, 10.5]  # FD spread over draws ~0.9
    small, cands = _paired(
        {
            "id": ident,
            "c": [v - 0.3 + e for v, e in zip(ident, (0.02, -0.01, 0.0, -0.02), strict=True)],
        }
    )
    assert choose_schedule(small, cands, s) is cands[1]
    noisy, cands = _paired(
        {
            "id": ident,
            "c": [v - 0.3 + e for v, e in zip(ident, (0.5, -0.9, 0.6, -0.7), strict=True)],
        }
    )
    assert choose_schedule(noisy, cands, s) is IDENTITY  # same mean gain, within the noise
    both, cands = _paired(
        {"id": ident, "a": [v - 0.3 for v in ident], "b": [v - 1.0 for v in ident]}
    )
    assert choose_schedule(both, cands, s) is cands[2]  # the lowest FD among those kept


def test_the_margin_needs_replicates() -> None:
    with pytest.raises(ValueError, match="replicates must be >= 2"):
        SSCSettings(replicates=1)
    SSCSettings(replicates=1, noise_margin=0.0)  # no margin: one draw is allowed
    one, cands = _paired({"id": [10.0], "c": [9.0]})
    one = PairedScores(one.fds, one.gains, {cands[1].label(): math.nan})
    with pytest.raises(ValueError, match="noise margin cannot be estimated"):
        choose_schedule(one, cands, _margin_on())


def _margin_on() -> SSCSettings:
    s = SSCSettings(replicates=2)
    object.__setattr__(s, "replicates", 1)  # bypass validation: a hand-built PairedScores
    return s


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

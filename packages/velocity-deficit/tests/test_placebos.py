"""The FD floor from disjoint held-out sets, and the claims' placebos: SSC's random-size
procedure and MAFM's random targets (each a real variant that could pass its claim's rule)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.velocity_deficit.config import RunConfig
from icml26.velocity_deficit.diagnostics import RatioProfile
from icml26.velocity_deficit.evaluate import (
    Prepared,
    fd_floor,
    mafm_target,
    placebo_draw,
    random_ssc,
    random_ssc_choice,
    samples_per_cell,
)
from icml26.velocity_deficit.gmm import random_gmm
from icml26.velocity_deficit.metrics import frechet_distance
from icml26.velocity_deficit.ssc import (
    IDENTITY,
    Calibration,
    DeficitSchedule,
    SSCSettings,
    calibrate,
)


class _RawFD:
    """A stand-in classifier: FD on the raw rows, recording which rows each call saw."""

    def __init__(self) -> None:
        self.seen: list[np.ndarray] = []

    def fd(self, a: np.ndarray, b: np.ndarray) -> float:
        self.seen.append(a)
        return frechet_distance(a, b)


def _ds(n_val: int, dim: int = 3) -> SimpleNamespace:
    rng = np.random.default_rng(0)
    x_val = rng.normal(size=(n_val, dim)) + np.arange(n_val)[:, None] * 1e-6  # distinct rows
    return SimpleNamespace(name="toy", x_val=x_val, x_test=rng.normal(size=(300, dim)))


def test_fd_floor_uses_disjoint_sets_and_a_real_standard_error() -> None:
    ds, clf = _ds(410), _RawFD()
    out = fd_floor(clf, ds, 100)  # type: ignore[arg-type]
    assert out["fd_floor_sets.toy"] == 4.0  # 410 // 100; the last 10 rows unused
    rows = np.concatenate(clf.seen)
    assert len(rows) == 400
    assert len(np.unique(rows, axis=0)) == 400
    values = [frechet_distance(ds.x_val[i * 100 : (i + 1) * 100], ds.x_test) for i in range(4)]
    assert out["fd_floor.toy"] == pytest.approx(np.mean(values))
    assert out["fd_floor_sd.toy"] == pytest.approx(np.std(values, ddof=1))
    assert out["fd_floor_se.toy"] == pytest.approx(np.std(values, ddof=1) / 2)


def test_fd_floor_needs_two_sets() -> None:
    with pytest.raises(ValueError, match="at least two disjoint held-out sets of 100 rows"):
        fd_floor(_RawFD(), _ds(199), 100)  # type: ignore[arg-type]


def test_samples_per_cell_leaves_room_for_two_floor_sets() -> None:
    cfg = RunConfig()
    assert samples_per_cell(cfg, cfg.n_val) == cfg.n_samples
    assert samples_per_cell(cfg, 299) == 149  # a small real set: half its validation split


def _calibration(learned: tuple[float, ...], schedule: object = IDENTITY) -> Calibration:
    times = (0.0, 0.1)
    return Calibration(
        schedule,  # type: ignore[arg-type]
        {},
        RatioProfile(times, learned),
        RatioProfile(times, (0.7, 0.8)),
    )


def test_random_ssc_scales_the_measured_deficit() -> None:
    cal = _calibration((0.5, 0.4), DeficitSchedule(RatioProfile((0.0,), (2.0,)), beta=3.0))
    q = (0.7 / 0.5, 0.8 / 0.4)
    same = random_ssc(cal, 1.0, 3.0)
    assert same.gain.values == pytest.approx(q)  # u = 1: SSC's own gain
    assert same.beta == 3.0
    assert same.label() == "random_b3"
    assert random_ssc(cal, 2.0, 1.0).gain.values == pytest.approx([v**2 for v in q])
    assert float(random_ssc(cal, 0.0, 1.0)(torch.tensor(0.3))) == pytest.approx(1.0)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_placebo_draws_are_uniform_and_reproducible(seed: int) -> None:
    u = placebo_draw(seed, "ssc", "gmm16", "short", low=0.0, high=2.0)
    assert 0.0 <= u < 2.0  # SSC's placebo: random size, the right direction
    assert u == placebo_draw(seed, "ssc", "gmm16", "short", low=0.0, high=2.0)
    assert u != placebo_draw(seed, "ssc", "gmm16", "fit", low=0.0, high=2.0)  # own stream
    v = placebo_draw(seed, "mafm_random", "gmm16")
    assert -1.0 <= v < 1.0


def test_random_ssc_choice_goes_through_ssc_validation() -> None:
    """The placebo is SSC's procedure with a random size: on an exact field (nothing lacking)
    its candidates are scored on validation and, within the noise margin, the identity kept;
    on a 0.6x-speed field a random size near the measured one is chosen over the identity."""
    gmm = random_gmm(4, 3, seed=5)
    ref = torch.as_tensor(gmm.sample(800, np.random.default_rng(0))[0], dtype=torch.float64)
    s = SSCSettings(betas=(1.0, 3.0), nfe=10, n_samples=200, ratio_samples=200)

    def field(scale: float):
        return lambda x, t: scale * gmm.optimal_velocity(x, float(t))

    exact = calibrate(field(1.0), ref, s, exact=gmm.optimal_velocity)
    assert random_ssc_choice(exact, 1.7, field(1.0), ref, s, None) is IDENTITY
    slow = calibrate(field(0.6), ref, s, exact=gmm.optimal_velocity)
    chosen = random_ssc_choice(slow, 0.9, field(0.6), ref, s, None)
    assert chosen.label().startswith("random_b")
    assert chosen.gamma0 == pytest.approx((1 / 0.6) ** 0.9, rel=0.05)


def test_mafm_targets_and_their_placebos() -> None:
    exact = RatioProfile((0.0, 0.05, 0.1), (0.7, 0.72, 0.8))
    prep = Prepared(SimpleNamespace(name="gmm256"), None, exact, 10)  # type: ignore[arg-type]
    assert mafm_target(prep, None, 0) is None
    assert mafm_target(prep, "mafm_paper", 0) is None  # the paper's rho = 1
    assert mafm_target(prep, "mafm", 0) is exact
    m = abs(math.log(0.7))
    for seed in range(20):
        rand = mafm_target(prep, "mafm_random", seed)
        assert isinstance(rand, RatioProfile)
        assert rand.times == exact.times
        c = rand.values[0] / 0.7
        assert np.allclose(np.array(rand.values) / np.array(exact.values), c)  # one level
        assert math.exp(-m) - 1e-9 <= c <= math.exp(m) + 1e-9
        const = mafm_target(prep, "mafm_paper_random", seed)
        assert isinstance(const, float)
        assert 0.7**2 - 1e-9 <= const <= 1.0 + 1e-9
    levels = {mafm_target(prep, "mafm_paper_random", s) for s in range(20)}
    assert len(levels) == 20  # random per seed, not a fixed offset

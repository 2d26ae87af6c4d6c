"""Delineation recovers the simulated features; the real pyhrv ECG is read and checked."""

from __future__ import annotations

import numpy as np
import pytest

from icml26.ecg_r1.delineate import (
    DelineationError,
    load_pyhrv_sample,
    measure_features,
    real_ecg_check,
)
from icml26.ecg_r1.labels import TOLERANCES
from icml26.ecg_r1.wavemodel import sample_params, simulate


def test_hr_and_qrs_recovered_within_tolerance() -> None:
    """On 12 records (normal conduction and bundle-branch block mixed): HR within 5 bpm and
    QRS within 20 ms for most records, and the median errors well inside the tolerances."""
    rng = np.random.default_rng(3)
    c = simulate(sample_params(rng, 12, abnormal=0.5), rng)
    m = [measure_features(x, c.fs) for x in c.signals]
    hr = np.array([abs(a.hr - b.hr) for a, b in zip(m, c.features, strict=True)])
    qrs = np.array([abs(a.qrs - b.qrs) for a, b in zip(m, c.features, strict=True)])
    assert np.median(hr) <= TOLERANCES["hr"]
    assert np.mean(hr <= TOLERANCES["hr"]) >= 0.75
    assert np.median(qrs) <= TOLERANCES["qrs"]
    assert np.mean(qrs <= TOLERANCES["qrs"]) >= 0.6


def test_flat_record_fails_clearly() -> None:
    with pytest.raises(DelineationError, match="flat record"):
        measure_features(
            np.zeros((12, 2000)) + 1e-3 * np.random.default_rng(0).standard_normal((12, 2000)),
            200.0,
        )


def test_real_pyhrv_ecg() -> None:
    x, fs = load_pyhrv_sample()
    assert fs == 1000.0
    assert 20 < len(x) / fs < 25
    assert np.abs(x).max() < 5
    check = real_ecg_check()
    assert check.matched_frac > 0.9
    assert check.hr_error < TOLERANCES["hr"]

"""The wave model: lead relations, parameters recovered on the clean template, label mix."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from icml26.ecg_r1.labels import LABELS, LEADS
from icml26.ecg_r1.wavemodel import sample_params, simulate


@pytest.fixture(scope="module")
def clean() -> tuple:
    rng = np.random.default_rng(0)
    p = dataclasses.replace(sample_params(rng, 64), st=np.zeros(64))  # ST is added per lead
    return p, simulate(p, rng, noise_mv=0.0, wander_mv=0.0)


def test_einthoven_and_goldberger_hold(clean: tuple) -> None:
    p, c = clean
    x = c.signals[~p.af].astype(float)  # AF records carry lead-weighted fibrillatory waves
    i, ii, iii = (x[:, LEADS.index(k)] for k in ("I", "II", "III"))
    avr, avl, avf = (x[:, LEADS.index(k)] for k in ("aVR", "aVL", "aVF"))
    np.testing.assert_allclose(iii, ii - i, atol=1e-5)
    np.testing.assert_allclose(avr + avl + avf, 0.0, atol=1e-5)


def test_template_features_match_the_parameters(clean: tuple) -> None:
    p, c = clean
    axis = np.array([f.axis for f in c.features])
    amp = np.array([f.qrs_amp for f in c.features])
    d = np.abs((axis - p.axis + 180) % 360 - 180)
    assert d.max() < 2.0
    np.testing.assert_allclose(amp, p.qrs_amp, rtol=0.02)
    np.testing.assert_allclose([f.qrs for f in c.features], 1000 * p.qrs)
    v1 = np.array([f.v1_terminal for f in c.features])
    assert np.all(v1[p.bbb == 1] == 1)
    assert np.all(v1[p.bbb == 2] == -1)
    hr = np.array([f.hr for f in c.features])
    sinus = ~p.af  # AF draws irregular RR around the target rate
    assert np.all(np.abs(hr - p.hr)[sinus] / p.hr[sinus] < 0.1)


def test_labels_cover_the_set_and_co_occur() -> None:
    rng = np.random.default_rng(1)
    c = simulate(sample_params(rng, 300), rng)
    seen = {lab for ls in c.labels for lab in ls}
    assert seen == set(LABELS)
    assert np.mean([len(ls) >= 2 for ls in c.labels]) > 0.5
    assert c.signals.shape == (300, 12, 2000)
    assert np.isfinite(c.signals).all()


def test_bad_sampling_settings_fail() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="fs > 0"):
        simulate(sample_params(rng, 2), rng, fs=0)

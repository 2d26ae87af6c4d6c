"""The control fronts: settings where the divergences differ in shape, and their placebo."""

from __future__ import annotations

import numpy as np
import pytest

from icml26.transport_kl.control import penalty_matrix
from icml26.transport_kl.pareto import (
    Front,
    FrontSettings,
    compare_fronts,
    draw_system,
    front,
    front_study,
)


def test_anisotropic_noise_makes_kl_a_different_shape() -> None:
    s = FrontSettings()
    sys_ = draw_system(np.random.default_rng(0), s)
    r_kl = np.asarray(penalty_matrix("kl", sys_.b, sys_.anisotropic))
    r_wkl = np.asarray(penalty_matrix("wkl", sys_.b, sys_.anisotropic))
    assert np.linalg.cond(r_kl) > 100
    # no scalar c makes c * R_kl equal R_wkl
    c = np.trace(r_wkl) / np.trace(r_kl)
    assert np.linalg.norm(c * r_kl - r_wkl) > 0.1 * np.linalg.norm(r_wkl)
    # isotropic noise: R_kl is exactly a multiple of R_wkl
    r_iso = np.asarray(penalty_matrix("kl", sys_.b, sys_.isotropic))
    c = np.trace(r_wkl) / np.trace(r_iso)
    np.testing.assert_allclose(c * r_iso, r_wkl, rtol=1e-10)


def test_fronts_obey_lqr_optimality_and_the_placebo() -> None:
    out = front_study(FrontSettings(betas=21, levels=20), np.random.default_rng(1), 3)
    m = out["metrics"]
    for setting in ("anisotropic", "isotropic"):
        for div in ("kl", "wkl", "kwkl"):
            assert m[f"front.{setting}.{div}.oracle_gap"] >= -1e-3
        assert abs(m[f"front.{setting}.lqr.oracle_gap"]) < 1e-12
    assert abs(m["front.isotropic.wkl.gap"]) < 1e-2
    assert m["front.anisotropic.kl.gap"] == 0


def test_front_costs_move_the_right_way_with_beta() -> None:
    s = FrontSettings(betas=9)
    sys_ = draw_system(np.random.default_rng(2), s)
    f = front(sys_, sys_.anisotropic, "wkl", s)
    assert np.all(np.diff(f.energy) < 0)  # a heavier penalty spends less energy
    assert np.all(np.diff(f.state) > 0)  # and pays in state cost


def test_compare_fronts_needs_overlap() -> None:
    a = Front(np.ones(3), np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 1.0]))
    b = Front(np.ones(3), np.array([1.0, 2.0, 3.0]), np.array([30.0, 20.0, 10.0]))
    with pytest.raises(ValueError, match="share no range"):
        compare_fronts(a, b, 5)
    assert compare_fronts(a, a, 5) == (0.0, 0.0)


def test_bad_front_settings() -> None:
    with pytest.raises(ValueError, match="axes must be >= 2"):
        FrontSettings(axes=1)
    with pytest.raises(ValueError, match="kappa"):
        FrontSettings(kappa=2.0)

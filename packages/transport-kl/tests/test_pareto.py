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


def test_fronts_obey_lqr_optimality_on_the_grid() -> None:
    s = FrontSettings(betas=21, levels=20, kappas=(1e-3, 1.0), spreads=(1.0, 3.0))
    m = front_study(s, np.random.default_rng(1), 3)["metrics"]
    for cell in ("kappa0p001.spread1", "kappa0p001.spread3", "kappa1.spread1", "kappa1.spread3"):
        for div in ("kl", "wkl", "kwkl"):
            assert m[f"front.{cell}.{div}.oracle_gap"] >= -1e-3
        assert abs(m[f"front.{cell}.lqr.oracle_gap"]) < 1e-12
        assert m[f"front.{cell}.kl.gap"] == 0
        assert m[f"front.{cell}.wkl.upper"] == pytest.approx(
            m[f"front.{cell}.wkl.gap"] + 2 * m[f"front.{cell}.wkl.gap_se"]
        )
    # the two corners the evaluation decides: equal gains make WKL plain LQR, isotropic
    # actuator noise (kappa = 1) makes KL plain LQR
    assert abs(m["front.kappa0p001.spread1.wkl.oracle_gap"]) < 1e-6
    assert abs(m["front.kappa1.spread3.kl.oracle_gap"]) < 1e-4
    assert m["cond_R.kappa1.spread3.kl"] == pytest.approx(1.0, rel=1e-3)


def test_isotropic_noise_makes_kl_wkl_with_another_beta() -> None:
    """The former placebo: with noise rho' I, KL with beta is WKL with beta / rho' (same front)."""
    s = FrontSettings(betas=21, levels=20)
    sys_ = draw_system(np.random.default_rng(3), s)
    gap, worst = compare_fronts(
        front(sys_, sys_.isotropic, "wkl", s), front(sys_, sys_.isotropic, "kl", s), 20
    )
    assert abs(gap) < 1e-2
    assert abs(worst) < 5e-2


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
    with pytest.raises(ValueError, match="kappa or an entry of kappas"):
        FrontSettings(kappas=(0.0, 1.0))
    with pytest.raises(ValueError, match="spreads"):
        FrontSettings(spreads=(0.5,))

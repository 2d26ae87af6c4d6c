"""Metric formulas against hand computations."""

from __future__ import annotations

import numpy as np
import pytest

from icml26.ro_hnn.evaluate import energy_drift, error_curve, learned_energy_drift, rollout_error


def test_rollout_error_closed_form() -> None:
    ref = np.ones((3, 11, 4))
    pred = ref.copy()
    assert rollout_error(pred, ref, np.zeros(4), 10) == 0.0
    pred = ref * 1.1  # 10% everywhere
    assert rollout_error(pred, ref, np.zeros(4), 5) == pytest.approx(0.1)
    pred[0, 3] = np.nan  # one trajectory diverges: counted as infinite, the median is unaffected
    assert rollout_error(pred, ref, np.zeros(4), 5) == pytest.approx(0.1)
    pred[1, 3] = np.inf
    assert rollout_error(pred, ref, np.zeros(4), 5) == np.inf
    with pytest.raises(ValueError, match="steps"):
        rollout_error(ref, ref, np.zeros(4), 11)
    with pytest.raises(ValueError, match=r"shape|must both"):
        rollout_error(ref[:, :5], ref, np.zeros(4), 3)


def test_error_curve_and_energy_drift() -> None:
    ref = np.zeros((2, 5, 2))
    ref[..., 0] = 2.0
    pred = ref.copy()
    pred[:, 4, 0] = 3.0
    np.testing.assert_allclose(error_curve(pred, ref, np.zeros(2)), [0, 0, 0, 0, 0.5])
    h_ref = np.full((2, 5), 2.0)
    h_pred = h_ref.copy()
    h_pred[0, 2] = 2.2
    h_pred[1, 3] = 1.6
    assert energy_drift(h_pred, h_ref) == pytest.approx(0.15)  # median of 0.1 and 0.2


def test_learned_energy_drift_against_hand_values() -> None:
    # energies above the floor 1.0: 2.0 and 4.0 at t = 0
    h = np.array([[3.0, 3.2, 2.9, 3.0], [5.0, 4.0, 3.0, 2.0]])
    # conservative: |change| / (H(z_0) - floor): 0.2 / 2 = 0.1 and 3 / 4 = 0.75; median 0.425
    assert learned_energy_drift(h, 1.0, damped=False) == pytest.approx(0.425)
    # damped: only energy gained counts: 0.2 / 2 = 0.1 and 0 (the second only loses energy)
    assert learned_energy_drift(h, 1.0, damped=True) == pytest.approx(0.05)
    h[1, 2] = np.nan
    assert learned_energy_drift(h, 1.0, damped=True) == np.inf  # median of 0.1 and inf
    with pytest.raises(ValueError, match="trajectories, time"):
        learned_energy_drift(h[0], 1.0, damped=False)

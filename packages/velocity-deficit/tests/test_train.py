"""Training recovers the known optimal velocity; checkpoints resume exactly; model input checks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from icml26.shared import Checkpoints
from icml26.velocity_deficit.gmm import gaussian_optimal_velocity
from icml26.velocity_deficit.model import VelocityMLP
from icml26.velocity_deficit.train import TrainSettings, train_velocity_model


def test_trained_model_matches_gaussian_optimal_velocity() -> None:
    rng = np.random.default_rng(0)
    mean, std = np.array([1.0, -1.0], dtype=np.float32), 0.5
    x = mean + std * rng.standard_normal((4000, 2)).astype(np.float32)
    model, losses = train_velocity_model(
        x,
        None,
        TrainSettings(steps=600, batch_size=256, width=64, depth=1, lr=3e-3, ema_decay=0.99),
        seed=0,
    )
    assert losses[-1] < losses[0]
    for t in (0.2, 0.5, 0.8):
        # probe where the model was trained: x_t drawn from the path's marginal p_t
        x1 = torch.tensor(mean) + std * torch.randn(500, 2)
        probe = (1 - t) * torch.randn(500, 2) + t * x1
        with torch.no_grad():
            v = model(probe, torch.tensor(t))
        exact = gaussian_optimal_velocity(probe, t, torch.tensor(mean), std)
        rel = ((v - exact).norm(dim=1).mean() / exact.norm(dim=1).mean()).item()
        assert rel < 0.1, (t, rel)


def test_checkpoint_resume_is_exact(tmp_path) -> None:
    x = np.random.default_rng(0).normal(size=(200, 3)).astype(np.float32)
    s20 = TrainSettings(steps=20, batch_size=16, width=8, depth=1, checkpoint_every=10)
    straight, _ = train_velocity_model(x, None, s20, seed=1)
    ck = Checkpoints(tmp_path / "ck")
    train_velocity_model(x, None, s20, seed=1, checkpoints=ck)
    assert ck.steps() == [10, 20]
    ck.path(20).unlink()  # as if killed after step 10
    resumed, _ = train_velocity_model(x, None, s20, seed=1, checkpoints=ck)
    for a, b in zip(straight.state_dict().values(), resumed.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b)
    assert ck.steps() == [10, 20]


def test_mafm_with_the_exact_target_trains() -> None:
    """MAFM with rho(t) = R_exact(t) (a RatioProfile) runs through the trainer."""
    from icml26.velocity_deficit.diagnostics import RatioProfile

    x = np.random.default_rng(0).normal(size=(100, 3)).astype(np.float32)
    target = RatioProfile((0.0, 0.5), (0.6, 0.8))
    s = TrainSettings(
        steps=60, batch_size=16, width=8, depth=1, objective="mafm", mafm_target=target
    )
    _, losses = train_velocity_model(x, None, s)
    assert losses
    assert all(np.isfinite(losses))


def test_ot_coupling_and_mafm_train_and_conditional() -> None:
    x = np.random.default_rng(0).normal(size=(100, 3)).astype(np.float32)
    y = np.arange(100) % 4
    s = TrainSettings(steps=5, batch_size=16, width=8, depth=1, coupling="ot", objective="mafm")
    model, _ = train_velocity_model(x, y, s)
    assert model.n_classes == 4
    with pytest.raises(ValueError, match="pass labels"):
        model(torch.zeros(2, 3), 0.5)
    assert model(torch.zeros(2, 3), 0.5, torch.tensor([0, 3])).shape == (2, 3)


def test_bad_training_input() -> None:
    with pytest.raises(ValueError, match="NaN"):
        train_velocity_model(np.full((10, 2), np.nan), None, TrainSettings(steps=1))
    with pytest.raises(ValueError, match="3 labels for 10"):
        train_velocity_model(np.zeros((10, 2)), np.zeros(3), TrainSettings(steps=1))
    with pytest.raises(ValueError, match="steps must be >= 1"):
        TrainSettings(steps=0)
    with pytest.raises(ValueError, match="objective"):
        TrainSettings(objective="l1")  # type: ignore[arg-type]
    m = VelocityMLP(4, width=8, depth=1)
    with pytest.raises(ValueError, match=r"shape \(n, 4\)"):
        m(torch.zeros(2, 5), 0.1)
    with pytest.raises(ValueError, match="t must be a scalar"):
        m(torch.zeros(2, 4), torch.zeros(3))

"""The RMFT loop on a tiny model: fine-tuning lowers the loss on the selected data; the
selected data are the lowest-regret rollouts."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from icml26.rmft import rmft as rmft_mod
from icml26.rmft.envs import parse_env
from icml26.rmft.model import ArmTransformer, ModelConfig
from icml26.rmft.rmft import RMFTSettings, numeric_rmft_iteration, weak_pretraining
from icml26.rmft.rollouts import Trajectories


def _tiny() -> ArmTransformer:
    torch.manual_seed(0)
    return ArmTransformer(ModelConfig(d_model=16, n_layers=1, n_heads=2))


def test_one_rmft_iteration_strictly_lowers_loss_on_selected_data() -> None:
    model = _tiny()
    spec = parse_env("bernoulli_k3_t10")
    settings = RMFTSettings(
        n_instances=8, rollouts_per_instance=4, keep_per_instance=1, steps=10, batch_size=8, lr=1e-3
    )
    stats = numeric_rmft_iteration(model, spec, settings, np.random.default_rng(0))
    assert stats.loss_after < stats.loss_before
    assert stats.selected_regret <= stats.rollout_regret
    assert stats.selected_played_regret == stats.selected_regret  # no invalid actions


def test_iteration_trains_on_exactly_the_selected_rollouts(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Trajectories] = {}
    real_sft_data = rmft_mod.sft_data

    def spy(trajs: Trajectories) -> object:
        seen["kept"] = trajs
        return real_sft_data(trajs)

    real_rollout = rmft_mod.rollout

    def spy_rollout(policy: object, inst: object, rng: np.random.Generator) -> Trajectories:
        seen["all"] = real_rollout(policy, inst, rng)  # type: ignore[arg-type]
        return seen["all"]

    monkeypatch.setattr(rmft_mod, "sft_data", spy)
    monkeypatch.setattr(rmft_mod, "rollout", spy_rollout)
    settings = RMFTSettings(
        n_instances=5, rollouts_per_instance=4, keep_per_instance=2, steps=1, batch_size=4
    )
    numeric_rmft_iteration(
        _tiny(), parse_env("bernoulli_k3_t8"), settings, np.random.default_rng(1)
    )
    final = seen["all"].final_regret.reshape(5, 4)
    kept = seen["kept"].final_regret.reshape(5, 2)
    np.testing.assert_allclose(np.sort(kept, axis=1), np.sort(final, axis=1)[:, :2])


def test_weak_pretraining_lowers_its_loss() -> None:
    losses = weak_pretraining(
        _tiny(),
        parse_env("bernoulli_k3_t10"),
        n_trajectories=32,
        greedy_fraction=0.5,
        steps=30,
        lr=3e-3,
        batch_size=16,
        rng=np.random.default_rng(0),
    )
    assert np.mean(losses[-5:]) < np.mean(losses[:5])
    with pytest.raises(ValueError, match="greedy_fraction"):
        weak_pretraining(
            _tiny(),
            parse_env("bernoulli_k3_t4"),
            n_trajectories=4,
            greedy_fraction=1.5,
            steps=1,
            lr=1e-3,
            batch_size=2,
            rng=np.random.default_rng(0),
        )


def test_settings_are_validated() -> None:
    with pytest.raises(ValueError, match="keep_per_instance"):
        RMFTSettings(rollouts_per_instance=2, keep_per_instance=3)
    with pytest.raises(ValueError, match="temperature"):
        RMFTSettings(temperature=0)
    for field in ("temperature", "lr"):  # NaN and non-positive values, named (review38r #7)
        for bad in (float("nan"), 0.0, -1.0):
            with pytest.raises(ValueError, match=field):
                RMFTSettings(**{field: bad})

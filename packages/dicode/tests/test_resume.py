"""A unit killed after a checkpoint resumes to the same result as an uninterrupted one."""

from __future__ import annotations

from pathlib import Path

from icml26.dicode.config import RunConfig
from icml26.dicode.dreamer import MutationDreamer
from icml26.dicode.ppo import PPO
from icml26.dicode.training import Evaluator, ppo_settings, train_unit


def test_a_unit_resumes_from_its_checkpoint_to_the_same_result(
    tmp_path: Path, small_ppo: PPO
) -> None:
    config = RunConfig(
        n_envs=8,
        rollout=16,
        updates_per_chunk=2,
        hidden=16,
        envs_per_slot=2,
        total_steps=3 * 8 * 16 * 2,  # 3 rounds; checkpoints after rounds 1 and 2
        children_per_round=2,
        eval_every=1,
        eval_episodes=4,
        final_eval_episodes=8,
        checkpoint_every=1,
    )
    ppo = small_ppo
    assert ppo.settings == ppo_settings(config)
    evaluator = Evaluator(ppo, 4)
    folder = tmp_path / "ckpt"
    whole = train_unit("dicode", 3, config, ppo, evaluator, MutationDreamer(), folder)
    assert sorted(p.name for p in folder.glob("python_*.pkl")) == ["python_000002.pkl"]
    # a second call finds the round-2 checkpoint: it trains only the last round
    rounds: list[int] = []
    resumed = train_unit(
        "dicode",
        3,
        config,
        ppo,
        evaluator,
        MutationDreamer(),
        folder,
        on_round=lambda r, *_: rounds.append(r),
    )
    assert rounds == [2]
    for key in ("returns", "curve_steps", "curve_return", "achievement_success", "archive"):
        assert resumed[key] == whole[key], key
    assert resumed["dreamed"] == whole["dreamed"]

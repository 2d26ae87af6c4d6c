"""``icml26 bench syvla``: environment steps per second, policy forward latency, PPO update time.

Wall-clock timings: on a shared machine they are inflated by the load.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from icml26.shared import rng_for, seed_for
from icml26.syvla.config import BenchConfig, RunConfig
from icml26.syvla.data import VecEnv
from icml26.syvla.model import ModelConfig, SyVLA
from icml26.syvla.ppo import RLConfig, collect_rollout, ppo_update
from icml26.syvla.steps import text_bank

__all__ = ["bench"]


def bench(cfg: BenchConfig, run_dir: Any) -> dict[str, float]:
    """Environment steps per second, policy forward latency, PPO update time.

    Args:
        cfg: the bench's config.
        run_dir: the run folder.

    Returns:
        The flat timing metrics.
    """
    run_dir.update_env(device=cfg.device)
    out: dict[str, float] = {}
    env = VecEnv(cfg.n_envs, "train", 13, seed=cfg.seed)
    env.reset()
    rng = rng_for(cfg.seed, "bench", "actions")
    start = time.perf_counter()
    for _ in range(cfg.env_steps):
        env.step(rng.integers(0, 3, size=env.n))
    out["env_steps_per_s"] = cfg.env_steps * cfg.n_envs / (time.perf_counter() - start)
    bank = text_bank(RunConfig(device=cfg.device))
    model = SyVLA(ModelConfig()).to(cfg.device).eval()
    vec = torch.as_tensor(bank.vectors, device=cfg.device)
    for batch in (1, cfg.forward_batch):
        views = torch.as_tensor(np.repeat(env.views[:1], batch, 0), device=cfg.device)
        text = vec[bank.ids([env.missions[0]] * batch)]
        with torch.no_grad():
            model(views, text)
            if cfg.device.startswith("cuda"):
                torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(cfg.forward_reps):
                model(views, text)
            if cfg.device.startswith("cuda"):
                torch.cuda.synchronize()
        tag = "b1" if batch == 1 else "batch"
        out[f"forward_latency_ms.{tag}"] = (time.perf_counter() - start) / cfg.forward_reps * 1e3
    out["forward_batch"] = float(cfg.forward_batch)
    rl = RLConfig(n_envs=cfg.n_envs, n_steps=32, guided=False, vqa_cotrain=True)
    gen = torch.Generator().manual_seed(seed_for(cfg.seed, "bench", "policy"))
    opt = torch.optim.Adam(model.parameters(), lr=rl.lr)
    times = []
    for u in range(cfg.ppo_updates):
        roll = collect_rollout(model, env, bank, rl, gen)
        start = time.perf_counter()
        ppo_update(model, opt, roll, rl, bank, buffer=None, gen=gen, seed=u)
        times.append(time.perf_counter() - start)
    out["ppo_update_s"] = float(np.mean(times))
    out["ppo_update_samples"] = float(rl.n_envs * rl.n_steps)
    return out

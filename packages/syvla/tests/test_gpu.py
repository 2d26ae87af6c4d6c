"""Device consistency: the model, a rollout and a PPO update on CUDA stay on CUDA and agree
with the CPU."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from icml26.syvla.data import TextBank, VecEnv, all_instructions
from icml26.syvla.model import ModelConfig, SyVLA
from icml26.syvla.ppo import RLConfig, collect_rollout, ppo_update
from icml26.syvla.vqa import question_texts


class _RandomEncoder:
    dim = 384

    def encode(self, texts: list[str]) -> np.ndarray:
        rng = np.random.default_rng(0)
        return rng.normal(size=(len(texts), 384)).astype(np.float32)


@pytest.mark.gpu
def test_forward_on_cuda_matches_cpu(cuda_device: Any) -> None:
    torch.manual_seed(0)
    model = SyVLA(ModelConfig())
    views = torch.randint(0, 3, (8, 13, 13, 3))
    text = torch.randn(8, 384)
    ref = model(views, text)
    out = model.to(cuda_device)(views.to(cuda_device), text.to(cuda_device))
    assert out.logits.device.type == "cuda"
    assert out.key.device.type == "cuda"
    assert torch.allclose(out.logits.cpu(), ref.logits, atol=1e-4)


@pytest.mark.gpu
def test_rollout_and_ppo_update_on_cuda(cuda_device: Any) -> None:
    torch.manual_seed(0)
    bank = TextBank(_RandomEncoder(), texts=all_instructions() + question_texts())  # type: ignore[arg-type]
    model = SyVLA(ModelConfig()).to(cuda_device)
    cfg = RLConfig(n_envs=4, n_steps=8, minibatch=16, guided=False, vqa_cotrain=True, vqa_batch=8)
    env = VecEnv(4, "train", 13, seed=0)
    env.reset()
    gen = torch.Generator().manual_seed(0)
    roll = collect_rollout(model, env, bank, cfg, gen)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    stats = ppo_update(model, opt, roll, cfg, bank, buffer=None, gen=gen, seed=0)
    assert np.isfinite(stats.kl)
    assert all(p.device.type == "cuda" for p in model.parameters())

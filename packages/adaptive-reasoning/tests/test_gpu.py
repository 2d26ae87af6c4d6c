"""Device consistency on CUDA (skipped without one; ``nox -s gpu`` runs them on a GPU
machine), and the ``device`` setting (runs everywhere).

The same tiny model on the CPU and on CUDA: reply log-probabilities and the mode distribution
live on CUDA and equal the CPU's to ``rtol=1e-4``; a GRPO step on CUDA keeps every parameter
and gradient there. Greedy replies are compared through their CPU re-scoring, not token by
token (a near tie could flip).
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from icml26.adaptive_reasoning.config import AdaptiveConfig
from icml26.adaptive_reasoning.grpo import ModeGRPOSettings, train_mode_grpo
from icml26.adaptive_reasoning.models import ModelSpec, build_model
from icml26.adaptive_reasoning.policy import Policy
from icml26.adaptive_reasoning.tasks import make_split

gpu = pytest.mark.gpu
no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the machine without CUDA")


def _pair(device: torch.device) -> tuple[Policy, Policy, list]:
    model, tok = build_model(ModelSpec(hidden_size=32, num_layers=1, vocab_size=500), seed=0)
    pool = make_split("complex_verbose", 4, np.random.default_rng(0))
    return Policy(model, tok), Policy(copy.deepcopy(model).to(device), tok), pool


@gpu
def test_logps_and_mode_probability_on_cuda_match_cpu(cuda_device: torch.device) -> None:
    cpu, dev, pool = _pair(cuda_device)
    replies = dev.generate(pool, force="think", max_new_tokens=8)
    prompts = [cpu.prompt_ids(p) for p in pool]
    with torch.no_grad():
        want, mask_c, mode_c = cpu.token_logps(prompts, [r.ids for r in replies])
        got, _mask_g, mode_g = dev.token_logps(prompts, [r.ids for r in replies])
    assert got.device.type == "cuda"
    assert mode_g.device.type == "cuda"
    torch.testing.assert_close(got.cpu() * mask_c, want * mask_c, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(mode_g.cpu(), mode_c, rtol=1e-4, atol=1e-4)
    assert np.allclose(dev.think_probability(pool), cpu.think_probability(pool), atol=1e-4)


@gpu
def test_grpo_step_stays_on_cuda(cuda_device: torch.device) -> None:
    _, dev, pool = _pair(cuda_device)
    settings = ModeGRPOSettings(steps=1, prompts_per_step=2, num_generations=4, max_new_tokens=6)
    history = train_mode_grpo(dev, pool, settings)
    assert len(history) == 1
    for p in dev.model.parameters():
        assert p.device.type == "cuda"
        assert p.grad is None or p.grad.device.type == "cuda"


@no_cuda
def test_cuda_device_setting_fails_clearly_without_cuda() -> None:
    with pytest.raises(ValueError, match="no CUDA device"):
        AdaptiveConfig(device="cuda")

"""Device consistency of the numerical Transformer (``model.py``) on CUDA (skipped without one;
``nox -s gpu`` runs them on a GPU machine), and the ``device`` setting (runs everywhere).

The same weights and tokens on the CPU and on CUDA: logits and the key/value cache must live
on CUDA and equal the CPU's to ``rtol=1e-4`` (float32, attention summed in different orders).
Rollouts sample from NumPy generators on host copies of the logits, so a CUDA rollout is
checked by re-scoring its own trajectories on the CPU (teacher forcing), not by comparing
sampled actions, which a near tie in a softmax could flip.

The LLM path (``tiny_lm``, SFT) is being moved onto the shared modules by another change; its
GPU tests belong with that change.
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import torch

from icml26.rmft.config import RunConfig
from icml26.rmft.envs import sample_instances
from icml26.rmft.model import (
    N_FEATURES,
    ArmTransformer,
    ModelConfig,
    TransformerPolicy,
    trajectory_features,
)
from icml26.rmft.rollouts import rollout
from icml26.shared.cli import main

gpu = pytest.mark.gpu
no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the machine without CUDA")
RTOL = 1e-4


def _on(t: torch.Tensor, device: torch.device) -> None:
    assert t.device.type == device.type, f"tensor on {t.device}, expected {device}"


def _close(a: torch.Tensor, b: torch.Tensor, rtol: float = RTOL) -> None:
    a, b = a.detach().cpu().double(), b.detach().double()
    torch.testing.assert_close(a, b, rtol=rtol, atol=rtol * (float(b.abs().max()) or 1.0))


def _pair(device: torch.device) -> tuple[ArmTransformer, ArmTransformer]:
    torch.manual_seed(0)
    cpu = ArmTransformer(ModelConfig(d_model=16, n_layers=2, n_heads=2)).eval()
    return cpu, copy.deepcopy(cpu).to(device)


def _tokens(n: int, length: int, k: int, seed: int = 0) -> torch.Tensor:
    return torch.rand(n, length, k, N_FEATURES, generator=torch.Generator().manual_seed(seed))


@gpu
def test_forward_and_cache_on_cuda_match_cpu(cuda_device: torch.device) -> None:
    cpu, dev = _pair(cuda_device)
    x = _tokens(3, 9, 4)
    with torch.no_grad():
        want, _ = cpu(x)
        full, cache = dev(x.to(cuda_device))
        _on(full, cuda_device)
        for keys, values in cache:
            _on(keys, cuda_device)
            _on(values, cuda_device)
        _close(full, want)
        steps, c = [], None  # incremental decoding on CUDA = the full pass on the CPU
        for t in range(9):
            logits, c = dev(x[:, t : t + 1].to(cuda_device), c)
            steps.append(logits)
        _close(torch.cat(steps, dim=1), want)


@gpu
def test_teacher_forcing_gradients_on_cuda_match_cpu(cuda_device: torch.device) -> None:
    """One cross-entropy backward pass (what distillation runs) gives the CPU's gradients."""
    cpu, dev = _pair(cuda_device)
    inst = sample_instances("bernoulli_k3_t6", 4, np.random.default_rng(0))
    trajs = rollout(TransformerPolicy(cpu), inst, np.random.default_rng(1))
    x = torch.from_numpy(trajectory_features(trajs.actions, trajs.rewards, 3))
    target = torch.from_numpy(trajs.actions)
    for model, device in ((cpu, torch.device("cpu")), (dev, cuda_device)):
        model.zero_grad()
        logits, _ = model(x.to(device))
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, 3), target.to(device).reshape(-1)
        )
        loss.backward()
    # One tolerance scale for every parameter: some gradients are zero in exact arithmetic
    # (a key bias cancels in the softmax) and float32 leaves ~1e-9 there on either device;
    # scaling by their own size would compare rounding noise (it did, on an H200).
    scale = max(float(p.grad.abs().max()) for p in cpu.parameters() if p.grad is not None)
    for pc, pg in zip(cpu.parameters(), dev.parameters(), strict=True):
        assert pg.grad is not None
        assert pc.grad is not None
        _on(pg.grad, cuda_device)
        a, b = pg.grad.detach().cpu().double(), pc.grad.detach().double()
        # a gradient sums many float32 products: 1e-3 of the largest gradient, per entry
        torch.testing.assert_close(a, b, rtol=1e-3, atol=1e-3 * scale)


@gpu
@pytest.mark.parametrize("env", ["bernoulli_k5_t12", "experts_k4_t7"])
@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_rollout_on_cuda_is_the_cpu_policy(
    env: str, temperature: float, cuda_device: torch.device
) -> None:
    cpu, dev = _pair(cuda_device)
    inst = sample_instances(env, 5, np.random.default_rng(0))
    k = inst.spec.n_arms
    policy = TransformerPolicy(dev, temperature=temperature, device=cuda_device)
    trajs = rollout(policy, inst, np.random.default_rng(1))
    assert trajs.actions.shape == (5, inst.spec.horizon)
    full = inst.rewards if inst.spec.full_information else None
    x = torch.from_numpy(trajectory_features(trajs.actions, trajs.rewards, k, full))
    with torch.no_grad():
        logits_gpu, _ = dev(x.to(cuda_device))
        logits_cpu, _ = cpu(x)
    _close(logits_gpu, logits_cpu)
    if temperature == 0:  # greedy: every action is the argmax of the CPU's logits (or a tie)
        best = logits_cpu.max(dim=2).values
        chosen = logits_cpu.gather(2, torch.from_numpy(trajs.actions)[..., None])[..., 0]
        assert bool(((best - chosen) <= 1e-4 * (1 + best.abs())).all())


@gpu
def test_config_accepts_cuda(cuda_device: torch.device) -> None:
    assert RunConfig(device="cuda").device == "cuda"


@no_cuda
def test_cuda_without_cuda_is_a_usage_error_before_anything_is_written(tmp_path: Path) -> None:
    out = tmp_path / "run"
    code = main(["run", "rmft", "--profile", "smoke", "--set", "device=cuda", "--out", str(out)])
    assert code == 2
    assert not out.exists()

"""Device consistency: the same estimators on CUDA give CUDA-side work and the CPU's answers."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from icml26.nppr.baselines.attacks import pgd_ar
from icml26.nppr.baselines.noise import estimate_fixed_pr
from icml26.nppr.fit import FitConfig, estimate_nppr, fit_nppr
from icml26.nppr.gmm import PerturbationGMM

from .conftest import exact_linear_robust


@pytest.mark.gpu
def test_pgd_on_cuda_matches_the_closed_form(cuda_device: Any, linear_problem) -> None:  # type: ignore[no-untyped-def]
    model, x, y = linear_problem
    exact = exact_linear_robust(model, x, y, 0.05).double().mean().item()
    est = pgd_ar(model.to(cuda_device), (x.to(cuda_device), y.to(cuda_device)), 0.05, steps=5)
    assert est.value == pytest.approx(exact, abs=1e-9)


@pytest.mark.gpu
def test_pr_and_nppr_run_on_cuda(cuda_device: Any, linear_problem) -> None:  # type: ignore[no-untyped-def]
    model, x, y = linear_problem
    model, x, y = model.to(cuda_device), x.to(cuda_device), y.to(cuda_device)
    pr = estimate_fixed_pr(model, (x, y), "uniform", 0.05, 32)
    gmm = PerturbationGMM((1, 6, 6), 2, 0.05, form="y", k=2, latent_size=6, hidden=16)
    fit_nppr(model, (x[:100], y[:100]), gmm, FitConfig(steps=50, lr=0.05))
    assert next(gmm.parameters()).device.type == "cuda"
    d = gmm.sampler(x[:4], y[:4], 3, torch.Generator(device=x.device).manual_seed(0))
    assert d.device.type == "cuda"
    nppr = estimate_nppr(model, (x[100:], y[100:]), gmm, 32)
    assert nppr.value <= pr.hi

"""Training the classifiers under test: standard, fast FGSM-AT, or PGD-AT.

Adversarial training is here only to produce a *more robust model to measure*; the attacks
that measure AR come from the Adversarial Robustness Toolbox (:mod:`icml26.nppr.baselines.attacks`).
The training perturbation is a few lines of torch because it runs inside the training loop
on every batch:

* ``fgsm`` (Wong, Rice & Kolter 2020, "fast is better than free"): a uniform random start in
  the ball and one signed-gradient step of size ``1.25 eps``, projected back;
* ``pgd`` (Madry et al. 2018): random start and ``pgd_steps`` signed steps of ``2.5 eps /
  steps``.

Training resumes per epoch from ``<checkpoint_dir>/<tag>.epoch.pt`` after a kill.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from icml26.nppr.models import ClassifierSpec, build_classifier
from icml26.nppr.validation import check_budget
from icml26.shared import atomic_path
from icml26.shared import log as shared_log

__all__ = [
    "TRAININGS",
    "TrainConfig",
    "train_classifier",
    "train_for_run",
    "training_perturbation",
]

TRAININGS = ("std", "fgsm", "pgd")


@dataclass(frozen=True)
class TrainConfig:
    """Training of a classifier under test.

    Attributes:
        training: ``std``, ``fgsm`` (fast FGSM-AT) or ``pgd`` (PGD-AT).
        epochs, batch_size, lr: Adam with a one-cycle learning rate.
        eps: the adversarial-training budget.
        pgd_steps: PGD-AT's steps.

    Raises:
        ValueError: an unknown training or non-positive settings.
    """

    training: str = "std"
    epochs: int = 6
    batch_size: int = 64
    lr: float = 2e-3
    eps: float = 0.1
    pgd_steps: int = 5

    def __post_init__(self) -> None:
        if self.training not in TRAININGS:
            raise ValueError(f"training must be one of {TRAININGS}, got {self.training!r}")
        if self.epochs < 1 or self.batch_size < 1 or self.lr <= 0 or self.pgd_steps < 1:
            raise ValueError("epochs, batch_size, pgd_steps must be >= 1 and lr > 0")
        if self.training != "std":
            check_budget(self.eps)


def training_perturbation(
    model: nn.Module, x: torch.Tensor, y: torch.Tensor, cfg: TrainConfig
) -> torch.Tensor:
    """The adversarial inputs adversarial training fits (``x`` itself for ``std``).

    Args:
        model: the classifier being trained.
        x, y: a batch.
        cfg: the training settings.

    Returns:
        The (perturbed) batch inside the ball and [0, 1].
    """
    if cfg.training == "std":
        return x
    eps = cfg.eps
    steps, step = (
        (1, 1.25 * eps) if cfg.training == "fgsm" else (cfg.pgd_steps, 2.5 * eps / cfg.pgd_steps)
    )
    delta = torch.empty_like(x).uniform_(-eps, eps)
    for _ in range(steps):
        delta.requires_grad_(True)
        loss = F.cross_entropy(model((x + delta).clamp(0, 1)), y)
        (grad,) = torch.autograd.grad(loss, delta)
        delta = (delta.detach() + step * grad.sign()).clamp(-eps, eps)
    return (x + delta).clamp(0, 1).detach()


def train_classifier(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    cfg: TrainConfig,
    *,
    seed: int = 0,
    device: str = "cpu",
    checkpoint_dir: str | Path | None = None,
    tag: str = "model",
    log: Callable[..., Any] | None = None,
) -> nn.Module:
    """Fit ``model`` on ``(x, y)`` (Adam, one-cycle learning rate).

    Args:
        model: the classifier (trained in place).
        x, y: the training inputs and labels.
        cfg: the training settings.
        seed: the shuffling seed.
        device: where to train.
        checkpoint_dir: per-epoch checkpoints (a killed training resumes there).
        tag: the checkpoint's and logged metrics' name.
        log: optional ``log(step=..., **metrics)``.

    Returns:
        ``model`` in eval mode.
    """
    model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    steps_per_epoch = (len(y) + cfg.batch_size - 1) // cfg.batch_size
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=cfg.lr, total_steps=cfg.epochs * steps_per_epoch, pct_start=0.2
    )
    start = 0
    ckpt = Path(checkpoint_dir) / f"{tag}.epoch.pt" if checkpoint_dir is not None else None
    if ckpt is not None and ckpt.is_file():
        state = torch.load(ckpt, map_location=device, weights_only=False)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        start = int(state["epoch"])
    g = torch.Generator().manual_seed(seed)
    for _ in range(start):  # keep the shuffles of a resumed run identical to an unbroken one
        torch.randperm(len(y), generator=g)
    for epoch in range(start, cfg.epochs):
        t0 = time.perf_counter()
        perm = torch.randperm(len(y), generator=g)
        total, correct, seen = 0.0, 0, 0
        for i in range(0, len(y), cfg.batch_size):
            idx = perm[i : i + cfg.batch_size]
            xb, yb = x[idx].to(device), y[idx].to(device)
            model.eval()  # the inner attack sees fixed batch-norm statistics
            xa = training_perturbation(model, xb, yb, cfg)
            model.train()
            logits = model(xa)
            loss = F.cross_entropy(logits, yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(yb)
            correct += int((logits.argmax(-1) == yb).sum())
            seen += len(yb)
        if log is not None:
            log(
                step=epoch + 1,
                **{
                    f"train_loss.{tag}": total / seen,
                    f"train_acc.{tag}": correct / seen,
                    f"epoch_seconds.{tag}": time.perf_counter() - t0,
                },
            )
        if ckpt is not None:
            ckpt.parent.mkdir(parents=True, exist_ok=True)
            with atomic_path(ckpt, suffix=".pt") as tmp:
                torch.save(
                    {
                        "model": model.state_dict(),
                        "opt": opt.state_dict(),
                        "sched": sched.state_dict(),
                        "epoch": epoch + 1,
                    },
                    tmp,
                )
    return model.eval()


def train_for_run(
    name: str,
    x: torch.Tensor,
    y: torch.Tensor,
    spec: ClassifierSpec,
    cfg: TrainConfig,
    *,
    seed: int,
    device: str = "cpu",
    checkpoint_dir: str | Path | None = None,
    tag: str = "model",
    log: Callable[..., Any] | None = None,
) -> dict[str, torch.Tensor]:
    """Build and train one classifier of a run; its weights for a stage file.

    Args:
        name: the model's name (logged).
        x, y: the training inputs and labels.
        spec: the architecture.
        cfg: the training settings.
        seed: initialises the weights and orders the batches.
        device: where to train.
        checkpoint_dir, tag, log: as :func:`train_classifier`.

    Returns:
        The trained model's ``state_dict`` on the CPU.
    """
    torch.manual_seed(seed)
    model = build_classifier(spec)
    t0 = time.perf_counter()
    train_classifier(
        model,
        x,
        y,
        cfg,
        seed=seed,
        device=device,
        checkpoint_dir=checkpoint_dir,
        tag=tag,
        log=log,
    )
    shared_log(f"{name}: trained ({cfg.training}) in {time.perf_counter() - t0:.0f}s")
    return {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}

"""Training: TNP-D's one-split-per-task objective and incTNP's autoregressive objective.

* ``split``: each task's sequence is cut once into a context prefix of random size and target
  suffix; loss = Gaussian NLL of the targets (TNP-D's standard meta-training).
* ``autoregressive``: one causal pass in which prefixes of the sequence are contexts for the
  points that follow them (teacher forcing with the causal mask; incTNP's data-efficient
  strategy). Point j (j >= min_ctx) is predicted from a prefix of random length
  c_j ~ U{min_ctx, ..., j}: next-point (c_j = j) and longer horizons alike, N - min_ctx
  predictions per task per pass at every context size. An unbiased draw of the
  "every prefix predicts every following point" objective at the cost of one target per point.
  (Next-point-only training is overconfident at longer horizons on time-ordered data.)

Both see the same tasks, batch sizes and step counts (equal budgets). Training resumes from
the newest checkpoint in the run folder, and runs under ``torchrun`` with DDP::

    torchrun --nproc_per_node=4 -m icml26.inctnp.train --task gp-mix --model inctnp \\
        --steps 20000 --width 128 --layers 5 --heads 8 --out inctnp.safetensors
"""

from __future__ import annotations

import argparse
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch
from torch import nn

from icml26.inctnp.likelihood import gaussian_nll
from icml26.inctnp.model import ModelConfig, NeuralProcess, build_model
from icml26.shared import atomic_path, log

__all__ = ["TrainConfig", "autoregressive_loss", "gaussian_nll", "split_loss", "train"]

Strategy = Literal["split", "autoregressive"]


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 2000
    batch_size: int = 16
    n_points: int = 64
    min_ctx: int = 1
    lr: float = 5e-4
    weight_decay: float = 1e-4
    warmup: int = 100
    grad_clip: float = 1.0
    checkpoint_every: int = 500

    def __post_init__(self) -> None:
        if self.steps < 1 or self.batch_size < 1:
            raise ValueError("steps and batch_size must be >= 1")
        if not 1 <= self.min_ctx < self.n_points:
            raise ValueError(
                f"need 1 <= min_ctx < n_points, got {self.min_ctx} and {self.n_points}"
            )
        if self.lr <= 0:
            raise ValueError("lr must be positive")


def split_loss(
    model: nn.Module, x: torch.Tensor, y: torch.Tensor, g: torch.Generator, min_ctx: int
) -> torch.Tensor:
    n = x.shape[1]
    n_ctx = int(torch.randint(min_ctx, n, (), generator=g))
    mean, std = model(x[:, :n_ctx], y[:, :n_ctx], x[:, n_ctx:])
    return gaussian_nll(y[:, n_ctx:], mean, std).mean()


def autoregressive_loss(
    model: nn.Module, x: torch.Tensor, y: torch.Tensor, g: torch.Generator, min_ctx: int
) -> torch.Tensor:
    n = x.shape[1]
    j = torch.arange(min_ctx, n)
    prefix = min_ctx + (torch.rand(len(j), generator=g) * (j - min_ctx + 1)).long()
    mean, std = model(x, y, x[:, min_ctx:], target_prefix=prefix.to(x.device))
    return gaussian_nll(y[:, min_ctx:], mean, std).mean()


def _schedule(cfg: TrainConfig) -> Any:
    def factor(step: int) -> float:
        if step < cfg.warmup:
            return (step + 1) / cfg.warmup
        progress = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))

    return factor


def _distributed() -> tuple[int, int]:
    """(rank, world size); initialises the process group under torchrun."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1 and not torch.distributed.is_initialized():
        backend = "nccl" if torch.cuda.is_available() else "gloo"
        torch.distributed.init_process_group(backend)
    if world > 1:
        return torch.distributed.get_rank(), world
    return 0, 1


def train(
    model: NeuralProcess,
    source: Any,
    cfg: TrainConfig,
    *,
    strategy: Strategy,
    seed: int,
    checkpoint_dir: str | os.PathLike[str] | None = None,
    tag: str = "model",
    device: str = "cpu",
    log_metrics: Any = None,
) -> list[float]:
    """Train ``model`` in place on tasks from ``source``; return the loss per step.

    Resumes from ``<checkpoint_dir>/step_*.{tag}.pt`` when present. Under torchrun the model is
    wrapped in DDP, each rank draws its own tasks (seed + rank) and rank 0 writes checkpoints.
    """
    if strategy == "autoregressive" and not model.config.causal:
        raise ValueError("the autoregressive objective needs a causal model (incTNP)")
    if strategy not in ("split", "autoregressive"):
        raise ValueError(f"strategy must be 'split' or 'autoregressive', got {strategy!r}")
    rank, world = _distributed()
    model.to(device).train()
    net: nn.Module = model
    if world > 1:
        net = nn.parallel.DistributedDataParallel(
            model, device_ids=[torch.cuda.current_device()] if device.startswith("cuda") else None
        )
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, _schedule(cfg))
    g = torch.Generator().manual_seed(seed * 1000 + rank)
    start, losses = 0, []
    ckpt_dir = Path(checkpoint_dir) if checkpoint_dir is not None else None
    suffix = f".{tag}.pt"
    if ckpt_dir is not None and ckpt_dir.is_dir():
        found = sorted(ckpt_dir.glob(f"step_*{suffix}"))
        if found:
            state = torch.load(found[-1], map_location=device, weights_only=False)
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["opt"])
            sched.load_state_dict(state["sched"])
            g.set_state(state["rng"].cpu())  # a CPU generator, whatever map_location did
            start, losses = state["step"], state["losses"]
            log(f"{tag}: resumed at step {start}")
    for step in range(start, cfg.steps):
        tb = source.sample(cfg.batch_size, cfg.n_points, g, "train")
        x, y = tb.x.to(device), tb.y.to(device)
        if strategy == "split":
            loss = split_loss(net, x, y, g, cfg.min_ctx)
        else:
            loss = autoregressive_loss(net, x, y, g, cfg.min_ctx)
        if not torch.isfinite(loss):
            raise FloatingPointError(f"{tag}: loss became {loss.item()} at step {step}")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        sched.step()
        losses.append(loss.item())
        if log_metrics is not None and rank == 0 and (step % 50 == 0 or step == cfg.steps - 1):
            log_metrics(step, **{f"train_nll.{tag}": losses[-1]})
        done = step + 1
        if (
            ckpt_dir is not None
            and rank == 0
            and (done % cfg.checkpoint_every == 0 or done == cfg.steps)
        ):
            ckpt_dir.mkdir(parents=True, exist_ok=True)
            target = ckpt_dir / f"step_{done:09d}{suffix}"
            with atomic_path(target, suffix=".pt") as tmp:
                torch.save(
                    {
                        "model": model.state_dict(),
                        "opt": opt.state_dict(),
                        "sched": sched.state_dict(),
                        "rng": g.get_state(),
                        "step": done,
                        "losses": losses,
                    },
                    tmp,
                )
            for old in sorted(ckpt_dir.glob(f"step_*{suffix}"))[:-1]:
                old.unlink()
    model.eval()
    return losses


def main(argv: list[str] | None = None) -> int:
    """``python -m icml26.inctnp.train`` (or under ``torchrun``): train one model, save it."""
    from icml26.inctnp.checkpoint import save_model
    from icml26.inctnp.data import make_source

    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--task",
        default="gp-mix",
        help="gp-rbf, gp-matern52, gp-periodic, gp-mix, gp2d-rbf, diabetes, temperature or csv:PATH:TARGET",
    )
    p.add_argument("--model", choices=["inctnp", "tnp"], default="inctnp")
    p.add_argument("--steps", type=int, default=20000)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--n-points", type=int, default=64)
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--layers", type=int, default=5)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--checkpoint-dir", type=Path)
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args(argv)
    rank, _ = _distributed()
    device = a.device
    if device == "cuda" and "LOCAL_RANK" in os.environ:
        device = f"cuda:{int(os.environ['LOCAL_RANK'])}"
        torch.cuda.set_device(device)
    source = make_source(a.task, a.seed)
    causal = a.model == "inctnp"
    torch.manual_seed(a.seed)
    model = build_model(
        ModelConfig(
            dim_x=source.dim_x, width=a.width, layers=a.layers, heads=a.heads, causal=causal
        )
    )
    cfg = TrainConfig(steps=a.steps, batch_size=a.batch_size, n_points=a.n_points, lr=a.lr)
    train(
        model,
        source,
        cfg,
        strategy="autoregressive" if causal else "split",
        seed=a.seed,
        checkpoint_dir=a.checkpoint_dir,
        tag=a.model,
        device=device,
    )
    if rank == 0:
        save_model(model.cpu(), a.out)
        print(a.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

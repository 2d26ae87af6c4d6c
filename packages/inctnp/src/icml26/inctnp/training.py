"""Training: TNP-D's context/target-split objective and incTNP's autoregressive objective.

* ``split`` (TNP-D): each task of a batch draws its own context size ``n_c ~ U{min_ctx..N-1}``
  (ragged contexts, padded and masked); the loss is the Gaussian NLL of the remaining
  ``N - n_c`` points. About ``(N - min_ctx)/2`` targets per task on average.
* ``autoregressive`` (incTNP): one causal pass in which prefixes of the sequence are contexts
  for the points that follow them (teacher forcing with the causal mask). Point j
  (j >= min_ctx) is predicted from a prefix of random length ``c_j ~ U{min_ctx..j}``:
  ``N - min_ctx`` targets per task per step, next-point and longer horizons alike (an unbiased
  draw of "every prefix predicts every following point"; next-point-only training is
  overconfident at longer horizons on time-ordered data).

Both models see the same task stream (tasks from one random stream, context sizes and prefixes
from another). Since incTNP predicts about twice as many targets per step, budgets can be
counted in **targets seen**, not steps: :class:`TrainResult` keeps a snapshot of the model when
it has seen ``target_budget`` targets; ``eval_every_targets`` spaces the validation
evaluations by targets seen and ``max_targets`` caps training (and drives the learning-rate
decay) in targets, so both models are judged on the same clock. Training stops at
**convergence**, when the validation NLL has not improved by more than ``min_delta`` nats over
``patience`` evaluations (the best state is kept), or at the cap (``max_targets`` or
``max_steps``). Training resumes from the newest checkpoint, and runs under ``torchrun`` with
DDP::

    torchrun --nproc_per_node=4 -m icml26.inctnp.training --task gp-mix --model inctnp \\
        --steps 20000 --width 128 --layers 5 --heads 8 --out inctnp.safetensors
"""

from __future__ import annotations

import argparse
import copy
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import torch
from torch import nn

from icml26.inctnp.checkpoint import save_model
from icml26.inctnp.data import make_source
from icml26.inctnp.likelihood import gaussian_nll
from icml26.inctnp.model import ModelConfig, NeuralProcess, build_model
from icml26.shared import atomic_path, log, seed_for

__all__ = ["TrainConfig", "TrainResult", "autoregressive_loss", "split_loss", "train"]

Strategy = Literal["split", "autoregressive"]


@dataclass(frozen=True)
class TrainConfig:
    """Training settings (AdamW, linear warm-up then cosine decay to 10% over ``max_steps``,
    or over ``max_targets`` targets when that is given).

    Attributes:
        max_steps: the step cap.
        batch_size: tasks per step.
        n_points: points per task.
        min_ctx: the smallest context.
        lr, weight_decay, warmup, grad_clip: the optimiser.
        checkpoint_every: steps between checkpoints (with a ``checkpoint_dir``).
        eval_every: steps between validation evaluations (``0``: never; no early stop).
        eval_every_targets: targets seen between validation evaluations (``0``: use
            ``eval_every``); models that see different numbers of targets per step are then
            evaluated, and their patience counted, on the same clock.
        patience, min_delta: stop when the validation NLL has not improved by more than
            ``min_delta`` nats over ``patience`` evaluations.
        target_budget: snapshot the model when it has seen this many targets (``None``: no
            snapshot).
        max_targets: stop once this many targets have been seen (``None``: only the step
            cap); the learning-rate decay then runs over targets.

    Raises:
        ValueError: non-positive counts or rates, ``min_ctx`` outside ``[1, n_points)``.
    """

    max_steps: int = 2000
    batch_size: int = 16
    n_points: int = 64
    min_ctx: int = 1
    lr: float = 5e-4
    weight_decay: float = 1e-4
    warmup: int = 100
    grad_clip: float = 1.0
    checkpoint_every: int = 500
    eval_every: int = 0
    eval_every_targets: int = 0
    patience: int = 5
    min_delta: float = 0.01
    target_budget: int | None = None
    max_targets: int | None = None

    def __post_init__(self) -> None:
        if self.max_steps < 1 or self.batch_size < 1:
            raise ValueError("max_steps and batch_size must be >= 1")
        if not 1 <= self.min_ctx < self.n_points:
            raise ValueError(
                f"need 1 <= min_ctx < n_points, got {self.min_ctx} and {self.n_points}"
            )
        if self.lr <= 0 or self.eval_every < 0 or self.patience < 1 or self.min_delta < 0:
            raise ValueError("lr must be > 0, eval_every >= 0, patience >= 1, min_delta >= 0")
        if self.target_budget is not None and self.target_budget < 1:
            raise ValueError("target_budget must be a positive number of targets")
        if self.max_targets is not None and self.max_targets < 1:
            raise ValueError("max_targets must be a positive number of targets")
        if self.eval_every_targets < 0 or (self.eval_every and self.eval_every_targets):
            raise ValueError(
                "eval_every_targets must be >= 0, and at most one of eval_every and "
                "eval_every_targets may be set"
            )

    @property
    def evaluates(self) -> bool:
        """Whether training evaluates on validation data (and may stop early)."""
        return bool(self.eval_every or self.eval_every_targets)


@dataclass
class TrainResult:
    """What one training run did.

    Attributes:
        losses: the training loss per step.
        steps: steps taken.
        targets_seen: target predictions the loss was computed on, in total.
        converged: stopped by the validation rule (else by the step cap).
        curve: one ``{"step", "targets", "val_nll"}`` per evaluation.
        best_state: the state with the lowest validation NLL (the model ends in it).
        budget_state: the state when ``target_budget`` targets had been seen (or the final
            one, if training stopped first: ``budget_reached`` says which).
        budget_step, budget_reached: where that snapshot was taken.
        next_eval: the targets count of the next validation evaluation
            (``eval_every_targets``).
    """

    losses: list[float] = field(default_factory=list)
    steps: int = 0
    targets_seen: int = 0
    converged: bool = False
    curve: list[dict[str, float]] = field(default_factory=list)
    best_state: dict[str, torch.Tensor] | None = None
    budget_state: dict[str, torch.Tensor] | None = None
    budget_step: int = 0
    budget_reached: bool = False
    next_eval: int = 0


def split_loss(
    model: nn.Module, x: torch.Tensor, y: torch.Tensor, g: torch.Generator, min_ctx: int
) -> tuple[torch.Tensor, int]:
    """TNP-D's objective with a context size per task (ragged contexts in one pass).

    Args:
        model: the network.
        x, y: tasks ``[B, N, ·]``.
        g: the stream of context sizes.
        min_ctx: the smallest context.

    Returns:
        ``(mean NLL over the targets, number of targets)``.
    """
    b, n = x.shape[0], x.shape[1]
    n_ctx = torch.randint(min_ctx, n, (b,), generator=g).to(x.device)
    pos = torch.arange(n, device=x.device).unsqueeze(0)
    ctx = pos < n_ctx.unsqueeze(1)  # [B, N]: the first n_c points are context, the rest targets
    mean, std = model(x, y, x, context_mask=ctx)
    nll = gaussian_nll(y, mean, std)  # [B, N]
    target = ~ctx
    return nll[target].mean(), int(target.sum())


def autoregressive_loss(
    model: nn.Module, x: torch.Tensor, y: torch.Tensor, g: torch.Generator, min_ctx: int
) -> tuple[torch.Tensor, int]:
    """incTNP's objective: point j predicted from a random prefix ``c_j ~ U{min_ctx..j}``.

    Args:
        model: a causal network.
        x, y: tasks ``[B, N, ·]``.
        g: the stream of prefix lengths.
        min_ctx: the smallest prefix.

    Returns:
        ``(mean NLL over the targets, number of targets)``.
    """
    n = x.shape[1]
    j = torch.arange(min_ctx, n)
    prefix = min_ctx + (torch.rand(len(j), generator=g) * (j - min_ctx + 1)).long()
    mean, std = model(x, y, x[:, min_ctx:], target_prefix=prefix.to(x.device))
    nll = gaussian_nll(y[:, min_ctx:], mean, std)
    return nll.mean(), int(nll.numel())


def _lr_factor(cfg: TrainConfig, res: TrainResult) -> float:
    """Linear warm-up over ``warmup`` steps, then cosine decay to 10% over the cap (in
    targets with ``max_targets``, else in steps)."""
    if res.steps < cfg.warmup:
        return (res.steps + 1) / cfg.warmup
    if cfg.max_targets is not None:
        progress = res.targets_seen / cfg.max_targets
    else:
        progress = (res.steps - cfg.warmup) / max(1, cfg.max_steps - cfg.warmup)
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))


def _eval_due(cfg: TrainConfig, res: TrainResult) -> bool:
    """Whether a validation evaluation falls on this step (advances ``res.next_eval``)."""
    if cfg.eval_every:
        return res.steps % cfg.eval_every == 0
    if not cfg.eval_every_targets or res.targets_seen < res.next_eval:
        return False
    while res.next_eval <= res.targets_seen:
        res.next_eval += cfg.eval_every_targets
    return True


def _capped(cfg: TrainConfig, res: TrainResult) -> bool:
    return res.steps >= cfg.max_steps or (
        cfg.max_targets is not None and res.targets_seen >= cfg.max_targets
    )


def _distributed() -> tuple[int, int]:
    """(rank, world size); initialises the process group under torchrun."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1 and not torch.distributed.is_initialized():
        backend = "nccl" if torch.cuda.is_available() else "gloo"
        torch.distributed.init_process_group(backend)
    if world > 1:
        return torch.distributed.get_rank(), world
    return 0, 1


def _state(model: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}


def train(
    model: NeuralProcess,
    source: Any,
    cfg: TrainConfig,
    *,
    strategy: Strategy,
    seed: int,
    val_nll: Callable[[NeuralProcess], float] | None = None,
    checkpoint_dir: str | os.PathLike[str] | None = None,
    tag: str = "model",
    device: str = "cpu",
    log_metrics: Any = None,
) -> TrainResult:
    """Train ``model`` in place on tasks from ``source``.

    Args:
        model: the network (TNP-D with ``split``, incTNP with ``autoregressive``).
        source: a task source (``sample(batch, n, generator, "train")``).
        cfg: the settings.
        strategy: ``"split"`` or ``"autoregressive"``.
        seed: the data seed (tasks and masks draw from separate streams of it; under
            torchrun each rank adds its rank).
        val_nll: the validation NLL of a model (needed for early stopping: ``eval_every``).
        checkpoint_dir: resume from / write ``step_*.{tag}.pt`` there.
        tag: the checkpoint name.
        device: where to train.
        log_metrics: ``log_metrics(step, **values)`` for the training curve.

    Returns:
        The :class:`TrainResult`; the model ends in its best validation state (its final
        state without validation).

    Raises:
        ValueError: a strategy the model cannot train with, or an evaluation interval
            without ``val_nll``.
        FloatingPointError: the loss became NaN or infinite.
    """
    if strategy not in ("split", "autoregressive"):
        raise ValueError(f"strategy must be 'split' or 'autoregressive', got {strategy!r}")
    if strategy == "autoregressive" and not model.config.causal:
        raise ValueError("the autoregressive objective needs a causal model (incTNP)")
    if cfg.evaluates and val_nll is None:
        raise ValueError(
            "eval_every / eval_every_targets need a val_nll function (the validation NLL)"
        )
    rank, world = _distributed()
    model.to(device).train()
    net: nn.Module = model
    if world > 1:
        net = nn.parallel.DistributedDataParallel(
            model, device_ids=[torch.cuda.current_device()] if device.startswith("cuda") else None
        )
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    g_data = torch.Generator().manual_seed(seed_for(seed, "tasks", rank))
    g_mask = torch.Generator().manual_seed(seed_for(seed, "masks", rank))
    res = TrainResult(next_eval=cfg.eval_every_targets)
    best, stale = math.inf, 0
    ckpt_dir = Path(checkpoint_dir) if checkpoint_dir is not None else None
    suffix = f".{tag}.pt"
    if ckpt_dir is not None and ckpt_dir.is_dir():
        found = sorted(ckpt_dir.glob(f"step_*{suffix}"))
        if found:
            state = torch.load(found[-1], map_location=device, weights_only=False)
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["opt"])
            g_data.set_state(state["rng"][0].cpu())  # CPU generators, whatever map_location did
            g_mask.set_state(state["rng"][1].cpu())
            res, best, stale = state["result"], state["best"], state["stale"]
            log(f"{tag}: resumed at step {res.steps}")
    loss_fn = split_loss if strategy == "split" else autoregressive_loss
    while not _capped(cfg, res) and not res.converged:
        tb = source.sample(cfg.batch_size, cfg.n_points, g_data, "train")
        loss, n_targets = loss_fn(net, tb.x.to(device), tb.y.to(device), g_mask, cfg.min_ctx)
        if not torch.isfinite(loss):
            raise FloatingPointError(f"{tag}: loss became {loss.item()} at step {res.steps}")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        for group in opt.param_groups:
            group["lr"] = cfg.lr * _lr_factor(cfg, res)
        opt.step()
        res.losses.append(loss.item())
        res.steps += 1
        res.targets_seen += n_targets * world
        if log_metrics is not None and rank == 0 and res.steps % 50 == 0:
            log_metrics(res.steps, **{f"train_nll.{tag}": res.losses[-1]})
        if _eval_due(cfg, res):
            assert val_nll is not None
            value = val_nll(model)
            model.train()
            res.curve.append({"step": res.steps, "targets": res.targets_seen, "val_nll": value})
            if value < best:
                res.best_state = _state(model)
            stale = 0 if value < best - cfg.min_delta else stale + 1
            best = min(best, value)
            res.converged = stale >= cfg.patience
        budget = cfg.target_budget
        if budget is not None and res.budget_state is None and res.targets_seen >= budget:
            res.budget_state, res.budget_step, res.budget_reached = _state(model), res.steps, True
        if ckpt_dir is not None and rank == 0 and res.steps % cfg.checkpoint_every == 0:
            _checkpoint(ckpt_dir, suffix, model, opt, (g_data, g_mask), res, best, stale)
    if res.best_state is not None:
        model.load_state_dict(res.best_state)
    else:
        res.best_state = _state(model)
    if res.budget_state is None:
        res.budget_state, res.budget_step = res.best_state, res.steps
    model.eval()
    return res


def _checkpoint(  # type: ignore[no-untyped-def]
    ckpt_dir: Path, suffix: str, model, opt, gens, res: TrainResult, best, stale
) -> None:
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    target = ckpt_dir / f"step_{res.steps:09d}{suffix}"
    with atomic_path(target, suffix=".pt") as tmp:
        torch.save(
            {
                "model": model.state_dict(),
                "opt": opt.state_dict(),
                "rng": [g.get_state() for g in gens],
                "result": copy.deepcopy(res),
                "best": best,
                "stale": stale,
            },
            tmp,
        )
    for old in sorted(ckpt_dir.glob(f"step_*{suffix}"))[:-1]:
        old.unlink()


def main(argv: list[str] | None = None) -> int:
    """``python -m icml26.inctnp.training`` (or under ``torchrun``): train one model, save it.

    Args:
        argv: command-line arguments (``sys.argv[1:]`` by default).

    Returns:
        The exit status.
    """
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
    cfg = TrainConfig(max_steps=a.steps, batch_size=a.batch_size, n_points=a.n_points, lr=a.lr)
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

"""Predictive metrics, the streaming implicit-Bayesianness gap and update latency."""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Sequence

import numpy as np
import torch

from icml26.inctnp.data import TaskBatch
from icml26.inctnp.model import KVCache, NeuralProcess
from icml26.inctnp.train import gaussian_nll

__all__ = ["implicit_bayes_gap", "predictive_scores", "scaling_exponent", "update_latency_ms"]

#: ``predict(task_batch, n_ctx, xt) -> (mean, std)`` given the first ``n_ctx`` points.
Predictor = Callable[[TaskBatch, int, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


def model_predictor(model: NeuralProcess) -> Predictor:
    @torch.no_grad()
    def predict(tb: TaskBatch, n_ctx: int, xt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return model(tb.x[:, :n_ctx], tb.y[:, :n_ctx], xt)

    return predict


@torch.no_grad()
def predictive_scores(
    predict: Predictor, batches: Sequence[TaskBatch], n_ctx: int
) -> tuple[float, float]:
    """Mean NLL per target point and RMSE of the predictive mean, targets = points after n_ctx."""
    nlls, sq = [], []
    for tb in batches:
        xt, yt = tb.x[:, n_ctx:], tb.y[:, n_ctx:]
        mean, std = predict(tb, n_ctx, xt)
        nlls.append(gaussian_nll(yt, mean.float(), std.float()).flatten())
        sq.append((yt - mean.float()).pow(2).flatten())
    return float(torch.cat(nlls).mean()), float(torch.cat(sq).mean().sqrt())


@torch.no_grad()
def sequential_loglik(predict: Predictor, tb: TaskBatch, first: int) -> torch.Tensor:
    """Mean over j >= ``first`` of log p(y_j | y_<j), one-at-a-time streaming, per task [B]."""
    n = tb.x.shape[1]
    terms = []
    for j in range(first, n):
        mean, std = predict(tb, j, tb.x[:, j : j + 1])
        terms.append(-gaussian_nll(tb.y[:, j : j + 1], mean.float(), std.float()).squeeze(-1))
    return torch.stack(terms, -1).mean(-1)


@torch.no_grad()
def incremental_loglik(model: NeuralProcess, tb: TaskBatch, first: int) -> torch.Tensor:
    """As :func:`sequential_loglik` for incTNP, in one causal pass (same numbers, O(N^2) once)."""
    mean, std = model(tb.x, tb.y, tb.x, prefix_targets=True)
    ll = -gaussian_nll(tb.y, mean, std)
    return ll[:, first:].mean(-1)


def implicit_bayes_gap(
    loglik: Callable[[TaskBatch], torch.Tensor],
    tb: TaskBatch,
    n_perms: int,
    g: torch.Generator,
    first: int = 1,
) -> float:
    """Spread of the streaming joint likelihood over orderings of the same observations.

    An exchangeable (Bayesian) predictive factorises the joint p(y_first.. | y_<first) by the
    chain rule whatever the order, so the sequential log-likelihood is permutation-invariant.
    We permute the points after the first ``first`` (kept fixed as a shared seed context) and
    report the standard deviation across ``n_perms`` orders of the per-point sequential
    log-likelihood, averaged over tasks. 0 for the exact GP; larger = less implicitly Bayesian.
    """
    n = tb.x.shape[1]
    if n_perms < 2 or n - first < 2:
        raise ValueError("need at least 2 permutations and 2 permuted points")
    values = []
    for _ in range(n_perms):
        rest = first + torch.randperm(n - first, generator=g)
        order = torch.cat([torch.arange(first), rest])
        perm = TaskBatch(tb.x[:, order], tb.y[:, order], tb.kernels, tb.noise_std)
        values.append(loglik(perm))
    return float(torch.stack(values).std(0, unbiased=True).mean())


@torch.no_grad()
def update_latency_ms(
    model: NeuralProcess, n: int, repeats: int, *, device: str = "cpu", seed: int = 0
) -> tuple[float, int]:
    """Median milliseconds to add one point to a context of ``n`` and predict one target.

    incTNP: one cached update (then rolled back, so every repeat starts from ``n``) plus one
    cached prediction. TNP-D: a full forward pass over ``n + 1`` context points. Also returns
    the bytes of the incTNP cache at ``n`` (0 for TNP-D).

    A model on another device is copied to ``device`` for the timing, so the caller's model
    stays where it is (the run keeps evaluating and plotting it on the CPU).
    """
    g = torch.Generator().manual_seed(seed)
    cfg = model.config
    x = torch.randn(1, n + 1, cfg.dim_x, generator=g).to(device)
    y = torch.randn(1, n + 1, cfg.dim_y, generator=g).to(device)
    xt = torch.randn(1, 1, cfg.dim_x, generator=g).to(device)
    if next(model.parameters()).device != torch.device(device):
        model = copy.deepcopy(model)
    model = model.to(device).eval()
    cache = KVCache(cfg.layers)
    nbytes = 0
    if cfg.causal:
        model.extend_cache(cache, x[:, :n], y[:, :n])
        nbytes = cache.nbytes

    def step() -> None:
        if cfg.causal:
            model.extend_cache(cache, x[:, n:], y[:, n:])
            model.predict_from_cache(cache, xt)
            cache.length = n
        else:
            model(x, y, xt)

    step()  # warm-up
    times = []
    for _ in range(repeats):
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        step()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        times.append(1000 * (time.perf_counter() - t0))
    return float(np.median(times)), nbytes


def scaling_exponent(sizes: Sequence[int], millis: Sequence[float], *, upper: bool = True) -> float:
    """Least-squares slope of log(time) against log(N): ~1 linear, ~2 quadratic.

    With ``upper`` (default) the fit uses the sizes at or above the median, the regime that
    asymptotic cost describes (small N is dominated by fixed per-call overheads).
    """
    n, t = np.asarray(sizes, float), np.asarray(millis, float)
    if upper and len(n) >= 4:
        keep = n >= np.median(n)
        n, t = n[keep], t[keep]
    if len(n) < 2:
        return math.nan
    slope, _ = np.polyfit(np.log(n), np.log(t), 1)
    return float(slope)

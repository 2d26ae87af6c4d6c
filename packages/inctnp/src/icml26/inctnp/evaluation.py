"""Predictive metrics, the streaming implicit-Bayesianness gap and update latency."""

from __future__ import annotations

import copy
import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from icml26.inctnp.data import TaskBatch
from icml26.inctnp.likelihood import gaussian_nll
from icml26.inctnp.model import KVCache, NeuralProcess
from icml26.shared.stats import Slope, loglog_slope

__all__ = [
    "OrderedMarginals",
    "UpdateLatency",
    "UpdateMemory",
    "exchangeability_kl",
    "implicit_bayes_gap",
    "incremental_loglik",
    "incremental_marginals",
    "model_predictor",
    "ordered_marginals",
    "peak_allocated_bytes",
    "permutation_spread",
    "predictive_scores",
    "scaling_exponent",
    "sequential_loglik",
    "streaming_marginals",
    "update_latency",
    "update_memory",
]

#: ``predict(task_batch, n_ctx, xt) -> (mean, std)`` given the first ``n_ctx`` points.
Predictor = Callable[[TaskBatch, int, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


def model_predictor(model: NeuralProcess) -> Predictor:
    """A :data:`Predictor` from a model's batch forward pass.

    Args:
        model: the model.

    Returns:
        ``predict(task_batch, n_ctx, xt) -> (mean, std)``.
    """

    @torch.no_grad()
    def predict(tb: TaskBatch, n_ctx: int, xt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        device = next(model.parameters()).device
        mean, std = model(tb.x[:, :n_ctx].to(device), tb.y[:, :n_ctx].to(device), xt.to(device))
        return mean.to(xt.device), std.to(xt.device)

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


#: ``marginals(task_batch) -> (mean, std)``: the one-step-ahead predictive of every point
#: ``j >= first`` given the true points before it in the batch's order (teacher forced),
#: each ``[B, N - first, Dy]``.
Marginals = Callable[[TaskBatch], tuple[torch.Tensor, torch.Tensor]]


@torch.no_grad()
def streaming_marginals(
    predict: Predictor, tb: TaskBatch, first: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """One-at-a-time streaming: predict point j from the points before it, j >= ``first``."""
    means, stds = [], []
    for j in range(first, tb.x.shape[1]):
        mean, std = predict(tb, j, tb.x[:, j : j + 1])
        means.append(mean.float())
        stds.append(std.float())
    return torch.cat(means, 1), torch.cat(stds, 1)


@torch.no_grad()
def incremental_marginals(
    model: NeuralProcess, tb: TaskBatch, first: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """As :func:`streaming_marginals` for incTNP, in one causal pass (same numbers): target
    j (``j >= first``) attends to the first j points, never to its own value.

    Args:
        model: a causal model.
        tb: the tasks.
        first: the first predicted point (``>= 1``: point 0 has no context).

    Returns:
        ``(mean, std)``, each ``[B, N - first, Dy]``.

    Raises:
        ValueError: ``first < 1``.
    """
    if first < 1:
        raise ValueError("first must be >= 1: the first point has no context to predict from")
    n = tb.x.shape[1]
    device = next(model.parameters()).device
    x, y = tb.x.to(device), tb.y.to(device)
    prefix = torch.arange(first, n, device=device)
    mean, std = model(x, y, x[:, first:], target_prefix=prefix)
    return mean.float().to(tb.x.device), std.float().to(tb.x.device)


@torch.no_grad()
def sequential_loglik(predict: Predictor, tb: TaskBatch, first: int) -> torch.Tensor:
    """Mean over j >= ``first`` of log p(y_j | y_<j), one-at-a-time streaming, per task [B]."""
    mean, std = streaming_marginals(predict, tb, first)
    return -gaussian_nll(tb.y[:, first:], mean, std).mean(-1)


@torch.no_grad()
def incremental_loglik(model: NeuralProcess, tb: TaskBatch, first: int) -> torch.Tensor:
    """As :func:`sequential_loglik` for incTNP, in one causal pass (same numbers, O(N^2) once).

    Args:
        model: a causal model.
        tb: the tasks.
        first: the first predicted point (``>= 1``).

    Returns:
        ``[B]`` mean log-likelihoods.
    """
    mean, std = incremental_marginals(model, tb, first)
    return -gaussian_nll(tb.y[:, first:], mean, std).mean(-1)


def _orders(n: int, first: int, n_perms: int, g: torch.Generator) -> list[torch.Tensor]:
    """``n_perms`` orders of ``n`` points: the first ``first`` fixed, the rest shuffled."""
    if n_perms < 2 or n - first < 2:
        raise ValueError("need at least 2 permutations and 2 permuted points")
    return [
        torch.cat([torch.arange(first), first + torch.randperm(n - first, generator=g)])
        for _ in range(n_perms)
    ]


def _permuted(tb: TaskBatch, order: torch.Tensor) -> TaskBatch:
    return TaskBatch(tb.x[:, order], tb.y[:, order], tb.kernels, tb.noise_std)


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
    Our metric; :func:`exchangeability_kl` is the paper's.
    """
    values = [loglik(_permuted(tb, order)) for order in _orders(tb.x.shape[1], first, n_perms, g)]
    return float(torch.stack(values).std(0, unbiased=True).mean())


@dataclass(frozen=True)
class OrderedMarginals:
    """The teacher-forced one-step-ahead predictives of one task batch under several orders,
    mapped back to the batch's own (canonical) order: ``mean``/``std`` ``[K, B, N - first,
    Dy]``; ``y`` the observed values ``[B, N - first, Dy]`` in that order; ``loglik`` ``[K, B]``
    the per-point sequential log-likelihood of each order."""

    mean: torch.Tensor
    std: torch.Tensor
    y: torch.Tensor
    loglik: torch.Tensor


@torch.no_grad()
def ordered_marginals(
    marginals: Marginals, tb: TaskBatch, n_perms: int, g: torch.Generator, first: int = 1
) -> OrderedMarginals:
    """Run ``marginals`` on ``n_perms`` random orders of the points after ``first`` (drawn
    from ``g`` exactly as :func:`implicit_bayes_gap` draws them)."""
    means, stds, lls = [], [], []
    for order in _orders(tb.x.shape[1], first, n_perms, g):
        perm = _permuted(tb, order)
        mean, std = marginals(perm)
        lls.append(-gaussian_nll(perm.y[:, first:], mean, std).mean(-1))
        back = torch.argsort(order[first:] - first)  # permuted position of each canonical point
        means.append(mean[:, back])
        stds.append(std[:, back])
    return OrderedMarginals(
        torch.stack(means), torch.stack(stds), tb.y[:, first:], torch.stack(lls)
    )


def permutation_spread(om: OrderedMarginals) -> float:
    """:func:`implicit_bayes_gap` from precomputed marginals (same orders, same number)."""
    return float(om.loglik.std(0, unbiased=True).mean())


def _factorised_logpdf(y: torch.Tensor, mean: torch.Tensor, std: torch.Tensor) -> torch.Tensor:
    """log prod_j N(y_j; mean_j, std_j^2), summing the last two dims (points, outputs)."""
    return -gaussian_nll(y, mean, std).sum(-1)


@torch.no_grad()
def exchangeability_kl(om: OrderedMarginals, n_samples: int, g: torch.Generator) -> float:
    """The paper's implicit-Bayesianness measure: KL from the model's joint under one order
    to the mixture of its joints under the other orders, in nats per task.

    The incTNP authors' exchangeability evaluation (following Mlodozeniec et al. 2024)
    approximates the Bayesian prediction that averages over orders by a uniform mixture of the
    teacher-forced joints of G random orders, each the product of the one-step-ahead Gaussian
    predictives, and reports ``KL(q_pi || (1/G) sum_g q_g)`` for further orders pi, by Monte
    Carlo from ``q_pi``. Here the K orders of ``om`` serve both roles, leave one out: for each
    k, ``q_k`` against the mixture of the other K - 1 (so every model pass is used twice and
    the joint is never a component of its own mixture), with ``n_samples`` draws per order,
    averaged over orders and tasks. 0 when the predictives do not depend on the order; an
    exact GP's value is not 0 here, because a teacher-forced conditional depends on which
    observed points preceded it (the reference to read a model's figure against).

    Args:
        om: the model's one-step-ahead Gaussian predictives under K orders of the same tasks.
        n_samples: Monte-Carlo draws per order.
        g: the generator of the draws.

    Returns:
        The KL estimate in nats per task.
    """
    k_orders = om.mean.shape[0]
    if k_orders < 2 or n_samples < 1:
        raise ValueError("need at least 2 orders and 1 sample")
    kls = []
    for k in range(k_orders):
        eps = torch.randn((n_samples, *om.mean.shape[1:]), generator=g).to(om.mean.device)
        draws = om.mean[k] + om.std[k] * eps  # [S, B, N, Dy]
        own = _factorised_logpdf(draws, om.mean[k], om.std[k])  # [S, B]
        others = [i for i in range(k_orders) if i != k]
        comps = torch.stack(
            [_factorised_logpdf(draws, om.mean[i], om.std[i]) for i in others]
        )  # [K-1, S, B]
        mixture = torch.logsumexp(comps.double(), 0) - math.log(len(others))
        kls.append((own.double() - mixture).mean(0))  # [B]
    return float(torch.stack(kls).mean())


@dataclass(frozen=True)
class UpdateLatency:
    """Milliseconds to add one point to a context of ``n`` and predict one target, over
    ``repeats`` timed repeats in one process.

    Attributes:
        median, q25, q75: the median and quartiles of the repeats (ms).
        times: every repeat (ms).
        cache_allocated: bytes the incTNP cache has allocated after the updates (0 for TNP-D).
    """

    median: float
    q25: float
    q75: float
    times: tuple[float, ...]
    cache_allocated: int


@torch.no_grad()
def update_latency(
    model: NeuralProcess, n: int, repeats: int, *, device: str = "cpu", seed: int = 0
) -> UpdateLatency:
    """Time adding one point to a context of ``n`` and predicting one target.

    incTNP: one cached update (then rolled back, so every repeat starts from ``n``) plus one
    cached prediction. TNP-D: a full forward pass over ``n + 1`` context points. One warm-up
    call first. A model on another device is copied to ``device`` for the timing, so the
    caller's model stays where it is.

    Args:
        model: the model.
        n: the context size.
        repeats: timed repeats.
        device: where to time.
        seed: seed of the random inputs.

    Returns:
        The :class:`UpdateLatency`.
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
    if cfg.causal:
        model.extend_cache(cache, x[:, :n], y[:, :n])

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
    q25, med, q75 = np.percentile(times, [25, 50, 75])
    allocated = cache.allocated_bytes if cfg.causal else 0
    return UpdateLatency(float(med), float(q25), float(q75), tuple(times), allocated)


@dataclass(frozen=True)
class UpdateMemory:
    """Memory of one streaming update at context size ``n`` (bytes).

    ``peak``: the most bytes allocated at once during the update above what was allocated
    before it (the allocator's peak on CUDA; on the CPU the allocations torch's profiler
    records, summed in time order). For incTNP the cache starts exactly full at ``n``
    tokens, so the update pays for the doubling (old and new buffers alive together); for
    TNP-D it is a forward pass over ``n + 1`` points. ``cache_used`` / ``cache_allocated`` /
    ``cache_peak``: the :class:`KVCache` accounting after the update (0 for TNP-D)."""

    peak: int
    cache_used: int
    cache_allocated: int
    cache_peak: int


@torch.no_grad()
def update_memory(
    model: NeuralProcess, n: int, *, device: str = "cpu", seed: int = 0
) -> UpdateMemory:
    """Measure :class:`UpdateMemory` for adding one point to a context of ``n``, then
    predicting one target (the step :func:`update_latency_ms` times)."""
    g = torch.Generator().manual_seed(seed)
    cfg = model.config
    x = torch.randn(1, n + 1, cfg.dim_x, generator=g).to(device)
    y = torch.randn(1, n + 1, cfg.dim_y, generator=g).to(device)
    xt = torch.randn(1, 1, cfg.dim_x, generator=g).to(device)
    if next(model.parameters()).device != torch.device(device):
        model = copy.deepcopy(model)
    model = model.to(device).eval()
    cache = KVCache(cfg.layers)
    if cfg.causal:
        model.extend_cache(cache, x[:, :n], y[:, :n])

    def step() -> None:
        if cfg.causal:
            model.extend_cache(cache, x[:, n:], y[:, n:])
            model.predict_from_cache(cache, xt)
        else:
            model(x, y, xt)

    peak = peak_allocated_bytes(step, device)
    if not cfg.causal:
        return UpdateMemory(peak, 0, 0, 0)
    return UpdateMemory(peak, cache.nbytes, cache.allocated_bytes, cache.peak_bytes)


def peak_allocated_bytes(fn: Callable[[], object], device: str = "cpu") -> int:
    """Peak bytes allocated while ``fn`` runs, above the bytes allocated when it starts.

    CUDA: ``torch.cuda.max_memory_allocated``. CPU (torch keeps no allocator statistics
    there): the allocation and free events of ``torch.profiler`` (``profile_memory=True``),
    each op's own net allocation taken at its start, summed in time order; a temporary
    that one kernel allocates and frees internally is not seen."""
    if device.startswith("cuda"):
        torch.cuda.synchronize(device)
        base = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        fn()
        torch.cuda.synchronize(device)
        return int(torch.cuda.max_memory_allocated(device) - base)
    from torch.profiler import ProfilerActivity, profile

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            fn()
    events = sorted(prof.events(), key=lambda e: e.time_range.start)
    live = peak = 0
    for event in events:
        live += event.self_cpu_memory_usage
        peak = max(peak, live)
    return int(peak)


def scaling_exponent(sizes: Sequence[int], millis: Sequence[float], *, upper: bool = True) -> Slope:
    """Least-squares slope of log(time) against log(N), with its standard error: ~1 linear,
    ~2 quadratic (:func:`icml26.shared.stats.loglog_slope`).

    Args:
        sizes: context sizes.
        millis: a time per size.
        upper: fit only the sizes at or above the median (with four or more sizes): the
            regime that asymptotic cost describes (small N is dominated by fixed overheads).

    Returns:
        ``Slope(slope, se, intercept, n)`` (``se`` NaN with two sizes).
    """
    n, t = np.asarray(sizes, float), np.asarray(millis, float)
    if upper and len(n) >= 4:
        keep = n >= np.median(n)
        n, t = n[keep], t[keep]
    return loglog_slope(n, t)

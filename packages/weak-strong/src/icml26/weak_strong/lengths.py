"""Error rates and the finite-sample bound of the online policy against the stream length.

The guarantee of :mod:`~icml26.weak_strong.guarantees` is a long-run one: the slack
``(C + radius) / #wrong`` (``/ #right`` for rejections) shrinks as the stream grows. To see
from what length a *real* stream is long enough, :func:`error_vs_length` runs the policy on
``orders`` random orders of the stream and reads the rates and the bound on every prefix of
each run at the lengths asked for.

An online policy is causal, so the prefix of length ``n`` of a run *is* the run of a fresh
policy (same seed) on the first ``n`` items: one run per order gives the whole curve. With
``passes > 1`` each order is ``passes`` independent shuffles of the stream laid end to end, so
lengths beyond the stream's own repeat items (a resampled stream from the same empirical law,
not fresh data); ``passes = 1`` gives prefixes of one shuffle, every item seen once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from icml26.shared import seed_for
from icml26.weak_strong._validate import check_stream
from icml26.weak_strong.config import RunConfig
from icml26.weak_strong.guarantees import bound_constants, online_error_bounds
from icml26.weak_strong.keys import akey
from icml26.weak_strong.metrics import error_rates
from icml26.weak_strong.policies import OnlineWeakStrong, Trace, run_policy

__all__ = [
    "LengthCurve",
    "control_length",
    "error_vs_length",
    "length_grid",
    "length_study",
    "online_policy",
    "prefix_trace",
]


def length_grid(n: int, *, start: int = 200, passes: int = 1) -> list[int]:
    """Doubling lengths ``start, 2 start, ...`` below ``passes * n``, then ``n`` (the stream's
    own length) and ``passes * n``."""
    if n < 1 or start < 1 or passes < 1:
        raise ValueError(f"need n, start, passes >= 1, got {n}, {start}, {passes}")
    top = passes * n
    out = []
    m = start
    while m < top:
        out.append(m)
        m *= 2
    return sorted({*out, min(n, top), top})


def prefix_trace(trace: Trace, n: int) -> Trace:
    """The first ``n`` items of ``trace``."""
    return Trace(
        trace.scores[:n],
        trace.labels[:n],
        trace.accepted[:n],
        trace.queried[:n],
        trace.region[:n],
        trace.prob[:n],
        trace.tau_a[:n],
        trace.tau_r[:n],
    )


@dataclass(frozen=True)
class LengthCurve:
    """Per order (rows) and length (columns): the two error rates, their bounds and the
    strong-call frequency of the online policy."""

    lengths: tuple[int, ...]
    incorrect_accept: NDArray[np.float64]
    incorrect_reject: NDArray[np.float64]
    bound_accept: NDArray[np.float64]
    bound_reject: NDArray[np.float64]
    strong_freq: NDArray[np.float64]
    alpha: float
    beta: float
    stream_length: int
    passes: int

    def mean(self, name: str) -> NDArray[np.float64]:
        """The mean over orders of one of the per-order arrays, per length."""
        return np.asarray(getattr(self, name).mean(axis=0))

    def violations(self) -> int:
        """Runs and lengths at which a rate exceeded its bound (the guarantee says rarely:
        each holds with probability at least ``1 - delta``)."""
        return int(
            (self.incorrect_accept > self.bound_accept + 1e-12).sum()
            + (self.incorrect_reject > self.bound_reject + 1e-12).sum()
        )


def error_vs_length(
    scores: Sequence[float] | NDArray[np.float64],
    labels: Sequence[bool] | NDArray[np.bool_],
    lengths: Sequence[int],
    make_policy: Callable[[int], OnlineWeakStrong],
    *,
    orders: int = 20,
    passes: int = 1,
    seed: int = 0,
    delta: float = 0.05,
) -> LengthCurve:
    """Run ``make_policy(order)`` on ``orders`` shuffles of the stream and read, at each
    length, the error rates of the prefix and their finite-sample bound (probability
    ``1 - delta``).

    Order ``r`` is ``passes`` permutations of the stream (drawn from ``seed`` and ``r``) laid
    end to end; ``lengths`` must lie in ``1 .. passes * len(stream)``.
    """
    s, y = check_stream(scores, labels)
    n = s.size
    if orders < 1 or passes < 1:
        raise ValueError(f"orders and passes must be at least 1, got {orders}, {passes}")
    grid = tuple(int(m) for m in lengths)
    if not grid or min(grid) < 1 or max(grid) > passes * n:
        raise ValueError(f"lengths must lie in 1..{passes * n}, got {grid}")
    shape = (orders, len(grid))
    cols = {k: np.zeros(shape) for k in ("ia", "ir", "ba", "br", "sf")}
    alpha = beta = float("nan")
    for r in range(orders):
        rng = np.random.default_rng([seed, r])
        order = np.concatenate([rng.permutation(n) for _ in range(passes)])[: max(grid)]
        policy = make_policy(r)
        alpha, beta = policy.alpha, policy.beta
        trace = run_policy(policy, s[order], y[order], record_thresholds=False)
        for j, m in enumerate(grid):
            part = prefix_trace(trace, m)
            rates = error_rates(part.accepted, part.labels, part.queried)
            bounds = online_error_bounds(policy, part, delta=delta)
            cols["ia"][r, j] = rates.incorrect_accept
            cols["ir"][r, j] = rates.incorrect_reject
            cols["ba"][r, j] = bounds["accept"].bound
            cols["br"][r, j] = bounds["reject"].bound
            cols["sf"][r, j] = rates.strong_freq
    return LengthCurve(
        grid,
        cols["ia"],
        cols["ir"],
        cols["ba"],
        cols["br"],
        cols["sf"],
        alpha,
        beta,
        n,
        passes,
    )


def control_length(curve: LengthCurve, tol: float, *, up_to: int | None = None) -> int | None:
    """The shortest length of the grid from which both mean error rates stay within ``tol``
    of their targets at every longer length of the grid (only lengths ``<= up_to`` when
    given, e.g. the stream's own length to leave repeated passes out); None when even the
    longest misses."""
    keep = [j for j, m in enumerate(curve.lengths) if up_to is None or m <= up_to]
    if not keep:
        raise ValueError(f"no length of the grid {curve.lengths} is <= {up_to}")
    # 1e-12: a mean rate equal to target + tol (a ratio of counts) is within it, whatever
    # the rounding of the two floats.
    ok = (curve.mean("incorrect_accept")[keep] <= curve.alpha + tol + 1e-12) & (
        curve.mean("incorrect_reject")[keep] <= curve.beta + tol + 1e-12
    )
    if not ok[-1]:
        return None
    j = len(ok) - 1
    while j > 0 and ok[j - 1]:
        j -= 1
    return curve.lengths[keep[j]]


def online_policy(cfg: RunConfig, alpha: float, seed: int) -> OnlineWeakStrong:
    """The online policy with the run's settings at target ``alpha = beta``.

    Args:
        cfg: the run's config (step size, initial thresholds, exploration).
        alpha: the target of both errors.
        seed: the exploration coins' seed.

    Returns:
        A fresh :class:`~icml26.weak_strong.policies.OnlineWeakStrong`.
    """
    return OnlineWeakStrong(
        alpha,
        alpha,
        step_size=cfg.step_size,
        tau_a=cfg.tau_a,
        tau_r=cfg.tau_r,
        explore=cfg.explore,
        explore_min=cfg.explore_min,
        use_verdict=cfg.use_verdict,
        seed=seed,
    )


def length_study(
    name: str, scores: NDArray[np.float64], labels: NDArray[np.bool_], cfg: RunConfig
) -> dict[str, object]:
    """The online policy's errors and bound against the stream length, at every target.

    Metrics (means over ``cfg.length_orders`` orders): ``<rate>.<name>.online.a<alpha>.len<n>``
    for the two rates, their bounds and the strong-call frequency; ``control_length`` (the
    shortest length from which both mean rates stay within ``cfg.length_tol`` of the target,
    up to the stream's own length; -1 when the full stream misses), ``control_length_passes``
    (the same over repeated passes), ``bound_violations``; and the slack the guarantee needs:
    ``slack_accept.<name>.a<alpha>`` / ``slack_reject`` (``C / #wrong``, ``C / #right``) and
    ``needed_correct`` / ``needed_wrong`` (``C / length_tol``: answers the tolerance needs).

    Args:
        name: the stream's name in the keys.
        scores: its weak scores (stored order: each order is a fresh shuffle).
        labels: its strong verdicts.
        cfg: the run's config.

    Returns:
        ``{"metrics": {...}, "plot": {...}}``.
    """
    n = int(scores.size)
    lengths = length_grid(n, start=cfg.length_start, passes=cfg.length_passes)
    out: dict[str, float] = {}
    curves: dict[str, object] = {"lengths": lengths, "stream_length": n}
    n_right, n_wrong = float(labels.sum()), float((~labels).sum())
    for i, alpha in enumerate(cfg.alphas):
        curve = error_vs_length(
            scores,
            labels,
            lengths,
            lambda r, alpha=alpha, i=i: online_policy(
                cfg, alpha, seed_for(cfg.seed, "lengths", r, i)
            ),
            orders=cfg.length_orders,
            passes=cfg.length_passes,
            seed=seed_for(cfg.seed, "length-orders"),
            delta=cfg.delta,
        )
        tail = f"{name}.online.{akey(alpha)}"
        names = ("incorrect_accept", "incorrect_reject", "bound_accept", "bound_reject")
        for rate in (*names, "strong_freq"):
            for m, v in zip(lengths, curve.mean(rate), strict=True):
                out[f"{rate}.{tail}.len{m}"] = float(v)
        real = control_length(curve, cfg.length_tol, up_to=n)
        out[f"control_length.{tail}"] = float(real if real is not None else -1)
        if cfg.length_passes > 1:
            found = control_length(curve, cfg.length_tol)
            out[f"control_length_passes.{tail}"] = float(found if found is not None else -1)
        out[f"bound_violations.{tail}"] = float(curve.violations())
        c_a, c_r = bound_constants(online_policy(cfg, alpha, 0))
        # The guarantee's numbers belong to the settings, not to a policy's run: no "online"
        # part, so a placebo that swaps the policy leaves them as they are.
        need = f"{name}.{akey(alpha)}"
        out[f"slack_accept.{need}"] = c_a / max(n_wrong, 1.0)
        out[f"slack_reject.{need}"] = c_r / max(n_right, 1.0)
        out[f"needed_wrong.{need}"] = c_a / cfg.length_tol if cfg.length_tol > 0 else -1.0
        out[f"needed_correct.{need}"] = c_r / cfg.length_tol if cfg.length_tol > 0 else -1.0
        curves[akey(alpha)] = {
            rate: {
                "mean": curve.mean(rate).tolist(),
                "lo": np.quantile(getattr(curve, rate), 0.1, axis=0).tolist(),
                "hi": np.quantile(getattr(curve, rate), 0.9, axis=0).tolist(),
            }
            for rate in names
        }
    return {"metrics": out, "plot": {"length_study": curves}}

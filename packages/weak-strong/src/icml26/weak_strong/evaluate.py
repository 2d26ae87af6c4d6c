"""Every policy on a stream at every target: the job's method step, one stream at a time.

For a recorded stream (synthetic, the math stream, a user's file) each repeat is a fresh
random order (real streams) or a fresh draw (synthetic) with fresh coins; for Sudoku each
repeat replays the puzzles with fresh proposer coins. Metric keys (``keys.key``)::

    incorrect_accept.<stream>.<policy>.a<alpha>   incorrect_reject.<...>   strong_freq.<...>
    final_accuracy.<...>   excess_accept.<...> = incorrect_accept - alpha   excess_reject.<...>
    <name>_se.<...>    (standard error over repeats of each of the above)
    bound_accept.<...> / bound_reject.<...> and margin_* (online only)
    calibration_ece.<stream>  sharpness.<stream>  resolution.<stream>  base_accuracy.<stream>
    n_items.<stream>  n_correct.<stream>  n_wrong.<stream>

Policies come from one table, :data:`POLICY_FACTORIES` (name -> factory).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from icml26.shared import rng_for, seed_for
from icml26.shared.stats import mean_se
from icml26.weak_strong.baselines import (
    AlwaysStrong,
    CalibratedThresholds,
    LabelFreeThresholds,
    ScoreBlind,
    WeakOnly,
    oracle_policy,
)
from icml26.weak_strong.config import SYNTHETIC_STREAMS, RunConfig
from icml26.weak_strong.guarantees import online_error_bounds
from icml26.weak_strong.keys import akey, eta_key
from icml26.weak_strong.lengths import online_policy
from icml26.weak_strong.metrics import (
    error_rates,
    expected_calibration_error,
    resolution,
    running_error_rates,
    sharpness,
)
from icml26.weak_strong.policies import OnlineWeakStrong, Policy, Trace, run_policy
from icml26.weak_strong.streams import Stream, load_stream_file, make_stream
from icml26.weak_strong.tasks.math import math_stream
from icml26.weak_strong.tasks.sudoku import make_puzzle, run_sudoku

__all__ = [
    "POLICY_FACTORIES",
    "base_stream",
    "evaluate_stream",
    "evaluate_sudoku",
    "make_policy",
    "pick_step_size",
    "repeat_stream",
    "select_step_size",
    "step_size_front",
]

PLOT_POINTS = 400
Factory = Callable[[float, RunConfig, Stream | None, int, int], Policy]


def _online(alpha: float, cfg: RunConfig, _s: Stream | None, _n: int, seed: int) -> Policy:
    return online_policy(cfg, alpha, seed)


def _oracle(alpha: float, _c: RunConfig, stream: Stream | None, _n: int, seed: int) -> Policy:
    if stream is None:
        raise ValueError("the oracle needs the stream whose law it knows in hindsight")
    return oracle_policy(stream.scores, stream.labels, alpha, alpha, seed=seed)


def _n_cal(cfg: RunConfig, n: int) -> int:
    return max(1, min(cfg.n_calibration, n // 5))


#: Every policy of the job by name: ``factory(alpha, config, stream, n_items, seed)``.
POLICY_FACTORIES: dict[str, Factory] = {
    "online": _online,
    "oracle": _oracle,
    "fixed_calibrated": lambda a, c, _s, n, _seed: CalibratedThresholds(a, a, _n_cal(c, n)),
    "weak_only": lambda _a, c, _s, _n, _seed: WeakOnly(c.weak_threshold),
    "always_strong": lambda *_: AlwaysStrong(),
    "label_free": lambda a, c, _s, n, _seed: LabelFreeThresholds(a, a, _n_cal(c, n)),
    "score_blind": lambda a, _c, _s, _n, seed: ScoreBlind(a, a, seed=seed),
}


def make_policy(
    name: str, alpha: float, cfg: RunConfig, stream: Stream | None, n: int, seed: int
) -> Policy:
    """The policy ``name`` of :data:`POLICY_FACTORIES` at target ``alpha = beta``.

    Args:
        name: a policy name.
        alpha: the target of both errors.
        cfg: the run's config (online settings, calibration split, weak cut).
        stream: the stream (the oracle reads its law), or None.
        n: the stream's length (caps the calibration split at a fifth).
        seed: the policy's coin seed.

    Returns:
        A fresh policy.

    Raises:
        ValueError: an unknown name.
    """
    if name not in POLICY_FACTORIES:
        raise ValueError(f"unknown policy {name!r}; policies: {', '.join(POLICY_FACTORIES)}")
    return POLICY_FACTORIES[name](alpha, cfg, stream, n, seed)


def base_stream(name: str, cfg: RunConfig) -> Stream:
    """A recorded stream in its stored order: the math stream (``cfg.math_source``) or the
    user's file (``cfg.stream_file``)."""
    if name == "math":
        return math_stream(
            source=cfg.math_source,
            model=cfg.math_model,
            problems=cfg.math_problems,
            k=cfg.math_samples,
            temperature=cfg.math_temperature,
            max_tokens=cfg.math_max_tokens,
            seed=cfg.seed,
            cache=cfg.math_cache or None,
        )
    if name == "user":
        return load_stream_file(cfg.stream_file)
    raise ValueError(f"{name} is not a recorded stream")


def repeat_stream(name: str, cfg: RunConfig, repeat: int, base: Stream | None = None) -> Stream:
    """Repeat ``repeat`` of a stream: a fresh draw of a synthetic stream (one latent draw per
    repeat shared by every synthetic kind), or a fresh random order of a recorded one (every
    repeat, the first included: a problem's samples never sit together)."""
    if name in SYNTHETIC_STREAMS:
        return make_stream(name, cfg.n_items, rng_for(cfg.seed, "stream", repeat))
    base = base if base is not None else base_stream(name, cfg)
    order = rng_for(cfg.seed, "order", name, repeat).permutation(len(base))
    return Stream(name, base.scores[order], base.labels[order], base.description, base.meta)


def _downsample(x: np.ndarray) -> list[float | None]:
    idx = np.unique(np.linspace(0, x.size - 1, min(PLOT_POINTS, x.size)).astype(int))
    return [float(v) if np.isfinite(v) else None for v in x[idx]]


def _curves(trace: Trace) -> dict[str, list[float | None]]:
    run = running_error_rates(trace.accepted, trace.labels, trace.queried)
    out = {k: _downsample(v) for k, v in run.items()}
    out["t"] = _downsample(np.arange(1, trace.labels.size + 1, dtype=float))
    out["tau_a"] = _downsample(trace.tau_a)
    out["tau_r"] = _downsample(trace.tau_r)
    return out


def score_histogram(name: str, stream: Stream, k: int) -> dict[str, float]:
    """The agreement-score histogram of a self-consistency stream: ``score_count.<name>.k<i>``
    (answers whose ``i`` of ``k`` samples agree) and ``score_accuracy.<name>.k<i>`` (their
    share correct; absent for an empty bin).

    Args:
        name: the stream's name in the keys.
        stream: a stream whose scores are multiples of ``1 / k``.
        k: samples per problem.

    Returns:
        The metrics.
    """
    level = np.round(stream.scores * k).astype(int)
    out: dict[str, float] = {}
    for i in range(k + 1):
        hit = level == i
        out[f"score_count.{name}.k{i}"] = float(hit.sum())
        if hit.any():
            out[f"score_accuracy.{name}.k{i}"] = float(stream.labels[hit].mean())
    return out


class _Sums:
    """Per-repeat values of every metric, reduced to means, SEs and smallest margins."""

    def __init__(self) -> None:
        self.values: dict[str, list[float]] = defaultdict(list)
        self.margins: dict[str, list[float]] = defaultdict(list)
        self.described: dict[str, float] = {}

    def describe(self, name: str, scores: np.ndarray, labels: np.ndarray) -> None:
        self.described.update(
            {
                f"calibration_ece.{name}": expected_calibration_error(scores, labels),
                f"sharpness.{name}": sharpness(scores),
                f"resolution.{name}": resolution(scores, labels),
                f"base_accuracy.{name}": float(labels.mean()),
                f"n_items.{name}": float(labels.size),
                f"n_correct.{name}": float(labels.sum()),
                f"n_wrong.{name}": float((~labels).sum()),
            }
        )

    def record(self, tail: str, alpha: float, policy: Policy, trace: Trace, delta: float) -> None:
        rates = error_rates(trace.accepted, trace.labels, trace.queried)
        for k, v in rates.as_dict().items():
            self.values[f"{k}.{tail}"].append(v)
        self.values[f"excess_accept.{tail}"].append(rates.incorrect_accept - alpha)
        self.values[f"excess_reject.{tail}"].append(rates.incorrect_reject - alpha)
        if isinstance(policy, OnlineWeakStrong):
            bounds = online_error_bounds(policy, trace, delta=delta)
            for side in ("accept", "reject"):
                b = bounds[side]
                self.values[f"bound_{side}.{tail}"].append(b.bound)
                self.margins[f"margin_{side}.{tail}"].append(b.bound - b.rate)

    def finish(self) -> dict[str, float | None]:
        out: dict[str, float | None] = dict(self.described)
        for k, v in self.values.items():
            est = mean_se(v)
            head, _, rest = k.partition(".")
            out[k] = float(est.mean)
            out[f"{head}_se.{rest}"] = float(est.se) if np.isfinite(est.se) else None
        out.update({k: float(np.min(v)) for k, v in self.margins.items()})
        return out


def evaluate_stream(name: str, cfg: RunConfig) -> dict[str, Any]:
    """Every policy of ``cfg.policies`` at every target on a recorded stream, over
    ``cfg.stream_repeats`` repeats (see the module docstring).

    Args:
        name: a synthetic stream, ``"math"`` or ``"user"``.
        cfg: the run's config.

    Returns:
        ``{"metrics": {...}, "plot": {...}}`` (JSON values; NaN as None).
    """
    base = None if name in SYNTHETIC_STREAMS else base_stream(name, cfg)
    sums = _Sums()
    plot: dict[str, Any] = {}
    for r in range(cfg.stream_repeats):
        stream = repeat_stream(name, cfg, r, base)
        if r == 0:
            sums.describe(name, stream.scores, stream.labels)
            if "unparsed_share" in stream.meta:
                sums.described[f"unparsed_share.{name}"] = float(stream.meta["unparsed_share"])
            if stream.meta.get("k"):
                sums.described.update(score_histogram(name, stream, int(stream.meta["k"])))
            plot["reliability"] = (stream.scores[:20000].tolist(), stream.labels[:20000].tolist())
        for i, alpha in enumerate(cfg.alphas):
            for j, pname in enumerate(cfg.policies):
                seed = seed_for(cfg.seed, "coins", name, r, i, j)
                policy = make_policy(pname, alpha, cfg, stream, len(stream), seed)
                trace = run_policy(policy, stream.scores, stream.labels)
                sums.record(f"{name}.{pname}.{akey(alpha)}", alpha, policy, trace, cfg.delta)
                if r == 0 and i == len(cfg.alphas) // 2:
                    plot[pname] = _curves(trace)
    return {"metrics": sums.finish(), "plot": plot}


#: Policies not run on Sudoku: there the stream depends on the policy's own moves, so no
#: hindsight law of "the stream" exists for an oracle (the exhaustive run's law is another
#: stream: an oracle built on it missed its targets, 0.28 / 0.32 at 0.1). Shown as n/a.
SUDOKU_SKIPS = ("oracle",)


def _puzzles(cfg: RunConfig) -> list[tuple[list[int], list[int]]]:
    rng = rng_for(cfg.seed, "puzzles")
    return [make_puzzle(rng, blanks=cfg.sudoku_blanks) for _ in range(cfg.sudoku_puzzles)]


def evaluate_sudoku(cfg: RunConfig) -> dict[str, Any]:
    """Every policy at every target on sequential Sudoku solving (each run plays the puzzles
    itself, so the stream depends on the policy); also ``solved.sudoku.<policy>.a<alpha>``.

    Args:
        cfg: the run's config.

    Returns:
        ``{"metrics": {...}, "plot": {...}}``.
    """
    puzzles = _puzzles(cfg)
    sums = _Sums()
    plot: dict[str, Any] = {}
    for r in range(cfg.repeats):
        moves = seed_for(cfg.seed, "moves", r)
        reference = run_sudoku(AlwaysStrong(), puzzles, seed=moves)
        ref = reference.trace
        if r == 0:
            sums.describe("sudoku", ref.scores, ref.labels)
            plot["reliability"] = (ref.scores.tolist(), ref.labels.tolist())
        for i, alpha in enumerate(cfg.alphas):
            for j, pname in enumerate(cfg.policies):
                if pname in SUDOKU_SKIPS:
                    continue
                seed = seed_for(cfg.seed, "coins", "sudoku", r, i, j)
                policy = make_policy(pname, alpha, cfg, None, ref.labels.size, seed)
                res = (
                    reference
                    if pname == "always_strong"
                    else run_sudoku(policy, puzzles, seed=moves)
                )
                tail = f"sudoku.{pname}.{akey(alpha)}"
                sums.record(tail, alpha, policy, res.trace, cfg.delta)
                sums.values[f"solved.{tail}"].append(res.solved / res.puzzles)
                if r == 0 and i == len(cfg.alphas) // 2:
                    plot[pname] = _curves(res.trace)
    return {"metrics": sums.finish(), "plot": plot}


def step_size_front(
    name: str, cfg: RunConfig, step_sizes: Sequence[float]
) -> dict[str, float | None]:
    """The online policy's errors and strong calls at each step size: the error / strong-call
    front, as ``<metric>.<stream>.online_eta<eta>.a<alpha>`` (means and SEs over repeats).

    Args:
        name: ``"math"``, ``"sudoku"`` or a synthetic stream.
        cfg: the run's config (its other online settings are kept).
        step_sizes: the step sizes of the front.

    Returns:
        The front's metrics.
    """
    sums = _Sums()
    puzzles = _puzzles(cfg) if name == "sudoku" else []
    base = None if name in SYNTHETIC_STREAMS or name == "sudoku" else base_stream(name, cfg)
    for r in range(cfg.repeats):
        stream = None if name == "sudoku" else repeat_stream(name, cfg, r, base)
        for i, alpha in enumerate(cfg.alphas):
            for eta in step_sizes:
                seed = seed_for(cfg.seed, "front", name, r, i, eta_key(eta))
                policy = _online(alpha, replace(cfg, step_size=eta), None, 0, seed)
                if stream is None:
                    trace = run_sudoku(policy, puzzles, seed=seed_for(cfg.seed, "moves", r)).trace
                else:
                    trace = run_policy(policy, stream.scores, stream.labels)
                sums.record(
                    f"{name}.online_{eta_key(eta)}.{akey(alpha)}", alpha, policy, trace, cfg.delta
                )
    return sums.finish()


#: The validation streams of the step-size selection: stationary and drifting (the algorithm
#: promises control on any stream, so a step too small to follow a drift is not a choice).
VALIDATION_STREAMS = ("calibrated", "drift")


def pick_step_size(
    metrics: dict[str, float | None],
    step_sizes: Sequence[float],
    alphas: Sequence[float],
    streams: Sequence[str] = VALIDATION_STREAMS,
    tol: float = 0.02,
) -> float:
    """The selection rule of :func:`select_step_size` on its metrics: among ``step_sizes``,
    the one with the fewest strong calls (mean over streams and targets) whose two mean
    error rates end within ``tol`` of the target, on either side, on every stream at every
    target.

    Args:
        metrics: ``<rate>.validation_<stream>.online_eta<eta>.a<alpha>`` values.
        step_sizes: the candidates.
        alphas: the targets.
        streams: the validation streams.
        tol: the tolerance on each mean excess.

    Returns:
        The selected step size, or -1.0 when no candidate controls both errors.

    Raises:
        ValueError: a metric the rule needs is missing or not a number (never read as 0).
    """

    def value(key: str) -> float:
        v = metrics.get(key)
        if v is None or not np.isfinite(v):
            raise ValueError(f"step-size selection: metric {key!r} is missing or not a number")
        return float(v)

    best, best_freq = -1.0, np.inf
    for eta in step_sizes:
        tails = [
            f"validation_{kind}.online_{eta_key(eta)}.{akey(a)}" for kind in streams for a in alphas
        ]
        ok = all(
            abs(value(f"excess_{side}.{t}")) <= tol for t in tails for side in ("accept", "reject")
        )
        freq = float(np.mean([value(f"strong_freq.{t}") for t in tails]))
        if ok and freq < best_freq:
            best, best_freq = float(eta), freq
    return best


def select_step_size(cfg: RunConfig, step_sizes: Sequence[float]) -> dict[str, float | None]:
    """The step-size selection, on validation streams no claim reads: a calibrated and a
    drifting synthetic stream drawn from their own seed stream (``rng_for(seed,
    "validation", repeat)``), ``cfg.repeats`` draws each. Among ``step_sizes``, the one with
    the fewest strong calls (mean over streams and targets) whose two mean error rates end
    within 0.02 of the target, on either side, on both streams at every target.

    Args:
        cfg: the run's config (targets, stream length, other online settings).
        step_sizes: the candidates.

    Returns:
        ``<rate>.validation_<stream>.online_eta<eta>.a<alpha>`` for every candidate and
        ``selected_step_size.validation`` (-1 when no candidate controls both errors).
    """
    sums = _Sums()
    for kind, r in ((kind, r) for kind in VALIDATION_STREAMS for r in range(cfg.repeats)):
        stream = make_stream(kind, cfg.n_items, rng_for(cfg.seed, "validation", r))
        for i, alpha in enumerate(cfg.alphas):
            for eta in step_sizes:
                seed = seed_for(cfg.seed, "validation-coins", kind, r, i, eta_key(eta))
                policy = online_policy(replace(cfg, step_size=eta), alpha, seed)
                trace = run_policy(policy, stream.scores, stream.labels)
                tail = f"validation_{kind}.online_{eta_key(eta)}.{akey(alpha)}"
                sums.record(tail, alpha, policy, trace, cfg.delta)
    out = sums.finish()
    best = pick_step_size(out, step_sizes, cfg.alphas, VALIDATION_STREAMS)
    out["selected_step_size.validation"] = best
    return out

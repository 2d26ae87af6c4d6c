"""The main job (``icml26 run weak-strong``) and the benchmark (``icml26 bench weak-strong``).

For every stream, target ``alpha = beta`` and policy, the metrics of the issue::

    incorrect_accept.<stream>.<policy>.a<alpha>   incorrect_reject.<...>   strong_freq.<...>
    final_accuracy.<...>   excess_accept.<...> = incorrect_accept - alpha   excess_reject.<...>
    calibration_ece.<stream>   sharpness.<stream>   resolution.<stream>

plus, for the online policy, the finite-sample bound of :mod:`~icml26.weak_strong.guarantees`
(``bound_accept``/``bound_reject``, and ``margin_* = bound - rate``, the smallest over repeats),
``solved.sudoku.<policy>.a<alpha>`` (share of puzzles solved) and the population study
(``population.*``: two-threshold optimum against a generic LP solver, the value of
sharpness and of calibration). Rates are means over ``repeats`` independent runs.

On the math stream, the error-vs-length study (:mod:`~icml26.weak_strong.lengths`, means
over ``length_orders`` random orders, prefixes of each run)::

    incorrect_accept.math.online.a<alpha>.len<n>   incorrect_reject.<...>.len<n>
    bound_accept.<...>.len<n>   bound_reject.<...>.len<n>   strong_freq.<...>.len<n>
    control_length.math.online.a<alpha>   (shortest length from which both mean rates stay
        within ``length_tol`` of the target up to the stream's own length, every item seen
        once; -1 when the full stream misses)
    control_length_passes.math.online.a<alpha>   (the same over the whole grid, lengths
        beyond the stream being repeated shuffled passes; when ``length_passes > 1``)
    bound_violations.math.online.a<alpha>   (runs x lengths with a rate above its bound)
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from icml26.shared import RunDir, log, seed_everything
from icml26.weak_strong.config import BenchConfig, WeakStrongConfig
from icml26.weak_strong.guarantees import online_error_bounds
from icml26.weak_strong.lengths import control_length, error_vs_length, length_grid
from icml26.weak_strong.metrics import (
    error_rates,
    expected_calibration_error,
    resolution,
    running_error_rates,
    sharpness,
)
from icml26.weak_strong.policies import (
    AlwaysStrong,
    CalibratedThresholds,
    FixedThresholds,
    LabelFreeThresholds,
    OnlineWeakStrong,
    Policy,
    Trace,
    WeakOnly,
    decide_and_verify,
    oracle_policy,
    run_policy,
)
from icml26.weak_strong.population import (
    ScoreLaw,
    optimal_policy,
    policy_risks,
    score_thresholds,
)
from icml26.weak_strong.streams import (
    SYNTHETIC_STREAMS,
    Stream,
    load_stream_file,
    make_stream,
)

__all__ = ["StageResult", "bench", "run"]

PLOT_POINTS = 400


@dataclass
class StageResult:
    """What one stage of the job measured: flat ``metrics`` and the data of its plots."""

    metrics: dict[str, float]
    plot: dict[str, Any] = field(default_factory=dict)


def _describe_stream(
    sums: dict[str, list[float]], name: str, scores: np.ndarray, labels: np.ndarray
) -> None:
    """The weak verifier's quality on a stream: ECE, sharpness, resolution, base accuracy."""
    sums[f"calibration_ece.{name}"].append(expected_calibration_error(scores, labels))
    sums[f"sharpness.{name}"].append(sharpness(scores))
    sums[f"resolution.{name}"].append(resolution(scores, labels))
    sums[f"base_accuracy.{name}"].append(float(labels.mean()))
    sums[f"n_items.{name}"].append(float(labels.size))


def akey(alpha: float) -> str:
    """``0.1 -> "a0.1"``: the target's part of a metric key."""
    return f"a{alpha:g}"


def _make_policy(
    name: str, alpha: float, cfg: WeakStrongConfig, stream: Stream | None, n: int, seed: int
) -> Policy:
    n_cal = max(1, min(cfg.n_calibration, n // 5))
    if name == "online":
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
    if name == "always_strong":
        return AlwaysStrong()
    if name == "weak_only":
        return WeakOnly(cfg.weak_threshold)
    if name == "fixed_calibrated":
        return CalibratedThresholds(alpha, alpha, n_cal)
    if name == "label_free":
        return LabelFreeThresholds(alpha, alpha, n_cal)
    if name == "oracle":
        assert stream is not None
        return oracle_policy(stream.scores, stream.labels, alpha, alpha)
    raise ValueError(f"unknown policy {name!r}")


def _downsample(x: np.ndarray) -> list[float]:
    idx = np.unique(np.linspace(0, x.size - 1, min(PLOT_POINTS, x.size)).astype(int))
    return [float(v) for v in x[idx]]


def _curves(trace: Trace) -> dict[str, list[float]]:
    run = running_error_rates(trace.accepted, trace.labels, trace.queried)
    out = {k: _downsample(v) for k, v in run.items()}
    out["t"] = _downsample(np.arange(1, trace.labels.size + 1, dtype=float))
    out["tau_a"] = _downsample(trace.tau_a)
    out["tau_r"] = _downsample(trace.tau_r)
    return out


def _stream_for(name: str, cfg: WeakStrongConfig, repeat: int, run_dir: RunDir) -> Stream:
    seed = cfg.seed * 1000 + repeat
    if name in SYNTHETIC_STREAMS:
        # One latent seed per repeat for every synthetic stream: calibrated, over- and
        # under-confident streams share their answers and differ only in the verifier.
        return make_stream(name, cfg.n_items, seed)
    if name == "math":
        from icml26.weak_strong.tasks.math import math_stream

        base = math_stream(
            source=cfg.math_source,
            model=cfg.math_model,
            problems=cfg.math_problems,
            k=cfg.math_samples,
            temperature=cfg.math_temperature,
            max_tokens=cfg.math_max_tokens,
            seed=cfg.seed,
            cache=cfg.math_cache or None,
        )
    elif name == "user":
        base = load_stream_file(cfg.stream_file)
    else:
        raise ValueError(f"{name} is not a static stream")
    # Real streams: a fresh random order per repeat (the answers are exchangeable a priori).
    order = np.random.default_rng(seed).permutation(len(base)) if repeat else np.arange(len(base))
    return Stream(name, base.scores[order], base.labels[order], base.description, base.meta)


def _length_study(stream: Stream, cfg: WeakStrongConfig) -> StageResult:
    """The online policy's errors and bound against the stream length, at every target."""
    lengths = length_grid(len(stream), start=cfg.length_start, passes=cfg.length_passes)
    out: dict[str, float] = {}
    curves: dict[str, Any] = {"lengths": lengths, "stream_length": len(stream)}
    for i, alpha in enumerate(cfg.alphas):

        def policy(r: int, alpha: float = alpha, i: int = i) -> OnlineWeakStrong:
            coin_seed = ((cfg.seed * 7919 + 500 + r) * 31 + i) * 17
            p = _make_policy("online", alpha, cfg, None, len(stream), coin_seed)
            assert isinstance(p, OnlineWeakStrong)
            return p

        curve = error_vs_length(
            stream.scores,
            stream.labels,
            lengths,
            policy,
            orders=cfg.length_orders,
            passes=cfg.length_passes,
            seed=cfg.seed * 1000 + 77,
            delta=cfg.delta,
        )
        tail = f"{stream.name}.online.{akey(alpha)}"
        names = ("incorrect_accept", "incorrect_reject", "bound_accept", "bound_reject")
        for name in (*names, "strong_freq"):
            for m, v in zip(lengths, curve.mean(name), strict=True):
                out[f"{name}.{tail}.len{m}"] = float(v)
        real = control_length(curve, cfg.length_tol, up_to=len(stream))
        out[f"control_length.{tail}"] = float(real if real is not None else -1)
        if cfg.length_passes > 1:
            found = control_length(curve, cfg.length_tol)
            out[f"control_length_passes.{tail}"] = float(found if found is not None else -1)
        out[f"bound_violations.{tail}"] = float(curve.violations())
        curves[akey(alpha)] = {
            name: {
                "mean": curve.mean(name).tolist(),
                "lo": np.quantile(getattr(curve, name), 0.1, axis=0).tolist(),
                "hi": np.quantile(getattr(curve, name), 0.9, axis=0).tolist(),
            }
            for name in names
        }
    return StageResult(out, {"length_study": curves})


def _static_stream(name: str, cfg: WeakStrongConfig, run_dir: RunDir) -> StageResult:
    """Every policy at every target on a recorded stream, over ``cfg.repeats`` repeats."""
    sums: dict[str, list[float]] = defaultdict(list)
    margins: dict[str, list[float]] = defaultdict(list)
    plot: dict[str, Any] = {}
    for r in range(cfg.repeats):
        stream = _stream_for(name, cfg, r, run_dir)
        if r == 0:
            _describe_stream(sums, name, stream.scores, stream.labels)
            plot["reliability"] = (stream.scores[:20000].tolist(), stream.labels[:20000].tolist())
        for i, alpha in enumerate(cfg.alphas):
            for j, pname in enumerate(cfg.policies):
                coin_seed = ((cfg.seed * 7919 + r) * 31 + i) * 17 + j
                policy = _make_policy(pname, alpha, cfg, stream, len(stream), coin_seed)
                trace = run_policy(policy, stream.scores, stream.labels)
                _record(sums, margins, name, pname, alpha, policy, trace, cfg)
                if r == 0 and i == len(cfg.alphas) // 2:
                    plot[pname] = _curves(trace)
    metrics = _finish(sums, margins)
    if name == "math" and cfg.length_orders > 0:
        study = _length_study(_stream_for(name, cfg, 0, run_dir), cfg)
        metrics.update(study.metrics)
        plot.update(study.plot)
    return StageResult(metrics, plot)


def _record(
    sums: dict[str, list[float]],
    margins: dict[str, list[float]],
    name: str,
    pname: str,
    alpha: float,
    policy: Policy,
    trace: Trace,
    cfg: WeakStrongConfig,
) -> None:
    rates = error_rates(trace.accepted, trace.labels, trace.queried)
    tail = f"{name}.{pname}.{akey(alpha)}"
    for k, v in rates.as_dict().items():
        sums[f"{k}.{tail}"].append(v)
    sums[f"excess_accept.{tail}"].append(rates.incorrect_accept - alpha)
    sums[f"excess_reject.{tail}"].append(rates.incorrect_reject - alpha)
    if isinstance(policy, OnlineWeakStrong):
        bounds = online_error_bounds(policy, trace, delta=cfg.delta)
        for side in ("accept", "reject"):
            b = bounds[side]
            sums[f"bound_{side}.{tail}"].append(b.bound)
            margins[f"margin_{side}.{tail}"].append(b.bound - b.rate)


def _finish(sums: dict[str, list[float]], margins: dict[str, list[float]]) -> dict[str, float]:
    out = {k: float(np.mean(v)) for k, v in sums.items()}
    out.update({k: float(np.min(v)) for k, v in margins.items()})
    return out


def _sudoku(cfg: WeakStrongConfig) -> StageResult:
    """Every policy at every target on sequential Sudoku solving (the stream depends on the
    policy: each run plays the puzzles itself)."""
    from icml26.weak_strong.tasks.sudoku import make_puzzle, run_sudoku

    rng = np.random.default_rng(cfg.seed)
    puzzles = [make_puzzle(rng, blanks=cfg.sudoku_blanks) for _ in range(cfg.sudoku_puzzles)]
    sums: dict[str, list[float]] = defaultdict(list)
    margins: dict[str, list[float]] = defaultdict(list)
    plot: dict[str, Any] = {}
    policies = sorted(cfg.policies, key=lambda p: p != "always_strong")
    for r in range(cfg.repeats):
        move_seed = cfg.seed * 1000 + r
        # The oracle's law: the moves of an exhaustive run (the stream itself depends on the
        # policy, so "hindsight" is taken on the run that verifies every move).
        reference = run_sudoku(AlwaysStrong(), puzzles, seed=move_seed)
        ref = reference.trace
        if r == 0:
            _describe_stream(sums, "sudoku", ref.scores, ref.labels)
            plot["reliability"] = (ref.scores.tolist(), ref.labels.tolist())
        for i, alpha in enumerate(cfg.alphas):
            for j, pname in enumerate(policies):
                coin_seed = ((cfg.seed * 7919 + r) * 31 + i) * 17 + j
                if pname == "oracle":
                    tau_a, tau_r = score_thresholds(
                        ScoreLaw.from_samples(ref.scores, ref.labels), alpha, alpha
                    )
                    policy: Policy = FixedThresholds(tau_a, tau_r, name="oracle")
                elif pname == "always_strong":
                    policy = AlwaysStrong()
                else:
                    n_ref = ref.labels.size
                    policy = _make_policy(pname, alpha, cfg, None, n_ref, coin_seed)
                res = (
                    reference
                    if pname == "always_strong"
                    else run_sudoku(policy, puzzles, seed=move_seed)
                )
                _record(sums, margins, "sudoku", pname, alpha, policy, res.trace, cfg)
                sums[f"solved.sudoku.{pname}.{akey(alpha)}"].append(res.solved / res.puzzles)
                if r == 0 and i == len(cfg.alphas) // 2:
                    plot[pname] = _curves(res.trace)
    return StageResult(_finish(sums, margins), plot)


# -- population study ---------------------------------------------------------------------------

SHARPNESS_FAMILY = {"sharp": 0.5, "medium": 2.0, "blunt": 8.0}  # Beta concentration kappa
_MEAN = 0.6


def _beta_pdf(a: float, b: float) -> Callable[[np.ndarray], np.ndarray]:
    from scipy.stats import beta as beta_dist

    return lambda s: beta_dist.pdf(s, a, b)


def _confident_mistakes(s: np.ndarray) -> np.ndarray:
    """``eta(s) = s`` except a band of confidently wrong scores, ``eta = 0.15`` on (0.8, 0.9]."""
    return np.where((s > 0.8) & (s <= 0.9), 0.15, s)


def population_laws() -> dict[str, ScoreLaw]:
    """The laws of the population study (calibrated Beta family, and a non-monotone one)."""
    laws = {
        name: ScoreLaw.from_density(lambda s: s, _beta_pdf(k * _MEAN, k * (1 - _MEAN)))
        for name, k in SHARPNESS_FAMILY.items()
    }
    laws["nonmonotone"] = ScoreLaw.from_density(_confident_mistakes, _beta_pdf(2 * _MEAN, 2 * 0.4))
    return laws


def _lp_defer(law: ScoreLaw, alpha: float, beta: float) -> float:
    """The LP optimum of ``P(defer)`` by a generic solver (HiGHS), the reference for the
    two-threshold solution."""
    from scipy.optimize import linprog

    n = law.atoms.size
    m = law.mass
    c = np.concatenate([-m, -m])  # maximise P(accept) + P(reject)
    pi0, pi1 = 1 - law.pi1, law.pi1
    a_ub = np.zeros((2 + n, 2 * n))
    a_ub[0, :n] = law.p_incorrect
    a_ub[1, n:] = law.p_correct
    a_ub[2:, :n] = np.eye(n)
    a_ub[2:, n:] = np.eye(n)
    b_ub = np.concatenate([[alpha * pi0, beta * pi1], np.ones(n)])
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, bounds=(0, 1), method="highs")
    if not res.success:
        raise RuntimeError(f"the LP solver failed: {res.message}")
    return float(1.0 + res.fun)


def _population(cfg: WeakStrongConfig) -> StageResult:
    """The population study: optimal policies on known score laws, and the LP check."""
    out: dict[str, float] = {}
    laws = population_laws()
    for name, law in laws.items():
        eta = law.eta
        mean = float(np.dot(law.mass, eta))
        out[f"population.sharpness.{name}"] = float(np.dot(law.mass, (eta - mean) ** 2))
        for alpha in cfg.alphas:
            for order in ("eta", "score"):
                pol = optimal_policy(law, alpha, alpha, order=order)
                risks = policy_risks(pol)
                key = f"population.strong_freq.{name}.{order}_order.{akey(alpha)}"
                out[key] = risks["strong_freq"]
            out[f"population.strong_freq.{name}.{akey(alpha)}"] = out[
                f"population.strong_freq.{name}.eta_order.{akey(alpha)}"
            ]
    # The two-threshold solution against a generic LP solver on random discrete laws.
    rng = np.random.default_rng(cfg.seed + 12345)
    gaps = []
    for _ in range(25):
        n = int(rng.integers(5, 40))
        atoms = np.sort(rng.choice(np.linspace(0, 1, 1001), size=n, replace=False))
        mass = rng.dirichlet(np.ones(2 * n))
        law = ScoreLaw(atoms, mass[:n], mass[n:])
        a, b = rng.uniform(0.01, 0.45, size=2)
        ours = policy_risks(optimal_policy(law, a, b))["strong_freq"]
        gaps.append(abs(ours - _lp_defer(law, a, b)))
    out["population.lp_gap"] = float(max(gaps))
    return StageResult(out)


# -- the job ------------------------------------------------------------------------------------


def _stage(name: str, config: WeakStrongConfig, run_dir: RunDir) -> StageResult:
    """One stage of the job by name: ``population``, ``sudoku`` or a recorded stream."""
    if name == "population":
        return _population(config)
    if name == "sudoku":
        return _sudoku(config)
    return _static_stream(name, config, run_dir)


def _log_stage(run_dir: RunDir, step: int, name: str, part: StageResult, seconds: float) -> None:
    online_sf = [
        v for k, v in part.metrics.items() if k.startswith("strong_freq.") and ".online." in k
    ]
    summary = {"online_strong_freq_mean": float(np.mean(online_sf))} if online_sf else {}
    run_dir.log_metrics(step, stage=name, seconds=seconds, **summary)
    log(f"{name}: {seconds:.1f}s")


def run(config: WeakStrongConfig, run_dir: RunDir) -> dict[str, float]:
    """Run every policy on every stream; return the metrics (see the module docstring).

    The stages, each checkpointed (a killed run resumes after the last finished one): the
    population study, then each stream of ``config.streams``; then the plots."""
    from icml26.weak_strong.plots import make_plots

    seed_everything(config.seed)
    state = run_dir.checkpoints.latest()
    metrics: dict[str, float] = {}
    plot_data: dict[str, Any] = {}
    done: list[str] = []
    if state is not None:
        _, saved = state
        metrics, plot_data, done = saved["metrics"], saved["plot_data"], saved["done"]
        log(f"resuming after {', '.join(done)}")
    for step, name in enumerate(["population", *config.streams]):
        if name in done:
            continue
        start = time.perf_counter()
        part = _stage(name, config, run_dir)
        metrics.update(part.metrics)
        plot_data[name] = part.plot
        done.append(name)
        _log_stage(run_dir, step, name, part, time.perf_counter() - start)
        run_dir.checkpoints.save(step, {"metrics": metrics, "plot_data": plot_data, "done": done})
    make_plots(config, run_dir, plot_data, population_laws())
    return metrics


def bench(config: BenchConfig, run_dir: RunDir) -> dict[str, float]:
    """Per-decision cost of the online policy on a long calibrated stream (microseconds)."""
    stream = make_stream("calibrated", config.n_items, config.seed)
    scores, labels = stream.scores.tolist(), stream.labels.tolist()

    def decisions_only(policy: Any) -> float:
        t0 = time.perf_counter()
        for s, h in zip(scores, labels, strict=True):
            decide_and_verify(policy, s, h)
        return time.perf_counter() - t0

    best: dict[str, float] = {}
    for _ in range(config.rounds):
        timings = {
            "online": decisions_only(
                OnlineWeakStrong(config.alpha, config.alpha, seed=config.seed)
            ),
            "fixed": decisions_only(FixedThresholds(0.7, 0.3)),
        }
        t0 = time.perf_counter()
        run_policy(
            OnlineWeakStrong(config.alpha, config.alpha, seed=config.seed),
            stream.scores,
            stream.labels,
        )
        timings["online_traced"] = time.perf_counter() - t0
        for k, v in timings.items():
            best[k] = min(best.get(k, np.inf), v)
    n = config.n_items
    out = {f"overhead_us.{k}": 1e6 * v / n for k, v in best.items()}
    out["overhead_us.online_minus_fixed"] = out["overhead_us.online"] - out["overhead_us.fixed"]
    out["n_items"] = float(n)
    run_dir.log_metrics(None, **out)
    return out

"""The main job (``icml26 run blitzrank``) and the bench (``icml26 bench blitzrank``).

Main job, in these parts:

1. ``sim_<noise>``: simulated reranking (n candidates, BM25-like first stage, graded truth)
   with a noisy listwise oracle; BlitzRank at each k (and its re-ask option) against sliding
   window, setwise, pairwise and TourRank: nDCG@10 (with standard errors, paired differences
   to the sliding window), calls, tokens, rounds per query, and the oracle's position flip
   rate. The realistic-oracle spectrum (``sim_persist<pct>``, ``sim_position``) and the noise
   sweep rerun it with other oracles; ``minilm*`` (:mod:`icml26.blitzrank.minilm_tasks`) with
   MiniLM's judgements of real factbook passages.
2. ``calls_perfect``: calls to certify the ordered top-m with a perfect oracle (n = 100,
   m = 10), mean over seeds, for the default (reach) and the entropy schedules.
3. ``sim_cyclic``: an adversarially non-transitive oracle; BlitzRank must still certify, and
   the tiers it reports must be real preference cycles (never mixing groups).
4. ``factbook`` (or ``user`` with ``data=``): real text, BM25 first stage, reranked by the
   local LLM (or an OpenAI-compatible endpoint).

Each finished part is checkpointed, so a killed run resumes at the next part.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml26.blitzrank.baselines import pairwise, setwise, sliding_window, tourrank
from icml26.blitzrank.config import BenchConfig, RunConfig
from icml26.blitzrank.data.simulated import make_simulated_queries
from icml26.blitzrank.data.types import RerankQuery
from icml26.blitzrank.metrics import ndcg_at_k
from icml26.blitzrank.oracles.base import BaseOracle
from icml26.blitzrank.oracles.simulated import CyclicOracle, PerfectOracle, make_oracle
from icml26.blitzrank.probes import position_flip
from icml26.blitzrank.ranker import BlitzRank
from icml26.blitzrank.reask import blitzrank_reask
from icml26.shared import figure, log, seed_everything

__all__ = ["bench", "run", "run_method"]

OracleFactory = Callable[[int], BaseOracle]

#: The entry of a task's results that describes the oracle itself, not a method.
ORACLE = "oracle"


def run_method(
    method: str,
    make: OracleFactory,
    *,
    m: int,
    window: int = 20,
    stride: int = 10,
    setwise_window: int = 4,
    tournaments: int = 2,
    parallel: int = 1,
    max_calls: int = 0,
    seed: int = 0,
    reask_share: float = 0.25,
) -> dict[str, Any]:
    """Run one method on one query; ``make(k)`` builds a fresh oracle with window ``k``.

    Methods: ``blitzrank_k<k>`` (the paper's engine), ``blitzrank_reask_k<k>`` (the engine,
    then up to ``reask_share`` x its calls of verification at position m:
    :mod:`icml26.blitzrank.reask`), ``blitzrank_prior_k<k>`` (the engine showing every query
    in the first-stage order), ``sliding_window``, ``setwise``, ``pairwise``,
    ``tourrank``. Returns ranking, calls, rounds, usage (tokens) and, for BlitzRank,
    certification (and the verification calls).
    """
    certified: bool | None = None
    verify_calls: int | None = None
    if method.startswith("blitzrank_reask_k"):
        k = int(method.removeprefix("blitzrank_reask_k"))
        oracle = make(k)
        rr = blitzrank_reask(oracle, m, k=k, share=reask_share)
        ranking, calls, rounds, certified = rr.ranking, rr.calls, rr.rounds, rr.certified
        verify_calls = rr.verify_calls
    elif method.startswith("blitzrank_prior_k"):
        k = int(method.removeprefix("blitzrank_prior_k"))
        oracle = make(k)
        res = BlitzRank(
            m, k=k, parallel=parallel, max_calls=max_calls or None, present="prior"
        ).rank(oracle)
        ranking, calls, rounds, certified = res.ranking, res.calls, res.rounds, res.certified
    elif method.startswith("blitzrank_k"):
        k = int(method.removeprefix("blitzrank_k"))
        oracle = make(k)
        res = BlitzRank(m, k=k, parallel=parallel, max_calls=max_calls or None).rank(oracle)
        ranking, calls, rounds, certified = res.ranking, res.calls, res.rounds, res.certified
    elif method == "sliding_window":
        oracle = make(window)
        out = sliding_window(oracle, window=window, stride=stride)
        ranking, calls, rounds = out.ranking, out.calls, out.rounds
    elif method == "setwise":
        oracle = make(setwise_window)
        out = setwise(oracle, m=m, window=setwise_window)
        ranking, calls, rounds = out.ranking, out.calls, out.rounds
    elif method == "pairwise":
        oracle = make(2)
        out = pairwise(oracle, m=m)
        ranking, calls, rounds = out.ranking, out.calls, out.rounds
    elif method == "tourrank":
        oracle = make(window)
        out = tourrank(oracle, m=m, window=window, tournaments=tournaments, seed=seed)
        ranking, calls, rounds = out.ranking, out.calls, out.rounds
    else:
        raise ValueError(f"unknown method {method!r}")
    return {
        "ranking": ranking,
        "calls": calls,
        "rounds": rounds,
        "usage": oracle.usage.as_dict(),
        "certified": certified,
        "verify_calls": verify_calls,
    }


def _evaluate(
    task: str,
    queries: list[RerankQuery],
    methods: list[str],
    factory: Callable[[RerankQuery, str, int], OracleFactory],
    cfg: RunConfig,
    *,
    window: int,
    stride: int,
    setwise_window: int,
    flip_probes: int = 0,
    flip_k: int = 10,
) -> dict[str, dict[str, float]]:
    """Mean per-query nDCG@10 (and its standard error), calls, tokens, rounds (certified rate,
    verification calls) per method; with ``flip_probes``, the oracle's position flip rate
    (:func:`~icml26.blitzrank.probes.position_flip`, windows of ``flip_k``) under ``ORACLE``."""
    acc: dict[str, dict[str, list[float]]] = {meth: {} for meth in methods}
    for qi, q in enumerate(queries):
        for meth in methods:
            out = run_method(
                meth,
                factory(q, meth, qi),
                m=cfg.m,
                window=window,
                stride=stride,
                setwise_window=setwise_window,
                tournaments=cfg.tourrank_tournaments,
                parallel=cfg.parallel,
                max_calls=cfg.max_calls,
                seed=cfg.seed + qi,
                reask_share=cfg.reask_share,
            )
            rec = acc[meth]
            rec.setdefault("ndcg10", []).append(ndcg_at_k(out["ranking"], q.relevance, 10))
            rec.setdefault("calls", []).append(out["calls"])
            rec.setdefault("rounds", []).append(out["rounds"])
            rec.setdefault("tokens", []).append(out["usage"]["tokens"])
            rec.setdefault("tokens_in", []).append(out["usage"]["input_tokens"])
            rec.setdefault("repaired_calls", []).append(out["usage"]["repaired_calls"])
            if out["certified"] is not None:
                rec.setdefault("certified_rate", []).append(float(out["certified"]))
            if out["verify_calls"] is not None:
                rec.setdefault("verify_calls", []).append(out["verify_calls"])
    first = [ndcg_at_k(range(q.n), q.relevance, 10) for q in queries]
    result = {meth: {key: float(np.mean(v)) for key, v in rec.items()} for meth, rec in acc.items()}
    for meth, rec in acc.items():  # standard errors of the per-query mean nDCG@10
        result[meth]["ndcg10_se"] = _se(np.asarray(rec["ndcg10"]))
        if meth != "sliding_window" and "sliding_window" in acc:  # paired, same queries
            diff = np.asarray(rec["ndcg10"]) - np.asarray(acc["sliding_window"]["ndcg10"])
            result[meth]["ndcg10_diff_sw"] = float(diff.mean())
            result[meth]["ndcg10_diff_sw_se"] = _se(diff)
        base = paired_method(meth)
        if base != meth and base in acc:  # the re-ask option against its paired engine run
            diff = np.asarray(rec["ndcg10"]) - np.asarray(acc[base]["ndcg10"])
            result[meth]["ndcg10_gain"] = float(diff.mean())
            result[meth]["ndcg10_gain_se"] = _se(diff)
    result["first_stage"] = {"ndcg10": float(np.mean(first))}
    log(f"{task}: " + ", ".join(f"{k}={v['ndcg10']:.3f}" for k, v in result.items()))
    if flip_probes:  # a fresh oracle (the sliding window's seed), not counted in any method
        rng = np.random.default_rng(cfg.seed + 29)
        flips = [
            position_flip(factory(q, "sliding_window", qi)(flip_k), flip_k, flip_probes, rng)
            for qi, q in enumerate(queries)
        ]
        result[ORACLE] = {"position_flip": float(np.mean(flips))}
    return result


def _se(v: np.ndarray) -> float:
    """Standard error of the mean of ``v`` (0 for fewer than two values)."""
    return float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else 0.0


def _sim_task(
    cfg: RunConfig,
    noise: str,
    temperature: float | None = None,
    n_queries: int | None = None,
    *,
    task: str | None = None,
    persistence: float = 1.0,
    position_bias: float = 0.0,
    flips: bool = True,
) -> dict[str, dict[str, float]]:
    """Every method on simulated queries with the ``noise`` oracle (one oracle per method and
    query). ``persistent`` tasks use ``sim_pl``'s queries and fresh-noise seeds, and one
    persistent draw per query shared by every method (``task`` names them)."""
    queries = make_simulated_queries(
        n_queries or cfg.sim_queries,
        cfg.sim_n,
        rho=cfg.rho,
        seed=cfg.seed * 1000 + {"pl": 1, "bt": 2, "persistent": 1}[noise],
    )
    methods = sim_methods(cfg)
    if temperature is None:
        temperature = cfg.bt_temperature if noise == "bt" else cfg.pl_temperature

    def factory(q: RerankQuery, meth: str, qi: int) -> OracleFactory:
        def make(k: int) -> BaseOracle:
            return make_oracle(
                noise,
                q.scores,
                k,
                temperature=temperature,
                persistence=persistence,
                position_bias=position_bias,
                item_seed=cfg.seed * 100_003 + qi * 101 + 97,
                passage_tokens=q.passage_tokens,
                seed=cfg.seed * 100_003 + qi * 101 + methods.index(paired_method(meth)),
            )

        return make

    return _evaluate(
        task or f"sim_{noise}",
        queries,
        methods,
        factory,
        cfg,
        window=cfg.window,
        stride=cfg.stride,
        setwise_window=cfg.setwise_window,
        flip_probes=cfg.flip_probes if flips else 0,
        flip_k=cfg.ks[0],
    )


def sim_methods(cfg: RunConfig) -> list[str]:
    """The methods of every simulated task: the paper's engine at each k, the baselines, then
    the options (re-ask with ``reask_share > 0``, first-stage presentation order) at each k,
    last so that adding them leaves the other methods' oracle seeds as they were."""
    methods = [f"blitzrank_k{k}" for k in cfg.ks]
    methods += ["sliding_window", "setwise", "pairwise", "tourrank"]
    if cfg.reask_share > 0:
        methods += [f"blitzrank_reask_k{k}" for k in cfg.ks]
    methods += [f"blitzrank_prior_k{k}" for k in cfg.ks]
    return methods


def paired_method(method: str) -> str:
    """The method whose oracle seed ``method`` shares: the re-ask option gets the paper's
    engine's at the same k, so both see the same answers until verification starts (a paired
    comparison: their difference is the verification alone)."""
    for option in ("blitzrank_reask_k", "blitzrank_prior_k"):
        if method.startswith(option):
            return "blitzrank_k" + method.removeprefix(option)
    return method


def spectrum_tasks(cfg: RunConfig) -> dict[str, tuple[float, float]]:
    """The realistic-oracle spectrum: ``sim_persist<100 x share>`` for every persistence level
    (no position bias), then ``sim_position``: fully persistent with the primacy bias.
    Values: ``(persistence, position_bias)``."""
    if not cfg.spectrum_queries:
        return {}
    tasks = {f"sim_persist{round(100 * p)}": (p, 0.0) for p in cfg.persistence_levels}
    if cfg.position_bias > 0:
        tasks["sim_position"] = (1.0, cfg.position_bias)
    return tasks


def _spectrum_task(cfg: RunConfig, task: str) -> dict[str, dict[str, float]]:
    persistence, bias = spectrum_tasks(cfg)[task]
    return _sim_task(
        cfg,
        "persistent",
        n_queries=cfg.spectrum_queries,
        task=task,
        persistence=persistence,
        position_bias=bias,
    )


def calls_perfect(
    n: int, m: int, ks: tuple[int, ...], seeds: int, schedule: str = "reach", base_seed: int = 0
) -> dict[str, float]:
    """Mean calls to certify the ordered top-m with a perfect oracle, per k."""
    out = {}
    for k in ks:
        calls = []
        for s in range(seeds):
            scores = np.random.default_rng(base_seed * 7919 + s).normal(size=n)
            res = BlitzRank(m, k=k, schedule=schedule).rank(PerfectOracle(scores, k))  # type: ignore[arg-type]
            truth = list(np.lexsort((np.arange(n), -scores))[:m])
            if not res.certified or res.top != truth:
                raise AssertionError(f"perfect oracle, k={k}: certified {res.top} != truth {truth}")
            calls.append(res.calls)
        out[f"k{k}"] = float(np.mean(calls))
    return out


@dataclass
class CyclicResult:
    """BlitzRank under the adversarial cyclic oracle, per method ``blitzrank_k<k>``.

    ``certified_rate``: share of queries certified within the budget; ``calls``: mean calls
    used; ``calls_over_perfect``: mean ratio of those calls to the perfect oracle's on the same
    items; ``budget``: mean budget in calls; ``tier_purity``: share of multi-item tiers inside
    one cyclic group (1 by construction of the engine, see ``tests/test_ranker.py``);
    ``cycles_found``: mean number of multi-item tiers per query."""

    certified_rate: dict[str, float]
    calls: dict[str, float]
    calls_over_perfect: dict[str, float]
    budget: dict[str, float]
    tier_purity: float
    cycles_found: float


def _cyclic_task(cfg: RunConfig) -> CyclicResult:
    """Certification within a budget, and tier purity, under the adversarial cyclic oracle.

    Each query's budget is ``ceil(cfg.cyclic_budget * c)`` calls, ``c`` the calls a perfect
    oracle needs to certify the same items at the same k: the price of the cycles."""
    purity: list[float] = []
    found: list[int] = []
    rates: dict[str, float] = {}
    used: dict[str, float] = {}
    ratio: dict[str, float] = {}
    budgets: dict[str, float] = {}
    rng = np.random.default_rng(cfg.seed + 17)
    for k in cfg.cyclic_ks:
        cert, calls, over, budget = [], [], [], []
        for _ in range(cfg.cyclic_queries):
            scores = rng.normal(size=cfg.sim_n)
            transitive = BlitzRank(cfg.m, k=k).rank(PerfectOracle(scores, k)).calls
            limit = max(1, math.ceil(cfg.cyclic_budget * transitive))
            oracle = CyclicOracle(scores, k)
            res = BlitzRank(cfg.m, k=k, max_calls=limit).rank(oracle)
            cert.append(float(res.certified))
            calls.append(res.calls)
            over.append(res.calls / transitive)
            budget.append(limit)
            assert res.graph is not None
            multi = [t for t in res.graph.tiers() if len(t) > 1]
            found.append(len(multi))
            purity.extend(float(len({int(oracle.group[i]) for i in t}) == 1) for t in multi)
        name = f"blitzrank_k{k}"
        rates[name], used[name] = float(np.mean(cert)), float(np.mean(calls))
        ratio[name], budgets[name] = float(np.mean(over)), float(np.mean(budget))
    return CyclicResult(
        certified_rate=rates,
        calls=used,
        calls_over_perfect=ratio,
        budget=budgets,
        tier_purity=float(np.mean(purity)) if purity else float("nan"),
        cycles_found=float(np.mean(found)),
    )


@dataclass
class LLMResult:
    """The LLM reranking task: its name (``factbook`` or ``user``), per-method means, and
    the backend's description (``llm_seconds``, ``llm_backend``, ``llm_mode``, ``llm_model``)."""

    task: str
    res: dict[str, dict[str, float]]
    info: dict[str, Any]


@dataclass
class PerfectCalls:
    """Mean calls to certify the ordered top-m with a perfect oracle, per ``k<k>``, for the
    default (reach) and the entropy schedules."""

    reach: dict[str, float]
    entropy: dict[str, float]


def _perfect_calls(cfg: RunConfig) -> PerfectCalls:
    t0 = time.perf_counter()
    args = (cfg.perfect_n, cfg.m, cfg.perfect_ks, cfg.perfect_seeds)
    reach = calls_perfect(*args, "reach", cfg.seed)
    entropy = calls_perfect(*args, "entropy", cfg.seed)
    log(f"calls_perfect: {reach} (entropy {entropy}) in {time.perf_counter() - t0:.1f}s")
    return PerfectCalls(reach, entropy)


def _noise_sweep(cfg: RunConfig) -> dict[str, dict[str, dict[str, float]]]:
    """The Plackett-Luce task at every temperature of ``cfg.sweep_temperatures``."""
    return {
        _tkey(t): _sim_task(cfg, "pl", temperature=t, n_queries=cfg.sweep_queries, flips=False)
        for t in cfg.sweep_temperatures
    }


def _llm_task(cfg: RunConfig) -> LLMResult:
    from icml26.blitzrank.data.io import load_queries
    from icml26.blitzrank.oracles.backends import make_backend
    from icml26.blitzrank.oracles.llm import LLMOracle

    if cfg.data:
        task = "user"
        queries = load_queries(cfg.data, depth=cfg.llm_n)[: cfg.llm_queries]
    else:
        from icml26.blitzrank.data.factbook import make_factbook_queries

        task = "factbook"
        queries = make_factbook_queries(cfg.llm_queries, cfg.llm_n, seed=cfg.seed)
    backend = make_backend(
        model=cfg.llm_model,
        endpoint=cfg.llm_endpoint,
        endpoint_model=cfg.llm_endpoint_model,
        device=cfg.llm_device or None,
        threads=cfg.llm_threads,
    )
    named = {
        "blitzrank": f"blitzrank_k{cfg.llm_k}",
        "blitzrank_prior": f"blitzrank_prior_k{cfg.llm_k}",
    }
    methods = [named.get(x, x) for x in cfg.llm_methods]
    mode = "generate" if cfg.llm_endpoint else cfg.llm_mode

    def factory(q: RerankQuery, meth: str, qi: int) -> OracleFactory:
        return lambda k: LLMOracle(backend, q.query, q.passages, k, mode=mode)

    t0 = time.perf_counter()
    res = _evaluate(
        task,
        queries,
        methods,
        factory,
        cfg,
        window=cfg.llm_window,
        stride=cfg.llm_stride,
        setwise_window=cfg.llm_k,
        flip_probes=cfg.llm_flip_probes,
        flip_k=cfg.llm_k,
    )
    info = {
        "llm_seconds": time.perf_counter() - t0,
        "llm_backend": type(backend).__name__,
        "llm_mode": mode,
        "llm_model": cfg.llm_endpoint_model if cfg.llm_endpoint else cfg.llm_model,
    }
    return LLMResult(task, res, info)


def _pareto_plot(run_dir: Any, tasks: dict[str, dict[str, dict[str, float]]]) -> None:
    names = list(tasks)
    cols = min(4, len(names))
    rows = math.ceil(len(names) / cols)
    with figure(
        run_dir.plot_path("pareto_ndcg_vs_tokens"),
        rows,
        cols,
        title="nDCG@10 vs tokens per query (up-left is better)",
        squeeze=False,
    ) as (_fig, axes):
        flat = list(axes.ravel())
        for ax in flat[len(names) :]:
            ax.set_visible(False)
        for ax, task in zip(flat, names, strict=False):
            for meth, rec in tasks[task].items():
                if "tokens" not in rec:
                    if "ndcg10" in rec:
                        ax.axhline(rec["ndcg10"], color="grey", ls=":", lw=1)
                    continue
                marker = "*" if meth.startswith("blitzrank") else "o"
                ax.scatter(
                    rec["tokens"], rec["ndcg10"], marker=marker, s=70 if marker == "*" else 30
                )
                ax.annotate(
                    meth,
                    (rec["tokens"], rec["ndcg10"]),
                    fontsize=7,
                    xytext=(3, 3),
                    textcoords="offset points",
                )
            ax.set_xscale("log")
            ax.set_xlabel("tokens per query (in + out)")
            ax.set_ylabel("nDCG@10")
            ax.set_title(task)


def _calls_plot(
    run_dir: Any, reach: dict[str, float], entropy: dict[str, float], reference: dict[int, float]
) -> None:
    with figure(run_dir.plot_path("calls_perfect_vs_k")) as (_fig, ax):
        ks = sorted(int(k[1:]) for k in reach)
        ax.plot(ks, [reach[f"k{k}"] for k in ks], "o-", label="BlitzRank (reach schedule)")
        ax.plot(ks, [entropy[f"k{k}"] for k in ks], "s--", label="entropy schedule")
        ref = [(k, reference[k]) for k in ks if k in reference]
        if ref:
            ax.plot(*zip(*ref, strict=True), "x:", color="grey", label="authors' code (notes)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("k (items per call)")
        ax.set_ylabel("calls to certify ordered top-10 (n=100)")
        ax.legend()


def _tkey(t: float) -> str:
    """A metric-key-safe name for a temperature: 0.25 -> ``t0p25``."""
    return "t" + f"{t:g}".replace(".", "p")


def _sweep_plot(run_dir: Any, sweep: dict[str, dict[str, dict[str, float]]]) -> None:
    temps = list(sweep)
    xs = [float(t[1:].replace("p", ".")) for t in temps]
    methods = [m for m in sweep[temps[0]] if m not in ("first_stage", ORACLE)]
    with figure(
        run_dir.plot_path("ndcg_vs_noise"), 1, 2, title="Plackett-Luce oracle noise sweep"
    ) as (
        _fig,
        (ax1, ax2),
    ):
        for meth in methods:
            style = "o-" if meth.startswith("blitzrank") else "s--"
            ax1.plot(xs, [sweep[t][meth]["ndcg10"] for t in temps], style, label=meth)
            ax2.plot(xs, [sweep[t][meth]["tokens"] for t in temps], style, label=meth)
        ax1.plot(
            xs,
            [sweep[t]["first_stage"]["ndcg10"] for t in temps],
            ":",
            color="grey",
            label="first stage",
        )
        for ax in (ax1, ax2):
            ax.set_xscale("log")
            ax.set_xlabel("oracle temperature T (noise)")
        ax1.set_ylabel("nDCG@10")
        ax2.set_ylabel("tokens per query")
        ax2.set_yscale("log")
        ax1.legend(fontsize=6)


#: Mean calls of the authors' code with a perfect oracle (n = 100, m = 10), from the notes.
REFERENCE_CALLS = {2: 150.0, 3: 68.0, 5: 33.0, 10: 14.2, 20: 6.4}


class _Parts:
    """The finished parts of a run, checkpointed after each (a killed run resumes there)."""

    def __init__(self, run_dir: Any) -> None:
        self.run_dir = run_dir
        saved = run_dir.checkpoints.latest()
        self.done: dict[str, Any] = saved[1] if saved else {}
        self.step = saved[0] if saved else 0

    def once(self, name: str, make: Callable[[], Any]) -> Any:
        """``make()``'s value for part ``name``, computed unless a checkpoint holds it."""
        if name not in self.done:
            self.done[name] = make()
            self.step += 1
            self.run_dir.checkpoints.save(self.step, self.done)
        return self.done[name]


def _sim_parts(parts: dict[str, Any], config: RunConfig) -> dict[str, dict[str, dict[str, float]]]:
    """The finished simulated tasks: one per noise, then the realistic-oracle spectrum."""
    names = [f"sim_{n}" for n in config.noises] + list(spectrum_tasks(config))
    return {name: parts[name] for name in names if name in parts}


def _task_parts(parts: dict[str, Any], config: RunConfig) -> dict[str, dict[str, dict[str, float]]]:
    """Every finished reranking task: simulated, spectrum, MiniLM, then the LLM task."""
    tasks = _sim_parts(parts, config)
    if "minilm" in parts:
        tasks.update(parts["minilm"]["tasks"])
    llm: LLMResult | None = parts.get("llm")
    if llm is not None:
        tasks[llm.task] = llm.res
    return tasks


def _metrics(parts: dict[str, Any], config: RunConfig) -> dict[str, Any]:
    """The metric tree (``<metric>.<task>.<method>``, ``position_flip.<task>``) of the
    finished parts."""
    tasks = _task_parts(parts, config)
    llm: LLMResult | None = parts.get("llm")
    metrics: dict[str, Any] = {}
    keys = ("ndcg10", "ndcg10_se", "calls", "tokens", "tokens_in", "rounds", "certified_rate")
    paired = ("ndcg10_gain", "ndcg10_gain_se", "ndcg10_diff_sw", "ndcg10_diff_sw_se")
    for key in (*keys, "verify_calls", *paired):
        metrics[key] = {
            task: {meth: rec[key] for meth, rec in res.items() if key in rec and meth != ORACLE}
            for task, res in tasks.items()
        }
    metrics["position_flip"] = {
        task: res[ORACLE]["position_flip"] for task, res in tasks.items() if ORACLE in res
    }
    if llm is not None:
        metrics["repaired_calls"] = {
            llm.task: {m: r["repaired_calls"] for m, r in llm.res.items() if "repaired_calls" in r}
        }
    perfect: PerfectCalls | None = parts.get("calls_perfect")
    if perfect is not None:
        metrics["calls_perfect"] = perfect.reach
        metrics["calls_perfect_entropy"] = perfect.entropy
    cyc: CyclicResult | None = parts.get("sim_cyclic")
    if cyc is not None:
        metrics["certified_rate"]["sim_cyclic"] = cyc.certified_rate
        metrics["calls"]["sim_cyclic"] = cyc.calls
        metrics["calls_over_perfect"] = {"sim_cyclic": cyc.calls_over_perfect}
        metrics["budget_calls"] = {"sim_cyclic": cyc.budget}
        metrics["tier_purity"] = {"sim_cyclic": cyc.tier_purity}
        metrics["cycles_found"] = {"sim_cyclic": cyc.cycles_found}
    if "noise_sweep" in parts:
        sweep = parts["noise_sweep"]
        metrics["noise_sweep"] = {
            key: {
                t: {m: rec[key] for m, rec in res.items() if key in rec} for t, res in sweep.items()
            }
            for key in ("ndcg10", "tokens")
        }
    return metrics


def _plots(run_dir: Any, parts: dict[str, Any], config: RunConfig) -> None:
    perfect: PerfectCalls | None = parts.get("calls_perfect")
    if perfect is not None:
        _calls_plot(run_dir, perfect.reach, perfect.entropy, REFERENCE_CALLS)
    if "noise_sweep" in parts:
        _sweep_plot(run_dir, parts["noise_sweep"])
    tasks = _task_parts(parts, config)
    if tasks:
        _pareto_plot(run_dir, tasks)


def run(config: RunConfig, run_dir: Any) -> dict[str, Any]:
    """The main job; returns the metrics named in the issue (nested, flattened by the runner).

    Its parts, each skipped when its size is 0: simulated reranking per noise, the
    realistic-oracle spectrum (persistent and position-biased errors), the noise sweep,
    perfect-oracle calls, the cyclic oracle on a budget, the MiniLM real-model oracle tasks,
    the LLM task."""
    seed_everything(config.seed)
    parts = _Parts(run_dir)
    if config.sim_queries:
        for noise in config.noises:
            parts.once(f"sim_{noise}", functools.partial(_sim_task, config, noise))
    for task in spectrum_tasks(config):
        parts.once(task, functools.partial(_spectrum_task, config, task))
    if config.sweep_queries and config.sweep_temperatures:
        parts.once("noise_sweep", lambda: _noise_sweep(config))
    if config.perfect_seeds:
        parts.once("calls_perfect", lambda: _perfect_calls(config))
    if config.cyclic_queries:
        parts.once("sim_cyclic", lambda: _cyclic_task(config))
    if config.minilm_queries:
        from icml26.blitzrank.minilm_tasks import run_minilm_tasks

        run_dir.update_env(**parts.once("minilm", lambda: run_minilm_tasks(config))["info"])
    if config.llm_queries:
        run_dir.update_env(**parts.once("llm", lambda: _llm_task(config)).info)
    _plots(run_dir, parts.done, config)
    return _metrics(parts.done, config)


def bench(config: BenchConfig, run_dir: Any) -> dict[str, Any]:
    """Engine time per oracle call vs n, and calls vs n, with a perfect oracle."""
    seed_everything(config.seed)
    ms, calls, share = {}, {}, {}
    for n in config.ns:
        per_call, used = [], []
        for r in range(config.repeats):
            scores = np.random.default_rng(config.seed * 31 + r).normal(size=n)
            res = BlitzRank(config.m, k=config.k).rank(PerfectOracle(scores, config.k))
            per_call.append(1000.0 * res.engine_seconds / res.calls)
            used.append(res.calls)
        ms[f"n{n}"] = float(np.median(per_call))
        calls[f"n{n}"] = float(np.mean(used))
        share[f"n{n}"] = ms[f"n{n}"] / config.llm_call_ms
        log(f"bench n={n}: {ms[f'n{n}']:.2f} ms engine per call, {calls[f'n{n}']:.1f} calls")
    with figure(run_dir.plot_path("engine_overhead"), 1, 2) as (_fig, (ax1, ax2)):
        xs = list(config.ns)
        ax1.plot(xs, [ms[f"n{n}"] for n in xs], "o-")
        ax1.axhline(
            config.llm_call_ms,
            color="grey",
            ls=":",
            label=f"one LLM call ({config.llm_call_ms:.0f} ms)",
        )
        ax1.set_xscale("log")
        ax1.set_yscale("log")
        ax1.set_xlabel("n items")
        ax1.set_ylabel("engine ms per oracle call")
        ax1.legend()
        ax2.plot(xs, [calls[f"n{n}"] for n in xs], "o-")
        ax2.set_xlabel("n items")
        ax2.set_ylabel(f"calls (k={config.k}, ordered top-{config.m})")
    return {"engine_ms_per_call": ms, "calls": calls, "engine_share_of_llm_call": share}

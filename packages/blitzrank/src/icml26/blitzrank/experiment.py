"""The main job (``icml26 run blitzrank``) and the bench (``icml26 bench blitzrank``).

Main job, in four parts:

1. ``sim_<noise>``: simulated reranking (n candidates, BM25-like first stage, graded truth)
   with a noisy listwise oracle; BlitzRank at each k against sliding window, setwise,
   pairwise and TourRank: nDCG@10, calls, tokens, rounds per query.
2. ``calls_perfect``: calls to certify the ordered top-m with a perfect oracle (n = 100,
   m = 10), mean over seeds, for the default (reach) and the entropy schedules.
3. ``sim_cyclic``: an adversarially non-transitive oracle; BlitzRank must still certify, and
   the tiers it reports must be real preference cycles (never mixing groups).
4. ``factbook`` (or ``user`` with ``data=``): real text, BM25 first stage, reranked by the
   local LLM (or an OpenAI-compatible endpoint).

Each finished part is checkpointed, so a killed run resumes at the next part.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from icml26.blitzrank.baselines import pairwise, setwise, sliding_window, tourrank
from icml26.blitzrank.config import BenchConfig, RunConfig
from icml26.blitzrank.data.simulated import make_simulated_queries
from icml26.blitzrank.data.types import RerankQuery
from icml26.blitzrank.metrics import ndcg_at_k
from icml26.blitzrank.oracles.base import BaseOracle
from icml26.blitzrank.oracles.simulated import CyclicOracle, PerfectOracle, make_oracle
from icml26.blitzrank.ranker import BlitzRank
from icml26.shared import figure, log, seed_everything

__all__ = ["bench", "run", "run_method"]

OracleFactory = Callable[[int], BaseOracle]


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
) -> dict[str, Any]:
    """Run one method on one query; ``make(k)`` builds a fresh oracle with window ``k``.

    Returns ranking, calls, rounds, usage (tokens) and, for BlitzRank, certification.
    """
    certified: bool | None = None
    if method.startswith("blitzrank_k"):
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
) -> dict[str, dict[str, float]]:
    """Mean per-query nDCG@10, calls, tokens, rounds (and certified rate) per method."""
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
    first = [ndcg_at_k(range(q.n), q.relevance, 10) for q in queries]
    result = {meth: {key: float(np.mean(v)) for key, v in rec.items()} for meth, rec in acc.items()}
    result["first_stage"] = {"ndcg10": float(np.mean(first))}
    log(f"{task}: " + ", ".join(f"{k}={v['ndcg10']:.3f}" for k, v in result.items()))
    return result


def _sim_task(
    cfg: RunConfig, noise: str, temperature: float | None = None, n_queries: int | None = None
) -> dict[str, dict[str, float]]:
    queries = make_simulated_queries(
        n_queries or cfg.sim_queries,
        cfg.sim_n,
        rho=cfg.rho,
        seed=cfg.seed * 1000 + {"pl": 1, "bt": 2}[noise],
    )
    methods = [f"blitzrank_k{k}" for k in cfg.ks] + [
        "sliding_window",
        "setwise",
        "pairwise",
        "tourrank",
    ]
    if temperature is None:
        temperature = cfg.pl_temperature if noise == "pl" else cfg.bt_temperature

    def factory(q: RerankQuery, meth: str, qi: int) -> OracleFactory:
        def make(k: int) -> BaseOracle:
            return make_oracle(
                noise,
                q.scores,
                k,
                temperature=temperature,
                passage_tokens=q.passage_tokens,
                seed=cfg.seed * 100_003 + qi * 101 + methods.index(meth),
            )

        return make

    return _evaluate(
        f"sim_{noise}",
        queries,
        methods,
        factory,
        cfg,
        window=cfg.window,
        stride=cfg.stride,
        setwise_window=cfg.setwise_window,
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


def _cyclic_task(cfg: RunConfig) -> dict[str, Any]:
    """Certification and tier purity under the adversarial cyclic oracle."""
    purity: list[float] = []
    found: list[int] = []
    rates: dict[str, float] = {}
    rng = np.random.default_rng(cfg.seed + 17)
    for k in cfg.cyclic_ks:
        cert = []
        for _ in range(cfg.cyclic_queries):
            scores = rng.normal(size=cfg.sim_n)
            oracle = CyclicOracle(scores, k)
            res = BlitzRank(cfg.m, k=k).rank(oracle)
            cert.append(float(res.certified))
            assert res.graph is not None
            multi = [t for t in res.graph.tiers() if len(t) > 1]
            found.append(len(multi))
            purity.extend(float(len({int(oracle.group[i]) for i in t}) == 1) for t in multi)
        rates[f"blitzrank_k{k}"] = float(np.mean(cert))
    return {
        "certified_rate": rates,
        "tier_purity": float(np.mean(purity)) if purity else float("nan"),
        "cycles_found": float(np.mean(found)),
    }


def _llm_task(cfg: RunConfig) -> tuple[str, dict[str, dict[str, float]], dict[str, Any]]:
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
    methods = [f"blitzrank_k{cfg.llm_k}" if x == "blitzrank" else x for x in cfg.llm_methods]
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
    )
    info = {
        "llm_seconds": time.perf_counter() - t0,
        "llm_backend": type(backend).__name__,
        "llm_mode": mode,
        "llm_model": cfg.llm_endpoint_model if cfg.llm_endpoint else cfg.llm_model,
    }
    return task, res, info


def _pareto_plot(run_dir: Any, tasks: dict[str, dict[str, dict[str, float]]]) -> None:
    names = list(tasks)
    with figure(
        run_dir.plot_path("pareto_ndcg_vs_tokens"),
        1,
        len(names),
        title="nDCG@10 vs tokens per query (up-left is better)",
    ) as (_fig, axes):
        axes = np.atleast_1d(axes)
        for ax, task in zip(axes, names, strict=True):
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
    methods = [m for m in sweep[temps[0]] if m != "first_stage"]
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


def run(config: RunConfig, run_dir: Any) -> dict[str, Any]:
    """The main job; returns the metrics named in the issue (nested, flattened by the runner)."""
    seed_everything(config.seed)
    saved = run_dir.checkpoints.latest()
    parts: dict[str, Any] = saved[1] if saved else {}
    step = saved[0] if saved else 0

    def checkpoint(name: str, value: Any) -> None:
        nonlocal step
        parts[name] = value
        step += 1
        run_dir.checkpoints.save(step, parts)

    for noise in config.noises:
        name = f"sim_{noise}"
        if name not in parts and config.sim_queries:
            checkpoint(name, _sim_task(config, noise))
    if "noise_sweep" not in parts and config.sweep_queries and config.sweep_temperatures:
        checkpoint(
            "noise_sweep",
            {
                _tkey(t): _sim_task(config, "pl", temperature=t, n_queries=config.sweep_queries)
                for t in config.sweep_temperatures
            },
        )
    if "calls_perfect" not in parts and config.perfect_seeds:
        t0 = time.perf_counter()
        reach = calls_perfect(
            config.perfect_n,
            config.m,
            config.perfect_ks,
            config.perfect_seeds,
            "reach",
            config.seed,
        )
        entropy = calls_perfect(
            config.perfect_n,
            config.m,
            config.perfect_ks,
            config.perfect_seeds,
            "entropy",
            config.seed,
        )
        log(f"calls_perfect: {reach} (entropy {entropy}) in {time.perf_counter() - t0:.1f}s")
        checkpoint("calls_perfect", {"reach": reach, "entropy": entropy})
    if "sim_cyclic" not in parts and config.cyclic_queries:
        checkpoint("sim_cyclic", _cyclic_task(config))
    if "llm" not in parts and config.llm_queries:
        task, res, info = _llm_task(config)
        checkpoint("llm", {"task": task, "res": res, "info": info})
        run_dir.update_env(**info)

    tasks: dict[str, dict[str, dict[str, float]]] = {
        f"sim_{n}": parts[f"sim_{n}"] for n in config.noises if f"sim_{n}" in parts
    }
    if "llm" in parts:
        tasks[parts["llm"]["task"]] = parts["llm"]["res"]
    metrics: dict[str, Any] = {}
    for key in ("ndcg10", "calls", "tokens", "tokens_in", "rounds"):
        metrics[key] = {
            task: {meth: rec[key] for meth, rec in res.items() if key in rec}
            for task, res in tasks.items()
        }
    metrics["certified_rate"] = {
        task: {meth: rec["certified_rate"] for meth, rec in res.items() if "certified_rate" in rec}
        for task, res in tasks.items()
    }
    if "llm" in parts:
        task = parts["llm"]["task"]
        metrics["repaired_calls"] = {
            task: {
                m: r["repaired_calls"]
                for m, r in parts["llm"]["res"].items()
                if "repaired_calls" in r
            }
        }
    if "calls_perfect" in parts:
        metrics["calls_perfect"] = parts["calls_perfect"]["reach"]
        metrics["calls_perfect_entropy"] = parts["calls_perfect"]["entropy"]
        _calls_plot(
            run_dir,
            parts["calls_perfect"]["reach"],
            parts["calls_perfect"]["entropy"],
            REFERENCE_CALLS,
        )
    if "sim_cyclic" in parts:
        cyc = parts["sim_cyclic"]
        metrics["certified_rate"]["sim_cyclic"] = cyc["certified_rate"]
        metrics["tier_purity"] = {"sim_cyclic": cyc["tier_purity"]}
        metrics["cycles_found"] = {"sim_cyclic": cyc["cycles_found"]}
    if "noise_sweep" in parts:
        sweep = parts["noise_sweep"]
        metrics["noise_sweep"] = {
            key: {
                t: {m: rec[key] for m, rec in res.items() if key in rec} for t, res in sweep.items()
            }
            for key in ("ndcg10", "tokens")
        }
        _sweep_plot(run_dir, sweep)
    if tasks:
        _pareto_plot(run_dir, tasks)
    return metrics


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

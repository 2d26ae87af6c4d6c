"""Simulated reranking: every method against a noisy listwise oracle on BM25-like candidates.

``sim_<noise>`` (``pl``: Plackett-Luce, ``bt``: Bradley-Terry) reranks ``sim_n`` candidates
per query, each method with its own oracle (an option of the engine shares the engine's
seed). The realistic-oracle spectrum reruns ``sim_pl``'s queries with a
:class:`~icml26.blitzrank.oracles.simulated.PersistentOracle`: ``sim_persist<100 x share>``
for each persistence level and ``sim_position`` (fully persistent plus a primacy bias), one
persistent draw per query shared by every method. The noise sweep reruns ``sim_pl`` at every
temperature of ``sweep_temperatures``, under keys ``t<temperature>`` (``t0p25``).
"""

from __future__ import annotations

from icml26.blitzrank.config import RunConfig
from icml26.blitzrank.data.simulated import make_simulated_queries
from icml26.blitzrank.data.types import RerankQuery
from icml26.blitzrank.evaluate import EvalSettings, OracleFactory, TaskResult, evaluate
from icml26.blitzrank.methods import Method, RankerSettings, comparison_methods
from icml26.blitzrank.oracles.base import BaseOracle
from icml26.blitzrank.oracles.simulated import make_oracle
from icml26.shared import seed_for

__all__ = [
    "comparison_settings",
    "noise_sweep",
    "sim_methods",
    "sim_task",
    "spectrum_task",
    "spectrum_tasks",
    "temperature_key",
]

#: Each noise's query stream (``persistent`` tasks reuse ``sim_pl``'s queries).
_QUERY_STREAM = {"pl": "pl", "bt": "bt", "persistent": "pl"}


def comparison_settings(
    cfg: RunConfig,
    *,
    flip_probes: int,
    flip_k: int,
    window: int | None = None,
    stride: int | None = None,
    setwise_window: int | None = None,
) -> EvalSettings:
    """The evaluation settings of one task of the run.

    Args:
        cfg: the run's config.
        flip_probes: flip-probe windows per query (0 skips).
        flip_k: items per flip-probe window.
        window: the sliding window's and TourRank's items per call (default ``cfg.window``).
        stride: the sliding window's step (default ``cfg.stride``).
        setwise_window: setwise's items per call (default ``cfg.setwise_window``).

    Returns:
        The :class:`~icml26.blitzrank.evaluate.EvalSettings`.
    """
    rankers = RankerSettings(
        m=cfg.m,
        window=cfg.window if window is None else window,
        stride=cfg.stride if stride is None else stride,
        setwise_window=cfg.setwise_window if setwise_window is None else setwise_window,
        tournaments=cfg.tourrank_tournaments,
        pairwise_both_orders=cfg.pairwise_both_orders,
        parallel=cfg.parallel,
        max_calls=cfg.max_calls,
        reask_share=cfg.reask_share,
    )
    return EvalSettings(rankers, seed=cfg.seed, flip_probes=flip_probes, flip_k=flip_k)


def sim_methods(cfg: RunConfig) -> list[Method]:
    """The methods of every simulated and MiniLM task (re-ask with ``reask_share > 0``).

    Args:
        cfg: the run's config.

    Returns:
        :func:`~icml26.blitzrank.methods.comparison_methods` at ``cfg.ks``.
    """
    return comparison_methods(cfg.ks, reask=cfg.reask_share > 0)


def sim_task(
    cfg: RunConfig,
    noise: str,
    temperature: float | None = None,
    n_queries: int | None = None,
    *,
    task: str | None = None,
    persistence: float = 1.0,
    position_bias: float = 0.0,
    flips: bool = True,
) -> TaskResult:
    """Every method on simulated queries with the ``noise`` oracle.

    Args:
        cfg: the run's config.
        noise: ``pl``, ``bt`` or ``persistent``.
        temperature: the oracle's temperature (default the config's for ``noise``).
        n_queries: queries (default ``cfg.sim_queries``).
        task: the task's name (default ``sim_<noise>``).
        persistence: the persistent oracle's fixed share of the noise.
        position_bias: the persistent oracle's primacy bias.
        flips: measure the oracle's position flip rate.

    Returns:
        The task's :data:`~icml26.blitzrank.evaluate.TaskResult`.
    """
    queries = make_simulated_queries(
        n_queries or cfg.sim_queries,
        cfg.sim_n,
        rho=cfg.rho,
        seed=seed_for(cfg.seed, "queries", _QUERY_STREAM[noise]),
    )
    methods = sim_methods(cfg)
    if temperature is None:
        temperature = cfg.bt_temperature if noise == "bt" else cfg.pl_temperature

    def oracles(q: RerankQuery, meth: Method, qi: int) -> OracleFactory:
        def make(k: int) -> BaseOracle:
            return make_oracle(
                noise,
                q.scores,
                k,
                temperature=temperature,
                persistence=persistence,
                position_bias=position_bias,
                # one persistent-noise stream per query, shared by every method (paired)
                item_seed=seed_for(cfg.seed, "oracle_items", qi),
                passage_tokens=q.passage_tokens,
                seed=seed_for(cfg.seed, "oracle", qi, meth.paired),
            )

        return make

    settings = comparison_settings(
        cfg, flip_probes=cfg.flip_probes if flips else 0, flip_k=cfg.ks[0]
    )
    return evaluate(task or f"sim_{noise}", queries, methods, oracles, settings)


def spectrum_tasks(cfg: RunConfig) -> dict[str, tuple[float, float]]:
    """The realistic-oracle spectrum's tasks.

    Args:
        cfg: the run's config.

    Returns:
        ``sim_persist<100 x share>`` for every persistence level (no position bias), then
        ``sim_position`` (fully persistent with the primacy bias), each mapped to
        ``(persistence, position_bias)``; empty when ``spectrum_queries = 0``.
    """
    if not cfg.spectrum_queries:
        return {}
    tasks = {f"sim_persist{round(100 * p)}": (p, 0.0) for p in cfg.persistence_levels}
    if cfg.position_bias > 0:
        tasks["sim_position"] = (1.0, cfg.position_bias)
    return tasks


def spectrum_task(cfg: RunConfig, task: str) -> TaskResult:
    """One task of the spectrum (``sim_pl``'s queries, a persistent oracle).

    Args:
        cfg: the run's config.
        task: a name from :func:`spectrum_tasks`.

    Returns:
        The task's :data:`~icml26.blitzrank.evaluate.TaskResult`.

    Raises:
        KeyError: a task the config's spectrum does not hold.
    """
    persistence, bias = spectrum_tasks(cfg)[task]
    return sim_task(
        cfg,
        "persistent",
        n_queries=cfg.spectrum_queries,
        task=task,
        persistence=persistence,
        position_bias=bias,
    )


def temperature_key(t: float) -> str:
    """A metric-key-safe name for a temperature: 0.25 -> ``t0p25``.

    Args:
        t: the temperature.

    Returns:
        ``"t"`` and the number with ``.`` written ``p``.
    """
    return "t" + f"{t:g}".replace(".", "p")


def noise_sweep(cfg: RunConfig) -> dict[str, TaskResult]:
    """The Plackett-Luce task at every temperature of ``cfg.sweep_temperatures``.

    Args:
        cfg: the run's config.

    Returns:
        :func:`temperature_key` -> the task's result (``sweep_queries`` queries, no flips).
    """
    return {
        temperature_key(t): sim_task(
            cfg, "pl", temperature=t, n_queries=cfg.sweep_queries, flips=False
        )
        for t in cfg.sweep_temperatures
    }

"""Real text reranked by a language model: ``factbook`` questions, or the user's ``data``.

Each query's first ``llm_n`` candidates (BM25 order for the factbook questions, the file's
order or the run's ranks for a user's data) are reranked by every method of ``llm_methods``
through an :class:`~icml26.blitzrank.oracles.llm.LLMOracle` over one chat back end: the local
model ``llm_model`` (``first_token`` or ``generate`` mode) or the OpenAI-compatible endpoint
``llm_endpoint`` (always ``generate``). Tokens are the back end's own counts.
"""

from __future__ import annotations

import time
from typing import Any

from icml26.blitzrank.config import RunConfig
from icml26.blitzrank.data.factbook import make_factbook_queries
from icml26.blitzrank.data.io import load_queries
from icml26.blitzrank.data.types import RerankQuery
from icml26.blitzrank.evaluate import OracleFactory, evaluate
from icml26.blitzrank.methods import RANKERS, Method, method
from icml26.blitzrank.oracles import backends
from icml26.blitzrank.oracles.llm import LLMOracle
from icml26.blitzrank.tasks.simulated import comparison_settings
from icml26.shared import seed_for

__all__ = ["llm_methods", "llm_task"]


def llm_methods(cfg: RunConfig) -> list[Method]:
    """The LLM task's methods: ``llm_methods``, the engine's at ``k = llm_k``.

    Args:
        cfg: the run's config.

    Returns:
        The methods (``blitzrank`` -> ``blitzrank_k<llm_k>``).
    """
    return [method(name, cfg.llm_k if RANKERS[name].per_k else None) for name in cfg.llm_methods]


def llm_task(cfg: RunConfig) -> dict[str, Any]:
    """Every LLM method on the real-text queries.

    Args:
        cfg: the run's config (``llm_*`` fields, ``data``).

    Returns:
        ``{"task": "factbook" | "user", "res": result, "info": {"llm_seconds",
        "llm_backend", "llm_mode", "llm_model"}}``.

    Raises:
        ImportError: the ``llm`` extra (or ``openai`` for an endpoint) is not installed.
        ValueError: a bad user file (:func:`~icml26.blitzrank.data.io.load_queries`).
    """
    if cfg.data:
        task = "user"
        queries = load_queries(cfg.data, depth=cfg.llm_n)[: cfg.llm_queries]
    else:
        task = "factbook"
        queries = make_factbook_queries(
            cfg.llm_queries, cfg.llm_n, seed=seed_for(cfg.seed, "llm_queries")
        )
    backend = backends.make_backend(
        model=cfg.llm_model,
        endpoint=cfg.llm_endpoint,
        endpoint_model=cfg.llm_endpoint_model,
        device=cfg.llm_device or None,
        threads=cfg.llm_threads,
    )
    mode = "generate" if cfg.llm_endpoint else cfg.llm_mode

    def oracles(q: RerankQuery, meth: Method, qi: int) -> OracleFactory:
        return lambda k: LLMOracle(backend, q.query, q.passages, k, mode=mode)

    settings = comparison_settings(
        cfg,
        flip_probes=cfg.llm_flip_probes,
        flip_k=cfg.llm_k,
        window=cfg.llm_window,
        stride=cfg.llm_stride,
        setwise_window=cfg.llm_k,
    )
    t0 = time.perf_counter()
    res = evaluate(task, queries, llm_methods(cfg), oracles, settings)
    info = {
        "llm_seconds": time.perf_counter() - t0,
        "llm_backend": type(backend).__name__,
        "llm_mode": mode,
        "llm_model": cfg.llm_endpoint_model if cfg.llm_endpoint else cfg.llm_model,
    }
    return {"task": task, "res": res, "info": info}

"""The real-model oracle tasks: factbook questions, BM25 candidates, MiniLM's judgements.

Each question's ``minilm_n`` BM25 candidates are scored once by all-MiniLM-L6-v2 (cosine of
query and passage embeddings, z-scored over the candidates), and every method reranks them
with a :class:`~icml26.blitzrank.oracles.scored.ScoreOracle` over those scores:

* ``minilm_nobias``: the scores alone: a consistent order that is MiniLM's, errors and all;
* ``minilm``: plus a primacy bias of ``minilm_position_bias`` standard deviations (of the
  candidates' scores) from the first-shown passage to the last;
* ``minilm_ctx``: plus per-prompt noise of scale ``minilm_prompt_noise``, seeded by the prompt
  (a temperature-0 model whose judgement of a passage depends on the passages beside it).

All three are deterministic per prompt. Tokens are charged with the listwise prompt model on
MiniLM's own token counts of the question and passages. Ground truth is the factbook's
(grade 2: the answer passage, 1: the same country's other passages).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from icml26.blitzrank.config import RunConfig
from icml26.blitzrank.data.factbook import make_factbook_queries
from icml26.blitzrank.data.types import RerankQuery
from icml26.blitzrank.evaluate import ORACLE, OracleFactory, TaskResult, evaluate
from icml26.blitzrank.methods import Method
from icml26.blitzrank.metrics import ndcg_at_k
from icml26.blitzrank.oracles import minilm
from icml26.blitzrank.oracles.base import BaseOracle
from icml26.blitzrank.oracles.scored import ScoreOracle
from icml26.blitzrank.tasks.simulated import comparison_settings, sim_methods
from icml26.shared import log, seed_for

__all__ = ["minilm_task_settings", "run_minilm_tasks"]


def minilm_task_settings(cfg: RunConfig) -> dict[str, tuple[float, float]]:
    """The MiniLM tasks of the run.

    Args:
        cfg: the run's config.

    Returns:
        Task name -> ``(position_bias, prompt_noise)``; empty when ``minilm_queries = 0``.
    """
    if not cfg.minilm_queries:
        return {}
    return {
        "minilm_nobias": (0.0, 0.0),
        "minilm": (cfg.minilm_position_bias, 0.0),
        "minilm_ctx": (cfg.minilm_position_bias, cfg.minilm_prompt_noise),
    }


def run_minilm_tasks(cfg: RunConfig) -> dict[str, Any]:
    """Every method on every MiniLM task.

    Args:
        cfg: the run's config (``minilm_*`` fields, the simulated tasks' methods and windows).

    Returns:
        ``{"tasks": {task: result}, "info": {"minilm_seconds", "minilm_score_seconds"}}``;
        each result also holds ``minilm_order``, the nDCG@10 of MiniLM's own order.

    Raises:
        ImportError: the ``minilm`` extra (torch, sentence-transformers) is not installed.
    """
    t0 = time.perf_counter()
    queries = make_factbook_queries(
        cfg.minilm_queries, cfg.minilm_n, seed=seed_for(cfg.seed, "factbook_queries")
    )
    scorer = minilm.MiniLMScorer(cfg.minilm_model, device=cfg.minilm_device or "cpu")
    scores = [minilm.zscore(scorer.scores(q.query, q.passages)) for q in queries]
    passage_tokens = [scorer.token_counts(q.passages) for q in queries]
    query_tokens = [int(scorer.token_counts([q.query])[0]) for q in queries]
    t_score = time.perf_counter() - t0
    log(f"minilm: scored {len(queries)} questions x {cfg.minilm_n} candidates in {t_score:.1f}s")
    own = [
        ndcg_at_k(list(np.argsort(-s, kind="stable")), q.relevance, 10)
        for q, s in zip(queries, scores, strict=True)
    ]
    tasks: dict[str, TaskResult] = {}
    for task, (bias, noise) in minilm_task_settings(cfg).items():

        def oracles(
            q: RerankQuery, meth: Method, qi: int, bias: float = bias, noise: float = noise
        ) -> OracleFactory:
            def make(k: int) -> BaseOracle:
                return ScoreOracle(
                    scores[qi],
                    k,
                    position_bias=bias,
                    prompt_noise=noise,
                    prompt_seed=seed_for(cfg.seed, "prompt_noise", qi),
                    passage_tokens=passage_tokens[qi],
                    query_tokens=query_tokens[qi],
                )

            return make

        settings = comparison_settings(cfg, flip_probes=cfg.flip_probes, flip_k=cfg.ks[0])
        res = evaluate(task, queries, sim_methods(cfg), oracles, settings)
        res["minilm_order"] = {"ndcg10": float(np.mean(own))}
        tasks[task] = res
        if ORACLE in res:
            log(f"{task}: position_flip={res[ORACLE]['position_flip']:.3f}")
    info = {"minilm_seconds": time.perf_counter() - t0, "minilm_score_seconds": t_score}
    return {"tasks": tasks, "info": info}

"""``icml26 bench decor``: rollout throughput (episodes per second, greedy team episodes of
a tiny team after a short SFT), tokens per episode per role, one joint MARL step's time, and
the latency of BM25 and dense (MiniLM) search as the corpus grows."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from icml26.decor.config import BenchConfig
from icml26.shared import RunDir, log

__all__ = ["bench"]


def _latency(search: Any, queries: list[str], k: int = 3) -> float:
    t0 = time.perf_counter()
    search.search(queries, k)
    return 1000 * (time.perf_counter() - t0) / len(queries)


def bench(config: BenchConfig, run_dir: RunDir) -> dict[str, Any]:
    import torch

    from icml26.decor.config import DecorConfig
    from icml26.decor.episodes import EpisodeSettings, run_team
    from icml26.decor.joint import TrainSettings, train_decor
    from icml26.decor.policies import ROLES, Sampling
    from icml26.decor.retrieval import BM25Search, DenseSearch
    from icml26.decor.study import make_env, make_policies, warm_start

    torch.set_num_threads(config.threads)
    cfg = DecorConfig(
        seed=config.seed, sft_steps=config.sft_steps, max_test_questions=config.episodes
    )
    env = make_env(cfg)
    team = make_policies(cfg, env, config.seed)
    warm_start(cfg, env, team, config.seed)
    roles = {r: team[r] for r in ROLES}
    settings = EpisodeSettings()
    questions = (env.test * (config.episodes // max(len(env.test), 1) + 1))[: config.episodes]
    t0 = time.perf_counter()
    episodes = run_team(roles, env.test_search, questions, settings, Sampling())
    seconds = time.perf_counter() - t0
    out: dict[str, Any] = {"episodes_per_second": len(episodes) / seconds}
    for role in ROLES:
        out[f"tokens_per_episode.{role}"] = float(
            np.mean(
                [
                    sum(len(t.prompt) + len(t.completion) for t in e.turns.get(role, []))
                    for e in episodes
                ]
            )
        )
        out[f"generated_tokens_per_episode.{role}"] = float(
            np.mean([sum(sum(t.mask) for t in e.turns.get(role, [])) for e in episodes])
        )
    rl = TrainSettings(steps=config.train_steps, questions_per_step=4, group_size=4)
    steps = [h["seconds"] for h in train_decor(roles, env.train_search, env.train, rl)]
    out["train_step_seconds"] = float(np.mean(steps))
    passages = env.passages
    queries = [q.text for q in env.train[: config.queries]]
    sizes = [min(n, len(passages)) for n in config.corpus_sizes]
    for kind in ("bm25", "dense") if config.dense else ("bm25",):
        lat = []
        for n in sizes:
            search = BM25Search(passages[:n]) if kind == "bm25" else DenseSearch(passages[:n])
            lat.append(_latency(search, queries))
            out[f"latency_ms.{kind}.n{n}"] = lat[-1]
            log(f"decor bench: {kind} n={n}: {lat[-1]:.2f} ms/query")
        out[f"latency_ms.{kind}.smallest"] = lat[0]
        out[f"latency_ms.{kind}.largest"] = lat[-1]
    return out

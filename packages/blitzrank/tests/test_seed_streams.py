"""Seeds come from named streams (icml26.shared.seed_for), never from seed arithmetic: no
query's oracle replays another query's or another method's noise."""

from __future__ import annotations

from typing import Any

import pytest

from icml26.blitzrank.config import RunConfig
from icml26.blitzrank.tasks import simulated


def test_oracle_seeds_are_separate_streams_and_items_are_shared_per_query(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[dict[str, Any]] = []
    real = simulated.make_oracle

    def spy(*args: Any, **kw: Any):
        seen.append({"item_seed": kw["item_seed"], "seed": kw["seed"]})
        return real(*args, **kw)

    real_queries = simulated.make_simulated_queries
    query_seeds: list[int] = []

    def spy_queries(*args: Any, **kw: Any):
        query_seeds.append(kw["seed"])
        return real_queries(*args, **kw)

    monkeypatch.setattr(simulated, "make_oracle", spy)
    monkeypatch.setattr(simulated, "make_simulated_queries", spy_queries)
    cfg = RunConfig(sim_n=20, sim_queries=3, ks=(5,), reask_share=0.0)
    simulated.sim_task(cfg, "pl", n_queries=3)
    noise_seeds = {s["seed"] for s in seen}
    item_seeds = {s["item_seed"] for s in seen}
    assert len(item_seeds) == 3  # one persistent-noise stream per query, shared by methods
    assert not noise_seeds & item_seeds  # no oracle's fresh noise replays an item stream
    # the old arithmetic gave the query draw seed 1 = query 0's second method's oracle seed
    assert not set(query_seeds) & (noise_seeds | item_seeds)
    # query 1's oracle never reuses query 0's seed for another method (the old arithmetic)
    per_query = len(noise_seeds) // 3
    assert per_query >= 2
    assert len(noise_seeds) == 3 * per_query

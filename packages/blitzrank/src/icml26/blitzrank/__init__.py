"""BlitzRank: certified top-m selection with k-wise comparisons through tournament graphs.

::

    from icml26.blitzrank import BlitzRank, PlackettLuceOracle

    oracle = PlackettLuceOracle(scores, k=10, temperature=0.25)
    result = BlitzRank(m=10).rank(oracle)
    result.top, result.tiers, result.certified, oracle.usage.tokens

The engine and every baseline are :class:`Ranker` s (``rank(oracle) -> RankResult``); the
baselines are in :mod:`icml26.blitzrank.baselines`, the oracles in
:mod:`icml26.blitzrank.oracles`, queries and loaders in :mod:`icml26.blitzrank.data`. Importing
this package imports neither torch nor an LLM client.
"""

from importlib.metadata import PackageNotFoundError, version

from icml26.blitzrank import baselines, data, oracles
from icml26.blitzrank.config import BenchConfig, RunConfig
from icml26.blitzrank.metrics import ndcg_at_k
from icml26.blitzrank.oracles import LLMOracle, Oracle, PlackettLuceOracle, ScoreOracle
from icml26.blitzrank.ranker import BlitzRank, Ranker, RankResult
from icml26.blitzrank.reask import BlitzRankReask

__all__ = [
    "BenchConfig",
    "BlitzRank",
    "BlitzRankReask",
    "LLMOracle",
    "Oracle",
    "PlackettLuceOracle",
    "RankResult",
    "Ranker",
    "RunConfig",
    "ScoreOracle",
    "baselines",
    "data",
    "ndcg_at_k",
    "oracles",
]

try:
    __version__ = version("icml26-blitzrank")
except PackageNotFoundError:  # a source tree that is not installed
    __version__ = "0+unknown"

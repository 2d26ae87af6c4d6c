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

from typing import TYPE_CHECKING

from icml26.shared.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "RunConfig": ".config",
        "BlitzRank": ".ranker",
        "OracleAnswerError": ".ranker",
        "RankResult": ".ranker",
        "Ranker": ".ranker",
        "BlitzRankReask": ".reask",
        "LLMOracle": ".oracles",
        "Oracle": ".oracles",
        "PlackettLuceOracle": ".oracles",
        "ScoreOracle": ".oracles",
        "ndcg_at_k": ".metrics",
        "rerank": ".batch",
    },
    submodules=["baselines", "data", "oracles"],
)

if TYPE_CHECKING:
    from icml26.blitzrank import baselines as baselines
    from icml26.blitzrank import data as data
    from icml26.blitzrank import oracles as oracles
    from icml26.blitzrank.batch import rerank as rerank
    from icml26.blitzrank.config import RunConfig as RunConfig
    from icml26.blitzrank.metrics import ndcg_at_k as ndcg_at_k
    from icml26.blitzrank.oracles import LLMOracle as LLMOracle
    from icml26.blitzrank.oracles import Oracle as Oracle
    from icml26.blitzrank.oracles import PlackettLuceOracle as PlackettLuceOracle
    from icml26.blitzrank.oracles import ScoreOracle as ScoreOracle
    from icml26.blitzrank.ranker import BlitzRank as BlitzRank
    from icml26.blitzrank.ranker import OracleAnswerError as OracleAnswerError
    from icml26.blitzrank.ranker import Ranker as Ranker
    from icml26.blitzrank.ranker import RankResult as RankResult
    from icml26.blitzrank.reask import BlitzRankReask as BlitzRankReask

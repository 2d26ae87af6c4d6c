"""BlitzRank: certified top-m selection with k-wise comparisons through tournament graphs.

::

    from icml26.blitzrank import BlitzRank, PlackettLuceOracle

    oracle = PlackettLuceOracle(scores, k=10, temperature=0.25)
    result = BlitzRank(m=10).rank(oracle)
    result.top, result.tiers, result.certified, oracle.usage.tokens
"""

from icml26.blitzrank.baselines import BaselineResult, pairwise, setwise, sliding_window, tourrank
from icml26.blitzrank.certify import Certificate, certify
from icml26.blitzrank.data import (
    RerankQuery,
    load_jsonl_queries,
    load_queries,
    load_trec,
    make_simulated_queries,
)
from icml26.blitzrank.graph import GraphState, TournamentGraph
from icml26.blitzrank.metrics import ndcg_at_k
from icml26.blitzrank.oracles import (
    BaseOracle,
    BradleyTerryOracle,
    Comparison,
    CyclicOracle,
    LLMOracle,
    Oracle,
    OracleError,
    PerfectOracle,
    PersistentOracle,
    PlackettLuceOracle,
    ScoreOracle,
    TokenModel,
    Usage,
    parse_ranking,
)
from icml26.blitzrank.ranker import BlitzRank, RankResult, rank_top_m
from icml26.blitzrank.reask import ReaskResult, blitzrank_reask
from icml26.blitzrank.schedule import entropy_schedule, reach_schedule

__all__ = [
    "BaseOracle",
    "BaselineResult",
    "BlitzRank",
    "BradleyTerryOracle",
    "Certificate",
    "Comparison",
    "CyclicOracle",
    "GraphState",
    "LLMOracle",
    "Oracle",
    "OracleError",
    "PerfectOracle",
    "PersistentOracle",
    "PlackettLuceOracle",
    "RankResult",
    "ReaskResult",
    "RerankQuery",
    "ScoreOracle",
    "TokenModel",
    "TournamentGraph",
    "Usage",
    "blitzrank_reask",
    "certify",
    "entropy_schedule",
    "load_jsonl_queries",
    "load_queries",
    "load_trec",
    "make_simulated_queries",
    "ndcg_at_k",
    "pairwise",
    "parse_ranking",
    "rank_top_m",
    "reach_schedule",
    "setwise",
    "sliding_window",
    "tourrank",
]

from importlib.metadata import PackageNotFoundError as _NotFound
from importlib.metadata import version as _version

try:
    __version__ = _version("icml26-blitzrank")
except _NotFound:  # a source tree
    __version__ = "0+unknown"

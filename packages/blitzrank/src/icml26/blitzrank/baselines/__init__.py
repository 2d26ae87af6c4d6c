"""The baselines the paper compares against: sliding window, setwise, pairwise, TourRank."""

from icml26.blitzrank.baselines._common import BaselineResult
from icml26.blitzrank.baselines.pairwise import pairwise
from icml26.blitzrank.baselines.setwise import heap_select, setwise
from icml26.blitzrank.baselines.sliding_window import sliding_window
from icml26.blitzrank.baselines.tourrank import default_stages, tourrank

__all__ = [
    "BaselineResult",
    "default_stages",
    "heap_select",
    "pairwise",
    "setwise",
    "sliding_window",
    "tourrank",
]

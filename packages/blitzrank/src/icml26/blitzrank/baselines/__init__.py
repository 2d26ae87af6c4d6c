"""The baselines the paper compares against: sliding window, setwise, pairwise, TourRank.

Each comes twice: as a function returning a :class:`BaselineResult` (``sliding_window(oracle,
window=20, stride=10)``), and as a :class:`~icml26.blitzrank.ranker.Ranker` class whose
``rank(oracle)`` returns a :class:`~icml26.blitzrank.ranker.RankResult`
(``SlidingWindow(m=10).rank(oracle)``), as BlitzRank does.
"""

from icml26.blitzrank.baselines._common import BaselineResult
from icml26.blitzrank.baselines.pairwise import Pairwise, pairwise
from icml26.blitzrank.baselines.setwise import Setwise, heap_select, setwise
from icml26.blitzrank.baselines.sliding_window import SlidingWindow, sliding_window
from icml26.blitzrank.baselines.tourrank import TourRank, default_stages, tourrank

__all__ = [
    "BaselineResult",
    "Pairwise",
    "Setwise",
    "SlidingWindow",
    "TourRank",
    "default_stages",
    "heap_select",
    "pairwise",
    "setwise",
    "sliding_window",
    "tourrank",
]

"""The methods a comparison runs: a name -> :class:`~icml26.blitzrank.ranker.Ranker` factory
table, and the :class:`Method` specs whose names are the metric keys' method parts.

A method's name is its ranker's name, with ``_k<k>`` appended for the rankers that take BlitzRank's
``k`` (``blitzrank_k10``, ``blitzrank_reask_k20``, ``sliding_window``). Specs are built from
the table (:func:`method`), never parsed back from a name.

Rankers:

* ``blitzrank``: the paper's engine (:class:`~icml26.blitzrank.ranker.BlitzRank`);
* ``blitzrank_reask``: the engine, then a verification pass at position m (an option, not the
  paper's: :class:`~icml26.blitzrank.reask.BlitzRankReask`);
* ``blitzrank_prior``: the engine showing every query in the first-stage order (an option:
  ``BlitzRank(present="prior")``);
* ``sliding_window``, ``setwise``, ``pairwise``, ``tourrank``: the baselines
  (:mod:`icml26.blitzrank.baselines`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from icml26.blitzrank.baselines import Pairwise, Setwise, SlidingWindow, TourRank
from icml26.blitzrank.ranker import BlitzRank, Ranker
from icml26.blitzrank.reask import BlitzRankReask

__all__ = [
    "BASELINES",
    "RANKERS",
    "Method",
    "RankerEntry",
    "RankerSettings",
    "comparison_methods",
    "method",
]


@dataclass(frozen=True)
class RankerSettings:
    """What every ranker of one comparison is built with.

    Attributes:
        m: the top items to determine.
        window: the sliding window's and TourRank's items per call.
        stride: the sliding window's step.
        setwise_window: setwise's items per call.
        tournaments: TourRank's tournaments.
        pairwise_both_orders: PRP asks each pair in both orders (the authors' baseline).
        parallel: BlitzRank's disjoint queries per round.
        max_calls: BlitzRank's call budget (0: none).
        reask_share: the re-ask option's verification budget, a share of the engine's calls.
    """

    m: int = 10
    window: int = 20
    stride: int = 10
    setwise_window: int = 4
    tournaments: int = 1
    pairwise_both_orders: bool = True
    parallel: int = 1
    max_calls: int = 0
    reask_share: float = 0.25


#: ``build(settings, k, seed) -> Ranker``: ``k`` is BlitzRank's items per query (ignored by the
#: baselines, whose windows are settings), ``seed`` the query's seed (TourRank's shuffles).
RankerFactory = Callable[[RankerSettings, int, int], Ranker]


@dataclass(frozen=True)
class RankerEntry:
    """One row of :data:`RANKERS`.

    Attributes:
        build: the factory.
        per_k: the method is run at each of BlitzRank's ``k`` (its name ends in ``_k<k>``).
        paired: the ranker whose oracle seed this one shares at the same ``k`` (an option of
            the engine shares the engine's answers, so their paired difference is the
            option alone); empty for none.
    """

    build: RankerFactory
    per_k: bool = False
    paired: str = ""


def _blitzrank(s: RankerSettings, k: int, seed: int) -> Ranker:
    return BlitzRank(
        s.m, k=k, parallel=s.parallel, max_calls=s.max_calls or None, on_budget="return"
    )


def _blitzrank_prior(s: RankerSettings, k: int, seed: int) -> Ranker:
    return BlitzRank(
        s.m,
        k=k,
        parallel=s.parallel,
        max_calls=s.max_calls or None,
        present="prior",
        on_budget="return",
    )


RANKERS: dict[str, RankerEntry] = {
    "blitzrank": RankerEntry(_blitzrank, per_k=True),
    "sliding_window": RankerEntry(
        lambda s, k, seed: SlidingWindow(m=s.m, window=s.window, stride=s.stride)
    ),
    "setwise": RankerEntry(lambda s, k, seed: Setwise(m=s.m, window=s.setwise_window)),
    "pairwise": RankerEntry(lambda s, k, seed: Pairwise(m=s.m, both_orders=s.pairwise_both_orders)),
    "tourrank": RankerEntry(
        lambda s, k, seed: TourRank(m=s.m, window=s.window, tournaments=s.tournaments, seed=seed)
    ),
    "blitzrank_reask": RankerEntry(
        lambda s, k, seed: BlitzRankReask(s.m, k=k, share=s.reask_share),
        per_k=True,
        paired="blitzrank",
    ),
    "blitzrank_prior": RankerEntry(_blitzrank_prior, per_k=True, paired="blitzrank"),
}

#: The paper's baselines, in the order a comparison runs them.
BASELINES = ("sliding_window", "setwise", "pairwise", "tourrank")


@dataclass(frozen=True)
class Method:
    """One method of a comparison.

    Attributes:
        name: its name in metric keys (``blitzrank_k10``, ``sliding_window``).
        ranker: its row of :data:`RANKERS`.
        k: BlitzRank's items per query (0 for the baselines).
        paired: the method whose oracle seed it shares (itself unless an option).
    """

    name: str
    ranker: str
    k: int = 0
    paired: str = ""

    def build(self, settings: RankerSettings, seed: int = 0) -> Ranker:
        """The ranker, built from ``settings``.

        Args:
            settings: the comparison's settings.
            seed: the query's seed (TourRank's shuffles).

        Returns:
            A fresh :class:`~icml26.blitzrank.ranker.Ranker`.
        """
        return RANKERS[self.ranker].build(settings, self.k, seed)


def method(ranker: str, k: int | None = None) -> Method:
    """The :class:`Method` of ``ranker`` (at BlitzRank's ``k`` for the per-k rankers).

    Args:
        ranker: a key of :data:`RANKERS`.
        k: items per query, required by the per-k rankers, refused by the others.

    Returns:
        The method, its name and its paired method filled in.

    Raises:
        ValueError: an unknown ranker, or ``k`` missing / given where it does not apply.
    """
    entry = RANKERS.get(ranker)
    if entry is None:
        raise ValueError(f"unknown method {ranker!r}; known: {', '.join(RANKERS)}")
    if entry.per_k != (k is not None):
        need = "needs k" if entry.per_k else "takes no k (its window is a setting)"
        raise ValueError(f"method {ranker!r} {need}, got k={k!r}")
    if k is None:
        return Method(ranker, ranker, paired=ranker)
    name = f"{ranker}_k{k}"
    return Method(name, ranker, k, paired=f"{entry.paired}_k{k}" if entry.paired else name)


def comparison_methods(ks: Sequence[int], *, reask: bool = True) -> list[Method]:
    """The methods of every simulated and MiniLM comparison, in the order that seeds them.

    The paper's engine at each k, the baselines, then the options (re-ask when ``reask``,
    first-stage presentation order) at each k: last, so that adding them leaves the other
    methods' oracle seeds as they were.

    Args:
        ks: BlitzRank's items per query.
        reask: include the re-ask option.

    Returns:
        The methods, in order.
    """
    methods = [method("blitzrank", k) for k in ks]
    methods += [method(b) for b in BASELINES]
    if reask:
        methods += [method("blitzrank_reask", k) for k in ks]
    methods += [method("blitzrank_prior", k) for k in ks]
    return methods

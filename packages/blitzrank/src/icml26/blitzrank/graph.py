"""The tournament graph: every k-wise answer aggregated into one preference graph.

A k-wise answer that orders items ``a1 > a2 > ... > ak`` reveals the induced tournament of
``k choose 2`` preferences ``ai > aj`` (i < j). :class:`TournamentGraph` keeps

* ``wins[i, j]``: how many times an answer placed ``i`` above ``j`` (every induced pair, kept
  for tie-breaking and for the record), and
* ``reach[i, j]``: the reflexive transitive closure ``i ~> j`` of the graph of all answers,
  i.e. the orderings implied without asking (the paper's key observation).

The closure is maintained incrementally: adding an edge ``u -> v`` to a graph whose
reflexive closure is ``R`` gives ``R' = R | R[:, u] (x) R[v, :]`` (a path that uses the new
edge uses it once), ``O(|ancestors(u)| * n)`` bit operations. Only the ``k - 1`` chain edges
of an answer are needed for the closure: the other induced pairs follow transitively.

Cycles from an inconsistent oracle make items mutually reachable; the strongly connected
components of the graph (``reach & reach.T``) are the equivalence classes that
:meth:`TournamentGraph.tiers` returns as a *tiered ranking*: the condensation is a DAG, and
sorting classes by the number of items strictly above them is a topological order of it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["GraphState", "TournamentGraph"]


@dataclass(frozen=True)
class GraphState:
    """Per-item summaries of the closure, computed once per update.

    Attributes:
        labels: ``labels[i]`` the equivalence class (SCC) of ``i``: its smallest member.
        class_size: ``|B(i)|``, the size of ``i``'s class.
        above: items outside ``B(i)`` known to beat ``i`` (``in_reach`` of the condensation).
        below: items outside ``B(i)`` known to lose to ``i`` (``out_reach``).
    """

    labels: np.ndarray
    class_size: np.ndarray
    above: np.ndarray
    below: np.ndarray

    @property
    def n(self) -> int:
        return int(self.labels.shape[0])

    @property
    def resolved(self) -> np.ndarray:
        """True where an item's class is comparable with every other item (position fixed)."""
        return (self.above + self.below + self.class_size) == self.n

    @property
    def unknown(self) -> np.ndarray:
        """Items whose relation to ``i`` is still unknown."""
        return self.n - (self.above + self.below + self.class_size)


class TournamentGraph:
    """Observed k-wise preferences over ``n`` items labelled ``0..n-1``.

    Args:
        n: number of items (at least 1).
    """

    def __init__(self, n: int) -> None:
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        self.n = int(n)
        self.wins = np.zeros((self.n, self.n), dtype=np.int32)
        self.reach = np.eye(self.n, dtype=bool)
        self.edges_added = 0
        self._state: GraphState | None = None

    # -- updates -----------------------------------------------------------------------------
    def _check_items(self, items: Sequence[int], what: str) -> list[int]:
        out = [int(i) for i in items]
        bad = [i for i in out if not 0 <= i < self.n]
        if bad:
            raise ValueError(f"{what}: item ids {bad} are outside 0..{self.n - 1}")
        if len(set(out)) != len(out):
            dup = sorted({i for i in out if out.count(i) > 1})
            raise ValueError(f"{what}: duplicate item ids {dup}")
        return out

    def add_edge(self, winner: int, loser: int) -> bool:
        """Record ``winner > loser``; return True when the closure changed."""
        u, v = int(winner), int(loser)
        if u == v:
            raise ValueError(f"an item cannot beat itself (item {u})")
        self._check_items([u, v], "add_edge")
        self.wins[u, v] += 1
        return self._close(u, v)

    def _close(self, u: int, v: int) -> bool:
        if self.reach[u, v]:
            return False
        ancestors = np.flatnonzero(self.reach[:, u])
        self.reach[ancestors] |= self.reach[v]
        self.edges_added += 1
        self._state = None
        return True

    def add_ordering(self, order: Sequence[int], rest: Iterable[int] = ()) -> bool:
        """Record one answer: ``order`` best first, then ``rest`` (unordered) below it.

        ``rest`` serves partial answers: a setwise "best of" answer is ``order=(best,)``,
        ``rest=others``; a top-q selection (TourRank) is ``order=top_q``, ``rest=others``.

        Returns:
            True when the closure changed (the answer told something not already implied).
        """
        order = self._check_items(order, "add_ordering")
        rest = self._check_items(list(rest), "add_ordering")
        if set(order) & set(rest):
            raise ValueError("add_ordering: an item is both in order and in rest")
        if len(order) + len(rest) < 2:
            raise ValueError("add_ordering: an answer needs at least two items")
        if not order:
            raise ValueError("add_ordering: order must name at least the best item")
        o = np.asarray(order)
        for i, u in enumerate(order):  # every induced pair, counted
            self.wins[u, o[i + 1 :]] += 1
            if rest:
                self.wins[u, rest] += 1
        changed = False
        for a, b in itertools.pairwise(order):  # chain edges suffice for closure
            changed |= self._close(a, b)
        last = order[-1]
        for r in rest:
            changed |= self._close(last, r)
        return changed

    # -- queries -----------------------------------------------------------------------------
    def state(self) -> GraphState:
        """Classes (SCCs) and reach counts of the condensation (cached until the next update)."""
        if self._state is None:
            mutual = self.reach & self.reach.T
            labels = np.argmax(mutual, axis=1)  # smallest member of each class
            size = mutual.sum(axis=1)
            # above(i): j with j ~> i, minus i's own class; below likewise.
            above = self.reach.sum(axis=0) - size
            below = self.reach.sum(axis=1) - size
            self._state = GraphState(
                labels=labels.astype(np.int64),
                class_size=size.astype(np.int64),
                above=above.astype(np.int64),
                below=below.astype(np.int64),
            )
        return self._state

    def comparable(self) -> np.ndarray:
        """``c[i, j]``: the relation of ``i`` and ``j`` is known (directly or by closure)."""
        return self.reach | self.reach.T

    def net_wins(self) -> np.ndarray:
        """Wins minus losses of each item over all recorded pairs (tie-break inside a tier)."""
        return self.wins.sum(axis=1) - self.wins.sum(axis=0)

    def ranking(self, prior: Sequence[int] | np.ndarray | None = None) -> list[int]:
        """All items, best first: by tier, then net wins inside a tier, then ``prior`` order.

        Args:
            prior: an initial order of the items (e.g. the first-stage retrieval order) used
                as the last tie-break; default ``0..n-1``.
        """
        st = self.state()
        prior_rank = np.arange(self.n) if prior is None else _rank_of(prior, self.n)
        net = self.net_wins()
        keys = np.lexsort((prior_rank, -net, st.labels, -st.below, st.above))
        return [int(i) for i in keys]

    def tiers(self, prior: Sequence[int] | np.ndarray | None = None) -> list[list[int]]:
        """The tiered ranking: equivalence classes in a topological order of the condensation.

        Items inside a tier are mutually reachable (a preference cycle), so no order among
        them is implied; they are listed by net wins, then ``prior``.
        """
        st = self.state()
        out: list[list[int]] = []
        for i in self.ranking(prior):
            if out and st.labels[out[-1][0]] == st.labels[i]:
                out[-1].append(i)
            else:
                out.append([i])
        return out

    def to_networkx(self) -> Any:
        """The observed preference graph (edge ``i -> j`` when an answer put ``i`` above ``j``),
        with ``weight`` = how many answers did."""
        import networkx as nx

        g = nx.DiGraph()
        g.add_nodes_from(range(self.n))
        src, dst = np.nonzero(self.wins)
        g.add_weighted_edges_from(
            (int(a), int(b), int(self.wins[a, b])) for a, b in zip(src, dst, strict=True)
        )
        return g


def _rank_of(order: Sequence[int] | np.ndarray, n: int) -> np.ndarray:
    """Position of each item in ``order`` (a permutation of ``0..n-1``)."""
    order_arr = np.asarray(list(order), dtype=np.int64)
    if order_arr.shape != (n,) or set(order_arr.tolist()) != set(range(n)):
        raise ValueError(f"prior must be a permutation of 0..{n - 1}")
    rank = np.empty(n, dtype=np.int64)
    rank[order_arr] = np.arange(n)
    return rank

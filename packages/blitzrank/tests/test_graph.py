"""Tournament graph: closure and SCCs against networkx, tiers, bad input."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.blitzrank.graph import TournamentGraph


def _reference_closure(n: int, edges: list[tuple[int, int]]) -> np.ndarray:
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    tc = nx.transitive_closure(g, reflexive=True)
    out = np.zeros((n, n), dtype=bool)
    for a, b in tc.edges():
        out[a, b] = True
    np.fill_diagonal(out, True)
    return out


edge_lists = st.integers(2, 9).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(
            st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda e: e[0] != e[1]),
            max_size=25,
        ),
    )
)


@given(edge_lists)
@settings(max_examples=60, deadline=None)
def test_incremental_closure_and_sccs_match_networkx(
    case: tuple[int, list[tuple[int, int]]],
) -> None:
    n, edges = case
    g = TournamentGraph(n)
    for a, b in edges:
        g.add_edge(a, b)
    np.testing.assert_array_equal(g.reach, _reference_closure(n, edges))
    ref = nx.DiGraph()
    ref.add_nodes_from(range(n))
    ref.add_edges_from(edges)
    classes = {frozenset(c) for c in nx.strongly_connected_components(ref)}
    labels = g.state().labels
    ours = {frozenset(np.flatnonzero(labels == lab).tolist()) for lab in set(labels.tolist())}
    assert ours == classes
    # tiers are a topological order of the condensation
    tiers = g.tiers()
    position = {i: t for t, tier in enumerate(tiers) for i in tier}
    for a, b in edges:
        assert position[a] <= position[b]


def test_hand_made_graph_with_a_cycle_gives_tiers() -> None:
    g = TournamentGraph(5)
    g.add_ordering([0, 1])  # 0 > 1
    g.add_ordering([1, 2])  # 1 > 2
    g.add_ordering([2, 0])  # 2 > 0: a 3-cycle
    g.add_ordering([2, 3, 4])  # 2 > 3 > 4
    tiers = g.tiers()
    assert [sorted(t) for t in tiers] == [[0, 1, 2], [3], [4]]
    assert tiers[0][0] == 2  # inside a tier: by net wins (2 also beat 3 and, by answer, 4)
    st_ = g.state()
    assert st_.class_size.tolist() == [3, 3, 3, 1, 1]
    assert st_.above.tolist() == [0, 0, 0, 3, 4]
    assert st_.resolved.all()


def test_ordering_records_every_induced_pair_but_closure_needs_only_the_chain() -> None:
    g = TournamentGraph(6)
    g.add_ordering([3, 1, 4, 0])
    assert g.wins.sum() == 6  # 4 choose 2
    for a, b in itertools.combinations([3, 1, 4, 0], 2):
        assert g.wins[a, b] == 1
        assert g.reach[a, b]
    assert g.edges_added == 3


def test_partial_answer_rest_is_below_prefix() -> None:
    g = TournamentGraph(4)
    g.add_ordering([2], rest=[0, 1, 3])
    assert g.state().above.tolist() == [1, 1, 0, 1]
    assert not g.reach[0, 1]
    assert not g.reach[1, 0]


def test_answer_already_implied_changes_nothing() -> None:
    g = TournamentGraph(3)
    assert g.add_ordering([0, 1, 2])
    assert not g.add_ordering([0, 2])


@pytest.mark.parametrize(
    ("order", "rest", "match"),
    [
        ([0, 0], [], "duplicate"),
        ([0, 5], [], "outside"),
        ([0], [], "at least two"),
        ([0, 1], [1], "both"),
    ],
)
def test_bad_answers_are_rejected(order: list[int], rest: list[int], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        TournamentGraph(3).add_ordering(order, rest)


@pytest.mark.parametrize("n", [0, -1, 2.5, True])
def test_bad_n(n: object) -> None:
    with pytest.raises(ValueError, match="n must be"):
        TournamentGraph(n)  # type: ignore[arg-type]


def test_self_edge_rejected() -> None:
    with pytest.raises(ValueError, match="itself"):
        TournamentGraph(3).add_edge(1, 1)


def test_to_networkx_weights() -> None:
    g = TournamentGraph(3)
    g.add_ordering([0, 1, 2])
    g.add_ordering([0, 1])
    nxg = g.to_networkx()
    assert nxg[0][1]["weight"] == 2
    assert nxg[1][2]["weight"] == 1

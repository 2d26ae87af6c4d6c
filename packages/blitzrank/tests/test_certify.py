"""Certification: exact against brute-force linear extensions, sound, complete."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.blitzrank.certify import certify
from icml26.blitzrank.graph import TournamentGraph
from icml26.blitzrank.oracles.simulated import PerfectOracle
from icml26.blitzrank.ranker import BlitzRank


def _extensions(g: TournamentGraph) -> list[tuple[int, ...]]:
    """All total orders of the items consistent with the (acyclic) closure."""
    n = g.n
    return [
        p
        for p in itertools.permutations(range(n))
        if all(not g.reach[p[j], p[i]] for i in range(n) for j in range(i + 1, n))
    ]


answers = st.integers(3, 6).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.permutations(list(range(n))),
        st.lists(st.lists(st.integers(0, n - 1), min_size=2, max_size=4, unique=True), max_size=6),
        st.integers(1, n),
    )
)


@given(answers)
@settings(max_examples=80, deadline=None)
def test_certification_is_exact_against_all_linear_extensions(case: tuple) -> None:
    n, hidden, queries, m = case
    rank = {item: r for r, item in enumerate(hidden)}
    g = TournamentGraph(n)
    for q in queries:  # a consistent oracle: the hidden order
        g.add_ordering(sorted(q, key=rank.__getitem__))
    exts = _extensions(g)
    ordered_determined = len({e[:m] for e in exts}) == 1
    set_determined = len({frozenset(e[:m]) for e in exts}) == 1
    assert certify(g, m, "ordered").certified == ordered_determined
    assert certify(g, m, "set").certified == set_determined
    if set_determined:  # sound: the certified set is the hidden top-m
        assert set(exts[0][:m]) == set(hidden[:m])


@given(
    st.integers(5, 40).flatmap(
        lambda n: st.tuples(st.just(n), st.integers(1, n), st.integers(2, 8), st.integers(0, 10**6))
    ),
    st.sampled_from(["ordered", "set"]),
    st.sampled_from(["reach", "entropy"]),
)
@settings(max_examples=40, deadline=None)
def test_blitzrank_is_sound_and_complete_with_a_consistent_oracle(
    case: tuple[int, int, int, int], mode: str, schedule: str
) -> None:
    n, m, k, seed = case
    k = min(k, n)
    scores = np.random.default_rng(seed).normal(size=n)
    res = BlitzRank(m, k=k, mode=mode, schedule=schedule).rank(PerfectOracle(scores, k))  # type: ignore[arg-type]
    truth = list(np.lexsort((np.arange(n), -scores))[:m])
    assert res.certified
    if mode == "ordered":
        assert res.top == truth
    else:
        assert set(res.top) == set(truth)
    assert res.calls <= n * (n - 1) // 2


def test_boundary_tie_is_certified_in_set_mode() -> None:
    g = TournamentGraph(4)
    g.add_ordering([0, 1, 2])
    g.add_ordering([2, 1])  # 1 and 2 form a cycle straddling position 2
    g.add_ordering([2, 3])
    g.add_ordering([1, 3])
    cert = certify(g, 2, "set")
    assert cert.certified
    assert cert.boundary_tie
    assert set(cert.surely_in) == {0}


@pytest.mark.parametrize("m", [0, 6, -1])
def test_bad_m(m: int) -> None:
    with pytest.raises(ValueError, match="m must be"):
        certify(TournamentGraph(5), m)


def test_bad_mode() -> None:
    with pytest.raises(ValueError, match="mode"):
        certify(TournamentGraph(5), 2, "sorted")  # type: ignore[arg-type]

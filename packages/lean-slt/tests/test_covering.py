"""Covering numbers: closed forms, the greedy sandwich N(eps) <= greedy <= N(eps/2), packings."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.lean_slt.covering import (
    _gv_log_size,
    euclidean_ball_log_covering_bound,
    euclidean_ball_log_covering_lower,
    greedy_net,
    interval_covering_number,
    l1_ball_log_covering_bound,
    l1_ball_log_packing_gv,
    l1_ball_log_packing_lower,
    lipschitz_class_log_covering_bounds,
    maurey_log_covering_bound,
    sample_l1_ball,
    sample_lipschitz_functions,
    sample_sparse_sign_vectors,
)


def _pairwise_min_dist(x: np.ndarray, metric: str = "l2") -> float:
    if len(x) < 2:
        return math.inf
    if metric == "l2":
        d = np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))
    else:
        d = np.abs(x[:, None, :] - x[None, :, :]).max(-1)
    d[np.diag_indices(len(x))] = np.inf
    return float(d.min())


def test_interval_closed_form() -> None:
    assert interval_covering_number(1.0, 0.5)[()] == 1
    assert interval_covering_number(1.0, 0.25)[()] == 2
    assert interval_covering_number(1.0, 0.2)[()] == 3
    assert interval_covering_number(0.0, 0.1)[()] == 1
    np.testing.assert_array_equal(interval_covering_number(3.0, [1.5, 1.0, 0.1]), [1, 2, 15])


@pytest.mark.parametrize("eps", [0.05, 0.13, 0.3])
def test_interval_greedy_sandwich(eps: float) -> None:
    # On a fine grid of [0, 1]: N(eps, grid) <= greedy(eps) <= N(eps/2, [0, 1]).
    h = 1e-3
    grid = np.arange(0, 1 + h / 2, h)[:, None]
    greedy = len(greedy_net(grid, eps))
    per_ball = math.floor(2 * eps / h + 1e-9) + 1
    n_grid = math.ceil(len(grid) / per_ball)
    assert n_grid <= greedy <= interval_covering_number(1.0, eps / 2)[()]


def test_greedy_net_covers_and_separates() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((400, 3))
    for metric in ("l2", "linf"):
        idx = greedy_net(x, 0.7, metric=metric)  # type: ignore[arg-type]
        c = x[idx]
        if metric == "l2":
            dist = np.sqrt(((x[:, None, :] - c[None]) ** 2).sum(-1))
        else:
            dist = np.abs(x[:, None, :] - c[None]).max(-1)
        assert dist.min(axis=1).max() <= 0.7 + 1e-9  # every point covered (isENet_of_maximal)
        assert _pairwise_min_dist(c, metric) > 0.7  # centres form a packing


def test_euclidean_ball_greedy_below_bound() -> None:
    rng = np.random.default_rng(1)
    for d in (2, 3):
        g = rng.standard_normal((3000, d))
        x = g / np.linalg.norm(g, axis=1, keepdims=True) * rng.random((3000, 1)) ** (1 / d)
        for eps in (0.2, 0.5):
            count = len(greedy_net(x, eps))
            assert math.log(count) <= euclidean_ball_log_covering_bound(1.0, eps / 2, d)[()]


@settings(max_examples=60, deadline=None)
@given(
    st.floats(0.1, 10.0),
    st.floats(0.01, 5.0),
    st.integers(1, 200),
)
def test_bounds_are_ordered(radius: float, eps: float, d: int) -> None:
    lo = euclidean_ball_log_covering_lower(radius, eps, d)[()]
    hi = euclidean_ball_log_covering_bound(radius, eps, d)[()]
    assert lo <= hi + 1e-9
    # l1 ball: certified lower bound <= best upper bound <= Maurey, <= l2 volumetric
    up = l1_ball_log_covering_bound(radius, eps, d)[()]
    assert up <= maurey_log_covering_bound(radius, eps, d)[()] + 1e-9
    assert up <= hi + 1e-9
    assert l1_ball_log_packing_lower(radius, eps, d) <= up + 1e-9


def test_maurey_greedy_below_bound() -> None:
    rng = np.random.default_rng(2)
    for d in (3, 5, 20):
        x = np.concatenate(
            [sample_l1_ball(rng, 1500, d), sample_sparse_sign_vectors(rng, 500, d, 1)]
        )
        assert np.all(np.abs(x).sum(axis=1) <= 1 + 1e-12)
        for eps in (0.3, 0.6):
            count = len(greedy_net(x, eps))
            assert math.log(count) <= maurey_log_covering_bound(1.0, eps / 2, d)[()]


@pytest.mark.parametrize(("d", "k", "eps"), [(5, 1, 0.3), (5, 2, 0.3), (6, 2, 0.2), (6, 3, 0.25)])
def test_gilbert_varshamov_count_is_reached(d: int, k: int, eps: float) -> None:
    # A greedy scan of the whole family of k-sparse sign vectors keeps at least W / B points.
    vecs = []
    for support in itertools.combinations(range(d), k):
        for signs in itertools.product((-1.0, 1.0), repeat=k):
            v = np.zeros(d)
            v[list(support)] = np.asarray(signs) / k
            vecs.append(v)
    family = np.asarray(vecs)
    kept = family[greedy_net(family, 2 * eps * (1 + 1e-9))]
    assert _pairwise_min_dist(kept) > 2 * eps
    assert math.log(len(kept)) >= _gv_log_size(1.0, eps, d, k) - 1e-9
    assert l1_ball_log_packing_gv(1.0, eps, d) >= _gv_log_size(1.0, eps, d, k) - 1e-12


def test_lipschitz_class_bounds() -> None:
    rng = np.random.default_rng(3)
    f = sample_lipschitz_functions(rng, 600, 1.0, grid=128)
    assert np.all(f[:, 0] == 0)
    assert np.abs(np.diff(f, axis=1)).max() * 128 <= 1.0 + 1e-9
    for eps in (0.1, 0.25, 0.5):
        lo, hi = lipschitz_class_log_covering_bounds(1.0, eps)
        assert 0 <= lo <= hi
        count = len(greedy_net(f, eps, metric="linf"))
        assert math.log(count) <= lipschitz_class_log_covering_bounds(1.0, eps / 2)[1]
    assert lipschitz_class_log_covering_bounds(1.0, 2.0) == (0.0, 0.0)
    # the zig-zag packing of the lower bound really is 2 eps-separated
    L, eps = 1.0, 0.2
    m = math.ceil(L / eps) - 1
    t = np.linspace(0, 1, 10 * m + 1)
    zig = []
    for signs in itertools.product((-1.0, 1.0), repeat=m):
        slope = np.repeat(np.asarray(signs), 10) * L
        zig.append(np.concatenate([[0.0], np.cumsum(slope) * (t[1] - t[0])]))
    assert _pairwise_min_dist(np.asarray(zig), "linf") > 2 * eps
    assert math.log(len(zig)) == pytest.approx(lipschitz_class_log_covering_bounds(L, eps)[0])


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_eps(bad: float) -> None:
    with pytest.raises(ValueError, match="eps must be finite and > 0"):
        maurey_log_covering_bound(1.0, bad, 3)
    with pytest.raises(ValueError, match="eps"):
        euclidean_ball_log_covering_bound(1.0, [0.1, bad], 3)
    with pytest.raises(ValueError, match="eps"):
        lipschitz_class_log_covering_bounds(1.0, bad)


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="radius"):
        maurey_log_covering_bound(-1.0, 0.1, 3)
    with pytest.raises(ValueError, match="dim"):
        euclidean_ball_log_covering_bound(1.0, 0.1, 0)
    with pytest.raises(ValueError, match="finite"):
        greedy_net(np.asarray([[0.0], [np.nan]]), 0.1)
    with pytest.raises(ValueError, match="shape"):
        greedy_net(np.zeros(5), 0.1)
    with pytest.raises(ValueError, match="metric"):
        greedy_net(np.zeros((2, 2)), 0.1, metric="l7")  # type: ignore[arg-type]

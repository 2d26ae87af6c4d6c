"""Trajectory selection keeps exactly the lowest-regret ones."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from icml26.rmft.selection import select_lowest_regret


@given(st.lists(st.floats(-5, 50, allow_nan=False), min_size=1, max_size=40), st.data())
def test_global_selection_keeps_the_k_smallest(regrets: list[float], data: st.DataObject) -> None:
    keep = data.draw(st.integers(1, len(regrets)))
    idx = select_lowest_regret(np.array(regrets), keep)
    assert len(idx) == keep == len(set(idx))
    chosen = sorted(regrets[i] for i in idx)
    assert chosen == sorted(regrets)[:keep]
    # every kept one is <= every dropped one
    dropped = [regrets[i] for i in range(len(regrets)) if i not in set(idx)]
    assert not dropped or max(chosen) <= min(dropped)


@given(st.integers(1, 6), st.integers(1, 8), st.data())
def test_group_selection_keeps_the_best_of_every_group(
    groups: int, size: int, data: st.DataObject
) -> None:
    regrets = np.array(
        data.draw(st.lists(st.floats(0, 10), min_size=groups * size, max_size=groups * size))
    )
    keep = data.draw(st.integers(1, size))
    idx = select_lowest_regret(regrets, keep, group_size=size)
    assert len(idx) == groups * keep
    for g in range(groups):
        block = regrets[g * size : (g + 1) * size]
        mine = sorted(regrets[i] for i in idx if g * size <= i < (g + 1) * size)
        assert mine == sorted(block)[:keep]


def test_ties_are_stable_and_output_sorted() -> None:
    assert select_lowest_regret(np.array([1.0, 0.0, 1.0, 0.0]), 3).tolist() == [0, 1, 3]


@pytest.mark.parametrize(
    ("regrets", "keep", "group", "match"),
    [
        ([1.0, 2.0], 0, None, "keep"),
        ([1.0, 2.0], 3, None, "keep"),
        ([1.0, float("nan")], 1, None, "NaN"),
        ([], 1, None, "non-empty"),
        ([1.0, 2.0, 3.0], 1, 2, "groups of 2"),
        ([1.0, 2.0], 3, 2, "keep"),
    ],
)
def test_bad_selection_inputs(
    regrets: list[float], keep: int, group: int | None, match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        select_lowest_regret(np.array(regrets), keep, group_size=group)

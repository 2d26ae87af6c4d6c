"""The persistent, position-biased oracle: PL at zero persistence, a fixed order at full
persistence, a primacy effect, shared persistent errors across methods, and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from icml26.blitzrank import PlackettLuceOracle
from icml26.blitzrank.config import RunConfig
from icml26.blitzrank.oracles import PersistentOracle
from icml26.blitzrank.tasks.simulated import sim_task, spectrum_task, spectrum_tasks

SCORES = np.linspace(0.0, 1.0, 12)


def test_zero_persistence_is_plackett_luce_exactly() -> None:
    pl = PlackettLuceOracle(SCORES, 6, temperature=0.3, seed=4)
    ours = PersistentOracle(SCORES, 6, temperature=0.3, persistence=0.0, seed=4, item_seed=9)
    for items in ([0, 3, 5, 7, 9, 11], [11, 10, 2, 1], [4, 5]):
        assert pl.compare(items).order == ours.compare(items).order


def test_full_persistence_repeats_its_answer_and_is_transitive() -> None:
    o = PersistentOracle(SCORES, 12, temperature=0.3, persistence=1.0, seed=1, item_seed=2)
    first = o.compare(range(12)).order
    assert all(
        o.compare(range(12)).order == first for _ in range(5)
    )  # the same prompt: same answer
    rank = {item: r for r, item in enumerate(first)}
    for items in ([0, 5, 9], [11, 3, 7, 1], [2, 8]):  # every sub-query agrees with the full order
        assert list(o.compare(items).order) == sorted(items, key=rank.__getitem__)


def test_persistent_errors_are_shared_by_every_method() -> None:
    """Two oracles (two methods) on one query share the persistent draw, not the fresh one."""
    a = PersistentOracle(SCORES, 12, persistence=1.0, seed=1, item_seed=5)
    b = PersistentOracle(SCORES, 12, persistence=1.0, seed=2, item_seed=5)
    assert a.compare(range(12)).order == b.compare(range(12)).order


def test_primacy_bias_favours_the_first_shown_item() -> None:
    equal = np.zeros(2)
    wins = 0
    for seed in range(300):
        o = PersistentOracle(equal, 2, persistence=0.0, position_bias=1.0, seed=seed)
        wins += o.compare([1, 0]).order[0] == 1
    # P(first wins) = sigmoid(1) = 0.73 for Gumbel noise of unit scale; 300 draws: se 0.026
    assert 0.65 < wins / 300 < 0.81


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"persistence": 1.5}, "persistence"),
        ({"persistence": -0.1}, "persistence"),
        ({"position_bias": -1.0}, "position_bias"),
        ({"temperature": 0.0}, "temperature"),
    ],
)
def test_bad_oracle_settings(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        PersistentOracle(SCORES, 4, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"persistence_levels": (0.0, 1.2)}, "persistence_levels"),
        ({"persistence_levels": (0.5, 0.501)}, "differ"),
        ({"position_bias": -0.5}, "position_bias"),
        ({"pl_temperature": 0.0}, "pl_temperature > 0"),
    ],
)
def test_bad_spectrum_settings(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        RunConfig(**kwargs)


def test_spectrum_tasks_and_the_zero_level_reproduces_sim_pl() -> None:
    cfg = RunConfig(ks=(10,), sim_n=30, sim_queries=2, spectrum_queries=2)
    assert list(spectrum_tasks(cfg)) == [
        "sim_persist0",
        "sim_persist50",
        "sim_persist100",
        "sim_position",
    ]
    assert spectrum_tasks(RunConfig(spectrum_queries=0)) == {}
    assert spectrum_task(cfg, "sim_persist0") == sim_task(cfg, "pl")
    full = spectrum_task(cfg, "sim_persist100")
    # Fully persistent errors are a consistent order: every exact method finds its top-10.
    assert full["pairwise"]["ndcg10"] == pytest.approx(full["sliding_window"]["ndcg10"], abs=0.02)

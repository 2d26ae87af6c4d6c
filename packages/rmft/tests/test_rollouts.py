"""Rollouts: the public ``rollout`` is the function the README calls, not its module."""

from __future__ import annotations

import importlib
from types import ModuleType

import numpy as np


def test_public_rollout_is_the_function_after_its_module_is_imported() -> None:
    importlib.import_module("icml26.rmft.rollouts")  # what every internal import does first
    from icml26.rmft import rollout, sample_instances
    from icml26.rmft.baselines import UCB

    assert not isinstance(rollout, ModuleType)
    rng = np.random.default_rng(0)
    trajs = rollout(UCB(), sample_instances("bernoulli_k3_t20", 4, rng), rng)
    assert trajs.final_regret.shape == (4,)
    assert np.all(trajs.final_regret >= 0)

"""Evaluation plays exactly the configured number of episodes."""

from __future__ import annotations

import pytest

from icml26.syvla.evaluate import slot_quotas


@pytest.mark.parametrize(("episodes", "n_envs"), [(48, 32), (64, 32), (300, 32), (5, 2), (3, 8)])
def test_slot_quotas_sum_to_the_episodes_configured(episodes: int, n_envs: int) -> None:
    quotas = slot_quotas(episodes, n_envs)
    assert quotas.sum() == episodes  # quick's 48 were played as 64 (32 slots x 2) before
    assert len(quotas) == min(episodes, n_envs)
    assert quotas.max() - quotas.min() <= 1


def test_slot_quotas_refuse_no_episodes() -> None:
    with pytest.raises(ValueError, match="must be >= 1"):
        slot_quotas(0, 4)

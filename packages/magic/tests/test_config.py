"""Bad config values fail in validation, naming the field."""

from __future__ import annotations

import pytest

from icml26.magic.config import BenchConfig, RunConfig
from icml26.magic.paper import PAPER


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"defenders": ("magic", "base", "ghost")}, "unknown defender"),
        ({"defenders": ("base", "magic")}, "must start with 'magic'"),
        ({"budget_minutes": -1}, "budget_minutes must be"),
        ({"schedule": "coin"}, "schedule must be"),
        ({"asr_low": 0.7}, "asr_low < asr_high"),
        ({"schedule": "every", "asr_high": 0.9}, "schedule='metric' only"),
        ({"num_generations": 1}, "num_generations"),
        ({"pairs_per_step": 1}, "pairs_per_step must be >= 2"),
        ({"large_steps": 3}, "only with large_model"),
        ({"large_model": "smollm2-135m-instruct-q4_1"}, "large_steps is 0"),
        ({"model": "smollm2-135m-instruct-q4_1"}, "base_sft_steps"),
        ({"catalogue": "/no/such/file.json"}, "is not a file"),
        ({"lr": 0.0}, "lr must be > 0"),
        ({"device": "tpu"}, "device must be"),
        ({"seeds": 1}, "seeds must be an integer >= 2"),
        ({"start": "judge"}, "start must be 'defender' or 'attacker'"),
    ],
)
def test_bad_values(changes: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RunConfig(**changes)


def test_profiles_validate() -> None:
    for cfg in PAPER.profiles.values():
        assert isinstance(cfg, RunConfig)
    for cfg in PAPER.bench_profiles.values():  # type: ignore[union-attr]
        assert isinstance(cfg, BenchConfig)
    assert PAPER.profiles["full"].large_model == "smollm2-135m-instruct-q4_1"
    assert not PAPER.profiles["quick"].large_model


def test_claims_are_decided_on_three_seeds() -> None:
    assert PAPER.profiles["quick"].seeds >= 3
    assert PAPER.profiles["quick"].start == "defender"  # the official code's start_agent

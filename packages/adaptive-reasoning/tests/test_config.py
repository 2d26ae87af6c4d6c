"""Bad configuration values fail before anything runs, naming the field."""

from __future__ import annotations

import pytest

from icml26.adaptive_reasoning.config import AdaptiveConfig, BenchConfig
from icml26.adaptive_reasoning.grpo import ModeGRPOSettings
from icml26.adaptive_reasoning.paper import PAPER


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("sft_steps", -1, "sft_steps"),
        ("grpo_generations", 1, "grpo_generations"),
        ("grpo_generations", 7, "even"),
        ("guard", "magic", "unknown guard"),
        ("verbose_if_simple", 1.5, "verbose_if_simple"),
        ("verbose_if_simple", 0.95, "must exceed"),
        ("sft_engine", "x", "unknown sft_engine"),
        ("token_cost", -0.1, "token_cost"),
        ("seeds", 0, "seeds"),
        ("device", "tpu", "device"),
        ("sft_lr", 0.0, "sft_lr"),
        ("model", "", "model"),
    ],
)
def test_bad_values(field: str, value: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        AdaptiveConfig(**{field: value})  # type: ignore[arg-type]


def test_profiles_valid_and_full_is_large_enough() -> None:
    assert set(PAPER.profiles) == {"smoke", "quick", "full"}
    full = PAPER.profiles["full"]
    assert full.eval_per_split >= 300
    assert full.seeds >= 3
    assert PAPER.profiles["quick"].seeds >= 3  # claims carry SEs over >= 3 seeds
    assert full.large_model == "smollm2-135m-instruct-q4_1"
    BenchConfig()
    with pytest.raises(ValueError, match="grpo_steps"):
        BenchConfig(grpo_steps=0)
    with pytest.raises(ValueError, match="unknown guard"):
        ModeGRPOSettings(guard="x")  # type: ignore[arg-type]


def test_large_settings_without_large_model_are_an_error() -> None:
    """A ``large_*`` size the run would ignore (no ``large_model``) is refused, naming it."""
    with pytest.raises(ValueError, match=r"large_grpo_steps only apply.*set large_model"):
        AdaptiveConfig(large_grpo_steps=3)
    assert (
        AdaptiveConfig(
            large_model="smollm2-135m-instruct-q4_1", large_grpo_steps=3
        ).large_grpo_steps
        == 3
    )

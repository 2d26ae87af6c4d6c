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


def _metrics(**overrides: dict[str, float]) -> dict[str, float]:
    """Flat run metrics in tables.py's shape from per-method figures (SE 0.01 everywhere)."""
    base = {"accuracy": 0.3, "tokens": 40.0, "reward": 0.2, "verbosity_gap": 0.0}
    base |= {"separation": 0.0, "complex": 0.1}
    methods = ("ours", "sft_only", "always_think", "never_think", "length_penalty")
    fig = {m: base | overrides.get(m, {}) for m in (*methods, "no_augmentation")}
    out: dict[str, float] = {}
    for m, f in fig.items():
        out |= {f"{q}.all.{m}": f[q] for q in ("accuracy", "tokens", "reward")}
        out |= {f"accuracy.complex.{m}": f["complex"], f"separation.{m}": f["separation"]}
        out |= {f"verbosity_gap.{m}": f["verbosity_gap"], f"verbosity_gap_se.{m}": 0.01}
        for b, g in fig.items():
            for q in ("accuracy", "tokens", "reward", "verbosity_gap", "separation"):
                out[f"gap.{q}.{m}.{b}"] = f[q] - g[q]
                out[f"gap_se.{q}.{m}.{b}"] = 0.0 if m == b else 0.01
    return out


def test_cost_claims_need_the_thinking_premise_and_verbosity_compares_no_augmentation() -> None:
    claims = {c.id: c for c in PAPER.claims}
    cheap = {"tokens": 10.0, "reward": 0.4}  # ours: fewer tokens, higher reward, same accuracy
    chance = _metrics(ours=cheap)  # every model equally (in)accurate on complex items
    premise = _metrics(ours=cheap, always_think={"complex": 0.5})
    for cid in ("fewer_tokens_same_accuracy", "best_reward"):
        assert claims[cid].evaluate(chance)["holds"] is False, cid
        assert claims[cid].evaluate(premise)["holds"] is True, cid
        assert claims[cid].under_placebo(premise)[0] is False, cid
    gap = claims["smaller_verbosity_gap"]
    assert gap.placebo == {"ours": "no_augmentation"}
    robust = _metrics(no_augmentation={"verbosity_gap": 0.9})
    assert gap.evaluate(robust)["holds"] is True
    assert gap.under_placebo(robust)[0] is False
    fooled = _metrics(ours={"verbosity_gap": 0.85}, no_augmentation={"verbosity_gap": 0.9})
    assert gap.evaluate(fooled)["holds"] is False


def test_one_token_cost_default() -> None:
    assert ModeGRPOSettings().token_cost == AdaptiveConfig().token_cost

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
    assert set(PAPER.profiles) == {"smoke", "quick", "full", "smollm2"}
    full = PAPER.profiles["full"]
    assert full.eval_per_split >= 200
    assert full.seeds >= 3
    assert PAPER.profiles["quick"].seeds >= 3  # claims carry SEs over >= 3 seeds
    assert PAPER.profiles["smollm2"].large_model == "smollm2-135m-instruct-q4_1"
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


_QUANTITIES = {
    "accuracy": "accuracy.all",
    "tokens": "tokens.all",
    "reward": "reward.all",
    "verbosity_gap": "verbosity_gap",
    "verbosity_gap_ood": "verbosity_gap_ood",
    "separation": "separation",
    "accuracy_complex": "accuracy.complex",
    "reward_complex": "reward.complex",
    "reward_simple": "reward.simple",
}


def _metrics(se: float = 0.01, **overrides: dict[str, float]) -> dict[str, float]:
    """Flat run metrics in tables.py's shape from per-method figures (SE ``se`` everywhere,
    3 seeds). Defaults: a setting that rewards adaptivity (thinking pays on complex items,
    answering directly on simple ones)."""
    base = {"accuracy": 0.3, "tokens": 40.0, "reward": 0.2, "verbosity_gap": 0.0}
    base |= {"verbosity_gap_ood": 0.0, "separation": 0.0, "accuracy_complex": 0.1}
    base |= {"reward_complex": 0.1, "reward_simple": 0.5}
    methods = ("ours", "sft_only", "always_think", "never_think", "length_penalty")
    setting = {
        "always_think": {"accuracy_complex": 0.5, "reward_complex": 0.4, "reward_simple": 0.4},
        "never_think": {"reward_complex": 0.1, "reward_simple": 0.6},
    }
    fig = {
        m: base | setting.get(m, {}) | overrides.get(m, {}) for m in (*methods, "no_augmentation")
    }
    out: dict[str, float] = {"seeds": 3.0}
    for m, f in fig.items():
        for q, head in _QUANTITIES.items():
            out[f"{head}.{m}"] = f[q]
        out |= {f"verbosity_gap_se.{m}": se, f"verbosity_gap_ood_se.{m}": se}
        for b, g in fig.items():
            for q in _QUANTITIES:
                out[f"gap.{q}.{m}.{b}"] = f[q] - g[q]
                out[f"gap_se.{q}.{m}.{b}"] = 0.0 if m == b else se
    return out


def test_cost_claims_need_a_setting_that_rewards_adaptivity() -> None:
    """The cost claims are undecided where thinking does not pay on complex items (always-
    think's reward there no better than never-think's: every model at chance, or the token
    cost eats the accuracy gained) or where answering directly does not pay on simple ones
    (thinking pays everywhere); decided, and failing under their placebo, where both hold."""
    claims = {c.id: c for c in PAPER.claims}
    # ours: fewer tokens, higher reward, always-think's accuracy (all items and complex ones)
    cheap = {"tokens": 10.0, "reward": 0.4, "accuracy_complex": 0.5}
    adaptive = _metrics(0.004, ours=cheap)
    at_chance = _metrics(0.004, ours=cheap, always_think={"reward_complex": 0.1})
    think_everywhere = _metrics(0.004, ours=cheap, never_think={"reward_simple": 0.3})
    for cid in ("fewer_tokens_same_accuracy", "best_reward"):
        for setting in (at_chance, think_everywhere):
            out = claims[cid].evaluate(setting)
            assert out["holds"] is None, cid  # undecided, not failed
            assert "not decidable" in out["note"], cid
        assert claims[cid].evaluate(adaptive)["holds"] is True, cid
        assert claims[cid].under_placebo(adaptive)[0] is False, cid
    # a loss on complex items cannot hide behind the all-item accuracy
    lossy = _metrics(0.004, ours=cheap | {"accuracy_complex": 0.3})
    assert claims["fewer_tokens_same_accuracy"].evaluate(lossy)["holds"] is False


def test_thinking_needed_reads_the_complex_items_gap() -> None:
    """thinking_needed decides on the paired complex-item gap: 15 points on complex items
    holds even when always-think is worse over all items; a large all-item gap with no
    complex-item gap fails."""
    claim = {c.id: c for c in PAPER.claims}["thinking_needed"]
    complex_only = _metrics(
        0.004, always_think={"accuracy_complex": 0.25, "accuracy": 0.25}, never_think={}
    )
    assert claim.evaluate(complex_only)["holds"] is True
    assert claim.under_placebo(complex_only)[0] is False
    simple_only = _metrics(0.004, always_think={"accuracy_complex": 0.1, "accuracy": 0.9})
    assert claim.evaluate(simple_only)["holds"] is False


def test_smaller_verbosity_gap_reads_the_held_out_wording() -> None:
    gap = {c.id: c for c in PAPER.claims}["smaller_verbosity_gap"]
    assert gap.placebo == {"ours": "no_augmentation"}
    robust = _metrics(no_augmentation={"verbosity_gap_ood": 0.9})
    assert gap.evaluate(robust)["holds"] is True
    assert gap.under_placebo(robust)[0] is False
    fooled = _metrics(ours={"verbosity_gap_ood": 0.85}, no_augmentation={"verbosity_gap_ood": 0.9})
    assert gap.evaluate(fooled)["holds"] is False
    # robust on the training costumes only: not robust
    seen_only = _metrics(
        ours={"verbosity_gap_ood": 0.9},
        no_augmentation={"verbosity_gap": 0.9, "verbosity_gap_ood": 0.9},
    )
    assert gap.evaluate(seen_only)["holds"] is False
    # no shortcut to remove: the no-augmentation reasoner has no gap on held-out wording
    no_shortcut = _metrics(no_augmentation={"verbosity_gap_ood": 0.05})
    assert gap.evaluate(no_shortcut)["holds"] is None


def test_one_token_cost_default() -> None:
    assert ModeGRPOSettings().token_cost == AdaptiveConfig().token_cost


def test_seed_comparisons_use_the_t_quantile_and_need_three_seeds() -> None:
    from icml26.adaptive_reasoning.paper import T975_DF2

    assert pytest.approx(4.3027, abs=5e-5) == T975_DF2  # t(0.975, 2), printed tables
    scipy_stats = pytest.importorskip("scipy.stats")
    assert pytest.approx(scipy_stats.t.ppf(0.975, 2), rel=1e-12) == T975_DF2
    claims = {c.id: c for c in PAPER.claims}
    # ours 0.03 above sft_only on separation, SE 0.01 over 3 seeds: beyond 2 SE, not 4.30
    near = _metrics(ours={"separation": 0.65}, sft_only={"separation": 0.62})
    assert claims["mode_by_true_complexity"].evaluate(near)["holds"] is False
    far = _metrics(ours={"separation": 0.65}, sft_only={"separation": 0.55})
    assert claims["mode_by_true_complexity"].evaluate(far)["holds"] is True
    one_seed = far | {"seeds": 1.0}
    for claim in PAPER.claims:
        assert claim.evaluate(one_seed)["holds"] is None, claim.id

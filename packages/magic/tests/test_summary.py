"""Pooling replicates: means, standard errors and paired gaps against an independent
computation, and the claims' placebos on hand-made pooled metrics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.magic.paper import CLAIMS
from icml26.magic.summary import pool_seeds, t_quantile_975
from icml26.shared.claims import evaluate_rule

DEF = ("magic", "base", "static", "self_play", "frozen_attacker")
EV = ("seed_ops", "heldout_combos", "unseen_ops", "adaptive")


def _seed(rng: np.random.Generator, shift: dict[str, float]) -> dict[str, float]:
    m = {}
    for d in DEF:
        for e in EV:
            m[f"asr.{e}.{d}"] = float(np.clip(0.6 + shift.get(d, 0) + 0.02 * rng.normal(), 0, 1))
        m[f"benign_compliance.all.{d}"] = float(
            np.clip(0.95 + shift.get("b_" + d, 0) + 0.01 * rng.normal(), 0, 1)
        )
    m["novel_strategy_rate.attacker"] = 0.4 + 0.02 * rng.normal()
    m["novel_strategy_rate.attacker_sft"] = 0.1 + 0.02 * rng.normal()
    return m


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.floats(0, 1), min_size=2, max_size=6),
    st.lists(st.floats(0, 1), min_size=6, max_size=6),
)
def test_gap_is_the_paired_mean_and_se(a: list[float], b: list[float]) -> None:
    b = b[: len(a)]
    per = [{"asr.adaptive.magic": x, "asr.adaptive.base": y} for x, y in zip(a, b, strict=True)]
    out = pool_seeds(per, ("magic", "base"))
    d = np.subtract(a, b)
    assert out["gap.asr.adaptive.magic.base"] == pytest.approx(d.mean(), abs=1e-12)
    assert out["se.gap.asr.adaptive.magic.base"] == pytest.approx(
        d.std(ddof=1) / np.sqrt(len(d)), abs=1e-12
    )
    assert out["asr.adaptive.magic"] == pytest.approx(np.mean(a), abs=1e-12)
    assert out["gap.asr.adaptive.magic.magic"] == 0 == out["se.gap.asr.adaptive.magic.magic"]


def test_bad_replicates() -> None:
    with pytest.raises(ValueError, match="at least 2 replicates"):
        pool_seeds([{"a": 1.0}], DEF)
    with pytest.raises(ValueError, match="replicate 1 has keys"):
        pool_seeds([{"a": 1.0}, {"b": 1.0}], DEF)


GAME_CLAIMS = [c for c in CLAIMS if c.id != "rubric_judge_agrees"]


def test_claims_hold_on_a_clear_effect_and_fail_under_their_placebos() -> None:
    rng = np.random.default_rng(0)
    shift = {"magic": -0.4, "static": -0.5, "b_static": -0.6}
    pooled = pool_seeds([_seed(rng, shift) for _ in range(3)], DEF)
    for c in GAME_CLAIMS:
        holds, _, note = evaluate_rule(c.rule, pooled)
        assert holds, (c.id, note)
        assert c.under_placebo(pooled)[0] is False, c.id


def test_claims_fail_without_an_effect() -> None:
    rng = np.random.default_rng(1)
    pooled = pool_seeds([_seed(rng, {}) for _ in range(3)], DEF)
    pooled["novel_strategy_rate.attacker"] = pooled["novel_strategy_rate.attacker_sft"] = 0.1
    pooled["gap.novel_strategy_rate.attacker.attacker_sft"] = 0.0
    for c in GAME_CLAIMS:
        assert evaluate_rule(c.rule, pooled)[0] is False, c.id


def test_rubric_judge_claim_reads_its_agreement() -> None:
    judge = next(c for c in CLAIMS if c.id == "rubric_judge_agrees")
    assert evaluate_rule(judge.rule, {"judge_agreement.rubric": 0.95})[0] is True
    assert evaluate_rule(judge.rule, {"judge_agreement.rubric": 0.0})[0] is False
    assert evaluate_rule(judge.rule, {})[0] is None  # no judge model: undecided


def test_readme_tables_show_means_and_ses() -> None:
    from icml26.magic.tables import readme_tables

    rng = np.random.default_rng(2)
    pooled = pool_seeds([_seed(rng, {"magic": -0.3}) for _ in range(3)], DEF)
    text = readme_tables({"kind": "run", "metrics": pooled})
    assert "over 3 seeds" in text
    row = next(line for line in text.splitlines() if line.startswith("| `magic`"))
    assert f"{pooled['asr.unseen_ops.magic']:.3f} ± {pooled['se.asr.unseen_ops.magic']:.3f}" in row
    assert readme_tables({"kind": "bench", "metrics": {}}) == ""


def test_no_success_on_a_seed_leaves_the_novelty_claim_undecided() -> None:
    from icml26.magic.tables import readme_tables

    rng = np.random.default_rng(3)
    shift = {"magic": -0.4, "static": -0.5, "b_static": -0.6}
    per = [_seed(rng, shift) for _ in range(3)]
    per[1]["novel_strategy_rate.attacker_sft"] = None  # type: ignore[assignment]
    pooled = pool_seeds(per, DEF)
    assert np.isnan(pooled["novel_strategy_rate.attacker_sft"])
    assert np.isnan(pooled["gap.novel_strategy_rate.attacker.attacker_sft"])
    assert pooled["defined_seeds.novel_strategy_rate.attacker_sft"] == 2
    assert pooled["defined_seeds.novel_strategy_rate.attacker"] == 3
    novel = next(c for c in CLAIMS if c.id == "attacker_finds_novel_compositions")
    holds, _, note = evaluate_rule(novel.rule, pooled)
    assert holds is None, note  # undecided, not decided on a made-up 0
    row = next(
        line
        for line in readme_tables({"kind": "run", "metrics": pooled}).splitlines()
        if line.startswith("| `attacker_sft`")
    )
    assert "n/a (defined on 2/3 seeds)" in row


def test_free_text_runs_get_novelty_and_turn_columns() -> None:
    from icml26.magic.tables import readme_tables

    rng = np.random.default_rng(4)
    per = [_seed(rng, {}) for _ in range(3)]
    for k, m in enumerate(per):
        m["novelty.attacker"], m["novelty.attacker_sft"] = 0.3 + 0.1 * k, 0.1
        m["attack_turns.attacker"] = m["attack_turns.attacker_sft"] = 1.5
    pooled = pool_seeds(per, DEF)
    assert pooled["gap.novelty.attacker.attacker_sft"] == pytest.approx(0.3)
    assert pooled["se.gap.novelty.attacker.attacker_sft"] == pytest.approx(0.1 / np.sqrt(3))
    text = readme_tables({"kind": "run", "metrics": pooled})
    assert "free-text multi-turn attacker" in text
    assert "novelty (4-gram distance) | turns |" in text
    row = next(line for line in text.splitlines() if line.startswith("| `attacker` "))
    assert "0.400 ± 0.058" in row
    assert "1.500 ± 0.000" in row


def test_t_quantile_matches_scipy() -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    for df in (*range(1, 41), 60, 120, 1000):
        assert t_quantile_975(df) == pytest.approx(scipy_stats.t.ppf(0.975, df), abs=2e-4), df
    with pytest.raises(ValueError, match="df must be"):
        t_quantile_975(0)


def test_pooled_metrics_carry_the_t_margin() -> None:
    rng = np.random.default_rng(2)
    assert pool_seeds([_seed(rng, {}) for _ in range(3)], DEF)["t975"] == pytest.approx(4.3027)
    assert pool_seeds([_seed(rng, {}) for _ in range(5)], DEF)["t975"] == pytest.approx(2.7764)


def test_asr_claims_fail_for_an_over_refusing_magic() -> None:
    """A MAGIC that gets its low attack success by refusing benign look-alikes too (the
    static defender's way) does not have the lowest ASR in the claims' sense."""
    rng = np.random.default_rng(3)
    shift = {"magic": -0.4, "b_magic": -0.3, "static": -0.5, "b_static": -0.6}
    pooled = pool_seeds([_seed(rng, shift) for _ in range(3)], DEF)
    for cid in ("lowest_asr_unseen_ops", "lowest_asr_heldout_combos"):
        claim = next(c for c in CLAIMS if c.id == cid)
        assert evaluate_rule(claim.rule, pooled)[0] is False, cid


def test_novelty_claim_is_undecided_at_the_ceiling() -> None:
    """With the SFT attacker already novel on more than 90% of its successes the rule's 10
    points cannot be reached: undecided, not failed."""
    claim = next(c for c in CLAIMS if c.id == "attacker_finds_novel_compositions")
    rng = np.random.default_rng(4)
    pooled = pool_seeds([_seed(rng, {}) for _ in range(3)], DEF)
    pooled["novel_strategy_rate.attacker_sft"] = 1.0
    assert claim.evaluate(pooled)["holds"] is None
    pooled["novel_strategy_rate.attacker_sft"] = 0.1
    assert claim.evaluate(pooled)["holds"] is True

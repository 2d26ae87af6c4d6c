"""The controls of issues 26 and 38: matched decoding, random selection, invalid replies as
the worst arm in selection, one-change generalisation axes, the paired z, and claims that can
fail (and fail under their placebo)."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pytest

from icml26.rmft import paper
from icml26.rmft.envs import Instances, parse_env
from icml26.rmft.metrics import (
    Z_MIN_INSTANCES,
    generalisation_axis,
    min_detectable_ratio,
    paired_z,
    power_for_gain,
)
from icml26.rmft.paper import PAPER
from icml26.rmft.rollouts import Trajectories
from icml26.rmft.selection import select, select_lowest_regret, select_random, selection_regret


def _claim(cid: str):
    return next(c for c in PAPER.claims if c.id == cid)


def test_paired_z_is_undecided_without_spread_or_instances() -> None:
    base = np.arange(20.0)
    assert math.isnan(paired_z(base, base - 1.0))  # constant improvement: se = 0, not +-99
    assert math.isnan(paired_z(base[:3], base[:3] - [1.0, 2.0, 0.5]))  # too few pairs
    assert paired_z(base, base) == 0.0  # no difference at all: no improvement
    rng = np.random.default_rng(0)
    after = base - 1.0 + rng.normal(0, 0.5, 20)
    assert paired_z(base, after) > 2
    assert paired_z(after, base) < -2


def test_z_threshold_is_the_one_the_claims_state() -> None:
    assert paper._Z_MIN == Z_MIN_INSTANCES


def test_axes_change_one_thing_at_a_time() -> None:
    train = parse_env("bernoulli_k5_t50")
    axis = {e: generalisation_axis(train, parse_env(e)) for e in paper.PROFILES["quick"].eval_envs}
    assert axis["bernoulli_k5_t50"] == "train"
    assert axis["bernoulli_k5_t100"] == axis["bernoulli_k5_t200"] == "horizon"
    assert axis["bernoulli_k8_t50"] == "arms"
    assert axis["gaussian_k5_t50"] == axis["nonstationary_k5_t50"] == "rewards"
    # a new reward process *and* a new horizon is on no axis (it was filed under rewards)
    assert generalisation_axis(train, parse_env("nonstationary_k5_t100")) == "other"
    assert "other" not in axis.values()


def _trajs(means: list[float], actions: list[int], invalid: list[bool]) -> Trajectories:
    t = len(actions)
    m = np.broadcast_to(np.asarray(means, float), (1, t, len(means))).copy()
    inst = Instances(parse_env(f"bernoulli_k{len(means)}_t{t}"), m, np.zeros_like(m))
    a = np.asarray([actions])
    regret = np.cumsum(inst.step_regret(a), axis=1)
    return Trajectories(inst, a, np.zeros((1, t)), regret, np.asarray([invalid]))


def test_invalid_replies_cost_the_worst_arm_in_selection() -> None:
    # means (0.9, 0.5, 0.1): best-arm gap 0, 0.4, 0.8; worst arm regret 0.8 per step
    lucky = _trajs([0.9, 0.5, 0.1], [0, 0, 0], [False, True, True])  # fallbacks hit the best
    honest = _trajs([0.9, 0.5, 0.1], [1, 1, 1], [False, False, False])
    assert lucky.final_regret[0] == pytest.approx(0.0)
    assert selection_regret(lucky, "played")[0] == pytest.approx(0.0)
    assert selection_regret(lucky, "worst")[0] == pytest.approx(1.6)
    assert selection_regret(honest, "worst")[0] == pytest.approx(1.2)
    # "end": the episode ends at the first invalid step, every later step is the worst arm
    late = _trajs([0.9, 0.5, 0.1], [1, 0, 0], [False, True, False])
    assert selection_regret(late, "end")[0] == pytest.approx(0.4 + 0.8 + 0.8)
    assert selection_regret(late, "worst")[0] == pytest.approx(0.4 + 0.8 + 0.0)
    # so the lucky rollout is no longer the one selected in its group
    regrets = np.concatenate([selection_regret(x, "worst") for x in (lucky, honest)])
    assert select_lowest_regret(regrets, 1, group_size=2).tolist() == [1]
    with pytest.raises(ValueError, match="invalid"):
        selection_regret(lucky, "ignore")


def test_random_selection_ignores_regret_and_keeps_per_group() -> None:
    regrets = np.tile(np.arange(8.0), 50)  # every group's best rollout is its first
    rng = np.random.default_rng(1)
    keep = select_random(regrets, 2, group_size=8, rng=rng)
    assert keep.size == 100
    assert np.all(np.bincount(keep // 8, minlength=50) == 2)
    assert regrets[keep].mean() > 2  # lowest-regret selection would give 0.5
    low = select("lowest_regret", regrets, 2, group_size=8, rng=rng)
    assert regrets[low].mean() == 0.5
    with pytest.raises(ValueError, match="selection"):
        select("best", regrets, 2, group_size=8, rng=rng)
    with pytest.raises(ValueError, match="keep"):
        select_random(regrets, 9, group_size=8, rng=rng)


@pytest.mark.parametrize(
    ("cid", "control", "method"),
    [
        ("rmft_greedy_beats_greedy_base", "base_greedy", "rmft_greedy"),
        ("llm_rmft_greedy_beats_greedy_base", "llm_base_greedy", "llm_rmft_greedy"),
    ],
)
def test_control_claims_can_fail_and_fail_under_their_placebo(
    cid: str, control: str, method: str
) -> None:
    claim = _claim(cid)
    key = f"train.{control}.{method}"
    same = f"train.{control}.{control}"
    ok = {
        f"regret_ratio_by_axis.{key}": 0.8,
        f"improvement_z_by_axis.{key}": 3.0,
        f"regret_ratio_by_axis.{same}": 1.0,
        f"improvement_z_by_axis.{same}": 0.0,
        f"power_by_axis.train.{control}": 0.9,
    }
    assert claim.evaluate(ok)["holds"] is True
    assert claim.under_placebo(ok)[0] is False  # the control in the method's place
    worse = {**ok, f"regret_ratio_by_axis.{key}": 1.05}
    assert claim.evaluate(worse)["holds"] is False
    noise = {**ok, f"improvement_z_by_axis.{key}": 1.0}
    assert claim.evaluate(noise)["holds"] is False
    undecided = {**ok, f"improvement_z_by_axis.{key}": None}
    assert claim.evaluate(undecided)["holds"] is None
    # the power guard (B2): an underpowered miss is undecided, an underpowered hit still holds
    weak = {f"power_by_axis.train.{control}": 0.3}
    assert claim.evaluate({**noise, **weak})["holds"] is None
    assert claim.evaluate({**ok, **weak})["holds"] is True


#: The claims that need the sampled pair and the matched greedy pair: (axis, prefix, control,
#: the sampled pair's ratio threshold).
BOTH_PAIRS = {
    "numeric_rmft_improves": ("train", "", "base", 0.9),
    "rmft_beats_random_selection": ("train", "", "random_select", 1.0),
    "generalises_horizon": ("horizon", "", "base", 1.0),
    "generalises_arms": ("arms", "", "base", 1.0),
    "generalises_rewards": ("rewards", "", "base", 1.0),
    "nonstationary_rmft_improves": ("nonstationary", "nonstationary_", "base", 1.0),
    "experts_rmft_improves": ("experts", "experts_", "base", 1.0),
    "llm_rmft_improves": ("train", "llm_", "base", 1.0),
    "llm_rmft_beats_random_selection": ("train", "llm_", "random_select", 1.0),
}


def _both_pairs_metrics(cid: str, sampled=(0.8, 5.0), greedy=(0.8, 5.0), power=0.9) -> dict:
    """Metrics for a both-pairs claim: the sampled pair's and the greedy pair's (ratio, z),
    each control against itself (the placebo) and each control's power."""
    axis, p, control, _ = BOTH_PAIRS[cid]
    out = {}
    for c, m, (ratio, z) in (
        (p + control, p + "rmft", sampled),
        (p + control + "_greedy", p + "rmft_greedy", greedy),
    ):
        out |= {
            f"regret_ratio_by_axis.{axis}.{c}.{m}": ratio,
            f"improvement_z_by_axis.{axis}.{c}.{m}": z,
            f"regret_ratio_by_axis.{axis}.{c}.{c}": 1.0,
            f"improvement_z_by_axis.{axis}.{c}.{c}": 0.0,
            f"power_by_axis.{axis}.{c}": power,
        }
    return out


@pytest.mark.parametrize("cid", sorted(BOTH_PAIRS))
def test_both_pairs_claims_fail_when_the_greedy_base_stands_in(cid: str) -> None:
    claim = _claim(cid)
    threshold = BOTH_PAIRS[cid][3]
    ok = _both_pairs_metrics(cid)
    assert claim.evaluate(ok)["holds"] is True
    assert claim.under_placebo(ok)[0] is False
    # The review's placebo: the greedy-decoded base in the sampled RMFT model's place. Its
    # sampled pair passes (ratio ~0.53 against a base sampled at temperature 1: sharpening),
    # but its greedy pair is the greedy base against itself (ratio 1, z 0): the rule fails.
    greedy_base = _both_pairs_metrics(cid, sampled=(0.53, 9.0), greedy=(1.0, 0.0))
    assert claim.evaluate(greedy_base)["holds"] is False
    # the sampled pair alone must clear its own bar too
    weak_sampled = _both_pairs_metrics(cid, sampled=(threshold + 0.01, 5.0))
    assert claim.evaluate(weak_sampled)["holds"] is False
    noisy_greedy = _both_pairs_metrics(cid, greedy=(0.9, 1.0))
    assert claim.evaluate(noisy_greedy)["holds"] is False
    # the power guard (B2): at power <= 0.5 a miss is undecided, not failed; a hit holds
    assert claim.evaluate({**noisy_greedy, **_power(cid, 0.3)})["holds"] is None
    assert claim.evaluate({**greedy_base, **_power(cid, 0.17)})["holds"] is None
    assert claim.evaluate({**ok, **_power(cid, 0.3)})["holds"] is True
    entry = claim.evaluate({**noisy_greedy, **_power(cid, 0.42)})
    assert "not decidable" in entry["note"]


def _power(cid: str, power: float) -> dict:
    return {k: v for k, v in _both_pairs_metrics(cid, power=power).items() if "power" in k}


def test_llm_claims_are_decided_in_full_only() -> None:
    for cid in ("llm_rmft_improves", "llm_rmft_greedy_beats_greedy_base"):
        assert _claim(cid).applies_to("full")
        assert not _claim(cid).applies_to("quick")


def test_llm_selection_does_not_keep_a_lucky_fallback() -> None:
    from icml26.rmft.llm_rmft import LLMSettings, llm_iteration_stats, select_llm_transcripts

    lucky = _trajs([0.9, 0.5, 0.1], [0, 0, 0], [False, True, True])
    honest = _trajs([0.9, 0.5, 0.1], [1, 1, 1], [False, False, False])
    both = lucky.subset(np.array([0]))
    both = Trajectories(
        lucky.instances.repeat(2),
        np.concatenate([lucky.actions, honest.actions]),
        np.zeros((2, 3)),
        np.concatenate([lucky.regret, honest.regret]),
        np.concatenate([lucky.invalid, honest.invalid]),
        [
            [
                {"messages": [], "reply": f"e{e}t{t}", "valid": bool(e or not both.invalid[0, t])}
                for t in range(3)
            ]
            for e in range(2)
        ],
    )
    settings = LLMSettings(n_instances=1, rollouts_per_instance=2, keep_per_instance=1)
    keep, pairs = select_llm_transcripts(both, settings, np.random.default_rng(0))
    assert keep.tolist() == [1]
    assert len(pairs) == 3
    old = LLMSettings(n_instances=1, rollouts_per_instance=2, keep_per_instance=1, invalid="played")
    keep, pairs = select_llm_transcripts(both, old, np.random.default_rng(0))
    assert keep.tolist() == [0]
    assert len(pairs) == 1
    with pytest.raises(ValueError, match="invalid"):
        LLMSettings(invalid="lucky")
    # the logged selected_regret is the penalised one the selection ranked (review38r #6)
    stats = llm_iteration_stats(both, np.array([0]), old, 1.0, 0.5)
    assert stats.selected_regret == pytest.approx(selection_regret(both, "played")[0])
    stats = llm_iteration_stats(both, np.array([0]), settings, 1.0, 0.5)
    assert stats.selected_regret == pytest.approx(selection_regret(both, "worst")[0])
    assert stats.selected_played_regret == pytest.approx(both.final_regret[0])
    assert stats.selected_regret > stats.selected_played_regret  # the lucky fallback
    assert stats.selected_invalid == pytest.approx(both.invalid[0].mean())
    with pytest.raises(TypeError, match="rng"):  # no silent default_rng(0) (review38r #7)
        select_llm_transcripts(both, settings, None)  # type: ignore[arg-type]
    for field in ("temperature", "lr"):
        for bad in (float("nan"), 0.0, -1.0):
            with pytest.raises(ValueError, match=field):
                LLMSettings(**{field: bad})


def test_invalid_drop_z_and_its_claim() -> None:
    from icml26.rmft.metrics import proportion_drop_z

    # 80 of 100 invalid, then 50 of 100: pooled 0.65, se sqrt(2 * 0.65 * 0.35 / 100)
    assert proportion_drop_z(0.8, 0.5, 100) == pytest.approx(0.3 / math.sqrt(0.00455))
    assert proportion_drop_z(0.5, 0.5, 100) == 0.0
    assert math.isnan(proportion_drop_z(1.0, 1.0 - 1e-12, 100)) is False
    claim = _claim("llm_rmft_lowers_invalid_rate")
    ok = {
        "invalid_share.llm_base": 0.8,
        "invalid_share.llm_rmft": 0.5,
        "invalid_share.llm_random_select": 0.7,
        "invalid_drop_z_by_control.llm_random_select.llm_rmft": 3.1,
        "invalid_drop_z_by_control.llm_random_select.llm_random_select": 0.0,
        "train.llm_random_iter1.examples": 5.0,
    }
    assert claim.evaluate(ok)["holds"] is True
    # a control that kept no valid reply trained nothing: SFT against no SFT, undecided
    assert claim.evaluate({**ok, "train.llm_random_iter1.examples": 0.0})["holds"] is None
    assert claim.under_placebo(ok)[0] is False  # the random-selection loop in RMFT's place
    noisy = {**ok, "invalid_drop_z_by_control.llm_random_select.llm_rmft": 1.5}
    assert claim.evaluate(noisy)["holds"] is False
    # full-14's figures: random selection lowers the rate as much (0.333 vs 0.336), however
    # far both are below the base: SFT on the model's own valid replies, no regret signal
    sft_only = {
        **ok,
        "invalid_share.llm_rmft": 0.336,
        "invalid_share.llm_random_select": 0.333,
        "invalid_drop_z_by_control.llm_random_select.llm_rmft": -0.1,
    }
    assert claim.evaluate(sft_only)["holds"] is False


def test_invalid_rate_metrics_compare_rmft_with_the_random_selection_loop() -> None:
    from icml26.rmft.metrics import summary_metrics

    rng = np.random.default_rng(0)
    base_inv = np.full(24, 0.75)
    rmft_inv = np.where(rng.random(24) < 0.8, 0.25, 0.5)
    random_inv = np.where(rng.random(24) < 0.8, 0.5, 0.75)
    summary = {
        "llm_base": _llm_summary(np.ones(24), base_inv),
        "llm_rmft_iter1": _llm_summary(np.ones(24), rmft_inv),
        "llm_random_select_final": _llm_summary(np.ones(24), random_inv),
        "llm_random_select_greedy_final": _llm_summary(np.ones(24), np.ones(24)),
    }
    summary["llm_base"] |= {"truncated": 0.25, "invalid_lenient": 0.5}
    config = _llm_config(24)
    m = summary_metrics(config, {"bernoulli_k3_t4": summary}, {})
    assert m["invalid_share"]["llm_rmft"] == pytest.approx(rmft_inv.mean())
    assert m["invalid_share"]["llm_random_select_greedy"] == 1.0
    by = m["invalid_drop_z_by_control"]
    assert by["llm_random_select"]["llm_rmft"] == pytest.approx(paired_z(random_inv, rmft_inv))
    assert by["llm_random_select"]["llm_random_select"] == 0.0
    assert by["llm_base"]["llm_rmft"] == pytest.approx(paired_z(base_inv, rmft_inv))
    assert m["truncated_rate"] == {"llm_base": 0.25}
    assert m["invalid_lenient_rate"] == {"llm_base": 0.5}
    flat = _flatten(m)
    claim = _claim("llm_rmft_lowers_invalid_rate")
    flat["train.llm_random_iter1.examples"] = 3.0  # the control trained on something
    assert claim.evaluate(flat)["holds"] is True
    assert claim.under_placebo(flat)[0] is False


def _flatten(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out |= _flatten(v, f"{prefix}{k}.")
        else:
            out[f"{prefix}{k}"] = v
    return out


def _llm_summary(final: np.ndarray, invalid: np.ndarray) -> dict:
    return {
        "regret": float(final.mean()),
        "se": 0.1,
        "curve": [0.0],
        "final": final.tolist(),
        "invalid": float(invalid.mean()),
        "invalid_by_episode": invalid.tolist(),
    }


def _llm_config(instances: int) -> Any:
    """An LLM-only RunConfig of one iteration on ``instances`` evaluation instances."""
    from icml26.rmft.config import RunConfig

    return RunConfig(
        numeric=False,
        llm_model="tiny-random",
        llm_env="bernoulli_k3_t4",
        llm_nl_env="",
        llm_iterations=1,
        llm_eval_instances=instances,
    )


def _llm_metrics(base_final, rmft_final, base_invalid, rmft_invalid) -> dict:
    from icml26.rmft.metrics import summary_metrics

    config = _llm_config(len(base_final))
    results = {
        "bernoulli_k3_t4": {
            "llm_base": _llm_summary(np.asarray(base_final, float), np.asarray(base_invalid)),
            "llm_rmft_iter1": _llm_summary(np.asarray(rmft_final, float), np.asarray(rmft_invalid)),
        }
    }
    return summary_metrics(config, results, {})


def test_invalid_drop_z_counts_episodes_not_decisions() -> None:
    # 12 episodes of T = 4 decisions: 3 of 4 invalid in each, then 2 of 4 in 9 of them. The
    # run reports the paired z over the 12 episodes (the unit: an episode's decisions are
    # dependent), not a two-proportion z over 48 decisions as if independent.
    before = np.full(12, 0.75)
    after = before.copy()
    after[3:] = 0.5
    m = _llm_metrics(np.ones(12), np.full(12, 0.5), before, after)
    assert m["invalid_drop_z"]["1"] == pytest.approx(paired_z(before, after))
    assert m["invalid_drop_z"]["0"] == 0.0
    diff = before - after
    assert m["invalid_drop_z"]["1"] == pytest.approx(
        diff.mean() / (diff.std(ddof=1) / math.sqrt(12))
    )
    # fewer than Z_MIN_INSTANCES episodes: undecided
    short = _llm_metrics(np.ones(4), np.ones(4), before[:4], after[:4])
    assert math.isnan(short["invalid_drop_z"]["1"])


def test_regret_ratio_is_nan_when_the_control_has_no_positive_regret() -> None:
    m = _llm_metrics(np.zeros(12), np.full(12, 0.5), np.zeros(12), np.zeros(12))
    assert math.isnan(m["regret_ratio"]["bernoulli_k3_t4"]["llm_base"]["llm_rmft"])
    assert math.isnan(m["regret_ratio"]["bernoulli_k3_t4"]["llm_base"]["llm_base"])
    negative = _llm_metrics(np.full(12, -0.1), np.zeros(12), np.zeros(12), np.zeros(12))
    assert math.isnan(negative["regret_ratio"]["bernoulli_k3_t4"]["llm_base"]["llm_rmft"])
    positive = _llm_metrics(np.ones(12), np.full(12, 0.5), np.zeros(12), np.zeros(12))
    assert positive["regret_ratio"]["bernoulli_k3_t4"]["llm_base"]["llm_rmft"] == 0.5


def test_claims_are_undecided_when_underpowered() -> None:
    # numeric and LLM alike (B2): the guard reads each control's power
    for cid in ("generalises_horizon", "llm_rmft_improves"):
        claim = _claim(cid)
        miss = _both_pairs_metrics(cid, sampled=(0.95, 1.0))
        assert claim.evaluate(miss)["holds"] is False  # powered for a 10% gain: a real miss
        axis, p, control, _ = BOTH_PAIRS[cid]
        key = f"power_by_axis.{axis}.{p}{control}"
        entry = claim.evaluate({**miss, key: 0.2})
        assert entry["holds"] is None
        assert entry["measured"][key] == 0.2
        assert claim.evaluate({**miss, key: 0.5})["holds"] is None
        assert claim.evaluate({**miss, key: None})["holds"] is None
        # a significant harm is evidence at any power: decided, and the claim fails
        z_key = next(k for k in miss if k.startswith(f"improvement_z_by_axis.{axis}.{p}{control}."))
        harmed = claim.evaluate({**miss, key: 0.2, z_key: -2.5})
        assert harmed["holds"] is False, cid


def test_power_guard_reads_metrics_the_run_writes() -> None:
    # every key a guard reads is a power the metrics compute (a self-pair's control)
    m = _llm_metrics(np.ones(12), np.full(12, 0.5), np.zeros(12), np.zeros(12))
    assert "llm_base" in m["power_by_axis"]["train"]
    from icml26.rmft.metrics import PAIRS

    controls = {c for c, _ in PAIRS}
    for claim in PAPER.claims:
        for key in re.findall(r"power_by_axis\.[\w.]+", claim.decidable_when):
            short = key.split(".")[-1]
            for prefix in ("llm_", "nonstationary_", "experts_", ""):
                if short.startswith(prefix):
                    short = short[len(prefix) :]
                    break
            assert short in controls, key


def test_min_detectable_ratio_matches_the_z_formula() -> None:
    rng = np.random.default_rng(0)
    control = rng.normal(5.0, 0.9, size=40)
    mdr = min_detectable_ratio(control)
    # A method whose mean is mdr * the control's, at the control's SE, has z exactly 2.
    se = control.std(ddof=1) / np.sqrt(control.size)
    assert np.isclose((control.mean() - mdr * control.mean()) / se, 2.0)
    assert np.isnan(min_detectable_ratio(control[:5]))  # too few instances for any z
    # Power is one half exactly at the minimum detectable gain.
    assert np.isclose(power_for_gain(control, 1.0 - mdr), 0.5)
    assert power_for_gain(control, 0.5) > 0.5 > power_for_gain(control, 0.01)

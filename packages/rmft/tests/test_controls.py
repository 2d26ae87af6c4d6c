"""The controls of issues 26 and 38: matched decoding, random selection, invalid replies as
the worst arm in selection, one-change generalisation axes, the paired z, and claims that can
fail (and fail under their placebo)."""

from __future__ import annotations

import math

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
        ("numeric_rmft_improves", "base", "rmft"),
        ("rmft_greedy_beats_greedy_base", "base_greedy", "rmft_greedy"),
        ("rmft_beats_random_selection", "random_select", "rmft"),
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
        f"power_by_axis.train.{control}": 0.9,  # read by the LLM claims only
    }
    assert claim.evaluate(ok)["holds"] is True
    assert claim.under_placebo(ok)[0] is False  # the control in the method's place
    worse = {**ok, f"regret_ratio_by_axis.{key}": 1.05}
    assert claim.evaluate(worse)["holds"] is False
    noise = {**ok, f"improvement_z_by_axis.{key}": 1.0}
    assert claim.evaluate(noise)["holds"] is False
    undecided = {**ok, f"improvement_z_by_axis.{key}": None}
    assert claim.evaluate(undecided)["holds"] is None


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
        "invalid_rate_by_iteration.0": 0.8,
        "invalid_rate_by_iteration.1": 0.5,
        "invalid_drop_z.0": 0.0,
        "invalid_drop_z.1": 4.4,
    }
    assert claim.evaluate(ok)["holds"] is True
    assert claim.under_placebo(ok)[0] is False
    assert claim.evaluate({**ok, "invalid_drop_z.1": 1.5})["holds"] is False


def _llm_summary(final: np.ndarray, invalid: np.ndarray) -> dict:
    return {
        "regret": float(final.mean()),
        "se": 0.1,
        "curve": [0.0],
        "final": final.tolist(),
        "invalid": float(invalid.mean()),
        "invalid_by_episode": invalid.tolist(),
    }


def _llm_metrics(base_final, rmft_final, base_invalid, rmft_invalid) -> dict:
    from icml26.rmft.config import RunConfig
    from icml26.rmft.metrics import summary_metrics

    config = RunConfig(
        numeric=False,
        llm_model="tiny-random",
        llm_env="bernoulli_k3_t4",
        llm_nl_env="",
        llm_iterations=1,
        llm_eval_instances=len(base_final),
    )
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


@pytest.mark.parametrize(
    ("cid", "axis", "prefix"),
    [
        ("generalises_horizon", "horizon", ""),
        ("generalises_arms", "arms", ""),
        ("generalises_rewards", "rewards", ""),
        ("nonstationary_rmft_improves", "nonstationary", "nonstationary_"),
    ],
)
def test_generalisation_claims_need_the_greedy_pair_too(cid: str, axis: str, prefix: str) -> None:
    claim = _claim(cid)
    metrics = {}
    for control, method in (("base", "rmft"), ("base_greedy", "rmft_greedy")):
        c, m = prefix + control, prefix + method
        metrics |= {
            f"regret_ratio_by_axis.{axis}.{c}.{m}": 0.6,
            f"improvement_z_by_axis.{axis}.{c}.{m}": 8.0,
            f"regret_ratio_by_axis.{axis}.{c}.{c}": 1.0,
            f"improvement_z_by_axis.{axis}.{c}.{c}": 0.0,
        }
    assert claim.evaluate(metrics)["holds"] is True
    assert claim.under_placebo(metrics)[0] is False
    greedy = f"{axis}.{prefix}base_greedy.{prefix}rmft_greedy"
    # Sampled holds, greedy does not (the quick run's horizon figures): only sharpening.
    sharpened = {
        **metrics,
        f"regret_ratio_by_axis.{greedy}": 1.178,
        f"improvement_z_by_axis.{greedy}": -1.58,
    }
    assert claim.evaluate(sharpened)["holds"] is False
    noisy = {**metrics, f"improvement_z_by_axis.{greedy}": 1.0}
    assert claim.evaluate(noisy)["holds"] is False


def test_llm_claims_are_undecided_when_underpowered() -> None:
    claim = _claim("llm_rmft_improves")
    key, same = "train.llm_base.llm_rmft", "train.llm_base.llm_base"
    metrics = {
        f"regret_ratio_by_axis.{key}": 0.95,
        f"improvement_z_by_axis.{key}": 1.0,
        f"regret_ratio_by_axis.{same}": 1.0,
        f"improvement_z_by_axis.{same}": 0.0,
        "power_by_axis.train.llm_base": 0.8,
    }
    assert claim.evaluate(metrics)["holds"] is False  # powered for a 10% gain: a real miss
    weak = {**metrics, "power_by_axis.train.llm_base": 0.2}
    entry = claim.evaluate(weak)
    assert entry["holds"] is None
    assert entry["measured"]["power_by_axis.train.llm_base"] == 0.2
    assert claim.evaluate({**metrics, "power_by_axis.train.llm_base": 0.5})["holds"] is None


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

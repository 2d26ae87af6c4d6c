"""The RL path: hybrid rewards, the Filter left untrained where no evidence was retrieved,
evidence from answer strings for a user's QA data, retrieved tokens masked, TRL updates
through the shared trainer, and the seeds x questions standard error."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.decor import joint
from icml26.decor.data.types import Question
from icml26.decor.episodes import Episode, EpisodeSettings, Turn, run_team
from icml26.decor.joint import TrainSettings, train_decor
from icml26.decor.policies import ROLES, Sampling, make_tiny_team
from icml26.decor.retrieval import BM25Search
from icml26.decor.rewards import (
    filled_rewards,
    filter_advantages,
    filter_intrinsic,
    hybrid_rewards,
    judged_advantages,
    monolithic_rewards,
    planner_intrinsic,
    role_advantages,
)
from icml26.decor.study import gap_se


def _episode(answer: str, queries: int, retrieved: list[list[str]], memory: list[str]) -> Episode:
    q = Question("x", "What is the capital of X?", ("Paris",), ("a", "b"), "hop2")
    return Episode(
        q, "decor", queries=["q"] * queries, retrieved=retrieved, memory=memory, answer=answer
    )


def test_intrinsic_signals_hand_cases() -> None:
    ep = _episode("Paris", 2, [["a", "z"], ["b"]], ["a", "b"])
    assert planner_intrinsic(ep) == 1.0
    assert filter_intrinsic(ep) == 1.0
    wasted = _episode("Paris", 4, [["a"], ["a"], ["z"], ["b"]], ["a", "b", "z"])
    assert planner_intrinsic(wasted) == pytest.approx(0.5)
    assert filter_intrinsic(wasted) == pytest.approx(2 * (2 / 3) / (2 / 3 + 1))


def test_hybrid_reward_blends_and_outcome_only_ignores_intrinsic() -> None:
    eps = [_episode("Paris", 2, [["a"], ["b"]], ["a", "b"]), _episode("Rome", 1, [["a"]], [])]
    r = hybrid_rewards(eps, 0.5)
    np.testing.assert_allclose(r["planner"], [1.0, 0.25])
    np.testing.assert_allclose(r["answerer"], [1.0, 0.0])
    r0 = hybrid_rewards(eps, 0.0)
    for role in ("planner", "filter", "answerer"):
        np.testing.assert_allclose(r0[role], r0["em"])
    with pytest.raises(ValueError, match="w must be in"):
        hybrid_rewards(eps, 1.5)


def test_filter_advantage_is_zero_where_no_evidence_was_retrieved() -> None:
    # group 1: two judged episodes and two that retrieved no gold (kept nothing / all)
    judged_good = _episode("Paris", 1, [["a", "z"]], ["a"])
    judged_bad = _episode("Paris", 1, [["a", "z"]], ["z"])
    none_kept = _episode("Rome", 1, [["z"]], [])
    all_kept = _episode("Rome", 1, [["z"]], ["z"])
    r = hybrid_rewards([judged_good, none_kept, judged_bad, all_kept], 0.5)
    assert np.isnan(r["filter"][[1, 3]]).all()
    adv = filter_advantages(r["filter"], 4)
    assert adv[1] == 0.0
    assert adv[3] == 0.0
    assert adv[0] > 0 > adv[2]
    filled = filled_rewards(r["filter"], 4)
    assert filled[1] == filled[3] == pytest.approx(np.mean(r["filter"][[0, 2]]))
    # a group with a single judged episode carries no signal at all
    np.testing.assert_allclose(filter_advantages(np.array([0.7, np.nan]), 2), 0.0)


def test_filter_step_size_does_not_depend_on_how_many_were_judged(factbook) -> None:  # type: ignore[no-untyped-def]
    """[1, NaN, 0, NaN] gives the judged episodes the advantages [1, 0] alone gets (+-0.71),
    not the +-1.22 that filling NaNs with the mean and scaling over all four would give; the
    Filter's TRL trainer does not rescale them."""
    alone = role_advantages(np.array([1.0, 0.0]), 2)
    np.testing.assert_allclose(alone, [0.7070, -0.7070], atol=1e-3)
    with_unjudged = filter_advantages(np.array([1.0, np.nan, 0.0, np.nan]), 4)
    np.testing.assert_allclose(with_unjudged[[0, 2]], alone)
    np.testing.assert_allclose(with_unjudged[[1, 3]], 0.0)
    filled_then_scaled = role_advantages(filled_rewards(np.array([1.0, np.nan, 0.0, np.nan]), 4), 4)
    assert abs(filled_then_scaled[0]) > 1.2  # what the old path gave
    np.testing.assert_allclose(judged_advantages(np.array([0.3, np.nan]), 2), 0.0)
    team = make_tiny_team(["a b"], ROLES, hidden_size=16, num_layers=1)
    trainers = joint._RoleTrainers(team, TrainSettings(questions_per_step=1, group_size=2), 32)
    assert trainers.trainers["filter"].args.scale_rewards == "none"
    assert trainers.trainers["planner"].args.scale_rewards == "group"


def test_unjudged_filter_turns_leave_the_loss(monkeypatch: pytest.MonkeyPatch, factbook) -> None:  # type: ignore[no-untyped-def]
    """Through train_decor: what the Filter's TRL trainer receives has env_mask 0 on every
    token of an episode that retrieved no evidence."""
    seen: dict[str, list] = {}

    class Capture:
        def __init__(self, policies, settings, max_len) -> None:  # type: ignore[no-untyped-def]
            pass

        def update(self, name, questions, payload):  # type: ignore[no-untyped-def]
            seen.setdefault(name, []).append(payload)
            return {"loss": 0.0}

    monkeypatch.setattr(joint, "_RoleTrainers", Capture)
    env = factbook
    team = make_tiny_team(
        [p.text for p in env.passages],
        ROLES,
        words=[c.name for c in env.countries],
        hidden_size=16,
        num_layers=1,
    )
    qs = [q for q in env.questions if q.hops == "hop2"][:6]
    torch.manual_seed(0)
    settings = TrainSettings(steps=2, questions_per_step=3, group_size=2)
    played: list[list[Episode]] = []
    real = joint.run_team
    monkeypatch.setattr(
        joint, "run_team", lambda *a, **k: played.append(real(*a, **k)) or played[-1]
    )
    train_decor(
        team,
        BM25Search(env.passages),
        qs,
        settings,
        episode_settings=EpisodeSettings(max_searches=2),
    )
    assert len(seen["filter"]) == 2
    checked = 0
    for episodes, payload in zip(played, seen["filter"], strict=True):
        for ep, mask in zip(episodes, payload["env_mask"], strict=True):
            if np.isnan(filter_intrinsic(ep)):
                assert not any(mask)
                checked += 1
    assert checked > 0  # a random team misses the gold somewhere


def test_answer_string_evidence_for_questions_without_gold() -> None:
    q = Question("u", "Where is the Louvre?", ("Paris",))
    ep = Episode(q, "decor", queries=["louvre"], retrieved=[["p1", "p2"]], memory=["p2"])
    ep.passages = {"p1": "The Louvre is in Paris.", "p2": "A museum."}
    assert planner_intrinsic(ep) == 1.0
    assert filter_intrinsic(ep) == 0.0  # dropped the one passage with the answer
    ep.memory = ["p1"]
    assert filter_intrinsic(ep) == 1.0


def test_monolithic_shaping_adds_the_evidence_signal() -> None:
    eps = [_episode("Rome", 2, [["a"], ["b"]], ["a", "b"]), _episode("Rome", 1, [["z"]], ["z"])]
    np.testing.assert_allclose(monolithic_rewards(eps, 0.5, shaped=False), [0.0, 0.0])
    # the Planner's evidence term at the Planner's weight: w * r_P, as hybrid_rewards gives it
    np.testing.assert_allclose(monolithic_rewards(eps, 0.5, shaped=True), [0.5, 0.0])
    planner = hybrid_rewards(eps, 0.5)["planner"] - 0.5 * hybrid_rewards(eps, 0.5)["em"]
    plain = monolithic_rewards(eps, 0.5, shaped=False)
    np.testing.assert_allclose(monolithic_rewards(eps, 0.5, shaped=True) - plain, planner)


def test_group_advantages_are_per_question() -> None:
    adv = role_advantages(np.array([1.0, 0.0, 5.0, 5.0]), 2)
    assert adv[0] > 0 > adv[1]
    np.testing.assert_allclose(adv[2:], 0.0)


def test_retrieved_tokens_are_masked_in_the_planner_turn(factbook) -> None:  # type: ignore[no-untyped-def]
    env = factbook
    team = make_tiny_team(
        [p.text for p in env.passages],
        ROLES,
        words=[c.name for c in env.countries],
        hidden_size=16,
        num_layers=1,
    )
    torch.manual_seed(1)
    eps = run_team(
        team,
        BM25Search(env.passages),
        env.questions[:4],
        EpisodeSettings(max_searches=2),
        Sampling(greedy=False),
    )
    tok = team["planner"].tokenizer
    for ep in eps:
        [turn] = ep.turns["planner"]
        env_text = tok.decode([t for t, m in zip(turn.completion, turn.mask, strict=True) if not m])
        own = tok.decode([t for t, m in zip(turn.completion, turn.mask, strict=True) if m])
        for query in ep.queries:
            assert query.split()[0] in own
        if ep.memory:  # what the Filter kept is shown to the Planner, masked
            assert ep.memory_text[0].split(".")[0] in env_text


def test_trl_update_trains_one_policy_and_ignores_masked_episodes(factbook) -> None:  # type: ignore[no-untyped-def]
    env = factbook
    team = make_tiny_team(
        [p.text for p in env.passages],
        ["planner", "answerer"],
        words=[c.name for c in env.countries],
        hidden_size=16,
        num_layers=1,
    )
    trainers = joint._RoleTrainers(
        {"planner": team["planner"]}, TrainSettings(questions_per_step=1, group_size=2, lr=1e-2), 64
    )
    q = env.questions[:1]
    eos = int(team["planner"].tokenizer.eos_token_id)
    params = lambda: [p.detach().clone() for p in team["planner"].model.parameters()]  # noqa: E731
    before, other = params(), [p.detach().clone() for p in team["answerer"].model.parameters()]
    masked = [Turn([5, 6], [7, 8, eos], [0, 0, 0]), Turn([5, 6], [9, eos], [0, 0])]
    trainers.update("planner", q, joint._payload(masked, np.array([1.0, 0.0]), eos))
    assert all(torch.equal(a, b) for a, b in zip(before, params(), strict=True))
    live = [Turn([5, 6], [7, 8, eos], [1, 1, 1]), Turn([5, 6], [9, eos], [1, 1])]
    trainers.update("planner", q, joint._payload(live, np.array([1.0, 0.0]), eos))
    assert any(not torch.equal(a, b) for a, b in zip(before, params(), strict=True))
    assert all(
        torch.equal(a, b) for a, b in zip(other, team["answerer"].model.parameters(), strict=True)
    )


def test_gap_se_counts_seeds_and_questions() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 2, (3, 8)).astype(float), rng.integers(0, 2, (3, 8)).astype(float)
    gap, se = gap_se(a, b)
    d = a - b
    expected = np.sqrt(np.var(d.mean(1), ddof=1) / 3 + np.var(d.mean(0), ddof=1) / 8)
    assert gap == pytest.approx(d.mean())
    assert se == pytest.approx(expected)
    assert np.isnan(gap_se(a[:1], b[:1])[1])  # one training seed decides nothing
    with pytest.raises(ValueError, match="seeds, questions"):
        gap_se(a, b[:, :3])


def test_gap_df_is_welch_satterthwaite() -> None:
    from icml26.decor.study import gap_df

    d = np.array([[1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.0], [1.0, 1.0, 1.0, 0.0]])
    zero = np.zeros_like(d)
    u = np.var(d.mean(1), ddof=1) / 3
    v = np.var(d.mean(0), ddof=1) / 4
    assert gap_df(d, zero) == pytest.approx((u + v) ** 2 / (u**2 / 2 + v**2 / 3))
    same_rows = np.tile([1.0, 0.0, 1.0, 0.0], (3, 1))  # no seed spread: the questions' df
    assert gap_df(same_rows, zero) == pytest.approx(3.0)
    assert np.isnan(gap_df(d[:1], zero[:1]))
    assert gap_df(zero, zero) == 2.0


@settings(max_examples=40, deadline=None)
@given(
    st.integers(2, 5).flatmap(
        lambda s: st.lists(
            st.lists(st.sampled_from([-1.0, 0.0, 1.0]), min_size=6, max_size=6),
            min_size=s,
            max_size=s,
        )
    )
)
def test_gap_df_lies_between_its_parts(rows: list[list[float]]) -> None:
    from icml26.decor.study import gap_df

    d = np.array(rows)
    df = gap_df(d, np.zeros_like(d))
    s, q = d.shape
    assert min(s - 1, q - 1) - 1e-9 <= df <= s + q - 2 + 1e-9


def test_save_and_load_a_lora_team(tmp_path, factbook) -> None:  # type: ignore[no-untyped-def]
    from peft import get_peft_model_state_dict

    from icml26.decor.policies import load_team, make_lora_team, save_team

    def base():  # type: ignore[no-untyped-def]
        return make_tiny_team(
            [p.text for p in factbook.passages[:50]], ["b"], hidden_size=16, num_layers=1
        )["b"]

    b = base()
    team = make_lora_team(b.model, b.tokenizer, ROLES, rank=2)
    with torch.no_grad():
        for p in team["filter"].trainable():
            p.add_(0.5)  # the filter's adapter differs from a fresh one
    save_team(team, tmp_path / "team")
    fresh = base()  # the same seed: the same base weights
    loaded = load_team(tmp_path / "team", ROLES, base_model=fresh.model)
    for role in ROLES:
        a = get_peft_model_state_dict(team[role].model, adapter_name=role)
        c = get_peft_model_state_dict(loaded[role].model, adapter_name=role)
        assert a.keys() == c.keys()
        assert all(torch.equal(a[k], c[k]) for k in a)
    with pytest.raises(FileNotFoundError, match="no saved policy for role 'critic'"):
        load_team(tmp_path / "team", ["critic"])
    with pytest.raises(ValueError, match="pass base_model"):  # not a download of 'None'
        load_team(tmp_path / "team", ROLES)


def test_rollout_seed_reaches_trl(monkeypatch: pytest.MonkeyPatch, factbook) -> None:  # type: ignore[no-untyped-def]
    """TRL reseeds torch with its ``seed`` when the trainers are built: the step-0 episodes
    follow ``rollout_seed`` (two methods with their own seeds sample differently, one seed
    twice samples the same), not whatever torch was seeded with before."""
    monkeypatch.setattr(joint._RoleTrainers, "update", lambda self, name, qs, payload: {})
    team = make_tiny_team(
        [p.text for p in factbook.passages],
        ROLES,
        words=[c.name for c in factbook.countries],
        hidden_size=16,
        num_layers=1,
    )
    qs = [q for q in factbook.questions if q.hops == "hop2"][:4]
    real = joint.run_team

    def step0(rollout_seed: int) -> list[list[str]]:
        played: list[list[Episode]] = []
        monkeypatch.setattr(
            joint, "run_team", lambda *a, **k: played.append(real(*a, **k)) or played[-1]
        )
        torch.manual_seed(0)  # what the caller seeded before: TRL overrides it
        settings = TrainSettings(
            steps=1, questions_per_step=2, group_size=2, seed=7, rollout_seed=rollout_seed
        )
        train_decor(
            team,
            BM25Search(factbook.passages),
            qs,
            settings,
            episode_settings=EpisodeSettings(max_searches=2),
        )
        return [[str(e.queries), str(e.memory), e.answer] for e in played[0]]

    a, b, a_again = step0(1), step0(2), step0(1)
    assert a == a_again
    assert a != b


def _seed(scores: dict[str, list[float]]) -> dict:  # type: ignore[type-arg]
    return {
        "metrics": {m: {"em.all": float(np.mean(v))} for m, v in scores.items()},
        "scores": {m: {"em": v, "f1": v} for m, v in scores.items()},
    }


def test_claims_use_a_t_margin_a_floor_and_a_real_self_gap() -> None:
    from scipy.stats import t

    from icml26.decor.paper import CLAIMS
    from icml26.decor.study import combine, gap_margin

    rng = np.random.default_rng(1)
    base = [rng.integers(0, 2, 40).astype(float).tolist() for _ in range(3)]
    better = [[1.0] * 30 + b[30:] for b in base]
    low = [[0.0] * 40 for _ in range(3)]
    high = [[1.0] * 40 for _ in range(3)]
    claim = next(c for c in CLAIMS if c.id == "decor_beats_monolithic")

    def metrics(single: list[list[float]]) -> dict[str, float]:
        return combine(
            [
                _seed({"decor": d, "monolithic": b, "single_query": s})
                for d, b, s in zip(better, base, single, strict=True)
            ]
        )

    m = metrics(low)
    assert 2 <= m["em_gap_df.decor.monolithic"] <= 2 + 39
    assert m["em_gap_margin.decor.monolithic"] == pytest.approx(
        t.ppf(0.975, m["em_gap_df.decor.monolithic"]) * m["em_gap_se.decor.monolithic"]
    )
    assert gap_margin(1.0, 2) == pytest.approx(4.3027, abs=1e-3)
    assert m["f1_differs.decor.monolithic"] > 0
    assert m["em_gap.monolithic.monolithic"] == 0.0
    assert m["em_gap_se.monolithic.monolithic"] > 0  # the baseline's seed noise, not 0
    assert claim.evaluate(m)["holds"] is True
    assert claim.under_placebo(m)[0] is False
    assert claim.evaluate(metrics(high))["holds"] is False  # under the single-query floor


def test_samples_label_the_shaped_monolithic_agent(factbook) -> None:  # type: ignore[no-untyped-def]
    from types import SimpleNamespace

    from icml26.decor import study
    from icml26.decor.config import DecorConfig

    team = make_tiny_team(
        [p.text for p in factbook.passages],
        ["monolithic"],
        words=[c.name for c in factbook.countries],
        hidden_size=16,
        num_layers=1,
    )
    env = SimpleNamespace(test_search=BM25Search(factbook.passages), test=factbook.questions[:2])
    for method in ("monolithic", "monolithic_shaped"):
        episodes = study._evaluate(DecorConfig(max_searches=1), env, team, method)  # type: ignore[arg-type]
        assert [study._sample(e)["method"] for e in episodes] == [method, method]

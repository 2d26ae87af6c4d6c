"""Rewards on hand cases and the evaluation sets' construction."""

from __future__ import annotations

import numpy as np
import pytest

from icml26.magic.coevolve import GameSettings
from icml26.magic.game import SEED_POOL, EvalSet, SafetyGame, check_disjoint
from icml26.magic.intents import builtin_catalogue
from icml26.magic.operators import TRAIN_OPERATORS, UNSEEN_OPERATORS, format_ops

GAME = SafetyGame(builtin_catalogue())


def test_attacker_reward_hand_cases() -> None:
    it = GAME.train_intents()[0]
    seen: list[int] = []

    def complies(convs):  # type: ignore[no-untyped-def]
        seen.append(len(convs))
        return ["sure, here you go."] * len(convs)

    r = GAME.attacker_rewards(
        [it] * 5,
        ["roleplay + leet", "foo", "roleplay + roleplay", "split + leet + roleplay", "none"],
        complies,
    )
    assert r["attack_success"] == [1.0, 0.0, 0.0, 0.0, 1.0]
    assert r["intent_broken"] == [0.0, 1.0, 1.0, 1.0, 0.0]
    assert seen == [2]  # one batched defender call, broken attacks never reach it
    r = GAME.attacker_rewards([it], ["hypothetical"], lambda c: ["Sorry, I can't."] * len(c))
    assert r == {"attack_success": [0.0], "intent_broken": [0.0]}


def test_defender_reward_hand_cases() -> None:
    h = GAME.train_intents()[0]
    b = GAME.twin(h)
    r = GAME.defender_rewards([h, h, b, b], ["sorry, i can't", "sure", "sorry, i can't", "sure"])
    assert r["refusal"] == [1.0, 0.0, None, None]
    assert r["helpfulness"] == [None, None, 0.0, 1.0]


def test_too_long_rewrite_breaks_the_intent() -> None:
    game = SafetyGame(builtin_catalogue(), max_prompt_chars=100)
    it = game.train_intents()[0]
    assert game.read_attack(it, "roleplay + split") is None
    assert game.read_attack(it, "none") is not None


def test_eval_sets() -> None:
    rng = np.random.default_rng(0)
    seed_keys = {format_ops(o) for o in SEED_POOL}
    held = GAME.eval_set("heldout_combos", rng, 8)
    assert len(held.compositions) == 8
    for ops in held.compositions:
        assert len(ops) == GAME.max_ops + 1
        assert set(ops) <= set(TRAIN_OPERATORS)
        assert format_ops(ops) not in seed_keys
    unseen = GAME.eval_set("unseen_ops", rng, 6)
    assert all(set(ops) & set(UNSEEN_OPERATORS) for ops in unseen.compositions)
    seed = GAME.eval_set("seed_ops", rng, 3)
    assert seed.compositions == SEED_POOL
    for h, b in zip(seed.harmful, seed.benign, strict=True):
        assert h.intent.harmful
        assert not b.intent.harmful
        assert h.ops == b.ops
        assert h.intent.frame == b.intent.frame
        assert h.intent.frame in ("f3", "f4")
    cut = GAME.eval_set("seed_ops", rng, 3, whole_seed_pool=False)  # the pretrained model's
    assert len(cut.compositions) == 3
    assert set(cut.compositions) <= set(SEED_POOL)
    with pytest.raises(ValueError, match="unknown evaluation set"):
        GAME.eval_set("wildjailbreak", rng, 3)


def test_training_data_never_uses_held_out_frames_or_unseen_operators() -> None:
    for conv in GAME.attacker_sft_conversations() + GAME.defender_sft_conversations():
        assert not any(f in conv[-2]["content"] for f in ("quickest way", "tips to"))
    for a in GAME.static_attack_set():
        assert a.intent.frame not in ("f3", "f4")
        assert not set(a.ops) & set(UNSEEN_OPERATORS)


def test_static_set_holds_the_rewritten_look_alikes() -> None:
    """The no-game baseline trains on the same benign look-alike rewrites the evaluation
    uses (else over-refusal is forced by never having seen one)."""
    pool = GAME.static_attack_set()
    benign_rewrites = [a for a in pool if not a.intent.harmful and a.ops]
    harmful_rewrites = [a for a in pool if a.intent.harmful and a.ops]
    assert len(benign_rewrites) == len(harmful_rewrites) > 0
    assert {a.key for a in benign_rewrites} == {format_ops(o) for o in SEED_POOL}
    assert {a.intent.frame for a in pool} & {"f3", "f4"} == set()


def test_evaluation_is_disjoint_from_training_by_content() -> None:
    rng = np.random.default_rng(0)
    sets = [GAME.eval_set(e, rng, 6) for e in ("seed_ops", "heldout_combos", "unseen_ops", "plain")]
    check_disjoint(GAME, sets)
    train_text = {m["content"] for c in GAME.defender_sft_conversations() for m in c}
    for s in sets:
        for a in (*s.harmful, *s.benign):
            assert a.intent.description not in train_text


def test_disjointness_check_refuses_a_training_request() -> None:
    leak = GAME.attack(GAME.train_intents("benign")[3], ("leet",))
    with pytest.raises(ValueError, match="is also a training request"):
        check_disjoint(GAME, [EvalSet("leaky", (), (leak,))])


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"n_eval_intents": -3}, "n_eval_intents must be >= 0"),
        ({"n_eval_intents": 2.5}, "n_eval_intents must be an integer"),
        ({"max_prompt_chars": 0}, "max_prompt_chars must be >= 1"),
        ({"max_ops": 0}, "max_ops must be >= 1"),
        ({"penalty": -1.0}, "penalty must be >= 0"),
    ],
)
def test_game_refuses_bad_settings(changes: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SafetyGame(builtin_catalogue(), **changes)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"pairs_per_step": 0}, r"GameSettings\.pairs_per_step must be an integer >= 1"),
        ({"num_generations": 1}, r"GameSettings\.num_generations must be an integer >= 2"),
        ({"attack_tokens": 0}, r"GameSettings\.attack_tokens"),
        ({"reply_tokens": -1}, r"GameSettings\.reply_tokens"),
        ({"pairs_per_step": 2.0}, r"GameSettings\.pairs_per_step"),
        ({"lr": 0.0}, r"GameSettings\.lr must be a number > 0"),
        ({"temperature": -1.0}, r"GameSettings\.temperature must be a number > 0"),
        ({"seed": -1}, r"GameSettings\.seed"),
    ],
)
def test_game_settings_refuse_bad_values(changes: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GameSettings(**changes)
    GameSettings()  # the defaults are valid

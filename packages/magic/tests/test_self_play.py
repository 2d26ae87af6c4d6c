"""The self-play baseline sees whole attack/look-alike pairs, as many defence prompts as
MAGIC's defender, half of them benign."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from icml26.magic import coevolve
from icml26.magic.coevolve import GameSettings, self_play_role, self_play_shares
from icml26.magic.game import SafetyGame
from icml26.magic.intents import builtin_catalogue

GAME = SafetyGame(builtin_catalogue())


@given(st.integers(1, 16), st.integers(0, 40), st.integers(0, 40))
def test_shares_cover_magic_s_prompts(pairs: int, n_def: int, n_att: int) -> None:
    if n_def + n_att == 0:
        with pytest.raises(ValueError, match="not both 0"):
            self_play_shares(pairs, n_def, n_att)
        return
    tasks, n_pairs = self_play_shares(pairs, n_def, n_att)
    steps = n_def + n_att
    assert 2 * n_pairs * steps >= 2 * pairs * n_def  # defence prompts: at least MAGIC's
    assert tasks * steps >= pairs * n_att  # attack tasks: at least MAGIC's attacker's
    assert 2 * (n_pairs - 1) * steps < 2 * pairs * n_def or n_def == 0  # and no more than needed
    if n_def == n_att and pairs % 2 == 0:
        assert 2 * n_pairs * steps == 2 * pairs * n_def
        assert tasks * steps == pairs * n_att


def test_self_play_batches_hold_whole_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(coevolve, "replies", lambda p, convs, *a, **k: ["roleplay"] * len(convs))
    settings = GameSettings(pairs_per_step=6)
    tasks, n_pairs = self_play_shares(6, 10, 10)
    assert (tasks, n_pairs) == (3, 3)
    role = self_play_role(None, GAME, settings, attack_tasks=tasks, defence_pairs=n_pairs)  # type: ignore[arg-type]
    rows = role.prompts(np.random.default_rng(0))
    assert len(rows) == role.settings.prompts_per_step == 9
    defend = [r for r in rows if r["task"] == "defend"]
    assert len(defend) == 6 == 2 * n_pairs
    labels = [GAME.catalogue[r["intent_id"]].label for r in defend]
    assert labels.count("benign") == labels.count("harmful") == 3
    for h, b in zip(defend[::2], defend[1::2], strict=True):  # each attack then its look-alike
        assert GAME.twin(GAME.catalogue[h["intent_id"]]).id == b["intent_id"]
        assert h["ops"] == b["ops"]
    with pytest.raises(ValueError, match="not both 0"):
        self_play_role(None, GAME, settings, attack_tasks=0, defence_pairs=0)  # type: ignore[arg-type]


def _fake_rollout(width: int):
    """A stand-in for the shared rollout: ``width`` policy tokens for every row."""

    def rollout(prompts, trainer):
        n = len(prompts)
        return {
            "prompt_ids": [[1]] * n,
            "completion_ids": [list(range(width)) for _ in range(n)],
            "logprobs": None,
            "env_mask": [[1] * width for _ in range(n)],
        }

    return lambda *a, **k: rollout


@pytest.mark.parametrize("attacker", ["free_text", "operators"])
def test_self_play_defence_rows_train_on_reply_tokens_only(
    monkeypatch: pytest.MonkeyPatch, attacker: str
) -> None:
    """One adapter plays both sides under one completion budget (the larger role's); its
    defence rows are cut to ``reply_tokens`` (what MAGIC's defender and the evaluation
    generate), its attack rows keep theirs."""
    from icml26.shared.llm import rollouts

    monkeypatch.setattr(coevolve, "replies", lambda p, convs, *a, **k: ["roleplay"] * len(convs))
    monkeypatch.setattr(coevolve, "play_free_text", _fake_dialogues)
    width = 40
    monkeypatch.setattr(rollouts, "multi_turn_rollout", _fake_rollout(width))
    turns = 2 if attacker == "free_text" else 1
    settings = GameSettings(
        pairs_per_step=4, attacker=attacker, turns=turns, reply_tokens=7, attack_tokens=12
    )
    role = self_play_role(None, GAME, settings, attack_tasks=2, defence_pairs=2)  # type: ignore[arg-type]
    rows = role.prompts(np.random.default_rng(0))
    out = role.rollout_func([r["prompt"] for r in rows], None)
    for r, ids, mask in zip(rows, out["completion_ids"], out["env_mask"], strict=True):
        want = width if r["task"] == "attack" else 7
        assert len(ids) == len(mask) == want, r["task"]
    assert {r["task"] for r in rows} == {"attack", "defend"}


def _fake_dialogues(policies, game, intents, attacker, defender, settings):
    from icml26.magic.freetext import Dialogue

    return [Dialogue(it, [it.description], ["ok"]) for it in intents]


def test_cap_defence_rows_refuses_a_zero_cap() -> None:
    with pytest.raises(ValueError, match="reply_tokens"):
        coevolve.cap_defence_rows(lambda p, t: {}, 0)

"""Attack sampling: its seed fixes the draw and leaves torch's global stream alone; the
novelty rate with no success."""

from __future__ import annotations

import math

import pytest
import torch

from icml26.magic import evaluate
from icml26.magic.evaluate import AttackSample, sample_attacks
from icml26.magic.game import SafetyGame
from icml26.magic.intents import builtin_catalogue

GAME = SafetyGame(builtin_catalogue())
_OPS = ["none", "roleplay", "leet", "roleplay + leet", "hypothetical"]


def _fake_replies(policies, convs, adapter, *, max_tokens, temperature=0.0):  # type: ignore[no-untyped-def]
    if adapter == "attacker":  # a sampled attack: consumes torch's random stream
        idx = torch.randint(len(_OPS), (len(convs),)).tolist()
        return [_OPS[i] for i in idx]
    return ["sure, here you go."] * len(convs)


def _draw(seed: int) -> AttackSample:
    return sample_attacks(
        None,  # type: ignore[arg-type]
        GAME,
        GAME.train_intents()[:4],
        attacker="attacker",
        defender="defender",
        samples_per_intent=3,
        attack_tokens=4,
        reply_tokens=4,
        seed=seed,
    )


def test_sample_attacks_leaves_the_global_torch_stream_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(evaluate, "replies", _fake_replies)
    torch.manual_seed(123)
    expected = torch.rand(5)
    torch.manual_seed(123)
    a = _draw(7)
    assert torch.equal(torch.rand(5), expected)  # the caller's stream did not restart
    torch.manual_seed(999)
    b = _draw(7)
    assert a.tried_by_composition == b.tried_by_composition  # the seed fixes the draw
    assert a.attempts == 12


def test_novel_strategy_rate_is_nan_without_successes() -> None:
    assert math.isnan(AttackSample(attempts=5).novel_strategy_rate)
    assert AttackSample(attempts=5, successes=4, novel_successes=1).novel_strategy_rate == 0.25

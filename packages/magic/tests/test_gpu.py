"""Device consistency on CUDA (skipped without one; ``nox -s gpu`` runs them on a GPU
machine): the policies, their adapters and one GRPO step of each role live on the device,
and greedy replies match the CPU's."""

from __future__ import annotations

import pytest
import torch

from icml26.magic.coevolve import GameSettings, attacker_role, defender_role, train_roles
from icml26.magic.game import SafetyGame
from icml26.magic.intents import builtin_catalogue
from icml26.magic.policies import build_policies, replies

gpu = pytest.mark.gpu


@gpu
def test_policies_train_and_reply_on_cuda(cuda_device: torch.device) -> None:
    game = SafetyGame(builtin_catalogue())
    cpu = build_policies(game, base_sft_steps=20, tiny_hidden=32, vocab_size=500, seed=0)
    dev = build_policies(
        game, base_sft_steps=20, tiny_hidden=32, vocab_size=500, seed=0, device=str(cuda_device)
    )
    assert all(p.device.type == "cuda" for p in dev.model.parameters())
    assert all(v.device.type == "cuda" for v in dev.state("defender").values())
    convs = [game.attack(it, ("roleplay",)).conversation for it in game.train_intents()[:8]]
    a = replies(cpu, convs, "defender", max_tokens=6)
    b = replies(dev, convs, "defender", max_tokens=6)
    assert sum(x == y for x, y in zip(a, b, strict=True)) >= 6  # near ties may flip a token
    settings = GameSettings(pairs_per_step=2, num_generations=2)
    log = train_roles(
        dev, [attacker_role(dev, game, settings), defender_role(dev, game, settings)], 2
    )
    assert len(log.steps) == 2
    assert all(p.device.type == "cuda" for p in dev.model.parameters())

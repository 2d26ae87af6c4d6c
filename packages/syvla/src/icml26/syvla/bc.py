"""The behaviour-cloning stage.

BC trains on the expert's (view, instruction, action) triples with three losses summed:

* the action expert's cross-entropy on the expert action, through the intention queries.
  With Intention Decoupling on (``model.decouple``) this loss stops at the fused features,
  as in the RL stage: the (VQA-pretrained) backbone is never trained by the action loss.
  With it off (the ``no_decoupling`` ablation and the ``bc_ppo`` baseline) it trains the
  backbone end to end,
* without decoupling only: the reasoning head's cross-entropy on the discrete action token
  ``act:<a>`` given the instruction (knowledge-insulation style). It is an action loss too:
  with decoupling on it is left out, so no action loss trains the backbone or the reasoning
  head (the VQA answerer), which only the VQA loss below moves; without decoupling it
  trains both,
* the reasoning head's VQA cross-entropy on questions about the demonstration states.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from icml26.shared import rng_for
from icml26.syvla.data import Demos, TextBank, vqa_set
from icml26.syvla.model import SyVLA
from icml26.syvla.vqa import action_answer

__all__ = ["BCConfig", "train_bc"]


@dataclass(frozen=True)
class BCConfig:
    """Settings of :func:`train_bc`.

    Attributes:
        steps: optimiser steps.
        batch: demonstration samples per step.
        lr: Adam learning rate.
        vqa_coef: weight of the VQA loss on demonstration states.
        token_coef: weight of the reasoning head's discrete action-token loss (used only
            without decoupling: with ``model.decouple`` no action loss reaches the reasoning
            head).
    """

    steps: int = 300
    batch: int = 128
    lr: float = 1e-3
    vqa_coef: float = 1.0
    token_coef: float = 1.0

    def __post_init__(self) -> None:
        if min(self.steps, self.batch) < 1 or self.lr <= 0:
            raise ValueError("BC steps and batch must be >= 1 and lr positive")


def train_bc(
    model: SyVLA, demos: Demos, bank: TextBank, cfg: BCConfig, *, seed: int
) -> list[float]:
    """Behaviour cloning (with the reasoning losses), decoupled as ``model.decouple`` says:
    decoupled, the action loss trains only the action expert (intention queries, action and
    value heads) and the VQA loss the backbone and reasoning head.

    Args:
        model: the network, trained in place.
        demos: expert demonstrations.
        bank: embeddings of every instruction and question.
        cfg: the settings.
        seed: the seed of the batch draws (its ``bc`` stream).

    Returns:
        The loss per step.

    Raises:
        ValueError: no demonstrations.
    """
    if len(demos) == 0:
        raise ValueError("no demonstrations: the expert solved none of the episodes")
    device = next(model.parameters()).device
    rng = rng_for(seed, "bc")
    vqa = vqa_set(demos.views, seed=int(rng.integers(2**31)))
    text_ids = bank.ids(demos.missions)
    q_ids = bank.ids(vqa.questions)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    vectors = torch.as_tensor(bank.vectors, device=device)
    tokens = torch.as_tensor([action_answer(int(a)) for a in demos.actions], device=device)
    losses = []
    for _ in range(cfg.steps):
        idx = rng.integers(0, len(demos), size=cfg.batch)
        views = torch.as_tensor(demos.views[idx], device=device)
        out = model(views, vectors[text_ids[idx]])
        acts = torch.as_tensor(demos.actions[idx], device=device)
        loss = nn.functional.cross_entropy(out.logits, acts)
        if not model.decouple and cfg.token_coef:  # an action loss: never on the decoupled head
            loss = loss + cfg.token_coef * nn.functional.cross_entropy(out.reasoning, tokens[idx])
        q_logits = model.reason(views, vectors[q_ids[idx]])
        answers = torch.as_tensor(vqa.answers[idx], device=device)
        loss = loss + cfg.vqa_coef * nn.functional.cross_entropy(q_logits, answers)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return losses

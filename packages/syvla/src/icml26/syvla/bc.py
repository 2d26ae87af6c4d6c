"""The behaviour-cloning stage and the evaluations (task success per split, VQA accuracy).

BC trains on the expert's (view, instruction, action) triples with three losses summed:

* the action expert's cross-entropy on the expert action (through the intention queries; with
  ``joint=True``, the default, it also trains the backbone: the warm start is end-to-end, and
  Intention Decoupling's stop-gradient applies to the RL stage. A backbone trained from
  scratch by the reasoning losses alone gives the action expert features too poor to clone
  the expert at our budget: 36% train success after 1500 steps against the joint model's
  better fit; see the README),
* the reasoning head's cross-entropy on the discrete action token ``act:<a>`` given the
  instruction (the backbone's control knowledge, knowledge-insulation style),
* the reasoning head's VQA cross-entropy on questions about the demonstration states.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from icml26.syvla.data import Demos, TextBank, VecEnv, VQASet, vqa_set
from icml26.syvla.model import SyVLA
from icml26.syvla.vqa import ANSWER_INDEX, action_answer

__all__ = ["BCConfig", "evaluate_success", "train_bc", "vqa_accuracy"]


@dataclass(frozen=True)
class BCConfig:
    steps: int = 300
    batch: int = 128
    lr: float = 1e-3
    vqa_coef: float = 1.0
    token_coef: float = 1.0
    joint: bool = True

    def __post_init__(self) -> None:
        if min(self.steps, self.batch) < 1 or self.lr <= 0:
            raise ValueError("BC steps and batch must be >= 1 and lr positive")


def train_bc(
    model: SyVLA, demos: Demos, bank: TextBank, cfg: BCConfig, *, seed: int
) -> list[float]:
    """Behaviour cloning (with the reasoning losses); returns the loss per step."""
    if len(demos) == 0:
        raise ValueError("no demonstrations: the expert solved none of the episodes")
    device = next(model.parameters()).device
    rng = np.random.default_rng(seed)
    vqa = vqa_set(demos.views, seed=seed)
    text_ids = bank.ids(demos.missions)
    q_ids = bank.ids(vqa.questions)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    vectors = torch.as_tensor(bank.vectors, device=device)
    tokens = torch.as_tensor([action_answer(int(a)) for a in demos.actions], device=device)
    losses = []
    decouple = model.decouple
    model.decouple = not cfg.joint
    for _ in range(cfg.steps):
        idx = rng.integers(0, len(demos), size=cfg.batch)
        views = torch.as_tensor(demos.views[idx], device=device)
        out = model(views, vectors[text_ids[idx]])
        acts = torch.as_tensor(demos.actions[idx], device=device)
        loss = nn.functional.cross_entropy(out.logits, acts)
        loss = loss + cfg.token_coef * nn.functional.cross_entropy(out.reasoning, tokens[idx])
        q_logits = model.reason(views, vectors[q_ids[idx]])
        answers = torch.as_tensor(vqa.answers[idx], device=device)
        loss = loss + cfg.vqa_coef * nn.functional.cross_entropy(q_logits, answers)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    model.decouple = decouple
    return losses


@torch.no_grad()
def vqa_accuracy(model: SyVLA, data: VQASet, bank: TextBank) -> float:
    """Fraction of questions the reasoning head answers correctly (argmax over the answers
    that are not action tokens)."""
    device = next(model.parameters()).device
    vectors = torch.as_tensor(bank.vectors, device=device)
    q_ids = bank.ids(data.questions)
    keep = torch.tensor([not a.startswith("act:") for a in ANSWER_INDEX], device=device)
    correct = 0
    for lo in range(0, len(data), 512):
        views = torch.as_tensor(data.views[lo : lo + 512], device=device)
        logits = model.reason(views, vectors[q_ids[lo : lo + 512]])
        logits = logits.masked_fill(~keep, float("-inf"))
        pred = logits.argmax(-1).cpu().numpy()
        correct += int((pred == data.answers[lo : lo + 512]).sum())
    return correct / len(data)


@torch.no_grad()
def evaluate_success(
    model: SyVLA,
    bank: TextBank,
    split: str,
    episodes: int,
    *,
    seed: int,
    n_envs: int = 32,
    frames: list | None = None,
) -> tuple[float, float]:
    """Success rate and mean return of the sampled policy over ``episodes`` on ``split``.

    Every environment slot plays the same number of episodes, so short (successful)
    episodes are not over-counted by the lockstep stepping.
    """
    device = next(model.parameters()).device
    gen = torch.Generator().manual_seed(seed)
    n = min(n_envs, episodes)
    quota = -(-episodes // n)
    env = VecEnv(n, split, model.cfg.view_size, seed=seed)
    env.reset()
    vectors = torch.as_tensor(bank.vectors, device=device)
    done_per_env = np.zeros(n, dtype=np.int64)
    returns: list[float] = []
    while done_per_env.min() < quota:
        out = model(torch.as_tensor(env.views, device=device), vectors[bank.ids(env.missions)])
        probs = torch.softmax(out.logits, -1).cpu()
        actions = torch.multinomial(probs, 1, generator=gen).squeeze(-1).numpy()
        _, _, finished = env.step(actions)
        for i, ret, _ in finished:
            if done_per_env[i] < quota:
                returns.append(ret)
                done_per_env[i] += 1
        if frames is not None and len(frames) < 64 and done_per_env[0] == 0:
            frames.append((env.current[0].get_frame(tile_size=12), env.missions[0]))
    arr = np.array(returns)
    return float((arr > 0).mean()), float(arr.mean())

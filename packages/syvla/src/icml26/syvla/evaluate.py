"""Evaluations: task success of the sampled policy per split, VQA accuracy of the reasoning head."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from icml26.shared import seed_for
from icml26.syvla.data import TextBank, VecEnv, VQASet
from icml26.syvla.levels import LEVELS, observe
from icml26.syvla.model import SyVLA
from icml26.syvla.vqa import ANSWER_INDEX

__all__ = [
    "FAMILIES",
    "evaluate_success",
    "question_family",
    "slot_quotas",
    "vqa_accuracy",
    "vqa_accuracy_by_family",
]

#: The question families of :func:`icml26.syvla.vqa.ask`, by the start of their text.
FAMILIES: dict[str, str] = {
    "what colour": "colour",
    "which object": "object",
    "is there": "exists",
    "where is": "where",
}


def question_family(text: str) -> str:
    """The family of a question text (``colour``, ``object``, ``exists``, ``where``).

    Raises:
        ValueError: a text no family of :func:`~icml26.syvla.vqa.ask` starts with.
    """
    for start, family in FAMILIES.items():
        if text.startswith(start):
            return family
    raise ValueError(f"not a question of ask(): {text!r}")


@torch.no_grad()
def vqa_accuracy_by_family(model: SyVLA, data: VQASet, bank: TextBank) -> dict[str, float]:
    """Accuracy of the reasoning head per question family (``colour``, ``object``,
    ``exists``, ``where``; families absent from ``data`` are left out).

    Args:
        model: the network.
        data: the questions, their views and true answers.
        bank: embeddings of the question texts.

    Returns:
        ``{family: accuracy}``.
    """
    families = np.array([question_family(q) for q in data.questions])
    out = {}
    for family in FAMILIES.values():
        idx = np.nonzero(families == family)[0]
        if len(idx):
            sub = VQASet(data.views[idx], [data.questions[i] for i in idx], data.answers[idx])
            out[family] = vqa_accuracy(model, sub, bank)
    return out


@torch.no_grad()
def vqa_accuracy(model: SyVLA, data: VQASet, bank: TextBank) -> float:
    """Fraction of questions the reasoning head answers correctly (argmax over the answers
    that are not action tokens).

    Args:
        model: the network.
        data: the questions, their views and true answers.
        bank: embeddings of the question texts.

    Returns:
        The accuracy in [0, 1].
    """
    device = next(model.parameters()).device
    q_ids = bank.ids(data.questions)  # (embeds unseen texts first)
    vectors = torch.as_tensor(bank.vectors, device=device)
    keep = torch.tensor([not a.startswith("act:") for a in ANSWER_INDEX], device=device)
    correct = 0
    for lo in range(0, len(data), 512):
        views = torch.as_tensor(data.views[lo : lo + 512], device=device)
        logits = model.reason(views, vectors[q_ids[lo : lo + 512]])
        logits = logits.masked_fill(~keep, float("-inf"))
        pred = logits.argmax(-1).cpu().numpy()
        correct += int((pred == data.answers[lo : lo + 512]).sum())
    return correct / len(data)


def slot_quotas(episodes: int, n_envs: int) -> np.ndarray:
    """Episodes per lockstep slot: ``min(n_envs, episodes)`` slots whose quotas differ by at
    most one and sum to ``episodes``.

    Raises:
        ValueError: ``episodes`` or ``n_envs`` below 1.
    """
    if episodes < 1 or n_envs < 1:
        raise ValueError(f"episodes and n_envs must be >= 1, got {episodes} and {n_envs}")
    n = min(n_envs, episodes)
    quotas = np.full(n, episodes // n, dtype=np.int64)
    quotas[: episodes % n] += 1
    return quotas


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
    levels: tuple[str, ...] = tuple(LEVELS),
    observer: Callable[[Any, int], np.ndarray] = observe,
) -> tuple[float, float]:
    """Success rate and mean return of the sampled policy over ``episodes`` on ``split``.

    Exactly ``episodes`` are played: each environment slot has a quota fixed before play
    (:func:`slot_quotas`, equal up to one), so short (successful) episodes are not
    over-counted by the lockstep stepping.

    Args:
        model: the policy.
        bank: embeddings of the instructions.
        split: the split to play.
        episodes: episodes in all.
        seed: rooms come from its ``env/eval`` stream, actions from its ``eval/policy`` one.
        n_envs: lockstep rooms.
        frames: when given, (frame, mission) pairs of slot 0's first episode are appended.
        levels: the levels played (ours or Gymnasium ids of minigrid environments).
        observer: the view of an environment the policy reads (default: full on our
            levels, partial on registry ones; :func:`icml26.syvla.rgb.rgb_observer`: RGB).

    Returns:
        (success rate, mean return).

    Raises:
        ValueError: an unknown split.
    """
    device = next(model.parameters()).device
    gen = torch.Generator().manual_seed(seed_for(seed, "eval", "policy"))
    quotas = slot_quotas(episodes, n_envs)
    n = len(quotas)
    env = VecEnv(
        n, split, model.cfg.view_size, seed=seed, stream="eval", levels=levels, observer=observer
    )
    env.reset()
    done_per_env = np.zeros(n, dtype=np.int64)
    returns: list[float] = []
    while (done_per_env < quotas).any():
        # missions of registry levels may be new texts: embed them, then look them up
        ids = bank.ids(env.missions)
        text = torch.as_tensor(bank.vectors[ids], device=device)
        out = model(torch.as_tensor(env.views, device=device), text)
        probs = torch.softmax(out.logits, -1).cpu()
        actions = torch.multinomial(probs, 1, generator=gen).squeeze(-1).numpy()
        _, _, finished = env.step(actions)
        for i, ret, _ in finished:
            if done_per_env[i] < quotas[i]:
                returns.append(ret)
                done_per_env[i] += 1
        if frames is not None and len(frames) < 64 and done_per_env[0] == 0:
            frames.append((env.current[0].get_frame(tile_size=12), env.missions[0]))
    arr = np.array(returns)
    return float((arr > 0).mean()), float(arr.mean())

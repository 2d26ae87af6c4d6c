"""DECOR's hybrid reward: role-specific intrinsic signals blended with the team outcome.

For an episode with final answer ``a``, gold answers ``Y``, evidence ``G``, queries
``q_1..q_n`` and retrieved sets ``S_1..S_n``:

* evidence ``G``: the question's gold passage ids when it has them (the factbook questions);
  otherwise (a user's QA data with answers only) the retrieved passages whose text contains
  an accepted answer (:func:`evidence`);
* team outcome ``EM = exact_match(a, Y)`` (the paper's outcome signal, Search-R1's reward);
* Planner: evidence found per query, ``r_P = |G & (S_1 | ... | S_n)| / max(n, |G|)`` (1 for
  a perfect search path; lower for a missed hop, an early stop or a wasted query);
* Filter: the F1 of the precision and recall of the kept passages against the evidence that
  was retrieved, defined only when some evidence was retrieved. With none retrieved every
  decision is equally right: the Filter is **not trained on that episode** (its reward is
  NaN, its turns leave the loss and its advantage is 0: :func:`filter_advantages`). Its
  group advantage is scaled by the std of the judged episodes only
  (:func:`judged_advantages`), so its step size does not depend on how many were judged.
* Answerer: the token F1 of ``a`` against ``Y``.

Each role's reward is ``R_role = w * r_role + (1 - w) * EM`` (``w = 0``: outcome only). The
monolithic agent with the same evidence shaping (``monolithic_shaped``) gets
``w * r_P + w * F1 + (1 - w) * EM``: the Planner's evidence signal at the Planner's weight
added to the plain agent's reward (it has no Filter). What still differs from DECOR: one
policy (one adapter, one update per step) against three. The plain
monolithic agent gets ``w * F1 + (1 - w) * EM`` (no evidence).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from icml26.decor.episodes import Episode
from icml26.decor.scoring import exact_match, kept_precision_recall, normalize_answer, token_f1

__all__ = [
    "answer_scores",
    "evidence",
    "filled_rewards",
    "filter_advantages",
    "filter_intrinsic",
    "hybrid_rewards",
    "judged_advantages",
    "monolithic_rewards",
    "planner_intrinsic",
    "role_advantages",
]


def answer_scores(ep: Episode) -> tuple[float, float]:
    """``(EM, F1)`` of the episode's answer."""
    return exact_match(ep.answer, ep.question.answers), token_f1(ep.answer, ep.question.answers)


def evidence(ep: Episode) -> set[str]:
    """The episode's evidence ids: the question's gold passages, or (no gold given) the
    retrieved passages whose text contains an accepted answer."""
    if ep.question.gold:
        return set(ep.question.gold)
    answers = [normalize_answer(a) for a in ep.question.answers]
    return {
        pid
        for pid, text in ep.passages.items()
        if any(a and a in normalize_answer(text) for a in answers)
    }


def planner_intrinsic(ep: Episode) -> float:
    """Evidence found per query (module docstring); with no gold given, 1 / #queries when
    some retrieved passage contains the answer."""
    gold = evidence(ep)
    if not gold:
        return 0.0
    found = len(gold & ep.retrieved_ids())
    size = len(gold) if ep.question.gold else 1
    return min(found, size) / max(ep.search_calls, size)


def filter_intrinsic(ep: Episode) -> float:
    """F1 of the kept passages against the retrieved evidence; NaN when none was retrieved
    (no signal: the Filter is not trained on the episode)."""
    gold = evidence(ep)
    if not gold & ep.retrieved_ids():
        return float("nan")
    precision, recall = kept_precision_recall(ep.memory, tuple(gold), ep.retrieved_ids())
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def hybrid_rewards(episodes: Sequence[Episode], w: float) -> dict[str, np.ndarray]:
    """Per role (``planner``, ``filter``, ``answerer``) the blended reward of each episode,
    plus the raw components (``em``, ``f1``, ``planner_intrinsic``, ``filter_intrinsic``; the
    last is NaN for episodes that retrieved no evidence, and so is the Filter's reward)."""
    if not 0.0 <= w <= 1.0:
        raise ValueError(f"the intrinsic weight w must be in [0, 1], got {w}")
    em, f1 = (
        np.array(v, dtype=np.float64) for v in zip(*map(answer_scores, episodes), strict=True)
    )
    planner = np.array([planner_intrinsic(e) for e in episodes])
    filt = np.array([filter_intrinsic(e) for e in episodes])
    judged = ~np.isnan(filt)
    return {
        "planner": w * planner + (1 - w) * em,
        "filter": np.where(judged, w * np.nan_to_num(filt) + (1 - w) * em, np.nan),
        "answerer": w * f1 + (1 - w) * em,
        "em": em,
        "f1": f1,
        "planner_intrinsic": planner,
        "filter_intrinsic": filt,
    }


def role_advantages(
    rewards: np.ndarray, group_size: int, *, scale: Literal["group", "none"] = "group"
) -> np.ndarray:
    """Group-normalised advantages (episodes laid out question by question), as TRL computes
    them with ``scale_rewards=scale``."""
    import torch

    from icml26.shared.llm.grpo import group_advantages

    t = torch.tensor(rewards, dtype=torch.float64)
    return group_advantages(t, group_size, scale=scale).numpy()


def filled_rewards(rewards: np.ndarray, group_size: int) -> np.ndarray:
    """``rewards`` with each NaN (an episode the role is not judged on) replaced by the mean
    of its group's judged rewards (0 when none is judged), so its group-relative advantage is
    exactly 0 and the judged episodes' mean is unchanged; what TRL receives."""
    grouped = np.asarray(rewards, dtype=np.float64).reshape(-1, group_size).copy()
    for row in grouped:
        judged = ~np.isnan(row)
        row[~judged] = row[judged].mean() if judged.any() else 0.0
    return grouped.reshape(-1)


def judged_advantages(rewards: np.ndarray, group_size: int) -> np.ndarray:
    """Group advantages over the judged episodes only: ``(r - mean) / (std + 1e-4)`` with the
    mean and the (Bessel) std of the group's non-NaN rewards; 0 on NaN rewards and in a group
    with fewer than two judged. What the Filter's trainer receives: it runs with
    ``scale_rewards="none"``, and these already sum to 0 per group, so TRL's centring leaves
    them unchanged (filling NaNs with the judged mean and letting TRL scale would divide by a
    std that shrinks with every unjudged episode)."""
    grouped = np.asarray(rewards, dtype=np.float64).reshape(-1, group_size)
    out = np.zeros_like(grouped)
    for row, adv in zip(grouped, out, strict=True):
        judged = ~np.isnan(row)
        if judged.sum() >= 2:
            r = row[judged]
            adv[judged] = (r - r.mean()) / (r.std(ddof=1) + 1e-4)
    return out.reshape(-1)


def filter_advantages(rewards: np.ndarray, group_size: int) -> np.ndarray:
    """The Filter's group-relative advantages as TRL computes them: 0 on episodes it is not
    judged on (NaN reward), scaled by the judged episodes' std (:func:`judged_advantages`)."""
    return role_advantages(judged_advantages(rewards, group_size), group_size, scale="none")


def monolithic_rewards(episodes: Sequence[Episode], w: float, *, shaped: bool) -> np.ndarray:
    """The monolithic agent's reward (module docstring): ``w * F1 + (1 - w) * EM``, or with
    ``shaped`` the Planner's evidence signal added at its weight,
    ``w * r_P + w * F1 + (1 - w) * EM``."""
    if not 0.0 <= w <= 1.0:
        raise ValueError(f"the intrinsic weight w must be in [0, 1], got {w}")
    em, f1 = (
        np.array(v, dtype=np.float64) for v in zip(*map(answer_scores, episodes), strict=True)
    )
    if not shaped:
        return w * f1 + (1 - w) * em
    planner = np.array([planner_intrinsic(e) for e in episodes])
    return w * planner + w * f1 + (1 - w) * em

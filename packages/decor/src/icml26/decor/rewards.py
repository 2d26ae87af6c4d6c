"""DECOR's hybrid reward: role-specific intrinsic signals blended with the team outcome.

For an episode with final answer ``a``, gold answers ``Y``, gold evidence ``G``, queries
``q_1..q_n`` and retrieved sets ``S_1..S_n``:

* team outcome ``EM = exact_match(a, Y)`` (the paper's outcome signal, Search-R1's reward);
* Planner: new gold evidence found per query,
  ``r_P = |G & (S_1 | ... | S_n)| / max(n, |G|)`` (1 for a perfect search path; lower for a
  missed hop, an early stop or a wasted query);
* Filter: the F1 of the precision and recall of the kept passages ``K`` against the gold
  passages that were retrieved (:func:`~icml26.decor.scoring.kept_precision_recall`), defined
  only when the search retrieved some gold passage. With no gold retrieved there is nothing to
  keep, every decision (keep all, keep none) is equally right, and the Filter's reward is the
  team outcome alone: a neutral signal. (Scoring that case as F1 = 1 for keeping nothing, the
  empty-set convention, made "keep nothing" an attractor whenever the Planner mostly missed:
  measured in ``quick``, the Filter learned to drop every passage.)
* Answerer: the token F1 of ``a`` against ``Y``.

Each role's reward is ``R_role = w * r_role + (1 - w) * EM`` (``w = 0``: outcome only). For
the ``G`` episodes of one question, each role's group-normalised advantage
``A = (R - mean) / (std + 1e-4)`` (:func:`icml26.shared.llm.grpo.group_advantages`) is given
to every turn that role owns in that episode.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from icml26.decor.episodes import Episode
from icml26.decor.scoring import exact_match, kept_precision_recall, token_f1

__all__ = [
    "answer_scores",
    "filter_intrinsic",
    "hybrid_rewards",
    "planner_intrinsic",
    "role_advantages",
]


def answer_scores(ep: Episode) -> tuple[float, float]:
    """``(EM, F1)`` of the episode's answer."""
    return exact_match(ep.answer, ep.question.answers), token_f1(ep.answer, ep.question.answers)


def planner_intrinsic(ep: Episode) -> float:
    gold = set(ep.question.gold)
    if not gold:
        return 0.0
    found = len(gold & ep.retrieved_ids())
    return found / max(ep.search_calls, len(gold))


def filter_intrinsic(ep: Episode) -> float:
    """F1 of the kept passages against the retrieved gold; NaN when no gold was retrieved
    (no signal: :func:`hybrid_rewards` then gives the Filter the team outcome only)."""
    if not set(ep.question.gold) & ep.retrieved_ids():
        return float("nan")
    precision, recall = kept_precision_recall(ep.memory, ep.question.gold, ep.retrieved_ids())
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def hybrid_rewards(episodes: Sequence[Episode], w: float) -> dict[str, np.ndarray]:
    """Per role (``planner``, ``filter``, ``answerer``) the blended reward of each episode,
    plus the raw components (``em``, ``f1``, ``planner_intrinsic``, ``filter_intrinsic``; the
    last is NaN for episodes that retrieved no gold passage)."""
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
        "filter": np.where(judged, w * np.nan_to_num(filt) + (1 - w) * em, em),
        "answerer": w * f1 + (1 - w) * em,
        "em": em,
        "f1": f1,
        "planner_intrinsic": planner,
        "filter_intrinsic": filt,
    }


def role_advantages(rewards: np.ndarray, group_size: int) -> np.ndarray:
    """Group-normalised advantages (episodes laid out question by question)."""
    import torch

    from icml26.shared.llm.grpo import group_advantages

    return group_advantages(torch.tensor(rewards, dtype=torch.float64), group_size).numpy()

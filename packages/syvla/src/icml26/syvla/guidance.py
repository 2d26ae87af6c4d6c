"""Similar-sample guidance: a buffer of successful samples and nearest-neighbour retrieval.

The buffer holds expert demonstrations and the transitions of the policy's own successful
episodes (view, instruction, action). At each PPO update the on-policy states query the
buffer in the fused-feature space of the current backbone (cosine similarity of the
retrieval keys, the flattened fused tokens). :func:`select_guides` is the gate:

* a state retrieves only among samples of **the same instruction** (a state whose instruction
  has no successful sample retrieves nothing);
* of the nearest-neighbour similarities of one update, only those at or above their
  ``quantile`` pass (``quantile=0.75``: at most the most similar quarter) **and** at or above
  an absolute ``floor``, so that an update whose states are all far from every successful
  sample retrieves nothing (the quantile alone always lets its top share through);
  :func:`calibrate_floor` sets the floor from the buffer itself (the similarity of a
  sample's nearest neighbour *of another instruction*: what mere resemblance of rooms
  reaches), never from an evaluation figure;
* each buffer sample joins at most once, at most ``max_frac`` of the rollout in all.

The retrieved neighbours join the update with a fixed positive advantage, anchoring the
policy to expert-like behaviour in the states it actually visits (see
:func:`icml26.syvla.ppo.ppo_update`); the retrieved fraction is reported per update.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

__all__ = [
    "GuideSelection",
    "SuccessBuffer",
    "calibrate_floor",
    "nearest_neighbours",
    "select_guides",
]


def nearest_neighbours(
    queries: torch.Tensor, keys: torch.Tensor, k: int = 1
) -> tuple[torch.Tensor, torch.Tensor]:
    """Top-``k`` cosine neighbours of each query among ``keys``.

    Args:
        queries: (Q, d); keys: (N, d). Rows need not be normalised.

    Returns:
        (similarities (Q, k), indices (Q, k)), best first.
    """
    if keys.shape[0] == 0:
        raise ValueError("the buffer is empty: nothing to retrieve")
    if queries.shape[-1] != keys.shape[-1]:
        raise ValueError(f"query dim {queries.shape[-1]} != key dim {keys.shape[-1]}")
    q = torch.nn.functional.normalize(queries, dim=-1)
    kk = torch.nn.functional.normalize(keys, dim=-1)
    sims = q @ kk.T
    return sims.topk(min(k, kk.shape[0]), dim=-1)


class SuccessBuffer:
    """Demonstrations (always kept) plus the most recent ``capacity`` successful samples."""

    def __init__(
        self, views: np.ndarray, text_ids: np.ndarray, actions: np.ndarray, *, capacity: int
    ) -> None:
        if not len(views) == len(text_ids) == len(actions):
            raise ValueError("views, text_ids and actions must have the same length")
        self.demo_views, self.demo_text, self.demo_actions = views, text_ids, actions
        self.capacity = capacity
        self.views = np.zeros((0, *views.shape[1:]), dtype=views.dtype)
        self.text = np.zeros(0, dtype=np.int64)
        self.actions = np.zeros(0, dtype=np.int64)

    def add(self, views: np.ndarray, text_ids: np.ndarray, actions: np.ndarray) -> None:
        if self.capacity <= 0 or len(views) == 0:
            return
        self.views = np.concatenate([self.views, views])[-self.capacity :]
        self.text = np.concatenate([self.text, text_ids])[-self.capacity :]
        self.actions = np.concatenate([self.actions, actions])[-self.capacity :]

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return (
            np.concatenate([self.demo_views, self.views]),
            np.concatenate([self.demo_text, self.text]),
            np.concatenate([self.demo_actions, self.actions]),
        )

    def __len__(self) -> int:
        return len(self.demo_actions) + len(self.actions)


@dataclass(frozen=True)
class GuideSelection:
    """What the similarity gate let through in one update.

    Attributes:
        query: rollout indices whose neighbour passed the gate.
        sample: the buffer index retrieved for each of them.
        similarity: their cosine similarity.
        threshold: the update's similarity threshold (the larger of the quantile of the
            nearest-neighbour similarities and the floor; ``nan`` when no state had a
            same-instruction sample).
        candidates: rollout states that had a same-instruction sample at all.
        fraction: retrieved samples / rollout states (what the update reports).
    """

    query: np.ndarray
    sample: np.ndarray
    similarity: np.ndarray
    threshold: float
    candidates: int
    fraction: float


def select_guides(
    query_keys: torch.Tensor,
    query_text: np.ndarray,
    keys: torch.Tensor,
    text: np.ndarray,
    *,
    quantile: float,
    max_frac: float,
    floor: float = -1.0,
) -> GuideSelection:
    """The similarity gate of similar-sample guidance (see the module docstring).

    Args:
        query_keys: (Q, d) retrieval keys of the rollout's states.
        query_text: (Q,) their instruction ids.
        keys: (N, d) keys of the buffer's successful samples.
        text: (N,) their instruction ids.
        quantile: in [0, 1]; the threshold is this quantile of the Q nearest-neighbour
            similarities (0: every state with a same-instruction sample passes).
        max_frac: at most ``max_frac * Q`` samples are retrieved, the most similar first.
        floor: an absolute cosine-similarity floor (default -1: none); no sample below it
            is retrieved, whatever the quantile.

    Returns:
        A :class:`GuideSelection`.

    Raises:
        ValueError: mismatched lengths or dimensions, or ``quantile`` / ``max_frac`` outside
            [0, 1].
    """
    if not 0 <= quantile <= 1 or not 0 <= max_frac <= 1:
        raise ValueError(f"quantile and max_frac must be in [0, 1], got {quantile}, {max_frac}")
    if len(query_keys) != len(query_text) or len(keys) != len(text):
        raise ValueError("each key needs one instruction id (lengths differ)")
    if len(keys) and query_keys.shape[-1] != keys.shape[-1]:
        raise ValueError(f"query dim {query_keys.shape[-1]} != key dim {keys.shape[-1]}")
    n = len(query_text)
    best_sim = np.full(n, -np.inf)
    best_idx = np.full(n, -1, dtype=np.int64)
    for instruction in np.unique(query_text):
        pool = np.nonzero(text == instruction)[0]
        if len(pool) == 0:
            continue  # no successful sample of this instruction: nothing to retrieve
        rows = np.nonzero(query_text == instruction)[0]
        sims, idx = nearest_neighbours(query_keys[rows], keys[pool], k=1)
        best_sim[rows] = sims[:, 0].cpu().numpy()
        best_idx[rows] = pool[idx[:, 0].cpu().numpy()]
    has = best_idx >= 0
    empty = np.zeros(0, dtype=np.int64)
    if not has.any():
        return GuideSelection(empty, empty, np.zeros(0), float("nan"), 0, 0.0)
    threshold = max(float(np.quantile(best_sim[has], quantile)), floor)
    passed = np.nonzero(has & (best_sim >= threshold))[0]
    order = passed[np.argsort(-best_sim[passed], kind="stable")]
    _, first = np.unique(best_idx[order], return_index=True)  # each sample at most once
    order = order[np.sort(first)][: int(max_frac * n)]
    return GuideSelection(
        query=order,
        sample=best_idx[order],
        similarity=best_sim[order],
        threshold=threshold,
        candidates=int(has.sum()),
        fraction=len(order) / n if n else 0.0,
    )


def calibrate_floor(
    keys: torch.Tensor, text: np.ndarray, *, quantile: float, max_samples: int = 1024, seed: int = 0
) -> float:
    """An absolute similarity floor for :func:`select_guides`, from the buffer alone.

    For (up to ``max_samples``) buffer samples, the cosine similarity of their nearest
    neighbour among samples of a *different* instruction: how similar two states get
    without sharing the task. The floor is the ``quantile`` of these; a guide must be at
    least that similar to the state it guides.

    Args:
        keys: (N, d) retrieval keys of the buffer; text: (N,) their instruction ids.
        quantile: in [0, 1].
        max_samples: subsample size (the cost is ``max_samples ** 2``).
        seed: the subsampling seed.

    Returns:
        The floor; ``-1.0`` (no floor) when the buffer holds fewer than two instructions.

    Raises:
        ValueError: ``quantile`` outside [0, 1] or mismatched lengths.
    """
    if not 0 <= quantile <= 1:
        raise ValueError(f"quantile must be in [0, 1], got {quantile}")
    if len(keys) != len(text):
        raise ValueError("each key needs one instruction id (lengths differ)")
    if len(np.unique(text)) < 2:
        return -1.0
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(text))[:max_samples]
    k = torch.nn.functional.normalize(keys[torch.as_tensor(idx, device=keys.device)], dim=-1)
    t = torch.as_tensor(text[idx], device=keys.device)
    sims = (k @ k.T).masked_fill(t[:, None] == t[None, :], -torch.inf)
    best = sims.max(1).values
    finite = best[torch.isfinite(best)].cpu().numpy()
    return float(np.quantile(finite, quantile)) if len(finite) else -1.0

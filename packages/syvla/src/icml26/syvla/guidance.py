"""Similar-sample guidance: a buffer of successful samples and nearest-neighbour retrieval.

The buffer holds expert demonstrations and the transitions of the policy's own successful
episodes (view, instruction, action). At each PPO update the on-policy states query the
buffer in the fused-feature space of the current backbone (cosine similarity of the
retrieval keys); the retrieved neighbours above a similarity threshold join the update with
a fixed positive advantage, anchoring the policy to expert-like behaviour in the states it
actually visits (see :func:`icml26.syvla.ppo.ppo_update`).
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["SuccessBuffer", "nearest_neighbours"]


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

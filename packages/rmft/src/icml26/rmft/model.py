"""The numerical Transformer policy: a small decoder over the (action, reward) history.

Input: one token per (time, arm). Token ``0`` is a start token; token ``j ≥ 1`` describes
step ``j − 1`` from arm ``k``'s side: ``[is_start, chosen, observed, reward · observed]``
(bandit feedback: only the chosen arm is observed; full information: every arm is). The
logits at token ``j`` are the policy's preferences over arms for step ``j``, so one causal
forward pass scores a whole trajectory (teacher forcing) and a cache of keys and values
makes rollouts O(T) forward steps.

Each block: causal self-attention along time, per arm (shared weights); a DeepSets mixing
layer across arms at each time (``[h_k, mean_j h_j] → MLP``); a feed-forward layer; all
pre-LayerNorm with residuals. Nothing depends on the arm index or an absolute position, so
the same weights play any number of arms ``K`` (the policy is arm-permutation equivariant)
and any horizon ``T``: what the generalisation experiments need.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

__all__ = [
    "N_FEATURES",
    "ArmTransformer",
    "ModelConfig",
    "TransformerPolicy",
    "trajectory_features",
]

N_FEATURES = 4


@dataclass(frozen=True)
class ModelConfig:
    """Size of an :class:`ArmTransformer`.

    Args:
        d_model: width of every token.
        n_layers: number of blocks (attention over time per arm, then mixing across arms).
        n_heads: attention heads (must divide ``d_model``).
        ff_mult: feed-forward width as a multiple of ``d_model``.
        dropout: dropout rate in ``[0, 1)``.

    Raises:
        ValueError: a size below 1, ``d_model`` not divisible by ``n_heads``, or a dropout
            outside ``[0, 1)``.
    """

    d_model: int = 32
    n_layers: int = 2
    n_heads: int = 4
    ff_mult: int = 2
    dropout: float = 0.0

    def __post_init__(self) -> None:
        if min(self.d_model, self.n_layers, self.n_heads, self.ff_mult) < 1:
            raise ValueError(f"d_model, n_layers, n_heads, ff_mult must be >= 1, got {self}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model {self.d_model} must be divisible by n_heads {self.n_heads}")
        if not 0 <= self.dropout < 1:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")


class KVCache:
    """One block's keys and values of the positions seen so far, each
    ``(B·K, heads, length, d_head)``, in buffers that grow by doubling: appending one step
    writes in place instead of copying the whole history (``torch.cat`` per step made a
    T = 200 rollout of 1024 episodes spend two thirds of its time copying). Iterating gives
    ``(keys, values)``. A cache is continued, not branched: :meth:`append` writes after the
    positions it holds and returns the same object.
    """

    def __init__(self, keys: torch.Tensor, values: torch.Tensor) -> None:
        self._keys, self._values, self.length = keys, values, keys.shape[2]

    def append(self, keys: torch.Tensor, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Add new positions; returns every position's keys and values so far."""
        end = self.length + keys.shape[2]
        if end > self._keys.shape[2]:
            capacity = max(end, 2 * self._keys.shape[2], 16)
            for name in ("_keys", "_values"):
                old = getattr(self, name)
                grown = old.new_empty((*old.shape[:2], capacity, old.shape[3]))
                grown[:, :, : self.length] = old[:, :, : self.length]
                setattr(self, name, grown)
        self._keys[:, :, self.length : end] = keys
        self._values[:, :, self.length : end] = values
        self.length = end
        return self.keys, self.values

    @property
    def keys(self) -> torch.Tensor:
        return self._keys[:, :, : self.length]

    @property
    def values(self) -> torch.Tensor:
        return self._values[:, :, : self.length]

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter((self.keys, self.values))


class _Block(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        d = cfg.d_model
        self.n_heads = cfg.n_heads
        self.ln_time = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln_arms = nn.LayerNorm(d)
        self.mix = nn.Sequential(nn.Linear(2 * d, d), nn.GELU(), nn.Linear(d, d))
        self.ln_ff = nn.LayerNorm(d)
        f = cfg.ff_mult * d
        self.ff = nn.Sequential(nn.Linear(d, f), nn.GELU(), nn.Linear(f, d))
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, h: torch.Tensor, cache: KVCache | None) -> tuple[torch.Tensor, KVCache]:
        """``h``: ``(B, L, K, d)`` new positions; ``cache``: the :class:`KVCache` of earlier
        positions (continued in place), or None."""
        b, length, k, d = h.shape
        x = self.ln_time(h).permute(0, 2, 1, 3).reshape(b * k, length, d)
        q, key, v = self.qkv(x).split(d, dim=-1)
        heads = self.n_heads

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(b * k, length, heads, d // heads).transpose(1, 2)

        q, key, v = split(q), split(key), split(v)
        if cache is not None:
            key, v = cache.append(key, v)
        else:
            cache = KVCache(key, v)
        past = key.shape[2] - length
        # position i of the new chunk sees every cached position and new positions <= i
        if length == 1 and past:  # one decoding step: every cached position is visible
            # (the cache's views are strided, which scaled_dot_product_attention copies)
            scores = (q @ key.transpose(-1, -2)) / math.sqrt(d // heads)
            att = torch.softmax(scores, dim=-1) @ v
        else:
            mask = torch.ones(length, key.shape[2], dtype=torch.bool, device=h.device).tril(past)
            att = F.scaled_dot_product_attention(q, key, v, attn_mask=mask)
        att = att.transpose(1, 2).reshape(b, k, length, d).permute(0, 2, 1, 3)
        h = h + self.drop(self.proj(att))
        z = self.ln_arms(h)
        pooled = z.mean(dim=2, keepdim=True).expand_as(z)
        h = h + self.drop(self.mix(torch.cat([z, pooled], dim=-1)))
        h = h + self.drop(self.ff(self.ln_ff(h)))
        return h, cache


class ArmTransformer(nn.Module):
    """A numerical Transformer policy: logits ``(B, L, K)`` from history tokens
    ``(B, L, K, N_FEATURES)``.

    Causal attention over time within each arm, then permutation-invariant mixing across
    arms: no arm index and no absolute position, so one set of weights plays any ``K`` and
    ``T``. Roll it out with :class:`TransformerPolicy`.

    Args:
        cfg: its size (default :class:`ModelConfig()`).
    """

    def __init__(self, cfg: ModelConfig | None = None) -> None:
        super().__init__()
        self.cfg = cfg or ModelConfig()
        d = self.cfg.d_model
        self.embed = nn.Linear(N_FEATURES, d)
        self.blocks = nn.ModuleList(_Block(self.cfg) for _ in range(self.cfg.n_layers))
        self.ln_out = nn.LayerNorm(d)
        self.head = nn.Linear(d, 1)

    def forward(
        self, tokens: torch.Tensor, cache: list[KVCache] | None = None
    ) -> tuple[torch.Tensor, list[KVCache]]:
        """Logits for each new position and the updated cache (pass it back to continue)."""
        if tokens.ndim != 4 or tokens.shape[-1] != N_FEATURES:
            raise ValueError(f"tokens must be (B, L, K, {N_FEATURES}), got {tuple(tokens.shape)}")
        if tokens.shape[2] < 2:
            raise ValueError(f"need K >= 2 arms, got K = {tokens.shape[2]}")
        if not torch.isfinite(tokens).all():
            raise ValueError("tokens contain NaN or infinite values")
        h = self.embed(tokens)
        new_cache = []
        for i, block in enumerate(self.blocks):
            h, c = block(h, cache[i] if cache is not None else None)
            new_cache.append(c)
        return self.head(self.ln_out(h)).squeeze(-1), new_cache


def start_tokens(n: int, k: int) -> np.ndarray:
    """``(n, 1, K, F)`` start tokens."""
    x = np.zeros((n, 1, k, N_FEATURES), dtype=np.float32)
    x[..., 0] = 1.0
    return x


def step_tokens(
    actions: np.ndarray, rewards: np.ndarray, full: np.ndarray | None, k: int
) -> np.ndarray:
    """``(n, 1, K, F)`` tokens describing one step: the chosen arms ``(n,)``, their rewards
    ``(n,)`` and, with full information, every arm's reward ``(n, K)``."""
    n = actions.shape[0]
    x = np.zeros((n, 1, k, N_FEATURES), dtype=np.float32)
    rows = np.arange(n)
    x[rows, 0, actions, 1] = 1.0
    if full is not None:
        x[:, 0, :, 2] = 1.0
        x[:, 0, :, 3] = full
    else:
        x[rows, 0, actions, 2] = 1.0
        x[rows, 0, actions, 3] = rewards
    return x


def trajectory_features(
    actions: np.ndarray, rewards: np.ndarray, k: int, full: np.ndarray | None = None
) -> np.ndarray:
    """Teacher-forcing inputs ``(n, T, K, F)`` for trajectories ``actions``/``rewards``
    ``(n, T)`` (``full``: ``(n, T, K)`` reward tables in the full-information setting): the
    start token, then steps ``0..T−2``; the targets are ``actions`` itself."""
    n, horizon = actions.shape
    parts = [start_tokens(n, k)]
    for t in range(horizon - 1):
        parts.append(
            step_tokens(actions[:, t], rewards[:, t], None if full is None else full[:, t], k)
        )
    return np.concatenate(parts, axis=1)


class TransformerPolicy:
    """Rolls out an :class:`ArmTransformer` as a :class:`~icml26.rmft.rollouts.Policy`,
    batched over episodes with a KV cache.

    Args:
        model: the network.
        temperature: samples ``a_t ~ softmax(logits_t / temperature)``; ``0`` is greedy.
        name: the policy's name in results.
        device: where the model runs.

    Raises:
        ValueError: a negative, infinite or NaN temperature.
    """

    def __init__(
        self,
        model: ArmTransformer,
        *,
        temperature: float = 1.0,
        name: str = "transformer",
        device: str | torch.device = "cpu",
    ) -> None:
        if not 0 <= temperature < math.inf:  # NaN fails too (it would play arm 0 silently)
            raise ValueError(f"temperature must be a finite number >= 0, got {temperature!r}")
        self.model, self.temperature, self.name = model, temperature, name
        self.device = torch.device(device)

    def reset(self, spec, n: int, rng: np.random.Generator) -> None:  # type: ignore[no-untyped-def]
        self.k, self.n, self.rng = spec.n_arms, n, rng
        self.cache: list[KVCache] | None = None
        self.pending = start_tokens(n, self.k)

    @torch.inference_mode()
    def act(self, t: int) -> np.ndarray:
        self.model.eval()
        tokens = torch.from_numpy(self.pending).to(self.device)
        logits, self.cache = self.model(tokens, self.cache)
        logits = logits[:, -1, :].double().cpu().numpy()
        if self.temperature == 0:
            return np.argmax(logits, axis=1)
        z = logits / self.temperature
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        u = self.rng.random((self.n, 1))
        return np.minimum((np.cumsum(p, axis=1) < u).sum(axis=1), self.k - 1)

    def update(
        self, t: int, actions: np.ndarray, rewards: np.ndarray, full: np.ndarray | None
    ) -> None:
        self.pending = step_tokens(actions, rewards, full, self.k)

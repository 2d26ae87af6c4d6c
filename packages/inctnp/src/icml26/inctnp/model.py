"""TNP-D and incTNP: one transformer backbone, two attention patterns.

Tokens: a context point (x, y) is embedded as ``phi([x, y, 1])``; a target x as
``phi([x, 0, 0])``. Every layer computes keys/values from the *context* tokens only; the
context tokens attend to context tokens and the target tokens cross-attend to them (targets
never attend to each other, so predictions factorise over targets: TNP-D, Nguyen & Grover
2022).

* **TNP-D** (``causal=False``): every context token attends to every other one. Adding a
  point changes every representation, so an update recomputes all layers: O(N^2) attention.
* **incTNP** (``causal=True``): context token i attends only to tokens j <= i. The layer-l
  keys/values of earlier tokens never change when points are appended, so they are cached
  (:class:`KVCache`) and adding m points costs O(m N) attention per layer; a target query
  costs O(N) per layer. ``update`` then ``predict`` equals ``condition`` on the whole
  sequence then ``predict``, to float tolerance.

Training masks (``forward``): with ``target_prefix`` target j attends only to the first
``target_prefix[j]`` context tokens: incTNP's autoregressive, teacher-forced objective, in which
prefixes of the sequence are contexts for the points that follow them, all in one pass.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["KVCache", "ModelConfig", "NeuralProcess", "Stream", "build_model"]


@dataclass(frozen=True)
class ModelConfig:
    """Architecture of a transformer neural process (defaults: the paper's 5 x 128 x 8)."""

    dim_x: int = 1
    dim_y: int = 1
    width: int = 128
    layers: int = 5
    heads: int = 8
    mlp_ratio: int = 2
    causal: bool = True
    min_std: float = 1e-3

    def __post_init__(self) -> None:
        if self.dim_x < 1 or self.dim_y < 1:
            raise ValueError("dim_x and dim_y must be >= 1")
        if self.width % self.heads:
            raise ValueError(f"width {self.width} must be divisible by heads {self.heads}")
        if self.layers < 1 or self.mlp_ratio < 1:
            raise ValueError("layers and mlp_ratio must be >= 1")
        if not 0 < self.min_std < 1:
            raise ValueError("min_std must be in (0, 1)")

    def to_dict(self) -> dict[str, int | float | bool]:
        return asdict(self)


class _Layer(nn.Module):
    """Pre-norm transformer layer whose keys/values come from context tokens only."""

    def __init__(self, width: int, heads: int, mlp_ratio: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(
            nn.Linear(width, mlp_ratio * width), nn.GELU(), nn.Linear(mlp_ratio * width, width)
        )

    def _split(self, t: torch.Tensor) -> torch.Tensor:  # [B, N, W] -> [B, H, N, W/H]
        b, n, w = t.shape
        return t.view(b, n, self.heads, w // self.heads).transpose(1, 2)

    def _merge(self, t: torch.Tensor) -> torch.Tensor:
        b, h, n, d = t.shape
        return t.transpose(1, 2).reshape(b, n, h * d)

    def keys_values(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        q, k, v = self.qkv(self.norm1(h)).chunk(3, dim=-1)
        return self._split(q), self._split(k), self._split(v)

    def queries(self, h: torch.Tensor) -> torch.Tensor:
        w = h.shape[-1]
        q = F.linear(self.norm1(h), self.qkv.weight[:w], self.qkv.bias[:w])
        return self._split(q)

    def finish(
        self,
        h: torch.Tensor,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        mask: torch.Tensor | None,
    ) -> torch.Tensor:
        """Residual attention over (k, v) with boolean ``mask`` (True = may attend), then MLP."""
        att = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        h = h + self.proj(self._merge(att))
        return h + self.mlp(self.norm2(h))


class KVCache:
    """Per-layer keys/values of the context tokens, grown in place (capacity doubling).

    Appending m tokens copies O(m) numbers (amortised), so memory and update cost stay
    linear in the context size N. Three memory figures: :attr:`nbytes` (the used length),
    :attr:`allocated_bytes` (the buffers' capacity: between the used bytes and twice them
    after a doubling) and :attr:`peak_bytes` (the most bytes its buffers held at once,
    counting the old and the new buffer that both live while one is grown; the per-layer
    buffers grow one at a time, so a doubling peaks at the new total plus one old buffer).
    """

    def __init__(self, layers: int) -> None:
        self.keys: list[torch.Tensor | None] = [None] * layers
        self.values: list[torch.Tensor | None] = [None] * layers
        self.length = 0
        self.peak_bytes = 0

    def _grow(self, buf: torch.Tensor | None, new: torch.Tensor) -> torch.Tensor:
        need = self.length + new.shape[2]
        if buf is None or buf.shape[2] < need:
            cap = max(need, 2 * (buf.shape[2] if buf is not None else 0), 16)
            grown = new.new_empty(*new.shape[:2], cap, new.shape[3])
            # both buffers are alive until the old one is dropped
            self.peak_bytes = max(self.peak_bytes, self.allocated_bytes + _bytes(grown))
            if buf is not None:
                grown[:, :, : self.length] = buf[:, :, : self.length]
            buf = grown
        buf[:, :, self.length : need] = new
        return buf

    def append(
        self, layer: int, k: torch.Tensor, v: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Store the new keys/values of ``layer``; return all keys/values so far (views)."""
        self.keys[layer] = self._grow(self.keys[layer], k)
        self.values[layer] = self._grow(self.values[layer], v)
        end = self.length + k.shape[2]
        return self.keys[layer][:, :, :end], self.values[layer][:, :, :end]  # type: ignore[index]

    def get(self, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
        k, v = self.keys[layer], self.values[layer]
        if k is None or v is None:
            raise ValueError("the cache is empty")
        return k[:, :, : self.length], v[:, :, : self.length]

    @property
    def nbytes(self) -> int:
        """Bytes of the used part of the buffers (the first :attr:`length` tokens)."""
        used = 0
        for buf in (*self.keys, *self.values):
            if buf is not None:
                used += buf[:, :, : self.length].numel() * buf.element_size()
        return used

    @property
    def allocated_bytes(self) -> int:
        """Bytes the buffers hold (their capacity, used or not)."""
        return sum(_bytes(buf) for buf in (*self.keys, *self.values) if buf is not None)


def _bytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def _check_xy(cfg: ModelConfig, x: torch.Tensor, y: torch.Tensor | None, what: str) -> None:
    if x.dim() != 3 or x.shape[-1] != cfg.dim_x:
        raise ValueError(
            f"{what} x must have shape [batch, points, {cfg.dim_x}], got {tuple(x.shape)}"
        )
    if y is not None:
        if y.dim() != 3 or y.shape[-1] != cfg.dim_y or y.shape[:2] != x.shape[:2]:
            raise ValueError(
                f"{what} y must have shape {(*x.shape[:2], cfg.dim_y)}, got {tuple(y.shape)}"
            )
        if not torch.isfinite(y).all():
            raise ValueError(f"{what} y contains NaN or infinite values")
    if not torch.isfinite(x).all():
        raise ValueError(f"{what} x contains NaN or infinite values")


class NeuralProcess(nn.Module):
    """The shared backbone; ``config.causal`` selects incTNP (True) or TNP-D (False)."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        w = config.width
        self.embed = nn.Sequential(
            nn.Linear(config.dim_x + config.dim_y + 1, w), nn.GELU(), nn.Linear(w, w)
        )
        self.blocks = nn.ModuleList(
            _Layer(w, config.heads, config.mlp_ratio) for _ in range(config.layers)
        )
        self.head = nn.Sequential(nn.Linear(w, w), nn.GELU(), nn.Linear(w, 2 * config.dim_y))

    # -- tokens -----------------------------------------------------------------------------
    def _context_tokens(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.embed(torch.cat([x, y, torch.ones_like(x[..., :1])], dim=-1))

    def _target_tokens(self, x: torch.Tensor) -> torch.Tensor:
        zeros = x.new_zeros(*x.shape[:-1], self.config.dim_y + 1)
        return self.embed(torch.cat([x, zeros], dim=-1))

    def _decode(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mean, raw = self.head(h).chunk(2, dim=-1)
        m = self.config.min_std
        return mean, m + (1 - m) * F.softplus(raw)

    # -- training / batch forward -------------------------------------------------------------
    def forward(
        self,
        xc: torch.Tensor,
        yc: torch.Tensor,
        xt: torch.Tensor,
        *,
        prefix_targets: bool = False,
        target_prefix: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Predictive ``(mean, std)`` at ``xt`` ``[B, T, dim_y]`` given the context.

        Training masks for a causal model (incTNP), both one forward pass:

        * ``target_prefix`` (``[T]`` integers >= 1): target j sees only the first
          ``target_prefix[j]`` context points, i.e. it is predicted from that prefix.
        * ``prefix_targets=True`` (needs T == N): shorthand for ``target_prefix[j] = j``, every
          point predicted from all earlier ones. Target 0 would see no context; it is given
          point 0 to stay well defined and callers must drop its prediction.
        """
        _check_xy(self.config, xc, yc, "context")
        _check_xy(self.config, xt, None, "target")
        n, t = xc.shape[1], xt.shape[1]
        if n == 0:
            raise ValueError("the context is empty: condition on at least one point")
        device = xc.device
        ctx_mask = (
            torch.ones(n, n, dtype=torch.bool, device=device).tril() if self.config.causal else None
        )
        if prefix_targets:
            if t != n:
                raise ValueError("prefix_targets needs one target per context point")
            target_prefix = torch.arange(n, device=device).clamp_min(1)
        tgt_mask = None
        if target_prefix is not None:
            if not self.config.causal:
                raise ValueError("prefix masks need a causal model (incTNP)")
            if (
                target_prefix.shape != (t,)
                or int(target_prefix.min()) < 1
                or int(target_prefix.max()) > n
            ):
                raise ValueError(f"target_prefix must hold {t} lengths in [1, {n}]")
            tgt_mask = torch.arange(n, device=device).unsqueeze(0) < target_prefix.to(
                device
            ).unsqueeze(1)
        hc, ht = self._context_tokens(xc, yc), self._target_tokens(xt)
        for block in self.blocks:
            q, k, v = block.keys_values(hc)
            qt = block.queries(ht)
            hc_next = block.finish(hc, q, k, v, ctx_mask)
            ht = block.finish(ht, qt, k, v, tgt_mask)
            hc = hc_next
        return self._decode(ht)

    # -- incremental inference -------------------------------------------------------------------
    @torch.no_grad()
    def extend_cache(self, cache: KVCache, x: torch.Tensor, y: torch.Tensor) -> KVCache:
        """Append points to an incTNP cache: O(m N) attention per layer for m new points."""
        if not self.config.causal:
            raise TypeError("only a causal model (incTNP) supports a KV cache")
        _check_xy(self.config, x, y, "new")
        m = x.shape[1]
        if m == 0:
            return cache
        n = cache.length
        h = self._context_tokens(x, y)
        mask = None
        if m > 1:  # new point i (global n + i) sees cached points and new points up to itself
            cols = torch.arange(n + m, device=x.device)
            mask = cols.unsqueeze(0) <= (n + torch.arange(m, device=x.device)).unsqueeze(1)
        for layer, block in enumerate(self.blocks):
            q, k, v = block.keys_values(h)
            k_all, v_all = cache.append(layer, k, v)
            h = block.finish(h, q, k_all, v_all, mask)
        cache.length = n + m
        return cache

    @torch.no_grad()
    def predict_from_cache(
        self, cache: KVCache, xt: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Predictive at ``xt`` from cached context keys/values: O(T N) attention per layer."""
        if cache.length == 0:
            raise ValueError("the context is empty: condition on at least one point")
        _check_xy(self.config, xt, None, "target")
        ht = self._target_tokens(xt)
        for layer, block in enumerate(self.blocks):
            k, v = cache.get(layer)
            ht = block.finish(ht, block.queries(ht), k, v, None)
        return self._decode(ht)

    def stream(self) -> Stream:
        """A stateful :class:`Stream` for ``condition`` / ``update`` / ``predict``."""
        return Stream(self)


class Stream:
    """Sequential inference with one API for both models.

    incTNP keeps a :class:`KVCache` (``update`` is O(m N)); TNP-D keeps the raw points and
    recomputes every representation at ``predict`` (O(N^2)). Tensors are batched:
    ``x [B, m, dim_x]``, ``y [B, m, dim_y]``.
    """

    def __init__(self, model: NeuralProcess) -> None:
        self.model = model
        self.reset()

    def reset(self) -> Stream:
        self.cache = KVCache(self.model.config.layers)
        self.x: torch.Tensor | None = None
        self.y: torch.Tensor | None = None
        return self

    @property
    def size(self) -> int:
        return (
            self.cache.length
            if self.model.config.causal
            else (0 if self.x is None else self.x.shape[1])
        )

    def condition(self, x: torch.Tensor, y: torch.Tensor) -> Stream:
        """Forget everything and condition on ``(x, y)`` (in this order)."""
        self.reset()
        return self.update(x, y)

    @torch.no_grad()
    def update(self, x: torch.Tensor, y: torch.Tensor) -> Stream:
        """Add observations at the end of the sequence."""
        _check_xy(self.model.config, x, y, "new")
        if self.model.config.causal:
            if (
                self.cache.length
                and self.cache.keys[0] is not None
                and self.cache.keys[0].shape[0] != x.shape[0]
            ):
                raise ValueError("batch size differs from the conditioned context")
            self.model.extend_cache(self.cache, x, y)
        else:
            if self.x is not None and self.x.shape[0] != x.shape[0]:
                raise ValueError("batch size differs from the conditioned context")
            self.x = x if self.x is None else torch.cat([self.x, x], dim=1)
            self.y = y if self.y is None else torch.cat([self.y, y], dim=1)
        return self

    @torch.no_grad()
    def predict(self, xt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Predictive ``(mean, std)`` at ``xt`` given everything observed so far."""
        if self.model.config.causal:
            return self.model.predict_from_cache(self.cache, xt)
        if self.x is None:
            raise ValueError("the context is empty: condition on at least one point")
        return self.model(self.x, self.y, xt)


def build_model(config: ModelConfig) -> NeuralProcess:
    """A freshly initialised model (set the torch seed first for reproducibility)."""
    model = NeuralProcess(config)
    for p in model.parameters():
        if p.dim() > 1:
            nn.init.xavier_uniform_(p, gain=1.0 / math.sqrt(2.0))
    return model

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

Masks (``forward``):

* incTNP's context self-attention is plainly causal, so it runs as
  ``scaled_dot_product_attention(..., is_causal=True)`` (FlashAttention and the other fused
  kernels on a GPU); an explicit mask is built only when it is not (padding, cached prefixes).
* ``context_mask`` ``[B, N]`` (True = a real point, padding after the real points) lets the
  tasks of one batch have contexts of different lengths (ragged contexts).
* ``target_prefix`` ``[T]``: target j attends only to the first ``target_prefix[j]`` context
  tokens: incTNP's autoregressive, teacher-forced objective, in which prefixes of the sequence
  are contexts for the points that follow them, all in one pass.

Joint predictions: :meth:`NeuralProcess.sample_joint` draws targets one after another, each
conditioned on the context and the targets drawn before it (autoregressive sampling; cached
updates for incTNP), and :meth:`NeuralProcess.joint_log_prob` scores such a sequence.
Inputs of another floating dtype (float64 from NumPy) are cast to the model's.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["KVCache", "ModelConfig", "NeuralProcess", "Stream", "build_model", "check_inputs"]


@dataclass(frozen=True)
class ModelConfig:
    """Architecture of a transformer neural process (defaults: the paper's 5 x 128 x 8).

    Attributes:
        dim_x, dim_y: input and output dimensions.
        width, layers, heads, mlp_ratio: the transformer.
        causal: True for incTNP (causal context, KV cache), False for TNP-D.
        min_std: the predictive standard deviation's floor.

    Raises:
        ValueError: non-positive sizes, a width not divisible by the heads, or a bad min_std.
    """

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
        """The fields as a dict (stored in model files).

        Returns:
            ``dataclasses.asdict(self)``.
        """
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
        is_causal: bool = False,
    ) -> torch.Tensor:
        """Residual attention over (k, v) with boolean ``mask`` (True = may attend) or the
        fused causal kernel (``is_causal``), then MLP."""
        att = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=is_causal)
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

    Args:
        layers: the model's number of layers.
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
        """Store the new keys/values of ``layer``; return all keys/values so far (views).

        Args:
            layer: the layer index.
            k: new keys ``[B, H, m, W/H]``.
            v: new values.

        Returns:
            All keys and values of the layer so far.
        """
        self.keys[layer] = self._grow(self.keys[layer], k)
        self.values[layer] = self._grow(self.values[layer], v)
        end = self.length + k.shape[2]
        return self.keys[layer][:, :, :end], self.values[layer][:, :, :end]  # type: ignore[index]

    def get(self, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The cached keys/values of ``layer`` (views of the used part).

        Args:
            layer: the layer index.

        Returns:
            ``(keys, values)``, each ``[B, H, length, W/H]``.

        Raises:
            ValueError: an empty cache.
        """
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


def check_inputs(
    cfg: ModelConfig,
    x: torch.Tensor,
    y: torch.Tensor | None,
    what: str,
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``x`` ``[batch, points, dim_x]`` (and ``y`` ``[batch, points, dim_y]``) checked and cast
    to the model's floating ``dtype`` (float64 arrays from NumPy are converted, not refused).

    Args:
        cfg: the model's architecture.
        x: inputs.
        y: outputs, or ``None``.
        what: ``"context"``, ``"target"`` or ``"new"``, for messages.
        dtype: the model's parameter dtype.

    Returns:
        ``(x, y)`` in ``dtype``.

    Raises:
        TypeError: not tensors, or complex / boolean tensors.
        ValueError: a shape other than the one named in the message, or NaN/inf.
    """
    for name, t in (("x", x), ("y", y)):
        if t is None:
            continue
        if not isinstance(t, torch.Tensor):
            raise TypeError(
                f"{what} {name} must be a torch.Tensor, got {type(t).__name__}; "
                "wrap arrays with torch.as_tensor(a)"
            )
        if t.is_complex() or t.dtype == torch.bool:
            raise TypeError(f"{what} {name} must be real numbers, got {t.dtype}")
    if x.dim() != 3 or x.shape[-1] != cfg.dim_x:
        raise ValueError(
            f"{what} x must have shape [batch, points, {cfg.dim_x}], got {tuple(x.shape)}"
        )
    x = x.to(dtype)
    if y is not None:
        if y.dim() != 3 or y.shape[-1] != cfg.dim_y or y.shape[:2] != x.shape[:2]:
            raise ValueError(
                f"{what} y must have shape {(*x.shape[:2], cfg.dim_y)}, got {tuple(y.shape)}"
            )
        y = y.to(dtype)
        if not torch.isfinite(y).all():
            raise ValueError(f"{what} y contains NaN or infinite values")
    if not torch.isfinite(x).all():
        raise ValueError(f"{what} x contains NaN or infinite values")
    return x, y


def _check_context_mask(mask: torch.Tensor, b: int, n: int) -> torch.Tensor:
    """A ``[B, N]`` boolean mask with the real points first and at least one per task."""
    if mask.shape != (b, n) or mask.dtype != torch.bool:
        raise ValueError(
            f"context_mask must be a boolean tensor of shape ({b}, {n}), got "
            f"{mask.dtype} {tuple(mask.shape)}"
        )
    lengths = mask.sum(1)
    if int(lengths.min()) < 1:
        raise ValueError("context_mask: every task needs at least one context point")
    prefix = torch.arange(n, device=mask.device).unsqueeze(0) < lengths.unsqueeze(1)
    if not torch.equal(prefix, mask):
        raise ValueError("context_mask must mark each task's real points first, padding after")
    return mask


class NeuralProcess(nn.Module):
    """The shared backbone; ``config.causal`` selects incTNP (True) or TNP-D (False).

    Args:
        config: the architecture.
    """

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

    @property
    def dtype(self) -> torch.dtype:
        """The parameters' dtype (inputs are cast to it)."""
        return next(self.parameters()).dtype

    def _check(
        self, x: torch.Tensor, y: torch.Tensor | None, what: str
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        return check_inputs(self.config, x, y, what, self.dtype)

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
        context_mask: torch.Tensor | None = None,
        target_prefix: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Predictive ``(mean, std)`` at ``xt`` ``[B, T, dim_y]`` given the context.

        Args:
            xc: context inputs ``[B, N, dim_x]``.
            yc: context outputs ``[B, N, dim_y]``.
            xt: target inputs ``[B, T, dim_x]``.
            context_mask: ``[B, N]`` booleans, True for the real points of each task (first),
                False for padding after them: contexts of different lengths in one batch.
            target_prefix: ``[T]`` integers in ``[1, N]`` (causal models): target j sees only
                the first ``target_prefix[j]`` context points, i.e. it is predicted from that
                prefix (the autoregressive training objective, one pass).

        Returns:
            ``(mean, std)``, each ``[B, T, dim_y]``.

        Raises:
            TypeError: inputs that are not real tensors.
            ValueError: shapes that do not fit, NaN, an empty context, a bad mask or prefix.
        """
        xc, yc = self._check(xc, yc, "context")
        xt, _ = self._check(xt, None, "target")
        b, n, t = xc.shape[0], xc.shape[1], xt.shape[1]
        if n == 0:
            raise ValueError("the context is empty: condition on at least one point")
        if xt.shape[0] != b:
            raise ValueError(f"target x has batch {xt.shape[0]}, the context {b}")
        device = xc.device
        keys = None  # [B, 1, 1, N]: which context tokens may be attended to
        if context_mask is not None:
            keys = _check_context_mask(context_mask.to(device), b, n)[:, None, None, :]
        ctx_mask, ctx_causal = None, False
        if self.config.causal:
            if keys is None:
                ctx_causal = True  # plainly causal: the fused kernel
            else:
                ctx_mask = torch.ones(n, n, dtype=torch.bool, device=device).tril() & keys
        else:
            ctx_mask = keys
        tgt_mask = keys
        if target_prefix is not None:
            if not self.config.causal:
                raise ValueError("prefix masks need a causal model (incTNP)")
            target_prefix = target_prefix.to(device)
            if (
                target_prefix.shape != (t,)
                or int(target_prefix.min()) < 1
                or int(target_prefix.max()) > n
            ):
                raise ValueError(f"target_prefix must hold {t} lengths in [1, {n}]")
            prefix = torch.arange(n, device=device).unsqueeze(0) < target_prefix.unsqueeze(1)
            tgt_mask = prefix if keys is None else prefix & keys
        hc, ht = self._context_tokens(xc, yc), self._target_tokens(xt)
        for block in self.blocks:
            q, k, v = block.keys_values(hc)
            qt = block.queries(ht)
            hc_next = block.finish(hc, q, k, v, ctx_mask, is_causal=ctx_causal)
            ht = block.finish(ht, qt, k, v, tgt_mask)
            hc = hc_next
        return self._decode(ht)

    # -- joint predictions -----------------------------------------------------------------------
    @torch.no_grad()
    def sample_joint(
        self,
        xc: torch.Tensor,
        yc: torch.Tensor,
        xt: torch.Tensor,
        n_samples: int = 1,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        """Joint samples of the targets by autoregressive sampling.

        Target j is drawn from the predictive given the context and targets ``0..j-1`` as
        drawn, so the samples carry the dependence between targets that the factorised
        predictive of :meth:`forward` leaves out. incTNP extends its KV cache by each drawn
        target (O(T (N + T)) attention); TNP-D re-encodes the grown context each time.

        Args:
            xc: context inputs ``[B, N, dim_x]``.
            yc: context outputs ``[B, N, dim_y]``.
            xt: target inputs ``[B, T, dim_x]``, drawn in this order.
            n_samples: S joint samples per task.
            generator: the random stream (its device's normals, moved to the model's).

        Returns:
            ``[S, B, T, dim_y]`` samples.

        Raises:
            ValueError: as :meth:`forward`, or ``n_samples < 1``.
        """
        if n_samples < 1:
            raise ValueError(f"n_samples must be >= 1, got {n_samples}")
        xc, yc = self._check(xc, yc, "context")
        xt, _ = self._check(xt, None, "target")
        b, t = xc.shape[0], xt.shape[1]
        rep = (n_samples, 1, 1)
        xc_s, yc_s, xt_s = (a.repeat(*rep) for a in (xc, yc, xt))  # [S*B, ...]
        stream = self.stream().condition(xc_s, yc_s)
        draws = []
        for j in range(t):
            x_j = xt_s[:, j : j + 1]
            mean, std = stream.predict(x_j)
            eps = torch.randn(
                mean.shape,
                generator=generator,
                dtype=mean.dtype,
                device=generator.device if generator is not None else "cpu",
            ).to(mean.device)
            y_j = mean + std * eps
            draws.append(y_j)
            stream.update(x_j, y_j)
        return torch.cat(draws, 1).reshape(n_samples, b, t, -1)

    def joint_log_prob(
        self, xc: torch.Tensor, yc: torch.Tensor, xt: torch.Tensor, yt: torch.Tensor
    ) -> torch.Tensor:
        """Autoregressive log-likelihood ``Σ_j log p(y_j | context, y_<j)`` per task ``[B]``.

        incTNP: one causal pass over context + targets with prefix masks; TNP-D: one forward
        per target.

        Args:
            xc: the context inputs.
            yc: the context outputs.
            xt: the targets, in the order of the factorisation.
            yt: the targets' values.

        Returns:
            ``[B]`` log-likelihoods.
        """
        xt, yt = self._check(xt, yt, "target")
        n, t = xc.shape[1], xt.shape[1]
        if self.config.causal:
            x = torch.cat([xc.to(xt.dtype), xt], 1)
            y = torch.cat([yc.to(yt.dtype), yt], 1)
            prefix = n + torch.arange(t, device=x.device)
            mean, std = self(x, y, xt, target_prefix=prefix)
        else:
            parts = [
                self(
                    torch.cat([xc.to(xt.dtype), xt[:, :j]], 1),
                    torch.cat([yc.to(yt.dtype), yt[:, :j]], 1),
                    xt[:, j : j + 1],
                )
                for j in range(t)
            ]
            mean, std = torch.cat([p[0] for p in parts], 1), torch.cat([p[1] for p in parts], 1)
        z = (yt - mean) / std
        return -(0.5 * z**2 + torch.log(std) + 0.5 * math.log(2 * math.pi)).sum((1, 2))

    # -- incremental inference -------------------------------------------------------------------
    @torch.no_grad()
    def extend_cache(self, cache: KVCache, x: torch.Tensor, y: torch.Tensor) -> KVCache:
        """Append points to an incTNP cache: O(m N) attention per layer for m new points.

        Args:
            cache: the cache (its length grows by m).
            x: new inputs ``[B, m, dim_x]``.
            y: new outputs ``[B, m, dim_y]``.

        Returns:
            ``cache``.

        Raises:
            TypeError: a non-causal model.
            ValueError: bad inputs.
        """
        if not self.config.causal:
            raise TypeError("only a causal model (incTNP) supports a KV cache")
        x, y = self._check(x, y, "new")
        assert y is not None
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
        """Predictive at ``xt`` from cached context keys/values: O(T N) attention per layer.

        Args:
            cache: a non-empty cache.
            xt: targets ``[B, T, dim_x]``.

        Returns:
            ``(mean, std)``.

        Raises:
            ValueError: an empty cache or bad targets.
        """
        if cache.length == 0:
            raise ValueError("the context is empty: condition on at least one point")
        xt, _ = self._check(xt, None, "target")
        ht = self._target_tokens(xt)
        for layer, block in enumerate(self.blocks):
            k, v = cache.get(layer)
            ht = block.finish(ht, block.queries(ht), k, v, None)
        return self._decode(ht)

    def stream(self) -> Stream:
        """A stateful :class:`Stream` for ``condition`` / ``update`` / ``predict``.

        Returns:
            A new stream on this model.
        """
        return Stream(self)


class Stream:
    """Sequential inference with one API for both models.

    incTNP keeps a :class:`KVCache` (``update`` is O(m N)); TNP-D keeps the raw points and
    recomputes every representation at ``predict`` (O(N^2)). Tensors are batched:
    ``x [B, m, dim_x]``, ``y [B, m, dim_y]``.

    Args:
        model: the model (TNP-D or incTNP).
    """

    def __init__(self, model: NeuralProcess) -> None:
        self.model = model
        self.reset()

    def reset(self) -> Stream:
        """Forget every observation.

        Returns:
            ``self``.
        """
        self.cache = KVCache(self.model.config.layers)
        self.x: torch.Tensor | None = None
        self.y: torch.Tensor | None = None
        return self

    @property
    def size(self) -> int:
        """The number of points observed."""
        return (
            self.cache.length
            if self.model.config.causal
            else (0 if self.x is None else self.x.shape[1])
        )

    def condition(self, x: torch.Tensor, y: torch.Tensor) -> Stream:
        """Forget everything and condition on ``(x, y)`` (in this order).

        Args:
            x: inputs ``[B, N, dim_x]``.
            y: outputs ``[B, N, dim_y]``.

        Returns:
            ``self``.
        """
        self.reset()
        return self.update(x, y)

    @torch.no_grad()
    def update(self, x: torch.Tensor, y: torch.Tensor) -> Stream:
        """Add observations at the end of the sequence.

        Args:
            x: inputs ``[B, m, dim_x]``.
            y: outputs ``[B, m, dim_y]``.

        Returns:
            ``self``.

        Raises:
            ValueError: bad inputs or a batch size other than the conditioned one.
        """
        x, y = check_inputs(self.model.config, x, y, "new", self.model.dtype)
        assert y is not None
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
        """Predictive ``(mean, std)`` at ``xt`` given everything observed so far.

        Args:
            xt: targets ``[B, T, dim_x]``.

        Returns:
            ``(mean, std)``, each ``[B, T, dim_y]``.

        Raises:
            ValueError: nothing observed yet.
        """
        if self.model.config.causal:
            return self.model.predict_from_cache(self.cache, xt)
        if self.x is None:
            raise ValueError("the context is empty: condition on at least one point")
        return self.model(self.x, self.y, xt)


def build_model(config: ModelConfig) -> NeuralProcess:
    """A freshly initialised model (set the torch seed first for reproducibility).

    Args:
        config: the architecture.

    Returns:
        The model (Xavier-initialised weights).
    """
    model = NeuralProcess(config)
    for p in model.parameters():
        if p.dim() > 1:
            nn.init.xavier_uniform_(p, gain=1.0 / math.sqrt(2.0))
    return model

"""The workloads' models: a small decoder-only transformer LM (dense or sparse MoE) and an MLP.

Written by hand (nanoGPT-style, pre-LayerNorm, causal ``scaled_dot_product_attention``) so every
weight is a plain ``nn.Parameter`` owning its storage, which the quantized optimizers need.
The MoE block routes each token to its ``top_k`` of ``n_experts`` feed-forward experts with
softmax gates renormalised over the chosen experts, and adds the Switch-Transformer
load-balancing loss ``E · Σ_e f_e · P_e`` (``f_e`` fraction of routed tokens, ``P_e`` mean
router probability) scaled by ``aux_loss_coef``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["MLP", "LMConfig", "TinyLM"]


@dataclass(frozen=True)
class LMConfig:
    """Shape of :class:`TinyLM`. ``n_experts = 0`` gives the dense model."""

    vocab_size: int = 256
    seq_len: int = 64
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    d_ff: int = 256
    n_experts: int = 0
    top_k: int = 2
    aux_loss_coef: float = 0.01

    def __post_init__(self) -> None:
        for name in ("vocab_size", "seq_len", "d_model", "n_layers", "n_heads", "d_ff"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.d_model % self.n_heads:
            raise ValueError(f"n_heads {self.n_heads} must divide d_model {self.d_model}")
        if self.n_experts < 0 or (self.n_experts and not 1 <= self.top_k <= self.n_experts):
            raise ValueError(
                f"need 1 <= top_k <= n_experts for an MoE, got top_k={self.top_k}, "
                f"n_experts={self.n_experts}"
            )


class _Attention(nn.Module):
    def __init__(self, cfg: LMConfig) -> None:
        super().__init__()
        self.n_heads = cfg.n_heads
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        shape = (b, t, self.n_heads, d // self.n_heads)
        q, k, v = (z.view(shape).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


class _DenseFFN(nn.Module):
    def __init__(self, cfg: LMConfig) -> None:
        super().__init__()
        self.up = nn.Linear(cfg.d_model, cfg.d_ff, bias=False)
        self.down = nn.Linear(cfg.d_ff, cfg.d_model, bias=False)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.down(F.gelu(self.up(x))), x.new_zeros(())


class _MoEFFN(nn.Module):
    """Top-k routed experts; expert weights stacked as ``(E, d_in, d_out)`` parameters."""

    def __init__(self, cfg: LMConfig) -> None:
        super().__init__()
        self.n_experts, self.top_k = cfg.n_experts, cfg.top_k
        self.router = nn.Linear(cfg.d_model, cfg.n_experts, bias=False)
        self.w_up = nn.Parameter(torch.empty(cfg.n_experts, cfg.d_model, cfg.d_ff))
        self.w_down = nn.Parameter(torch.empty(cfg.n_experts, cfg.d_ff, cfg.d_model))
        nn.init.normal_(self.w_up, std=1.0 / math.sqrt(cfg.d_model))
        nn.init.normal_(self.w_down, std=1.0 / math.sqrt(cfg.d_ff))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        shape = x.shape
        tokens = x.reshape(-1, shape[-1])
        probs = F.softmax(self.router(tokens), dim=-1)
        gate, chosen = probs.topk(self.top_k, dim=-1)
        gate = gate / gate.sum(dim=-1, keepdim=True)
        out = torch.zeros_like(tokens)
        # one view per expert from one read of each stacked weight (a quantized weight is
        # dequantized once per forward, not once per expert); the backward stacks the experts'
        # gradients once instead of summing one full-size tensor per expert (the same values)
        ups, downs = self.w_up.unbind(0), self.w_down.unbind(0)
        for e in range(self.n_experts):
            rows, slot = torch.nonzero(chosen == e, as_tuple=True)
            if rows.numel() == 0:
                continue
            h = F.gelu(tokens[rows] @ ups[e]) @ downs[e]
            out.index_add_(0, rows, h * gate[rows, slot].unsqueeze(-1))
        routed = F.one_hot(chosen, self.n_experts).sum(dim=1).float().mean(dim=0) / self.top_k
        aux = self.n_experts * (routed * probs.mean(dim=0)).sum()
        return out.reshape(shape), aux


class _Block(nn.Module):
    def __init__(self, cfg: LMConfig) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = _Attention(cfg)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.ffn: nn.Module = _MoEFFN(cfg) if cfg.n_experts else _DenseFFN(cfg)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = x + self.attn(self.ln1(x))
        h, aux = self.ffn(self.ln2(x))
        return x + h, aux


class TinyLM(nn.Module):
    """Decoder-only byte-level LM. ``forward(idx, targets)`` returns ``(logits, loss)``;
    the loss is next-token cross-entropy plus the MoE load-balancing term (if any)."""

    def __init__(self, cfg: LMConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.tok = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos = nn.Embedding(cfg.seq_len, cfg.d_model)
        self.blocks = nn.ModuleList(_Block(cfg) for _ in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        for module in self.modules():
            if isinstance(module, nn.Linear | nn.Embedding):
                nn.init.normal_(module.weight, std=0.02)

    def forward(
        self, idx: torch.Tensor, targets: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        if idx.dim() != 2:
            raise ValueError(f"idx must be (batch, time), got shape {tuple(idx.shape)}")
        t = idx.shape[1]
        if t > self.cfg.seq_len:
            raise ValueError(f"sequence length {t} exceeds the model's seq_len {self.cfg.seq_len}")
        x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
        aux = x.new_zeros(())
        for block in self.blocks:
            x, a = block(x)
            aux = aux + a
        logits = self.head(self.ln_f(x))
        if targets is None:
            return logits, None
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        return logits, ce + self.cfg.aux_loss_coef * aux

    def lm_loss(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Next-token cross-entropy only (what validation reports)."""
        logits, _ = self(idx)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


class MLP(nn.Module):
    """``784 → hidden → … → 10`` ReLU classifier (the fast MNIST workload)."""

    def __init__(self, d_in: int = 784, hidden: tuple[int, ...] = (256,), n_classes: int = 10):
        super().__init__()
        dims = (d_in, *hidden)
        layers: list[nn.Module] = []
        for a, b in itertools.pairwise(dims):
            layers += [nn.Linear(a, b), nn.ReLU()]
        layers.append(nn.Linear(dims[-1], n_classes))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)

"""A small single-cell foundation model (scFM) standing in for scGPT / Geneformer.

A cell is a set of gene tokens. Token ``g`` carries ``E_gene[g] + E_value(v_g)`` where
``E_value`` is a smooth MLP of the (normalised) expression value, so outputs are
differentiable in every input value — what Gradient Trajectory needs — or a learned mask
vector in place of ``E_value`` for masked genes. Pre-LN transformer blocks with attention
written out (``softmax(QK^T / sqrt(d_h)) V``) so ``torch.func.jvp`` traces it (the fused path
of ``nn.TransformerEncoder`` does not support forward-mode AD). A head maps each token to its
predicted expression; pretraining (``pretrain.py``) reconstructs masked values.

:class:`CellModel` is the protocol every scFM satisfies here (ours, or a user's checkpoint
through :mod:`icml26.scfm_grn.adapters`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

import torch
from torch import Tensor, nn

__all__ = ["CellModel", "ScFM", "ScFMConfig", "load_scfm", "save_scfm"]


@runtime_checkable
class CellModel(Protocol):
    """What the feature extractors need from an scFM.

    ``vocab`` maps gene names to token ids; ``predict(gene_ids [B, G] long, values [B, G]
    float, mask [B, G] bool) -> [B, G]`` returns every gene's predicted (normalised)
    expression, with masked genes' input values hidden from the model. ``attention`` (mean
    attention ``[B, G, G]``, row = query) and ``embed`` (``[B, G, d]``) serve the attention
    and embedding baselines; a model without them skips those baselines.
    """

    @property
    def vocab(self) -> Mapping[str, int]: ...

    def predict(self, gene_ids: Tensor, values: Tensor, mask: Tensor) -> Tensor: ...


@dataclass(frozen=True)
class ScFMConfig:
    """The scFM's size: token width, transformer blocks, heads, MLP expansion.

    Attributes:
        width: token width (divisible by ``heads``).
        layers: transformer blocks (at least 1).
        heads: attention heads.
        mlp_ratio: the blocks' MLP width over ``width``.

    Raises:
        ValueError: a width not divisible by the heads, or no layer.
    """

    width: int = 64
    layers: int = 2
    heads: int = 4
    mlp_ratio: int = 2

    def __post_init__(self) -> None:
        if self.width < 1 or self.layers < 1 or self.heads < 1 or self.width % self.heads:
            raise ValueError("width must be a positive multiple of heads; layers >= 1")


class SelfAttention(nn.Module):
    """Multi-head self-attention written with plain ops (forward-mode AD friendly)."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        b, g, d = x.shape
        q, k, v = self.qkv(x).view(b, g, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        weights = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d // self.heads), dim=-1)
        y = (weights @ v).transpose(1, 2).reshape(b, g, d)
        return self.out(y), weights  # weights: [B, H, G(query), G(key)]


class Block(nn.Module):
    def __init__(self, width: int, heads: int, mlp_ratio: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.attn = SelfAttention(width, heads)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(
            nn.Linear(width, mlp_ratio * width), nn.GELU(), nn.Linear(mlp_ratio * width, width)
        )

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        h, weights = self.attn(self.norm1(x))
        x = x + h
        return x + self.mlp(self.norm2(x)), weights


class ScFM(nn.Module):
    """The scFM: gene-identity + value embeddings, transformer, per-gene value head.

    Args:
        vocab: the gene names (token ids are their positions).
        config: the size (default :class:`ScFMConfig`).

    Raises:
        ValueError: duplicated gene names.
    """

    def __init__(self, vocab: Sequence[str], config: ScFMConfig | None = None) -> None:
        super().__init__()
        self.config = config or ScFMConfig()
        if len(set(vocab)) != len(vocab):
            raise ValueError("vocabulary genes must be unique")
        self.genes = tuple(vocab)
        self.vocab: dict[str, int] = {g: i for i, g in enumerate(self.genes)}
        d = self.config.width
        self.gene_embedding = nn.Embedding(len(self.genes), d)
        nn.init.normal_(self.gene_embedding.weight, std=0.5)
        self.value_encoder = nn.Sequential(nn.Linear(1, d), nn.Tanh(), nn.Linear(d, d))
        self.mask_embedding = nn.Parameter(torch.zeros(d))
        self.blocks = nn.ModuleList(
            Block(d, self.config.heads, self.config.mlp_ratio) for _ in range(self.config.layers)
        )
        self.norm = nn.LayerNorm(d)
        self.head = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, 1))

    def token_ids(self, genes: Sequence[str]) -> Tensor:
        """The vocabulary ids of ``genes``.

        Args:
            genes: gene names.

        Returns:
            A long tensor of ids, in the order given.

        Raises:
            KeyError: a gene outside the vocabulary (the first ten are named).
        """
        missing = [g for g in genes if g not in self.vocab]
        if missing:
            raise KeyError(f"genes outside the scFM's vocabulary: {', '.join(missing[:10])}")
        return torch.tensor([self.vocab[g] for g in genes], dtype=torch.long)

    def _encode(
        self, gene_ids: Tensor, values: Tensor, mask: Tensor
    ) -> tuple[Tensor, list[Tensor]]:
        value_emb = self.value_encoder(values.unsqueeze(-1))
        value_emb = torch.where(mask.unsqueeze(-1), self.mask_embedding.to(value_emb), value_emb)
        x = self.gene_embedding(gene_ids) + value_emb
        attentions = []
        for block in self.blocks:
            x, weights = block(x)
            attentions.append(weights)
        return self.norm(x), attentions

    def predict(self, gene_ids: Tensor, values: Tensor, mask: Tensor) -> Tensor:
        """Predicted normalised expression of every gene, ``[B, G]``."""
        hidden, _ = self._encode(gene_ids, values, mask)
        return self.head(hidden).squeeze(-1)

    def forward(self, gene_ids: Tensor, values: Tensor, mask: Tensor) -> Tensor:
        """:meth:`predict` (the ``nn.Module`` call).

        Args:
            gene_ids: ``[B, G]`` vocabulary ids of the genes.
            values: ``[B, G]`` normalised expression.
            mask: ``[B, G]`` True where the value is hidden from the model.

        Returns:
            ``[B, G]`` predicted normalised expression of every gene.
        """
        return self.predict(gene_ids, values, mask)

    def attention(self, gene_ids: Tensor, values: Tensor, mask: Tensor) -> Tensor:
        """Attention averaged over heads and layers, ``[B, G(query), G(key)]``."""
        _, attentions = self._encode(gene_ids, values, mask)
        return torch.stack([a.mean(dim=1) for a in attentions]).mean(dim=0)

    def embed(self, gene_ids: Tensor, values: Tensor, mask: Tensor) -> Tensor:
        """Contextual gene embeddings (last layer, normalised), ``[B, G, d]``."""
        hidden, _ = self._encode(gene_ids, values, mask)
        return hidden


def save_scfm(model: ScFM, path: str | Path) -> None:
    """Weights as safetensors plus the vocabulary and config in its metadata."""
    import json

    from safetensors.torch import save_file

    meta = {"genes": json.dumps(list(model.genes)), "config": json.dumps(asdict(model.config))}
    tensors = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    save_file(tensors, str(path), metadata=meta)


def load_scfm(path: str | Path, device: str = "cpu") -> ScFM:
    """Inverse of :func:`save_scfm`."""
    import json

    from safetensors import safe_open
    from safetensors.torch import load_file

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"scFM checkpoint {path} does not exist")
    with safe_open(str(path), framework="pt") as fh:
        meta = fh.metadata()
    if not meta or "genes" not in meta:
        raise ValueError(f"{path} is not an icml26 scFM checkpoint (no vocabulary metadata)")
    model = ScFM(json.loads(meta["genes"]), ScFMConfig(**json.loads(meta["config"])))
    model.load_state_dict(load_file(str(path), device=device))
    return model.to(device)

"""Geneformer (Theodoris et al. 2023) as a :class:`~icml26.scfm_grn.model.CellModel`.

What the adapter relies on, as Geneformer publishes it:

* the model: a Hugging Face ``BertForMaskedLM`` folder (``config.json`` + weights), called
  as ``model(input_ids=..., attention_mask=...)``, returning ``.logits`` ``[B, L, V]``;
* ``token_dictionary.pkl`` (gene id -> token id, with ``<pad>`` and ``<mask>``) and
  ``gene_median_dictionary.pkl`` (gene id -> median non-zero expression across the corpus);
* **rank encoding** (:meth:`GeneformerAdapter.rank_encode`): a cell's counts are scaled to
  10,000 total, divided by each gene's median, and its non-zero genes' tokens ordered by
  that value, highest first, truncated to ``model_input_size`` (2,048).

A cell carries no values, only an order, so the adapter reads a gene's "expression" as the
model's log-probability of that gene's token at the gene's position, with hidden genes shown
as ``<mask>``. Genes are ordered by their (normalised) value, highest first; a gene whose
value equals the virtual baseline (``baseline``, 0), and every hidden gene, takes its value
in a **reference cell** instead (:meth:`GeneformerAdapter.set_reference`: a real cell's
normalised values; without one, baseline genes are spread over standard-normal quantiles in
column order). Virtual Value Perturbation (gene ``i`` at ``M`` values, the others at the
baseline) then starts from the reference cell's rank encoding and moves gene ``i`` across
``M`` positions of it: ``M`` distinct encodings, not just "first" and "last". Unlike
Geneformer's own tokeniser, the probe keeps genes the reference cell does not express (a
gene must be in the sequence for its readout). The output is not differentiable in the
values (the encoding is an order), so Gradient Trajectory refuses it.

Geneformer is not on PyPI and cannot join this workspace; with it (or any folder in its
layout) ``GeneformerAdapter.from_pretrained(folder)`` loads through ``transformers``. The
tests use a tiny ``BertForMaskedLM`` saved in exactly that layout.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import torch
from numpy.typing import NDArray
from scipy.stats import norm
from torch import Tensor, nn

__all__ = ["GeneformerAdapter"]


def _pickle(path: Path) -> dict:  # type: ignore[type-arg]
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist (Geneformer's layout needs it)")
    with path.open("rb") as fh:
        value = pickle.load(fh)
    if not isinstance(value, dict):
        raise ValueError(f"{path} does not hold a dictionary")
    return value


class GeneformerAdapter(nn.Module):
    """A frozen Geneformer ``BertForMaskedLM`` as a ``CellModel`` (VVP only).

    Args:
        model: called as ``model(input_ids=..., attention_mask=...)`` with ``.logits`` out.
        token_dictionary: gene id -> token id, with ``<pad>`` and ``<mask>``.
        gene_medians: gene id -> median non-zero expression (for :meth:`rank_encode`).
        model_input_size: the longest rank encoding.
        baseline: the virtual baseline value: a gene at it takes its reference-cell value.

    Raises:
        ValueError: a token dictionary without ``<pad>`` or ``<mask>``.
    """

    differentiable = False

    def __init__(
        self,
        model: nn.Module,
        token_dictionary: Mapping[str, int],
        gene_medians: Mapping[str, float] | None = None,
        *,
        model_input_size: int = 2048,
        baseline: float = 0.0,
    ) -> None:
        super().__init__()
        missing = [t for t in ("<pad>", "<mask>") if t not in token_dictionary]
        if missing:
            raise ValueError(f"the token dictionary lacks {missing}")
        self.model = model
        self.tokens = dict(token_dictionary)
        self.medians = dict(gene_medians or {})
        self.model_input_size = int(model_input_size)
        self.pad_id, self.mask_id = self.tokens["<pad>"], self.tokens["<mask>"]
        self.baseline = float(baseline)
        self.reference: dict[int, float] = {}

    def set_reference(self, values: Mapping[str, float]) -> None:
        """The reference cell whose rank encoding baseline and hidden genes keep.

        Args:
            values: gene id -> the cell's normalised value (e.g. one row of
                :attr:`~icml26.scfm_grn.data.ExpressionData.values`); genes outside the token
                dictionary are ignored.

        Raises:
            ValueError: no gene of ``values`` has a token, or a value is not finite.
        """
        ref = {self.tokens[g]: float(v) for g, v in values.items() if g in self.tokens}
        if not ref:
            raise ValueError("the reference cell names no gene of the token dictionary")
        if not np.isfinite(list(ref.values())).all():
            raise ValueError("the reference cell's values must be finite")
        self.reference = ref

    def _reference_keys(self, gene_ids: Tensor) -> Tensor:
        """``[B, G]`` sort keys of baseline / hidden genes: the reference cell's values, or
        standard-normal quantiles in column order (also for genes the reference lacks)."""
        g = gene_ids.shape[1]
        spread = torch.from_numpy(norm.ppf((g - np.arange(g) - 0.5) / g).astype(np.float32))
        keys = spread.to(gene_ids.device).expand(gene_ids.shape).clone()
        if self.reference:
            flat = gene_ids.reshape(-1).tolist()
            known = torch.tensor([t in self.reference for t in flat], device=gene_ids.device)
            vals = torch.tensor([self.reference.get(t, 0.0) for t in flat], device=keys.device)
            keys = torch.where(known.view_as(keys), vals.view_as(keys), keys)
        return keys

    @property
    def vocab(self) -> Mapping[str, int]:
        """Gene id -> token id."""
        return self.tokens

    @classmethod
    def from_pretrained(
        cls, folder: str | os.PathLike[str], *, device: str = "cpu", model_input_size: int = 2048
    ) -> GeneformerAdapter:
        """Load a Geneformer folder: the ``BertForMaskedLM`` and its two dictionaries.

        Args:
            folder: holds ``config.json`` + weights, ``token_dictionary.pkl`` and
                ``gene_median_dictionary.pkl``.
            device: where to put the model.
            model_input_size: the longest rank encoding.

        Returns:
            The adapter around the model in eval mode.

        Raises:
            FileNotFoundError: a missing file.
            ImportError: without ``transformers``.
        """
        folder = Path(folder)
        if not (folder / "config.json").is_file():
            raise FileNotFoundError(f"{folder} has no config.json (not a Geneformer folder)")
        tokens = _pickle(folder / "token_dictionary.pkl")
        medians = _pickle(folder / "gene_median_dictionary.pkl")
        try:
            from transformers import BertForMaskedLM
        except ImportError as exc:
            raise ImportError("Geneformer needs transformers: pip install transformers") from exc
        model = BertForMaskedLM.from_pretrained(folder).to(device).eval()
        return cls(model, tokens, medians, model_input_size=model_input_size)

    def rank_encode(self, counts: NDArray[np.floating], genes: Sequence[str]) -> list[list[int]]:
        """Geneformer's tokenisation of raw counts (cells x genes).

        Args:
            counts: raw counts, cells x genes.
            genes: gene ids of the columns (those without a token or a median are dropped).

        Returns:
            One token list per cell: non-zero genes by normalised value, highest first.
        """
        x = np.asarray(counts, dtype=np.float64)
        keep = [k for k, g in enumerate(genes) if g in self.tokens and g in self.medians]
        ids = np.array([self.tokens[genes[k]] for k in keep])
        med = np.array([self.medians[genes[k]] for k in keep], dtype=np.float64)
        total = x.sum(axis=1, keepdims=True)
        total[total == 0] = 1.0
        norm = x[:, keep] / total * 10_000 / med
        out = []
        for row in norm:
            nz = np.flatnonzero(row > 0)
            order = nz[np.argsort(-row[nz], kind="mergesort")][: self.model_input_size]
            out.append(ids[order].tolist())
        return out

    @torch.no_grad()
    def predict(self, gene_ids: Tensor, values: Tensor, mask: Tensor) -> Tensor:
        """Log-probability of each gene's token at its rank position, ``[B, G]``.

        Args:
            gene_ids: token ids ``[B, G]``.
            values: normalised values ``[B, G]`` (only their order is used; a gene at the
                baseline, or hidden, sits at its reference-cell rank).
            mask: True where the gene is hidden (shown as ``<mask>``).

        Returns:
            ``[B, G]``.
        """
        if gene_ids.shape[1] > self.model_input_size:
            raise ValueError(f"{gene_ids.shape[1]} genes exceed model_input_size")
        at_reference = mask | (values == self.baseline)
        key = torch.where(at_reference, self._reference_keys(gene_ids).to(values), values)
        order = torch.argsort(-key, dim=1, stable=True)  # rank position -> gene column
        ranked = gene_ids.gather(1, order)
        shown = torch.where(mask.gather(1, order), torch.full_like(ranked, self.mask_id), ranked)
        logits = self.model(input_ids=shown, attention_mask=torch.ones_like(shown)).logits
        logp = logits.log_softmax(-1).gather(2, ranked.unsqueeze(-1)).squeeze(-1)
        out = torch.empty_like(logp)
        out.scatter_(1, order, logp)  # back to the genes' column order
        return out

    def forward(self, gene_ids: Tensor, values: Tensor, mask: Tensor) -> Tensor:
        """Same as :meth:`predict`."""
        return self.predict(gene_ids, values, mask)

"""Plugging in a real scFM.

Anything that maps gene ids and values to per-gene outputs can be used: wrap a function with
:class:`CallableScFM`, or a Hugging Face scGPT-style model (``forward(input_ids, values,
...)`` returning per-gene expression predictions) with :class:`HFScFMAdapter`. Masked genes
are passed to the model as ``mask_value`` (scGPT's convention is -1) with the boolean mask
also given when the model's forward accepts one.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import Tensor, nn

__all__ = ["CallableScFM", "HFScFMAdapter"]


class CallableScFM:
    """A :class:`~icml26.scfm_grn.model.CellModel` from ``fn(gene_ids, values, mask) -> [B, G]``."""

    def __init__(
        self, fn: Callable[[Tensor, Tensor, Tensor], Tensor], vocab: Mapping[str, int]
    ) -> None:
        self.fn = fn
        self.vocab = dict(vocab)

    def predict(self, gene_ids: Tensor, values: Tensor, mask: Tensor) -> Tensor:
        out = self.fn(gene_ids, values, mask)
        if out.shape != values.shape:
            raise ValueError(
                f"the scFM returned {tuple(out.shape)}, expected {tuple(values.shape)}"
            )
        return out


class HFScFMAdapter(nn.Module):
    """A Hugging Face (or any ``nn.Module``) scGPT-style model as a ``CellModel``.

    Args:
        model: called as ``model(input_ids=..., values=..., [mask=...])``.
        vocab: gene name -> token id (scGPT ships ``vocab.json``).
        output_key: attribute or key of the output holding ``[B, G]`` (or ``[B, G, 1]``)
            predictions; scGPT calls it ``mlm_output``.
        mask_value: value written in place of masked genes' values.
    """

    def __init__(
        self,
        model: nn.Module,
        vocab: Mapping[str, int],
        *,
        output_key: str = "mlm_output",
        mask_value: float = -1.0,
    ) -> None:
        super().__init__()
        self.model = model
        self.vocab = dict(vocab)
        self.output_key = output_key
        self.mask_value = mask_value
        params = inspect.signature(model.forward).parameters
        self._takes_mask = "mask" in params

    @classmethod
    def from_pretrained(
        cls, path: str, vocab_file: str | None = None, **kwargs: Any
    ) -> HFScFMAdapter:
        """Load with ``transformers.AutoModel.from_pretrained(path, trust_remote_code=True)``
        and the vocabulary from ``vocab_file`` (default ``<path>/vocab.json``)."""
        import json
        from pathlib import Path

        try:
            from transformers import AutoModel
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "HFScFMAdapter.from_pretrained needs `pip install transformers`"
            ) from exc
        vocab_path = Path(vocab_file) if vocab_file else Path(path) / "vocab.json"
        if not vocab_path.is_file():
            raise FileNotFoundError(f"no gene vocabulary at {vocab_path}")
        vocab = json.loads(vocab_path.read_text())
        model = AutoModel.from_pretrained(path, trust_remote_code=True)
        return cls(model.eval(), vocab, **kwargs)

    def predict(self, gene_ids: Tensor, values: Tensor, mask: Tensor) -> Tensor:
        shown = torch.where(mask, torch.full_like(values, self.mask_value), values)
        kwargs: dict[str, Tensor] = {"input_ids": gene_ids, "values": shown}
        if self._takes_mask:
            kwargs["mask"] = mask
        out = self.model(**kwargs)
        if isinstance(out, Mapping):
            pred = out[self.output_key]
        elif isinstance(out, Tensor):
            pred = out
        else:
            pred = getattr(out, self.output_key)
        if pred.dim() == 3 and pred.shape[-1] == 1:
            pred = pred.squeeze(-1)
        if pred.shape != values.shape:
            raise ValueError(
                f"{self.output_key} has shape {tuple(pred.shape)}, expected {tuple(values.shape)}"
            )
        return pred

    def forward(self, gene_ids: Tensor, values: Tensor, mask: Tensor) -> Tensor:
        return self.predict(gene_ids, values, mask)

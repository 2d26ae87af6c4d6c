"""Any function ``fn(gene_ids, values, mask) -> [B, G]`` as a
:class:`~icml26.scfm_grn.model.CellModel`."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from torch import Tensor

__all__ = ["CallableScFM"]


class CallableScFM:
    """A :class:`~icml26.scfm_grn.model.CellModel` from ``fn(gene_ids, values, mask) -> [B, G]``.

    Args:
        fn: the model's per-gene predictions (masked genes' values hidden).
        vocab: gene name -> token id.
    """

    def __init__(
        self, fn: Callable[[Tensor, Tensor, Tensor], Tensor], vocab: Mapping[str, int]
    ) -> None:
        self.fn = fn
        self.vocab = dict(vocab)

    def predict(self, gene_ids: Tensor, values: Tensor, mask: Tensor) -> Tensor:
        """``fn``'s output, checked to be ``[B, G]``."""
        out = self.fn(gene_ids, values, mask)
        if out.shape != values.shape:
            raise ValueError(
                f"the scFM returned {tuple(out.shape)}, expected {tuple(values.shape)}"
            )
        return out

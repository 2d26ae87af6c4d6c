"""scGPT (Cui et al. 2024, ``bowang-lab/scGPT``) as a :class:`~icml26.scfm_grn.model.CellModel`.

What the adapter relies on, as scGPT publishes it:

* the model: ``scgpt.model.TransformerModel``, called as ``model(src, values,
  src_key_padding_mask)`` (``src`` gene token ids ``[B, L]``, ``values`` ``[B, L]``,
  ``src_key_padding_mask`` bool ``[B, L]``, True at padding), returning a dict whose
  ``"mlm_output"`` ``[B, L]`` is the predicted (binned) expression of every position;
* a checkpoint folder: ``best_model.pt`` (the ``state_dict``), ``args.json`` (``embsize``,
  ``nheads``, ``d_hid``, ``nlayers``, ``n_bins``, ``pad_token``, ``pad_value``,
  ``mask_value``, ``input_emb_style``, ...) and ``vocab.json`` (gene -> token id, with
  ``<pad>`` and ``<cls>``);
* value binning (:func:`bin_expression`): per cell, the non-zero values are digitised into
  ``n_bins - 1`` quantile bins (1..n_bins-1), zeros stay 0; a masked value is ``mask_value``
  (-1) and a ``<cls>`` token (value ``pad_value``) leads every cell.

Our probes set values in normalised (z-score) units; :func:`z_to_bin` maps them onto scGPT's
bin scale monotonically and differentiably (``(n_bins - 1) * Phi(z)``, clipped to [1, n_bins
- 1]; a quantile-binned non-zero value is uniform on its bins, as ``Phi(z)`` of a z-score
is), so Gradient Trajectory works with scGPT's continuous value encoder; the ``category``
encoder has no gradient in the value, so use VVP there. Outputs stay in bin units.

``scgpt`` itself cannot join this workspace (it pins ``datasets<3``): with it installed in your
own environment, ``ScGPTAdapter.from_checkpoint(folder)`` imports its ``TransformerModel``;
otherwise pass ``model_class=``. The tests use a stand-in with exactly the signature and
checkpoint layout above.
"""

from __future__ import annotations

import inspect
import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray
from torch import Tensor, nn

__all__ = ["ScGPTAdapter", "bin_expression", "z_to_bin"]

REQUIRED_ARGS = ("embsize", "nheads", "d_hid", "nlayers")


def bin_expression(
    x: NDArray[np.floating], n_bins: int = 51, *, seed: int = 0
) -> NDArray[np.float32]:
    """scGPT's per-cell value binning.

    Args:
        x: non-negative expression, cells x genes (log-normalised counts, as scGPT bins).
        n_bins: scGPT's ``n_bins`` (bins 1..n_bins-1 for non-zero values, 0 for zeros).
        seed: the tie-break of values equal to a bin edge (scGPT spreads them uniformly).

    Returns:
        Bin indices as float32, cells x genes.

    Raises:
        ValueError: negative values or fewer than 3 bins.
    """
    x = np.asarray(x, dtype=np.float64)
    if (x < 0).any():
        raise ValueError("scGPT bins non-negative expression (log-normalised counts)")
    if n_bins < 3:
        raise ValueError("n_bins must be >= 3")
    rng = np.random.default_rng(seed)
    out = np.zeros_like(x, dtype=np.float32)
    for c, row in enumerate(x):
        nz = row > 0
        if not nz.any():
            continue
        edges = np.quantile(row[nz], np.linspace(0, 1, n_bins - 1))
        left = np.digitize(row[nz], edges)
        right = np.digitize(row[nz], edges, right=True)
        out[c, nz] = np.ceil(rng.random(left.size) * (right - left) + left).clip(1, n_bins - 1)
    return out


def z_to_bin(z: Tensor, n_bins: int) -> Tensor:
    """Normalised values onto scGPT's bin scale: ``(n_bins - 1) Phi(z)`` in [1, n_bins - 1]."""
    phi = 0.5 * (1 + torch.erf(z / math.sqrt(2.0)))
    return ((n_bins - 1) * phi).clamp(1.0, float(n_bins - 1))


def _checkpoint(folder: Path) -> tuple[dict[str, Any], dict[str, int], Path]:
    files = {n: folder / n for n in ("best_model.pt", "args.json", "vocab.json")}
    missing = [n for n, p in files.items() if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"{folder} is not an scGPT checkpoint folder: no {missing}")
    args = json.loads(files["args.json"].read_text())
    absent = [k for k in REQUIRED_ARGS if k not in args]
    if absent:
        raise ValueError(f"{files['args.json']} lacks {absent}")
    vocab = json.loads(files["vocab.json"].read_text())
    if not isinstance(vocab, dict) or not all(isinstance(v, int) for v in vocab.values()):
        raise ValueError(f"{files['vocab.json']} must map gene names to integer token ids")
    return args, vocab, files["best_model.pt"]


class ScGPTAdapter(nn.Module):
    """A frozen scGPT ``TransformerModel`` as a :class:`~icml26.scfm_grn.model.CellModel`.

    Args:
        model: the ``TransformerModel`` (or anything with its forward signature).
        vocab: gene name -> token id (``vocab.json``), with ``pad_token`` and optionally
            ``<cls>``.
        n_bins: the checkpoint's ``n_bins``.
        mask_value: the value of a masked gene (``args.json`` ``mask_value``, -1).
        pad_token, pad_value: ``args.json``'s; ``<cls>`` leads each cell with ``pad_value``.
        append_cls: prepend ``<cls>`` (scGPT's pretraining does).

    Raises:
        ValueError: the model's forward lacks ``src``, ``values`` or
            ``src_key_padding_mask``, or the vocabulary lacks ``pad_token``.
    """

    def __init__(
        self,
        model: nn.Module,
        vocab: Mapping[str, int],
        *,
        n_bins: int = 51,
        mask_value: float = -1.0,
        pad_token: str = "<pad>",
        pad_value: float = -2.0,
        append_cls: bool = True,
    ) -> None:
        super().__init__()
        params = inspect.signature(model.forward).parameters
        wanted = ("src", "values", "src_key_padding_mask")
        if not all(p in params for p in wanted) and not any(
            p.kind is p.VAR_POSITIONAL for p in params.values()
        ):
            raise ValueError(f"an scGPT model's forward takes {wanted}, got {tuple(params)}")
        if pad_token not in vocab:
            raise ValueError(f"the vocabulary has no pad token {pad_token!r}")
        self.model, self.n_bins = model, int(n_bins)
        self.genes_vocab = dict(vocab)
        self.mask_value, self.pad_value = float(mask_value), float(pad_value)
        self.cls_id = vocab.get("<cls>") if append_cls else None
        self.pad_id = int(vocab[pad_token])
        #: False for the ``category`` value encoder (no gradient in the value: VVP only).
        self.differentiable = True

    @property
    def vocab(self) -> Mapping[str, int]:
        """Gene name -> token id."""
        return self.genes_vocab

    @classmethod
    def from_checkpoint(
        cls,
        folder: str | os.PathLike[str],
        *,
        model_class: type[nn.Module] | None = None,
        device: str = "cpu",
        strict: bool = True,
    ) -> ScGPTAdapter:
        """Load scGPT's ``best_model.pt`` + ``args.json`` + ``vocab.json``.

        Args:
            folder: the checkpoint folder.
            model_class: the ``TransformerModel`` class (default: ``scgpt.model``'s).
            device: where to put it.
            strict: ``load_state_dict``'s strictness.

        Returns:
            The adapter around the model in eval mode.

        Raises:
            FileNotFoundError: a missing file.
            ValueError: ``args.json`` without the model's sizes, a malformed vocabulary.
            ImportError: no ``model_class`` and no ``scgpt`` package.
        """
        args, vocab, weights = _checkpoint(Path(folder))
        if model_class is None:
            try:
                from scgpt.model import TransformerModel as model_class  # type: ignore[no-redef]
            except ImportError as exc:
                raise ImportError(
                    "scGPT's TransformerModel is needed: pip install scgpt in your own "
                    "environment, or pass model_class="
                ) from exc
        style = args.get("input_emb_style", "continuous")
        kwargs = {
            "ntoken": len(vocab),
            "d_model": args["embsize"],
            "nhead": args["nheads"],
            "d_hid": args["d_hid"],
            "nlayers": args["nlayers"],
            "dropout": args.get("dropout", 0.0),
            "pad_token": args.get("pad_token", "<pad>"),
            "pad_value": args.get("pad_value", -2),
            "vocab": vocab,
            "padding_idx": vocab.get(args.get("pad_token", "<pad>")),
            "input_emb_style": style,
            "n_input_bins": args.get("n_bins", 51) + 2,
            "do_mvc": args.get("MVC", False),
            "use_fast_transformer": False,
        }
        accepted = inspect.signature(model_class.__init__).parameters
        model = model_class(**{k: v for k, v in kwargs.items() if k in accepted})
        model.load_state_dict(torch.load(weights, map_location="cpu"), strict=strict)
        adapter = cls(
            model.to(device).eval(),
            vocab,
            n_bins=args.get("n_bins", 51),
            mask_value=args.get("mask_value", -1),
            pad_token=args.get("pad_token", "<pad>"),
            pad_value=args.get("pad_value", -2),
        )
        adapter.differentiable = style != "category"
        return adapter

    def predict(self, gene_ids: Tensor, values: Tensor, mask: Tensor) -> Tensor:
        """scGPT's ``mlm_output`` for each gene, ``[B, G]`` (bin units).

        Args:
            gene_ids: token ids ``[B, G]`` (from :attr:`vocab`).
            values: normalised values ``[B, G]`` (mapped by :func:`z_to_bin`).
            mask: True where the value is hidden (``mask_value`` is shown).

        Returns:
            ``[B, G]``.
        """
        binned = torch.where(
            mask, torch.full_like(values, self.mask_value), z_to_bin(values, self.n_bins)
        )
        src, vals = gene_ids, binned
        if self.cls_id is not None:
            lead = torch.full_like(gene_ids[:, :1], self.cls_id)
            src = torch.cat([lead, gene_ids], 1)
            vals = torch.cat([torch.full_like(values[:, :1], self.pad_value), binned], 1)
        out = self.model(src, vals, src == self.pad_id)
        pred = out["mlm_output"] if isinstance(out, Mapping) else out
        return pred[:, 1:] if self.cls_id is not None else pred

    def forward(self, gene_ids: Tensor, values: Tensor, mask: Tensor) -> Tensor:
        """Same as :meth:`predict`."""
        return self.predict(gene_ids, values, mask)

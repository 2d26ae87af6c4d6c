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
  (-1) and a ``<cls>`` token (value 0, as scGPT's ``tokenize_batch`` inserts it) leads every
  cell;
* published checkpoints were trained with flash attention: their attention weights are named
  ``Wqkv.*``, which the PyTorch attention of ``use_fast_transformer=False`` calls
  ``in_proj_*`` (scGPT's ``load_pretrained`` renames them; so does :meth:`from_checkpoint`);
* ``args.json`` options passed to the constructor when present: ``explicit_zero_prob``,
  ``use_batch_labels`` (+ ``num_batch_labels``; every probe cell gets ``batch_label``),
  ``DSBN`` / ``domain_spec_batchnorm``, ``pre_norm``, ``n_layers_cls``; ``model_kwargs=``
  overrides any. With ``explicit_zero_prob`` the prediction is scGPT's expected value
  ``mlm_output * (1 - mlm_zero_probs)``.

Our probes set values in normalised (z-score) units. ``binning="phi"`` (default) maps them
onto scGPT's bin scale monotonically and differentiably with :func:`z_to_bin` (``(n_bins - 1)
* Phi(z)``, clipped to [1, n_bins - 1]: a quantile-binned non-zero value is uniform on its
bins, as ``Phi(z)`` of a z-score is; bin 0, scGPT's "not expressed", is never produced), so
Gradient Trajectory works with scGPT's continuous value encoder. ``binning="per_cell"`` bins
each probe cell's visible values as scGPT bins a cell (quantiles of that cell, all values
counted as expressed): scGPT's own input, but an order only, so no gradient (VVP, and VVP on
a virtual cell whose other genes share one baseline sees only "above" or "below" them). The
``category`` encoder has no gradient in the value either. Outputs stay in bin units.

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

__all__ = ["ScGPTAdapter", "bin_expression", "flash_to_torch_names", "z_to_bin"]

REQUIRED_ARGS = ("embsize", "nheads", "d_hid", "nlayers")
#: ``args.json`` key -> ``TransformerModel`` argument, passed when the key is present.
OPTIONAL_ARGS = {
    "explicit_zero_prob": "explicit_zero_prob",
    "use_batch_labels": "use_batch_labels",
    "num_batch_labels": "num_batch_labels",
    "DSBN": "domain_spec_batchnorm",
    "domain_spec_batchnorm": "domain_spec_batchnorm",
    "pre_norm": "pre_norm",
    "n_layers_cls": "nlayers_cls",
    "cell_emb_style": "cell_emb_style",
}


def flash_to_torch_names(state: Mapping[str, Tensor]) -> dict[str, Tensor]:
    """A published (flash-attention) scGPT ``state_dict`` renamed for PyTorch attention.

    Args:
        state: ``best_model.pt``'s tensors.

    Returns:
        The same tensors, ``Wqkv.`` -> ``in_proj_`` in every key (as scGPT's
        ``load_pretrained`` does when ``use_fast_transformer`` is off).
    """
    return {k.replace("Wqkv.", "in_proj_"): v for k, v in state.items()}


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
        pad_token, pad_value: ``args.json``'s.
        append_cls: prepend ``<cls>`` (scGPT's pretraining does) with value ``cls_value``.
        cls_value: the value at ``<cls>`` (0, scGPT's ``tokenize_batch``).
        binning: ``"phi"`` (differentiable, :func:`z_to_bin`) or ``"per_cell"`` (scGPT's
            per-cell quantile bins of the visible values; VVP only).
        batch_label: the batch label every probe cell carries when the model was trained
            with ``use_batch_labels`` (None: no ``batch_labels`` passed).

    Raises:
        ValueError: the model's forward lacks ``src``, ``values`` or
            ``src_key_padding_mask``, the vocabulary lacks ``pad_token``, or an unknown
            ``binning``.
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
        cls_value: float = 0.0,
        binning: str = "phi",
        batch_label: int | None = None,
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
        if binning not in ("phi", "per_cell"):
            raise ValueError(f"binning must be 'phi' or 'per_cell', got {binning!r}")
        self.model, self.n_bins = model, int(n_bins)
        self.genes_vocab = dict(vocab)
        self.mask_value, self.pad_value = float(mask_value), float(pad_value)
        self.cls_id = vocab.get("<cls>") if append_cls else None
        self.pad_id = int(vocab[pad_token])
        self.cls_value, self.binning, self.batch_label = float(cls_value), binning, batch_label
        #: False for the ``category`` value encoder or per-cell binning (VVP only).
        self.differentiable = binning == "phi"

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
        model_kwargs: Mapping[str, Any] | None = None,
        binning: str = "phi",
        batch_label: int | None = 0,
    ) -> ScGPTAdapter:
        """Load scGPT's ``best_model.pt`` + ``args.json`` + ``vocab.json``.

        Args:
            folder: the checkpoint folder.
            model_class: the ``TransformerModel`` class (default: ``scgpt.model``'s).
            device: where to put it.
            strict: ``load_state_dict``'s strictness (after the ``Wqkv`` renaming).
            model_kwargs: constructor arguments overriding those read from ``args.json``
                (e.g. ``explicit_zero_prob=True`` when the training script set it in code).
            binning: see :class:`ScGPTAdapter`.
            batch_label: the label probe cells carry when the model uses batch labels.

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
        kwargs |= {arg: args[key] for key, arg in OPTIONAL_ARGS.items() if key in args}
        kwargs |= dict(model_kwargs or {})
        accepted = inspect.signature(model_class.__init__).parameters
        model = model_class(**{k: v for k, v in kwargs.items() if k in accepted})
        state = torch.load(weights, map_location="cpu", weights_only=True)
        model.load_state_dict(flash_to_torch_names(state), strict=strict)
        adapter = cls(
            model.to(device).eval(),
            vocab,
            n_bins=args.get("n_bins", 51),
            mask_value=args.get("mask_value", -1),
            pad_token=args.get("pad_token", "<pad>"),
            pad_value=args.get("pad_value", -2),
            binning=binning,
            batch_label=batch_label if kwargs.get("use_batch_labels") else None,
        )
        adapter.differentiable = adapter.differentiable and style != "category"
        return adapter

    def _bins(self, values: Tensor, mask: Tensor) -> Tensor:
        """Probe values on scGPT's bin scale (hidden genes at ``mask_value``)."""
        if self.binning == "phi":
            binned = z_to_bin(values, self.n_bins)
        else:
            v = values.detach().cpu().double().numpy()
            hidden = mask.cpu().numpy()
            shown = np.where(hidden, np.nan, v)
            low = np.nanmin(np.where(hidden.all(1, keepdims=True), 0.0, shown), axis=1)
            shifted = np.where(hidden, 0.0, v - low[:, None] + 1.0)  # all visible "expressed"
            binned = torch.from_numpy(bin_expression(shifted, self.n_bins)).to(values)
        return torch.where(mask, torch.full_like(values, self.mask_value), binned)

    def predict(self, gene_ids: Tensor, values: Tensor, mask: Tensor) -> Tensor:
        """scGPT's ``mlm_output`` for each gene, ``[B, G]`` (bin units).

        Args:
            gene_ids: token ids ``[B, G]`` (from :attr:`vocab`).
            values: normalised values ``[B, G]`` (mapped by :func:`z_to_bin`).
            mask: True where the value is hidden (``mask_value`` is shown).

        Returns:
            ``[B, G]``.
        """
        binned = self._bins(values, mask)
        src, vals = gene_ids, binned
        if self.cls_id is not None:
            lead = torch.full_like(gene_ids[:, :1], self.cls_id)
            src = torch.cat([lead, gene_ids], 1)
            vals = torch.cat([torch.full_like(values[:, :1], self.cls_value), binned], 1)
        extra = {}
        if self.batch_label is not None:
            extra["batch_labels"] = torch.full_like(gene_ids[:, 0], int(self.batch_label))
        out = self.model(src, vals, src == self.pad_id, **extra)
        pred = out["mlm_output"] if isinstance(out, Mapping) else out
        if isinstance(out, Mapping) and "mlm_zero_probs" in out:
            pred = pred * (1 - out["mlm_zero_probs"])
        return pred[:, 1:] if self.cls_id is not None else pred

    def forward(self, gene_ids: Tensor, values: Tensor, mask: Tensor) -> Tensor:
        """Same as :meth:`predict`."""
        return self.predict(gene_ids, values, mask)

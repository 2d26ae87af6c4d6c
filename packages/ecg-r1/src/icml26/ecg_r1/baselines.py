"""Baselines that need no language model.

* ``rules``: the feature-threshold rule system (:func:`~labels.labels_from_features`) on the
  features our delineation measures (:func:`~delineate.measure_features`); its text is the
  protocol filled with those measurements. On simulated data whose labels *are* these rules
  on the true features, it is an upper reference for diagnosis, short of perfect only by the
  delineation's errors.
* ``signal_cnn``: the pretrained 1-D CNN signal encoder's multi-label head; its text is the
  protocol filled with its feature head's predictions and concluding with the label head's set.

Both read the signal only, so they have conditions ``both`` and ``signal_only`` (the same
prediction) and no ``image_only``.
"""

from __future__ import annotations

import re

import numpy as np
import torch

from icml26.ecg_r1.data import decode_features
from icml26.ecg_r1.delineate import DelineationError, measure_features
from icml26.ecg_r1.labels import LABELS, Features
from icml26.ecg_r1.protocol import protocol_answer

__all__ = ["rules_interpretations", "signal_cnn_interpretations", "with_answer"]


def with_answer(text: str, labels: frozenset[str] | set[str]) -> str:
    """``text`` with its ``<answer>`` block replaced by ``labels``."""
    return re.sub(
        r"<answer>[^<]*</answer>", "<answer>" + ", ".join(sorted(labels)) + "</answer>", text
    )


def rules_interpretations(raw: np.ndarray, fs: float) -> tuple[list[str], list[Features | None]]:
    """Protocol texts from delineated features (an empty interpretation where delineation
    fails), and the measured features."""
    texts: list[str] = []
    feats: list[Features | None] = []
    for rec in raw:
        try:
            f = measure_features(rec, fs)
        except DelineationError:
            texts.append("")
            feats.append(None)
            continue
        texts.append(protocol_answer(f))
        feats.append(f)
    return texts, feats


@torch.no_grad()
def signal_cnn_interpretations(encoder: torch.nn.Module, signals: np.ndarray) -> list[str]:
    out = encoder(torch.as_tensor(signals))
    probs = torch.sigmoid(out.label_logits).cpu().numpy()
    feats = decode_features(out.features.cpu().numpy())
    return [
        with_answer(
            protocol_answer(f), {lab for lab, p in zip(LABELS, row, strict=True) if p > 0.5}
        )
        for f, row in zip(feats, probs, strict=True)
    ]

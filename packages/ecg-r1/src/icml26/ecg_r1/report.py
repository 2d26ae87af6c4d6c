"""A user's 12-lead record in, a protocol report out.

:func:`interpret_record` loads a WFDB record or a CSV file (:func:`~records.load_record`,
which rejects wrong lead counts, unknown sampling rates and NaN samples with a
:class:`~records.RecordError`), takes its first 10 s resampled to 200 Hz (padded by the edge
value when shorter), draws it as an image, encodes both with the frozen encoders, and asks
a saved :class:`~model.ECGR1ForCausalLM` (a ``save_pretrained`` folder) for its
interpretation in each condition, beside the features our delineator measures.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from icml26.ecg_r1.data import to_model_signal
from icml26.ecg_r1.delineate import DelineationError, measure_features
from icml26.ecg_r1.model import CONDITIONS, EncodedBank
from icml26.ecg_r1.protocol import parse_interpretation
from icml26.ecg_r1.records import load_record
from icml26.ecg_r1.render import ImageRasteriser

__all__ = ["interpret_record", "resample_10s"]

_FS = 200.0


def resample_10s(x: np.ndarray, fs: float) -> np.ndarray:
    """The first 10 s of ``x`` (12, T) at ``fs`` Hz, linearly resampled to 200 Hz (12, 2000);
    a shorter record is padded with its last value."""
    n = round(10 * fs)
    if x.shape[1] < n:
        x = np.pad(x, ((0, 0), (0, n - x.shape[1])), mode="edge")
    t_old = np.arange(n) / fs
    t_new = np.arange(int(10 * _FS)) / _FS
    return np.stack([np.interp(t_new, t_old, lead[:n]) for lead in x]).astype(np.float32)


def interpret_record(
    model_dir: str | Path,
    record: str | Path,
    encoders: tuple[torch.nn.Module, torch.nn.Module],
    *,
    fs: float | None = None,
    max_new_tokens: int = 256,
) -> dict[str, Any]:
    """The protocol report of one record.

    Args:
        model_dir: a folder written by ``save_pretrained`` (model and tokenizer).
        record: a WFDB record path without extension, or a ``.csv`` file (one column per
            lead, a header row with the lead names; needs ``fs``).
        encoders: the frozen signal and image encoders the model was trained with.
        fs: the CSV's sampling rate in Hz (a WFDB header carries its own).
        max_new_tokens: the generation cap.

    Returns:
        ``{"record", "interpretation": {condition: text}, "labels": {condition: [...]},
        "measured_features": {...} or None, "delineation_error": str or None}``.

    Raises:
        RecordError: a bad record (the message names the problem).
        FileNotFoundError: no model folder.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = Path(model_dir)
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"no saved model (config.json) in {folder}")
    x, rate = load_record(record, fs)
    x200 = resample_10s(x, rate)
    image = (ImageRasteriser(_FS)(x200[None]) * 255).astype(np.uint8)
    se, ie = encoders
    device = str(next(se.parameters()).device)
    bank = EncodedBank.build(se, ie, to_model_signal(x200[None], _FS), image, device=device)
    model = AutoModelForCausalLM.from_pretrained(folder).to(device).use_bank(bank)
    tok = AutoTokenizer.from_pretrained(folder)
    texts = {
        c: model.interpret(tok, [0], [layout], max_new_tokens=max_new_tokens)[0]
        for c, layout in CONDITIONS.items()
    }
    try:
        feats, err = measure_features(x200, _FS).as_dict(), None
    except DelineationError as e:
        feats, err = None, str(e)
    return {
        "record": str(record),
        "interpretation": texts,
        "labels": {c: sorted(parse_interpretation(t).labels) for c, t in texts.items()},
        "measured_features": feats,
        "delineation_error": err,
    }

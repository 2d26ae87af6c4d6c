"""A user's 12-lead record in, a protocol report out.

:func:`interpret_record` loads a WFDB record or a CSV file (:func:`~records.load_record`,
which rejects wrong lead counts, unknown sampling rates and NaN samples with a
:class:`~records.RecordError`), takes its first 10 s resampled to 200 Hz, draws it as an image, encodes both with the frozen encoders, and asks
a saved :class:`~model.ECGR1ForCausalLM` (a :func:`~methods.save_policy` folder, with its encoders in ``encoders.safetensors``) for its
interpretation in each condition, beside the features our delineator measures. A record
shorter than 10 s (at least 3 s) is padded with its last value for the model's fixed 10 s
input, and the report says by how much (``padded_s``); the delineator measures the real
samples only, so padding never changes the measured features.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from icml26.ecg_r1.data import to_model_signal
from icml26.ecg_r1.delineate import DelineationError, measure_features
from icml26.ecg_r1.encoders import load_encoders
from icml26.ecg_r1.model import CONDITIONS, EncodedBank
from icml26.ecg_r1.protocol import parse_interpretation
from icml26.ecg_r1.records import load_record
from icml26.ecg_r1.render import ImageRasteriser

__all__ = ["interpret_record", "record_features", "resample_10s"]

_FS = 200.0


def resample_10s(x: np.ndarray, fs: float) -> tuple[np.ndarray, float]:
    """The first 10 s of ``x`` (12, T) at ``fs`` Hz, linearly resampled to 200 Hz (12, 2000),
    and the seconds of padding: a shorter record is padded with its last value (the model's
    input is a fixed 10 s window); callers must not measure features on the padding."""
    n = round(10 * fs)
    padded_s = max(0.0, (n - x.shape[1]) / fs)
    if x.shape[1] < n:
        x = np.pad(x, ((0, 0), (0, n - x.shape[1])), mode="edge")
    t_old = np.arange(n) / fs
    t_new = np.arange(int(10 * _FS)) / _FS
    x200 = np.stack([np.interp(t_new, t_old, lead[:n]) for lead in x]).astype(np.float32)
    return x200, padded_s


def record_features(x200: np.ndarray, padded_s: float) -> dict[str, Any]:
    """The delineator's features of the real samples of a :func:`resample_10s` window (the
    padding cut off), or its error; with the padding and real duration in seconds.

    Args:
        x200: (12, 2000) mV at 200 Hz, as :func:`resample_10s` returns it.
        padded_s: the seconds of padding at its end.

    Returns:
        ``{"measured_features": {...} or None, "delineation_error": str or None,
        "padded_s": float, "duration_s": float}``; the error names the real duration when
        the delineation fails on a short record.
    """
    real = x200[:, : x200.shape[1] - round(padded_s * _FS)]
    duration = real.shape[1] / _FS
    try:
        feats, err = measure_features(real, _FS).as_dict(), None
    except DelineationError as e:
        feats, err = None, f"{e} (on the record's {duration:.1f} s of real samples)"
    return {
        "measured_features": feats,
        "delineation_error": err,
        "padded_s": float(padded_s),
        "duration_s": float(duration),
    }


def interpret_record(
    model_dir: str | Path,
    record: str | Path,
    encoders: tuple[torch.nn.Module, torch.nn.Module] | None = None,
    *,
    fs: float | None = None,
    max_new_tokens: int = 256,
) -> dict[str, Any]:
    """The protocol report of one record.

    Args:
        model_dir: a folder written by :func:`~icml26.ecg_r1.methods.save_policy` (or, for
            a model without LoRA adapters, ``save_pretrained`` of model and tokenizer).
        record: a WFDB record path without extension, or a ``.csv`` file (one column per
            lead, a header row with the lead names; needs ``fs``).
        encoders: the frozen signal and image encoders the model was trained with; ``None``
            loads them from the folder's ``encoders.safetensors`` (written by
            :func:`~icml26.ecg_r1.encoders.save_encoders`, as the study does).
        fs: the CSV's sampling rate in Hz (a WFDB header carries its own).
        max_new_tokens: the generation cap.

    Returns:
        ``{"record", "interpretation": {condition: text}, "labels": {condition: [...]},
        "measured_features": {...} or None, "delineation_error": str or None,
        "padded_s", "duration_s"}``: a record shorter than 10 s is padded for the model
        (``padded_s`` seconds, never silently) and delineated on its real samples only.

    Raises:
        RecordError: a bad record (the message names the problem).
        FileNotFoundError: no model folder, a folder of LoRA adapters alone, or
            (``encoders=None``) no encoders in it.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = Path(model_dir)
    if not (folder / "config.json").is_file():
        if (folder / "adapter_config.json").is_file():
            raise FileNotFoundError(
                f"{folder} holds LoRA adapters only (a peft model's save_pretrained): no "
                "config.json and no modality projectors; save the policy with "
                "save_policy(folder, model, tokenizer, encoders), which merges the adapters"
            )
        raise FileNotFoundError(f"no saved model (config.json) in {folder}")
    x, rate = load_record(record, fs)
    x200, padded_s = resample_10s(x, rate)
    image = (ImageRasteriser(_FS)(x200[None]) * 255).astype(np.uint8)
    se, ie = encoders if encoders is not None else load_encoders(folder)
    device = str(next(se.parameters()).device)
    bank = EncodedBank.build(se, ie, to_model_signal(x200[None], _FS), image, device=device)
    model = AutoModelForCausalLM.from_pretrained(folder).to(device).use_bank(bank)
    tok = AutoTokenizer.from_pretrained(folder)
    texts = {
        c: model.interpret(tok, [0], [layout], max_new_tokens=max_new_tokens)[0]
        for c, layout in CONDITIONS.items()
    }
    return {
        "record": str(record),
        "interpretation": texts,
        "labels": {c: sorted(parse_interpretation(t).labels) for c, t in texts.items()},
    } | record_features(x200, padded_s)

"""A user's records: WFDB (``wfdb.rdrecord``) or CSV (one column per lead, a header row with
the lead names), checked before use."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from icml26.ecg_r1.labels import LEADS

__all__ = ["RecordError", "load_record", "validate_record"]

_ALIASES = {name.lower(): name for name in LEADS} | {"avr": "aVR", "avl": "aVL", "avf": "aVF"}


class RecordError(ValueError):
    """A record that cannot be interpreted: wrong leads, bad samples, unknown rate."""


def validate_record(
    signals: np.ndarray, fs: float | None, leads: list[str] | None = None
) -> tuple[np.ndarray, float]:
    """(12, T) float signals in the standard lead order and the sampling rate, or a
    :class:`RecordError` naming what is wrong."""
    x = np.asarray(signals, dtype=float)
    if x.ndim != 2:
        raise RecordError(f"a record must be 2-D (leads x samples), got shape {x.shape}")
    if leads is not None:
        names = [_ALIASES.get(str(n).strip().lower()) for n in leads]
        missing = [lead for lead in LEADS if lead not in names]
        if missing:
            raise RecordError(
                f"the record has {len(leads)} leads ({', '.join(map(str, leads))}); missing {', '.join(missing)}"
            )
        if x.shape[0] != len(leads) and x.shape[1] == len(leads):
            x = x.T
        x = x[[names.index(lead) for lead in LEADS]]
    if x.shape[0] != 12:
        raise RecordError(f"a 12-lead record is needed, got {x.shape[0]} leads")
    if fs is None or not np.isfinite(fs) or fs <= 0:
        raise RecordError(f"unknown sampling rate {fs!r}: give the rate in Hz")
    if not (50 <= fs <= 10_000):
        raise RecordError(f"sampling rate {fs} Hz is outside 50-10000 Hz")
    bad = ~np.isfinite(x)
    if bad.any():
        lead, i = np.argwhere(bad)[0]
        raise RecordError(
            f"{int(bad.sum())} NaN or infinite samples (first in lead {LEADS[lead]} at sample {i})"
        )
    if x.shape[1] < 3 * fs:
        raise RecordError(f"the record lasts {x.shape[1] / fs:.1f} s; at least 3 s are needed")
    return x, float(fs)


def load_record(path: str | Path, fs: float | None = None) -> tuple[np.ndarray, float]:
    """A WFDB record or a CSV file, validated by :func:`validate_record`.

    Args:
        path: a WFDB record path without extension (physical units; uV converted to mV), or
            a ``.csv`` file with one column per lead and a header row of lead names.
        fs: the CSV's sampling rate in Hz (a WFDB header carries its own).

    Returns:
        ``(signals, fs)``: (12, T) float mV in the standard lead order, and the rate.

    Raises:
        RecordError: a missing file, missing leads, NaN samples, an unknown rate, or under
            3 s of signal (the message names which).
    """
    p = Path(path)
    if p.suffix.lower() == ".csv":
        if not p.is_file():
            raise RecordError(f"no CSV file at {p}")
        with open(p, encoding="utf-8") as fh:
            header = fh.readline().strip().split(",")
        data = np.genfromtxt(p, delimiter=",", skip_header=1)
        return validate_record(data.T, fs, header)
    import wfdb

    if not p.with_suffix(".hea").is_file():
        raise RecordError(f"no WFDB header at {p.with_suffix('.hea')}")
    rec = wfdb.rdrecord(str(p))
    if rec.p_signal is None:
        raise RecordError(f"the WFDB record {p} has no physical signal")
    units = [u.lower() for u in (rec.units or [])]
    scale = np.array([1000.0 if u == "uv" else 1.0 for u in units]) if units else 1.0
    sig = rec.p_signal.T / np.asarray(scale).reshape(-1, 1) if units else rec.p_signal.T
    return validate_record(sig, rec.fs, list(rec.sig_name))

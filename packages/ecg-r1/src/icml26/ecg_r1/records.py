"""A user's records: WFDB (``wfdb.rdrecord``) or CSV (one column per lead, a header row with
the lead names), checked before use."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from icml26.ecg_r1.labels import LEADS

__all__ = ["MAX_SPAN_MV", "RecordError", "load_record", "validate_record"]

_ALIASES = {name.lower(): name for name in LEADS} | {"avr": "aVR", "avl": "aVL", "avf": "aVF"}


#: The largest peak-to-peak span (mV) a lead may have: a surface ECG spans a few mV, so a
#: record above it is in other units (uV) or broken.
MAX_SPAN_MV = 50.0
#: WFDB units accepted -> divisor to mV.
_UNITS = {"mv": 1.0, "uv": 1000.0}


class RecordError(ValueError):
    """A record that cannot be interpreted: wrong leads, bad samples, unknown rate."""


def validate_record(
    signals: np.ndarray, fs: float | None, leads: list[str] | None = None
) -> tuple[np.ndarray, float]:
    """(12, T) float signals in the standard lead order and the sampling rate, or a
    :class:`RecordError` naming what is wrong.

    Args:
        signals: (leads, T) or, with ``leads`` given, (T, leads) samples in mV.
        fs: the sampling rate in Hz.
        leads: the lead names in the order of ``signals``; ``None``: the standard order.

    Returns:
        ``(signals, fs)``: (12, T) float mV in the standard lead order, and the rate.

    Raises:
        RecordError: missing leads, an unknown or implausible rate, NaN or infinite samples,
            under 3 s, or a lead spanning more than :data:`MAX_SPAN_MV` (samples not in mV).
    """
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
    span = x.max(axis=1) - x.min(axis=1)
    if span.max() > MAX_SPAN_MV:
        lead = int(span.argmax())
        raise RecordError(
            f"lead {LEADS[lead]} spans {span[lead]:.0f} mV peak to peak; a surface ECG spans a "
            f"few mV (at most {MAX_SPAN_MV:.0f} accepted): the samples must be in mV (a record "
            "in uV is 1000x too large: divide it by 1000)"
        )
    return x, float(fs)


def _wfdb_rate(header: Path) -> float | None:
    """The sampling rate on a WFDB header's record line, or ``None`` where the line has no
    rate field (``wfdb.rdrecord`` would read such a record at 250 Hz without a word)."""
    for line in header.read_text(encoding="utf-8", errors="replace").splitlines():
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) < 3:  # record name, signal count: nothing more
            return None
        try:
            return float(fields[2].split("/")[0].split("(")[0])
        except ValueError as e:
            raise RecordError(f"unreadable sampling rate {fields[2]!r} in {header}") from e
    raise RecordError(f"the WFDB header {header} has no record line")


def _to_mv(units: list[str], where: Path) -> np.ndarray:
    """Per-signal factors from the WFDB units to mV (only mV and uV are accepted)."""
    scale = []
    for u in units:
        key = u.strip().lower().replace("\u00b5", "u").replace("\u03bc", "u")
        if key not in _UNITS:
            raise RecordError(
                f"the WFDB record {where} has a signal in {u!r}; ECG signals in mV or uV are "
                "accepted"
            )
        scale.append(_UNITS[key])
    return np.array(scale)


def load_record(path: str | Path, fs: float | None = None) -> tuple[np.ndarray, float]:
    """A WFDB record or a CSV file, validated by :func:`validate_record`.

    Args:
        path: a WFDB record path without extension (physical units; uV converted to mV), or
            a ``.csv`` file with one column per lead and a header row of lead names.
        fs: the CSV's sampling rate in Hz (a WFDB header carries its own).

    Returns:
        ``(signals, fs)``: (12, T) float mV in the standard lead order, and the rate.

    Raises:
        RecordError: a missing file, missing leads, NaN samples, an unknown rate (a WFDB
            header without one too), units other than mV / uV, samples not in mV, or under
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

    hea = p.with_suffix(".hea")
    if not hea.is_file():
        raise RecordError(f"no WFDB header at {hea}")
    rate = _wfdb_rate(hea)
    if rate is None:
        raise RecordError(
            f"unknown sampling rate: the WFDB header {hea} gives none on its record line "
            "(wfdb would assume 250 Hz); add the rate in Hz after the signal count"
        )
    rec = wfdb.rdrecord(str(p))
    if rec.p_signal is None:
        raise RecordError(f"the WFDB record {p} has no physical signal")
    sig = rec.p_signal.T
    if rec.units:
        sig = sig / _to_mv(list(rec.units), p).reshape(-1, 1)
    return validate_record(sig, rate, list(rec.sig_name))

"""Feature measurement by delineation (neurokit2), and the real-signal check on pyhrv's ECG.

:func:`measure_features` reads :class:`~labels.Features` off a 12-lead record:

1. the lead with the widest amplitude range cleaned and its R peaks found (``nk.ecg_clean``, ``nk.ecg_peaks``): HR from the mean
   RR interval, the RR coefficient of variation;
2. P onset and T offset per beat by the discrete-wavelet delineator
   (``nk.ecg_delineate(method="dwt")``), their medians relative to the R peak;
3. a median beat of every lead (aligned on the R peaks, baseline the PR segment), whose
   spatial velocity (sum over leads of ``|dV/dt|``) gives the global QRS onset and offset
   (20% of its peak): QRS = offset - onset, PR = onset - P onset, QT = T offset - onset,
   QTc Bazett's; on it the
   frontal axis (net QRS area in I and aVF), the ST level at J + 40 ms, the limb-lead QRS
   peak-to-peak voltage, the terminal QRS polarity in V1 and the P-wave amplitude (P present
   when it is above 0.05 mV in lead II and the rhythm is regular) are measured.

:func:`real_ecg_check` runs step 1 on the real single-lead ECG that ships with ``pyhrv``
(``files/SampleECG.txt``: BITalino, 1000 Hz, 22 s). It has no annotated beats, so the
reference is a second, independent detector (Pan and Tompkins 1985, as implemented in
neurokit2): the figure says how far two detectors agree on a real, noisy signal, not an
error against ground truth.
"""

from __future__ import annotations

import importlib.util
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from icml26.ecg_r1.labels import LEADS, Features

__all__ = [
    "DelineationError",
    "RealCheck",
    "load_pyhrv_sample",
    "measure_features",
    "real_ecg_check",
]


class DelineationError(ValueError):
    """A record on which too few beats could be found to measure its features."""


def _nk():  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import neurokit2 as nk
    return nk


def _median_ms(a: np.ndarray, b: np.ndarray, fs: float) -> float:
    ok = np.isfinite(a) & np.isfinite(b) & (b > a)
    if not ok.any():
        return float("nan")
    return float(np.median((b[ok] - a[ok]) / fs * 1000))


def measure_features(signals: np.ndarray, fs: float) -> Features:
    """The features of one record (see the module docstring for how each is measured).

    Args:
        signals: (12, T) mV in the standard lead order.
        fs: the sampling rate in Hz.

    Returns:
        :class:`Features` (HR, RR cv, P waves, PR, QRS, QT, QTc, axis, ST, voltage, V1).

    Raises:
        DelineationError: a flat record, or fewer than 3 beats found.
    """
    nk = _nk()
    x = np.asarray(signals, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spread = np.percentile(x, 99.5, axis=1) - np.percentile(x, 0.5, axis=1)
        lead = int(np.argmax(spread))
        if spread[lead] < 0.1:
            raise DelineationError(
                f"no QRS complexes: the widest lead ({LEADS[lead]}) spans {spread[lead]:.3f} mV (a flat record)"
            )
        centred = x[lead] - np.median(x[lead])
        polarity = 1.0 if centred.max() >= -centred.min() else -1.0  # R peaks point up
        ii = nk.ecg_clean(polarity * x[lead], sampling_rate=int(fs))
        _, info = nk.ecg_peaks(ii, sampling_rate=int(fs))
        r = np.asarray(info["ECG_R_Peaks"], dtype=int)
        if len(r) < 3:
            raise DelineationError(f"found {len(r)} R peaks in lead {LEADS[lead]}; need at least 3")
    rr = np.diff(r) / fs
    hr = 60.0 / rr.mean()
    rr_cv = float(rr.std() / rr.mean())

    # Median beat of every lead around the R peaks.
    pre, post = int(0.35 * fs), int(0.6 * fs)
    keep = r[(r - pre >= 0) & (r + post < x.shape[1])]
    if len(keep) < 2:
        raise DelineationError("fewer than 2 complete beats to average")
    beat = np.median(np.stack([x[:, k - pre : k + post] for k in keep]), axis=0)  # (12, L)
    # Global QRS onset/offset: where the spatial velocity (sum over leads of |dV/dt|) of the
    # median beat first/last exceeds 20% of its peak within 120 ms of the R peak.
    vel = np.abs(np.diff(beat, axis=1)).sum(axis=0)
    lo, hi = pre - int(0.12 * fs), pre + int(0.12 * fs)
    window = vel[lo:hi]
    above = np.flatnonzero(window > 0.2 * window.max())
    a, b = lo + int(above[0]), lo + int(above[-1]) + 2
    qrs = (b - a) / fs * 1000
    rr_min = float(np.min(rr))
    # T end: after the T peak of the spatial magnitude, where it falls to 10% of the peak
    # (magnitude measured against the PR-segment baseline).
    base0 = beat[:, max(a - int(0.02 * fs), 0) : a].mean(axis=1, keepdims=True)
    mag = np.sqrt(((beat - base0) ** 2).sum(axis=0))
    t_lo = b + int(0.06 * fs)
    t_hi = min(beat.shape[1] - 1, pre + int(min(0.6, 0.85 * rr_min) * fs))
    qt = float("nan")
    if t_hi > t_lo + 2:
        tp = t_lo + int(np.argmax(mag[t_lo:t_hi]))
        tail = np.flatnonzero(mag[tp:t_hi] < 0.1 * mag[tp])
        t_end = tp + (int(tail[0]) if len(tail) else t_hi - tp)
        qt = (t_end - a) / fs * 1000
    # P onset: lead II before the QRS (P waves point up in II), where it first exceeds 15% of
    # the P peak; searched no further back than the shortest RR allows.
    p_lo = max(0, a - int(min(0.35, 0.55 * rr_min) * fs))
    p_hi = a - int(0.03 * fs)
    lead_ii = beat[1] - base0[1]
    pr = float("nan")
    p_amp = 0.0
    if p_hi > p_lo + 2:
        pp = p_lo + int(np.argmax(lead_ii[p_lo:p_hi]))
        p_amp = float(lead_ii[pp])
        head = np.flatnonzero(lead_ii[p_lo : pp + 1] < 0.15 * p_amp)
        p_start = p_lo + (int(head[-1]) if len(head) else 0)
        pr = (a - p_start) / fs * 1000
    base = beat[:, max(a - int(0.02 * fs), 0) : a].mean(axis=1, keepdims=True)
    beat = beat - base
    seg = beat[:, a:b]
    area = seg.mean(axis=1)
    axis = float(np.rad2deg(np.arctan2(area[LEADS.index("aVF")] / (np.sqrt(3) / 2), area[0])))
    limb = seg[:6]
    qrs_amp = float((limb.max(axis=1) - limb.min(axis=1)).max())
    st_i = min(b + int(0.04 * fs), beat.shape[1] - 1)
    st = beat[:, st_i]
    v1 = seg[LEADS.index("V1"), int(0.6 * seg.shape[1]) :].mean()
    p_present = bool(p_amp > 0.05 and rr_cv <= 0.10)
    if not np.isfinite(qrs):
        qrs = float((b - a) / fs * 1000)
    if not np.isfinite(qt):
        qt = 400.0
    return Features(
        hr=float(hr),
        rr_cv=rr_cv,
        p_present=p_present,
        pr=float(pr) if p_present and np.isfinite(pr) else 0.0,
        qrs=float(qrs),
        qt=float(qt),
        qtc=float(qt / np.sqrt(rr.mean())),
        axis=axis,
        st_max=float(st.max()),
        st_min=float(st.min()),
        qrs_amp=qrs_amp,
        v1_terminal=1 if v1 >= 0 else -1,
    )


def load_pyhrv_sample() -> tuple[np.ndarray, float]:
    """pyhrv's real ECG (``files/SampleECG.txt``) in mV and its sampling rate (1000 Hz).

    The file is read from the installed ``pyhrv`` package without importing it (its import
    pulls in biosppy, whose current release misses a dependency). The raw 10-bit BITalino
    counts are converted with the sensor's transfer function,
    ``ECG(mV) = (ADC / 2^10 - 0.5) * 3.3 V / 1100 * 1000``.
    """
    spec = importlib.util.find_spec("pyhrv")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("pyhrv is not installed: pip install pyhrv")
    path = Path(next(iter(spec.submodule_search_locations))) / "files" / "SampleECG.txt"
    raw = np.loadtxt(path, comments="#")[:, -1]
    return ((raw / 1024 - 0.5) * 3.3) / 1100 * 1000, 1000.0


@dataclass(frozen=True)
class RealCheck:
    """Our lead-II pipeline against a second detector on the real pyhrv ECG."""

    hr_ours: float
    hr_reference: float
    rr_cv_ours: float
    rr_cv_reference: float
    beats_ours: int
    beats_reference: int
    matched_frac: float
    reference: str = "Pan-Tompkins (1985) R peaks, neurokit2 implementation"

    @property
    def hr_error(self) -> float:
        return abs(self.hr_ours - self.hr_reference)

    @property
    def rr_cv_error(self) -> float:
        return abs(self.rr_cv_ours - self.rr_cv_reference)


def real_ecg_check(tolerance_s: float = 0.05) -> RealCheck:
    """HR and RR variability of pyhrv's ECG by our detector and by the reference one, and the
    share of reference beats we found within ``tolerance_s``."""
    nk = _nk()
    x, fs = load_pyhrv_sample()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = np.asarray(
            nk.ecg_peaks(nk.ecg_clean(x, sampling_rate=int(fs)), sampling_rate=int(fs))[1][
                "ECG_R_Peaks"
            ]
        )
        clean_pt = nk.ecg_clean(x, sampling_rate=int(fs), method="pantompkins1985")
        ref = np.asarray(
            nk.ecg_peaks(clean_pt, sampling_rate=int(fs), method="pantompkins1985")[1][
                "ECG_R_Peaks"
            ]
        )
    matched = np.mean([np.min(np.abs(ours - k)) <= tolerance_s * fs for k in ref])
    rr_o, rr_r = np.diff(ours) / fs, np.diff(ref) / fs
    return RealCheck(
        hr_ours=float(60 / rr_o.mean()),
        hr_reference=float(60 / rr_r.mean()),
        rr_cv_ours=float(rr_o.std() / rr_o.mean()),
        rr_cv_reference=float(rr_r.std() / rr_r.mean()),
        beats_ours=len(ours),
        beats_reference=len(ref),
        matched_frac=float(matched),
    )

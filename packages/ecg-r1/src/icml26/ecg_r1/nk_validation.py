"""A validation subset simulated by neurokit2's ECGSYN (``ecg_simulate(method="multileads")``).

ECGSYN sets wave shapes by the angles ``ti``, heights ``ai`` and widths ``bi`` of its five
Gaussian attractors (P, Q, R, S, T), in radians of the cardiac cycle. Its 12 leads share
them (with fixed lead gains) and are each rescaled to [-0.4, 1.2] mV, so only rate and
interval parameters carry over; we vary the heart rate and the width of the QRS attractors.
The nominal values our delineation is compared with:

* HR: the requested ``heart_rate`` (``heart_rate_std`` 0.5 bpm);
* QRS: from the Q and S attractors, ``(theta_S + 2.5 b_S - theta_Q + 2.5 b_Q) / (2 pi) * RR``
  with ECGSYN's own heart-rate scaling of ``ti`` and ``bi`` (an approximation: the ODE's
  response widens a wave a little beyond its attractor).

About 0.7 s per 10-s record at 200 Hz, so a run uses a handful.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from icml26.ecg_r1.delineate import measure_features
from icml26.ecg_r1.labels import LEADS

__all__ = ["NKRecord", "simulate_neurokit", "validate_neurokit"]

_TI = np.array([-70.0, -15.0, 0.0, 15.0, 100.0])
_BI = np.array([0.25, 0.1, 0.1, 0.1, 0.4])


@dataclass(frozen=True)
class NKRecord:
    signals: np.ndarray  # (12, T) mV
    fs: float
    hr: float
    qrs_ms: float


def simulate_neurokit(
    hr: float, qrs_scale: float, *, fs: float = 200.0, duration: float = 10.0, seed: int = 0
) -> NKRecord:
    """One ECGSYN 12-lead record with heart rate ``hr`` and the Q/R/S widths scaled by
    ``qrs_scale`` (and the Q/S angles spread by it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import neurokit2 as nk

        ti, bi = _TI.copy(), _BI.copy()
        ti[[1, 3]] *= qrs_scale
        bi[1:4] *= qrs_scale
        # A whole number of seconds as an int: neurokit2 < 0.3 slices with duration * rate.
        secs: float = int(duration) if float(duration).is_integer() else duration
        df = nk.ecg_simulate(
            duration=secs,
            sampling_rate=int(fs),
            method="multileads",
            heart_rate=hr,
            heart_rate_std=0.5,
            noise=0.0,
            random_state=seed,
            ti=tuple(ti),
            bi=tuple(bi),
        )
    sig = np.stack([df[lead].to_numpy() for lead in LEADS]).astype(float)
    # ECGSYN's own scaling by the heart rate (hrfact = sqrt(HR / 60)).
    hrfact = np.sqrt(hr / 60)
    th = np.deg2rad(ti) * np.array([np.sqrt(hrfact), hrfact, 1, hrfact, np.sqrt(hrfact)])
    b = bi * hrfact
    rr = 60.0 / hr
    qrs = (th[3] + 2.5 * b[3] - th[1] + 2.5 * b[1]) / (2 * np.pi) * rr * 1000
    return NKRecord(sig, fs, hr, float(qrs))


def validate_neurokit(n: int, rng: np.random.Generator) -> dict[str, list[float]]:
    """Signed errors (measured - nominal) of HR and QRS on ``n`` ECGSYN records."""
    out: dict[str, list[float]] = {"hr": [], "qrs": []}
    for _ in range(n):
        rec = simulate_neurokit(
            float(rng.uniform(55, 110)),
            float(rng.uniform(0.8, 1.6)),
            seed=int(rng.integers(1 << 30)),
        )
        f = measure_features(rec.signals, rec.fs)
        out["hr"].append(f.hr - rec.hr)
        out["qrs"].append(f.qrs - rec.qrs_ms)
    return out

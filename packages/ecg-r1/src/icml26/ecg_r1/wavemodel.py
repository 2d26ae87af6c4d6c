"""A vectorised NumPy 12-lead ECG model with the clinical parameters of :mod:`labels`.

Why not neurokit2 for the corpus: its ``ecg_simulate(method="multileads")`` integrates the
ECGSYN ODE lead by lead (about 0.7 s per 10-s record at 200 Hz here), rescales every lead to
[-0.4, 1.2] mV (so voltage, axis and ST levels are lost) and fixes the lead gains. This model
writes every record as a sum of Gaussian waves, as ECGSYN does, but each wave is a *cardiac
dipole* (a 3-D vector, x leftward, y inferior, z anterior) projected on the 12 lead vectors:

    V_lead(t) = sum_beats k sum_waves w  <l_lead, a_w> exp(-(t - r_k - tau_w)^2 / (2 sigma_w^2))
                + ST_lead * window(t) + noise,

with I = x, II = (cos 60, sin 60), III = II - I, aVR = -(I + II)/2, aVL = (I - III)/2,
aVF = (II + III)/2 (so Einthoven's and Goldberger's relations hold exactly for the waves;
the ST shift is added lead by lead in its territory, which they do not constrain) and the
chest leads in the horizontal plane. The parameters are the clinical ones: RR series (HR, regular
or irregular), PR, QRS width (with the right or left bundle-branch block morphology in V1),
QT (from a target QTc), frontal axis (the QRS dipoles rotated so the net QRS area points
there), ST shift in a lead territory, QRS voltage. The true :class:`~labels.Features` are
measured on each record's clean single-beat template, so they are exactly what a perfect
delineator would read; :mod:`delineate` measures them from the noisy waveform.

Thousands of records per second on one core (``icml26 bench ecg-r1``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26.ecg_r1.labels import LEADS, Features, labels_from_features

__all__ = [
    "LEAD_VECTORS",
    "Corpus",
    "RecordParams",
    "sample_params",
    "simulate",
]

_S3 = np.sqrt(3.0) / 2


def _lead_vectors() -> np.ndarray:
    i = np.array([1.0, 0.0, 0.0])
    ii = np.array([0.5, _S3, 0.0])
    iii = ii - i
    avr, avl, avf = -(i + ii) / 2, (i - iii) / 2, (ii + iii) / 2
    chest = [np.deg2rad(a) for a in (115, 90, 75, 60, 30, 0)]  # V1..V6, x towards z
    v = [1.5 * np.array([np.cos(a), 0.0, np.sin(a)]) for a in chest]
    return np.stack([i, ii, iii, avr, avl, avf, *v])


#: (12, 3) lead vectors in the order of :data:`~labels.LEADS`.
LEAD_VECTORS = _lead_vectors()
_LIMB = slice(0, 6)
_TERRITORIES = {
    "inferior": ("II", "III", "aVF"),
    "anterior": ("V1", "V2", "V3", "V4"),
    "lateral": ("I", "aVL", "V5", "V6"),
}


@dataclass(frozen=True)
class RecordParams:
    """Clinical parameters of ``n`` records (arrays of length ``n``; times in seconds).

    ``bbb``: 0 none, 1 right, 2 left bundle-branch block. ``territory``: index into
    inferior/anterior/lateral for the ST shift ``st`` (mV).
    """

    af: np.ndarray
    hr: np.ndarray
    rr_cv: np.ndarray
    pr: np.ndarray
    qrs: np.ndarray
    qtc: np.ndarray
    axis: np.ndarray
    st: np.ndarray
    territory: np.ndarray
    qrs_amp: np.ndarray
    bbb: np.ndarray

    def __len__(self) -> int:
        return len(self.hr)


def sample_params(rng: np.random.Generator, n: int, *, abnormal: float = 1.0) -> RecordParams:
    """Draw ``n`` records' parameters: each finding on or off at its own rate (so labels
    co-occur), values kept clear of the thresholds by a margin (the truth is unambiguous at
    the stated tolerances). ``abnormal`` scales every finding's rate (0: all normal)."""
    u = lambda lo, hi: rng.uniform(lo, hi, n)  # noqa: E731
    on = lambda p: rng.random(n) < p * abnormal  # noqa: E731
    af = on(0.22)
    rate = rng.choice(3, n, p=[0.5, 0.25, 0.25]) if abnormal else np.zeros(n, int)
    hr = np.select([rate == 1, rate == 2], [u(42, 55), u(106, 145)], u(64, 96))
    hr = np.where(af, u(70, 140), hr)
    rr_cv = np.where(af, u(0.16, 0.30), u(0.0, 0.03))
    pr = np.where(on(0.25), u(0.225, 0.30), u(0.125, 0.185))
    bbb = np.where(on(0.3), rng.integers(1, 3, n), 0)
    qrs = np.where(bbb > 0, u(0.130, 0.165), u(0.075, 0.105))
    qtc = np.where(on(0.22), u(0.485, 0.54), u(0.37, 0.44))
    axis_kind = rng.choice(3, n, p=[1 - 0.3 * abnormal, 0.15 * abnormal, 0.15 * abnormal])
    axis = np.select([axis_kind == 1, axis_kind == 2], [u(-85, -45), u(105, 165)], u(-15, 75))
    st_kind = rng.choice(3, n, p=[1 - 0.3 * abnormal, 0.15 * abnormal, 0.15 * abnormal])
    st = np.select([st_kind == 1, st_kind == 2], [u(0.16, 0.35), u(-0.32, -0.16)], u(-0.03, 0.03))
    territory = rng.integers(0, 3, n)
    qrs_amp = np.where(on(0.15), u(0.25, 0.4), u(0.75, 2.0))
    return RecordParams(af, hr, rr_cv, pr, qrs, qtc, axis, st, territory, qrs_amp, bbb)


@dataclass(frozen=True)
class Corpus:
    """Simulated records: ``signals`` (n, 12, T) in mV at ``fs`` Hz, their true features and
    label sets, and the R-peak times (a list of arrays, seconds)."""

    signals: np.ndarray
    fs: float
    features: list[Features]
    labels: list[frozenset[str]]
    r_peaks: list[np.ndarray]

    def __len__(self) -> int:
        return len(self.features)


def _rot_z(vec: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rotate (n, 3) vectors in the frontal (x, y) plane by ``angle`` (n,) radians."""
    c, s = np.cos(angle), np.sin(angle)
    x, y, z = vec[:, 0], vec[:, 1], vec[:, 2]
    return np.stack([c * x - s * y, s * x + c * y, z], axis=1)


def _waves(p: RecordParams, qt: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(offset from QRS onset (n,), sigma (n,), dipole (n, 3)) of every wave."""
    n = len(p)
    w = p.qrs
    ones = np.ones(n)
    rbbb, lbbb = p.bbb == 1, p.bbb == 2

    def vec(x: float, y: float, z: float) -> np.ndarray:
        return np.tile([x, y, z], (n, 1)).astype(float)

    # QRS: septal q (absent in LBBB), main R, terminal S; RBBB adds a right-anterior R'
    # (positive terminal deflection in V1), LBBB a broad left-posterior activation.
    qrs = [
        (0.15 * w, 0.07 * w, vec(-0.25, 0.1, 0.45) * np.where(lbbb, 0.0, 1.0)[:, None]),
        (
            0.45 * w,
            np.where(lbbb, 0.16, 0.11) * w,
            np.where(lbbb[:, None], vec(1.0, 0.3, -0.8), vec(1.0, 0.5, -0.45)),
        ),
        (
            0.75 * w,
            0.08 * w,
            np.where(
                lbbb[:, None],
                vec(0.8, 0.1, -0.6) * 0.45,
                vec(-0.35, -0.35, -0.45) * np.where(rbbb, 0.5, 1.0)[:, None],
            ),
        ),
        (0.84 * w, 0.075 * w, vec(-0.45, 0.0, 0.9) * np.where(rbbb, 0.7, 0.0)[:, None]),
    ]
    # Rotate the QRS dipoles so the net frontal QRS area points at the target axis.
    net = sum(s[:, None] * v for _, s, v in qrs)
    rot = np.deg2rad(p.axis) - np.arctan2(net[:, 1], net[:, 0])
    qrs = [(o, s, _rot_z(v, rot)) for o, s, v in qrs]
    # Scale to the target limb-lead peak-to-peak voltage, measured on a fine template.
    grid = np.linspace(0, 1, 96)[None, :] * w[:, None]  # (n, 96) seconds from QRS onset
    shape = np.zeros((n, 6, grid.shape[1]))
    for o, s, v in qrs:
        g = np.exp(-((grid - o[:, None]) ** 2) / (2 * s[:, None] ** 2))
        shape += (v @ LEAD_VECTORS[_LIMB].T)[:, :, None] * g[:, None, :]
    p2p = (shape.max(axis=2) - shape.min(axis=2)).max(axis=1)
    gain = p.qrs_amp / p2p
    qrs = [(o, s, v * gain[:, None]) for o, s, v in qrs]
    net_dir = sum(s[:, None] * v for _, s, v in qrs)
    net_dir = net_dir / np.linalg.norm(net_dir, axis=1, keepdims=True)
    # T: concordant with the net QRS vector, discordant to it in bundle-branch block.
    sig_t = _T_WIDTH * qt
    t_amp = 0.28 * np.clip(p.qrs_amp, 0.3, 1.6) * np.where(p.bbb > 0, -1.0, 1.0)
    t = (qt - 2.5 * sig_t, sig_t, net_dir * t_amp[:, None])
    # P: towards the left-inferior, absent in AF.
    sig_p = 0.02 * ones
    pw = (-p.pr + 2.5 * sig_p, sig_p, vec(0.55, 0.8, 0.25) * (0.16 * ~p.af)[:, None])
    return [pw, *qrs, t]


def _rr_series(rng: np.random.Generator, p: RecordParams, duration: float) -> list[np.ndarray]:
    """R-peak times in [0, duration) per record (at least three beats)."""
    out = []
    for i in range(len(p)):
        mean = 60.0 / p.hr[i]
        k = int(duration / mean) + 4
        z = np.clip(rng.standard_normal(k), -2.5, 2.5)
        rr = mean * np.clip(1 + p.rr_cv[i] * z, 0.45, 2.0)
        r = rng.uniform(0.25, 0.25 + 0.8 * mean) + np.concatenate([[0.0], np.cumsum(rr)])
        out.append(r[r < duration - 0.45])
    return out


def simulate(
    params: RecordParams,
    rng: np.random.Generator,
    *,
    fs: float = 200.0,
    duration: float = 10.0,
    noise_mv: float = 0.015,
    wander_mv: float = 0.04,
) -> Corpus:
    """Records of ``params``: signals (n, 12, round(fs * duration)) in mV, true features
    measured on the clean templates, label sets, R-peak times.

    Each record's beat (P to T end, with the ST plateau) is drawn once on the sample grid and
    added at every QRS onset (onsets on the sample grid), so the cost is one template per
    record plus one slice addition per beat.
    """
    if fs <= 0 or duration < 3:
        raise ValueError(f"need fs > 0 and duration >= 3 s, got fs={fs}, duration={duration}")
    n = len(params)
    T = round(fs * duration)
    peaks = _rr_series(rng, params, duration)
    onset_idx = [np.round((r - 0.45 * params.qrs[i]) * fs).astype(int) for i, r in enumerate(peaks)]
    peaks = [o / fs + 0.45 * params.qrs[i] for i, o in enumerate(onset_idx)]
    rr_mean = np.array([np.diff(r).mean() for r in peaks])
    rr_cv = np.array([np.diff(r).std() / np.diff(r).mean() for r in peaks])
    # QT from the target QTc, kept 200 ms past the QRS end so the T wave clears the ST point.
    qt = np.maximum(params.qtc * np.sqrt(rr_mean), params.qrs + 0.2)
    waves = _waves(params, qt)
    lead_w = np.zeros((n, 12))
    for j, name in enumerate(_TERRITORIES):
        idx = [LEADS.index(x) for x in _TERRITORIES[name]]
        sel = params.territory == j
        lead_w[np.ix_(sel, idx)] = params.st[sel, None]
    pre, post = round(0.45 * fs), round(0.75 * fs)
    rel = (np.arange(-pre, post) / fs)[None, :].repeat(n, 0)  # seconds from QRS onset
    template = _beat(waves, rel)
    j_pt, t_pk = params.qrs[:, None], (qt - 2.5 * _T_WIDTH * qt)[:, None]
    win = _sigmoid((rel - j_pt) / 0.006) * _sigmoid(-(rel - t_pk) / 0.03)
    template += lead_w[:, :, None] * win[:, None, :]
    clean = np.zeros((n, 12, T))
    for i, onsets in enumerate(onset_idx):
        for o in onsets:
            a, b = max(0, o - pre), min(T, o + post)
            if b > a:
                clean[i, :, a:b] += template[i, :, a - (o - pre) : b - (o - pre)]
    features = _template_features(params, waves, qt, rr_mean, rr_cv, lead_w)
    tgrid = np.arange(T) / fs
    noisy = clean + noise_mv * rng.standard_normal(clean.shape)
    f_w = rng.uniform(0.15, 0.35, (n, 1, 1))
    phase = rng.uniform(0, 2 * np.pi, (n, 12, 1))
    noisy += wander_mv * np.sin(2 * np.pi * f_w * tgrid[None, None, :] + phase)
    if params.af.any():  # fibrillatory waves, 4-8 Hz, strongest in V1 and the inferior leads
        f_af = rng.uniform(4, 8, (n, 1, 1))
        fw = 0.04 * np.sin(2 * np.pi * f_af * tgrid + rng.uniform(0, 6.3, (n, 1, 1)))
        fw = (
            fw * np.array([0.4, 1, 0.8, 0.6, 0.3, 0.9, 1.2, 0.8, 0.6, 0.5, 0.4, 0.3])[None, :, None]
        )
        noisy += fw * params.af[:, None, None]
    labels = [labels_from_features(f) for f in features]
    return Corpus(noisy.astype(np.float32), fs, features, labels, peaks)


_T_WIDTH = 0.06  # sigma of the T wave as a fraction of QT; T end = QRS onset + QT


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-np.clip(x, -50, 50)))


def _beat(waves: list[tuple[np.ndarray, np.ndarray, np.ndarray]], t: np.ndarray) -> np.ndarray:
    """The 12 leads of one beat at times ``t`` (n, m) from QRS onset: (n, 12, m)."""
    out = np.zeros((t.shape[0], 12, t.shape[1]))
    for off, s, vec in waves:
        g = np.exp(-((t - off[:, None]) ** 2) / (2 * s[:, None] ** 2))
        out += (vec @ LEAD_VECTORS.T)[:, :, None] * g[:, None, :]
    return out


def _template_features(
    p: RecordParams,
    waves: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
    qt: np.ndarray,
    rr_mean: np.ndarray,
    rr_cv: np.ndarray,
    lead_w: np.ndarray,
) -> list[Features]:
    """True features on each record's clean isolated beat (QRS onset at 0)."""
    n = len(p)
    w = p.qrs

    def beat(t: np.ndarray) -> np.ndarray:
        return _beat(waves, t)

    grid = np.linspace(0, 1, 120)[None, :] * w[:, None]
    qrs = beat(grid)
    limb = qrs[:, _LIMB]
    amp = (limb.max(axis=2) - limb.min(axis=2)).max(axis=1)
    area = qrs.mean(axis=2)  # net area / width, per lead
    axis = np.rad2deg(np.arctan2(area[:, 5] / _S3, area[:, 0]))
    v1_term = np.sign(qrs[:, 6, int(0.6 * 120) :].mean(axis=1))
    base = beat(np.full((n, 1), -0.01))[:, :, 0] * (~p.af)[:, None]
    st = beat((w + 0.04)[:, None])[:, :, 0] + lead_w - base
    out = []
    for i in range(n):
        out.append(
            Features(
                hr=float(60.0 / rr_mean[i]),
                rr_cv=float(rr_cv[i]),
                p_present=not bool(p.af[i]),
                pr=0.0 if p.af[i] else float(1000 * p.pr[i]),
                qrs=float(1000 * w[i]),
                qt=float(1000 * qt[i]),
                qtc=float(1000 * qt[i] / np.sqrt(rr_mean[i])),
                axis=float(axis[i]),
                st_max=float(st[i].max()),
                st_min=float(st[i].min()),
                qrs_amp=float(amp[i]),
                v1_terminal=1 if v1_term[i] >= 0 else -1,
            )
        )
    return out

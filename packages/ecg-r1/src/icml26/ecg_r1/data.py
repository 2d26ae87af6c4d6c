"""The corpus as model inputs: signals at 100 Hz, paper images, label and feature targets.

:func:`make_dataset` simulates records with :mod:`wavemodel`, draws each record's paper image
with :class:`~render.ImageRasteriser` (matplotlib) and keeps, per record, the true features
and label set. A user's own records enter through :func:`~records.load_record` and
:func:`~report.interpret_record` (features by :func:`~delineate.measure_features`); there is
no dataset builder for them. Datasets save to and load from one ``.npz`` file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from icml26.ecg_r1.labels import FEATURE_NAMES, LABELS, Features, labels_from_features
from icml26.ecg_r1.render import ImageRasteriser
from icml26.ecg_r1.wavemodel import sample_params, simulate

__all__ = [
    "N_TARGETS",
    "ECGDataset",
    "decode_features",
    "encode_features",
    "make_dataset",
]

#: Regression targets per record: the features scaled to about unit range, axis as (cos, sin).
_SCALE = {
    "hr": 100.0,
    "rr_cv": 0.2,
    "pr": 200.0,
    "qrs": 120.0,
    "qt": 400.0,
    "qtc": 460.0,
    "st_max": 0.2,
    "st_min": 0.2,
    "qrs_amp": 1.0,
}
N_TARGETS = len(FEATURE_NAMES) + 1  # axis takes two


def encode_features(features: list[Features]) -> np.ndarray:
    """(n, N_TARGETS) float32 regression targets."""
    rows = []
    for f in features:
        d = f.as_dict()
        row = []
        for k in FEATURE_NAMES:
            if k == "axis":
                row += [np.cos(np.deg2rad(d[k])), np.sin(np.deg2rad(d[k]))]
            elif k in ("p_present", "v1_terminal"):
                row.append(d[k])
            else:
                row.append(d[k] / _SCALE[k])
        rows.append(row)
    return np.asarray(rows, dtype=np.float32)


def decode_features(targets: np.ndarray) -> list[Features]:
    """Inverse of :func:`encode_features` (booleans and signs thresholded)."""
    out = []
    for row in np.asarray(targets, dtype=float):
        d: dict[str, float] = {}
        i = 0
        for k in FEATURE_NAMES:
            if k == "axis":
                d[k] = float(np.rad2deg(np.arctan2(row[i + 1], row[i])))
                i += 2
                continue
            if k == "p_present":
                d[k] = float(row[i] > 0.5)
            elif k == "v1_terminal":
                d[k] = 1.0 if row[i] >= 0 else -1.0
            else:
                d[k] = float(row[i] * _SCALE[k])
            i += 1
        if d["p_present"] < 0.5:
            d["pr"] = 0.0
        out.append(Features.from_mapping(d))
    return out


@dataclass
class ECGDataset:
    """Model inputs and targets of ``n`` records.

    Attributes:
        signals: (n, 12, 1000) float32, mV at 100 Hz (10 s).
        images: (n, H, W) uint8 paper images (255 = ink).
        features: true (or measured) features per record.
        labels: label sets (``None`` entries: unlabelled user records).
        raw: (n, 12, T) float32 signals at ``fs`` (what the delineator reads).
        fs: sampling rate of ``raw``.
    """

    signals: np.ndarray
    images: np.ndarray
    features: list[Features]
    labels: list[frozenset[str]]
    raw: np.ndarray
    fs: float

    def __len__(self) -> int:
        return len(self.features)

    @property
    def label_matrix(self) -> np.ndarray:
        return np.array([[lab in ls for lab in LABELS] for ls in self.labels], dtype=np.float32)

    @property
    def targets(self) -> np.ndarray:
        return encode_features(self.features)

    def save(self, path: Path) -> None:
        np.savez_compressed(
            path,
            signals=self.signals,
            images=self.images,
            features=np.array([list(f.as_dict().values()) for f in self.features]),
            labels=np.array(["|".join(sorted(x)) for x in self.labels]),
            raw=self.raw,
            fs=self.fs,
        )

    @classmethod
    def load(cls, path: Path) -> ECGDataset:
        z = np.load(path)
        feats = [
            Features.from_mapping(dict(zip(FEATURE_NAMES, row, strict=True)))
            for row in z["features"]
        ]
        labels = [frozenset(x for x in s.split("|") if x) for s in z["labels"]]
        return cls(z["signals"], z["images"], feats, labels, z["raw"], float(z["fs"]))


def to_model_signal(raw: np.ndarray, fs: float) -> np.ndarray:
    """(n, 12, T) at ``fs`` -> (n, 12, 1000): 10 s at 100 Hz (linear interpolation)."""
    t_new = np.arange(1000) / 100.0
    t_old = np.arange(raw.shape[-1]) / fs
    flat = raw.reshape(-1, raw.shape[-1])
    out = np.stack([np.interp(t_new, t_old, row) for row in flat])
    return out.reshape(*raw.shape[:-1], 1000).astype(np.float32)


def make_dataset(
    n: int,
    rng: np.random.Generator,
    *,
    fs: float = 200.0,
    abnormal: float = 1.0,
    rasteriser: ImageRasteriser | None = None,
) -> ECGDataset:
    """``n`` simulated 10-s 12-lead records with their paper images, true features, labels.

    A stand-in for your own records: a dipole simulator with a measurable truth.

    Args:
        n: number of records.
        rng: the random stream (use :func:`icml26.shared.rng_for` for a separate one).
        fs: sampling rate of ``raw`` in Hz (the model signal is resampled to 100 Hz).
        abnormal: probability that a record draws abnormal features.
        rasteriser: renders the paper images (a default one for ``fs`` if ``None``).

    Returns:
        An :class:`ECGDataset`: ``signals`` (n, 12, 1000) at 100 Hz, ``images`` uint8,
        ``features`` (the simulator's truth), ``labels``, ``raw`` (n, 12, 10 * fs) mV, ``fs``.

    Raises:
        ValueError: if ``fs`` is not positive (from the simulator).
    """
    corpus = simulate(sample_params(rng, n, abnormal=abnormal), rng, fs=fs, duration=10.0)
    raster = rasteriser or ImageRasteriser(fs, 10.0)
    images = (raster(corpus.signals) * 255).clip(0, 255).astype(np.uint8)
    return ECGDataset(
        to_model_signal(corpus.signals, fs),
        images,
        corpus.features,
        corpus.labels,
        corpus.signals,
        fs,
    )


def dataset_from_features(features: list[Features]) -> list[frozenset[str]]:
    return [labels_from_features(f) for f in features]

"""12-lead ECG paper images with matplotlib, at the standard scale (25 mm/s, 10 mm/mV).

The layout is the usual 3 x 4 grid (I, aVR, V1, V4 / II, aVL, V2, V5 / III, aVF, V3, V6; 2.5 s
per column) with a 10-s lead II rhythm strip below, a 1-mV calibration pulse at the start of
every row, and each lead's name above its trace. The axes fill the figure and their data
units are millimetres of paper, so a figure saved at ``dpi`` has ``dpi / 25.4`` pixels per
millimetre: the scale is exact, not approximate.

:func:`render_ecg` draws one record for people (pink 1-mm / 5-mm grid);
:class:`ImageRasteriser` draws many records for the image encoder: one figure, its
background (grid, labels, calibration) rendered once and restored before each record
(matplotlib blitting), the 13 traces redrawn, the pixels read back as a grey-scale array.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from icml26.ecg_r1.labels import LEADS

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = [
    "LAYOUT",
    "MM_PER_MV",
    "MM_PER_S",
    "ImageRasteriser",
    "paper_size_mm",
    "render_ecg",
    "trace_coordinates",
]

MM_PER_S = 25.0
MM_PER_MV = 10.0
#: Rows of the 3 x 4 layout (the fourth row is the lead II rhythm strip).
LAYOUT: tuple[tuple[str, ...], ...] = (
    ("I", "aVR", "V1", "V4"),
    ("II", "aVL", "V2", "V5"),
    ("III", "aVF", "V3", "V6"),
)
_ROW_MM = 32.0
_CAL_MM = 10.0  # room for the calibration pulse at the left of each row
_MARGIN_MM = 6.0


def paper_size_mm(duration: float = 10.0) -> tuple[float, float]:
    """Width and height (mm) of the page for a ``duration``-second record."""
    return _CAL_MM + MM_PER_S * duration + 2, _MARGIN_MM * 2 + _ROW_MM * 4


def _baseline(row: int, height: float) -> float:
    return height - _MARGIN_MM - _ROW_MM * (row + 0.6)


def trace_coordinates(signals: np.ndarray, fs: float) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """``(lead, x_mm, y_mm)`` for the 13 traces of the layout (12 segments + rhythm strip)."""
    n = signals.shape[-1]
    duration = n / fs
    _, height = paper_size_mm(duration)
    col = n // 4
    out = []
    for r, row in enumerate(LAYOUT):
        for c, lead in enumerate(row):
            seg = signals[LEADS.index(lead), c * col : (c + 1) * col]
            t = (c * col + np.arange(len(seg))) / fs
            out.append((lead, _CAL_MM + MM_PER_S * t, _baseline(r, height) + MM_PER_MV * seg))
    t = np.arange(n) / fs
    out.append(("II", _CAL_MM + MM_PER_S * t, _baseline(3, height) + MM_PER_MV * signals[1]))
    return out


def _page(duration: float, dpi: float, *, fine_grid: bool) -> tuple[Figure, Any]:
    from matplotlib.figure import Figure

    width, height = paper_size_mm(duration)
    fig = Figure(figsize=(width / 25.4, height / 25.4), dpi=dpi)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.set_axis_off()
    if fine_grid:
        for x in np.arange(0, width, 1.0):
            ax.axvline(x, color="#f7c6c6", lw=0.2, zorder=0)
        for y in np.arange(0, height, 1.0):
            ax.axhline(y, color="#f7c6c6", lw=0.2, zorder=0)
    for x in np.arange(0, width, 5.0):
        ax.axvline(x, color="#e89a9a", lw=0.5 if fine_grid else 0.3, zorder=0)
    for y in np.arange(0, height, 5.0):
        ax.axhline(y, color="#e89a9a", lw=0.5 if fine_grid else 0.3, zorder=0)
    for r in range(4):
        b = _baseline(r, height)
        ax.plot(
            [0.5, 2.5, 2.5, 7.5, 7.5, 9.5],
            [b, b, b + MM_PER_MV, b + MM_PER_MV, b, b],
            color="black",
            lw=0.8,
        )
        names = LAYOUT[r] if r < 3 else ("II",)
        for c, lead in enumerate(names):
            ax.text(_CAL_MM + c * MM_PER_S * duration / 4 + 1, b + 12, lead, fontsize=7)
    return fig, ax


def render_ecg(
    signals: np.ndarray,
    fs: float,
    *,
    title: str | None = None,
    dpi: float = 150,
) -> Figure:
    """A paper image of one record (12, T) in mV at ``fs`` Hz (a matplotlib ``Figure``)."""
    signals = np.asarray(signals, dtype=float)
    if signals.ndim != 2 or signals.shape[0] != 12:
        raise ValueError(f"render_ecg needs a (12, T) record, got shape {signals.shape}")
    fig, ax = _page(signals.shape[1] / fs, dpi, fine_grid=True)
    for _, x, y in trace_coordinates(signals, fs):
        ax.plot(x, y, color="black", lw=0.6)
    if title:
        ax.text(_CAL_MM, paper_size_mm(signals.shape[1] / fs)[1] - 3, title, fontsize=7)
    return fig


class ImageRasteriser:
    """Grey-scale pixel arrays of many records' paper images (one reused figure, blitting).

    Args:
        fs, duration: of the records.
        px_per_mm: resolution (1.0: one pixel per millimetre, a 262 x 140 image for 10 s).
    """

    def __init__(self, fs: float, duration: float = 10.0, *, px_per_mm: float = 1.0) -> None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        self.fs, self.duration = fs, duration
        self.fig, self.ax = _page(duration, 25.4 * px_per_mm, fine_grid=False)
        self.canvas = FigureCanvasAgg(self.fig)
        self.canvas.draw()
        self._background = self.canvas.copy_from_bbox(self.fig.bbox)
        self._lines = [
            self.ax.plot([], [], color="black", lw=0.8, animated=True)[0] for _ in range(13)
        ]

    @property
    def shape(self) -> tuple[int, int]:
        w, h = self.canvas.get_width_height()
        return h, w

    def __call__(self, signals: np.ndarray) -> np.ndarray:
        """(n, 12, T) records -> (n, H, W) float32 images in [0, 1] (1 = ink)."""
        signals = np.asarray(signals)
        if signals.ndim == 2:
            signals = signals[None]
        want = round(self.fs * self.duration)
        if signals.ndim != 3 or signals.shape[1] != 12 or signals.shape[2] != want:
            raise ValueError(
                f"the rasteriser was built for (n, 12, {want}) records, got {signals.shape}"
            )
        out = np.empty((len(signals), *self.shape), dtype=np.float32)
        for i, rec in enumerate(signals):
            self.canvas.restore_region(self._background)
            for line, (_, x, y) in zip(self._lines, trace_coordinates(rec, self.fs), strict=True):
                line.set_data(x, y)
                self.ax.draw_artist(line)
            rgba = np.asarray(self.canvas.buffer_rgba())
            out[i] = 1.0 - rgba[..., :3].mean(axis=2) / 255.0
        return out

"""The paper image: 12 labelled leads at 25 mm/s and 10 mm/mV, exactly."""

from __future__ import annotations

import numpy as np
import pytest

from icml26.ecg_r1.labels import LEADS
from icml26.ecg_r1.render import (
    MM_PER_MV,
    MM_PER_S,
    ImageRasteriser,
    paper_size_mm,
    render_ecg,
    trace_coordinates,
)


def _step_record(fs: float = 200.0) -> np.ndarray:
    x = np.zeros((12, int(10 * fs)))
    x[0, int(0.4 * fs) : int(0.8 * fs)] = 1.0  # a 1-mV, 400-ms pulse in lead I
    return x


def test_figure_has_twelve_labelled_leads_and_paper_scale() -> None:
    fig = render_ecg(_step_record(), 200.0, dpi=50)
    ax = fig.axes[0]
    names = [t.get_text() for t in ax.texts]
    assert sorted(set(names)) == sorted(LEADS)
    assert names.count("II") == 2
    w_mm, h_mm = paper_size_mm(10.0)
    np.testing.assert_allclose(fig.get_size_inches() * 25.4, [w_mm, h_mm])
    assert ax.get_xlim() == (0, w_mm)
    assert ax.get_ylim() == (0, h_mm)
    assert tuple(ax.get_position().bounds) == (0, 0, 1, 1)  # data mm == paper mm
    heights = [np.ptp(line.get_ydata()) for line in ax.lines if len(line.get_ydata()) == 6]
    assert heights == [MM_PER_MV] * 4  # one 1-mV calibration pulse per row


def test_traces_use_25_mm_per_s_and_10_mm_per_mv() -> None:
    fs = 200.0
    traces = trace_coordinates(_step_record(fs), fs)
    assert len(traces) == 13
    lead, x, y = traces[0]
    assert lead == "I"
    assert np.diff(x)[0] == pytest.approx(MM_PER_S / fs)
    assert np.ptp(y) == pytest.approx(MM_PER_MV)
    rhythm = traces[-1]
    assert rhythm[0] == "II"
    assert np.ptp(rhythm[1]) == pytest.approx(MM_PER_S * (10 - 1 / fs))


def test_raster_pulse_spans_ten_pixels_at_one_px_per_mm() -> None:
    r = ImageRasteriser(200.0)
    img = r(_step_record())[0]
    assert img.shape == r.shape
    assert img.min() >= 0
    assert img.max() <= 1
    # the pulse: 25 mm/s * 0.4 s = 10 mm of top edge; 10 mm of rise. Column through its middle:
    x_mid = round(10 + 25 * 0.6)
    col = img[:, x_mid]
    dark = np.flatnonzero(col > 0.05)
    top_row = dark.min()
    # baseline of row 0 is 0.6 rows below the top margin; the pulse top 10 px above it
    h = r.shape[0]
    baseline_px = h - (h - 6 - 32 * 0.6)
    assert abs((baseline_px - top_row) - 10) <= 1.5
    with pytest.raises(ValueError, match="12"):
        r(np.zeros((1, 11, 2000)))

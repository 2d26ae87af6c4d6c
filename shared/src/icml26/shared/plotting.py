"""A small matplotlib helper with one house style.

Figures are built with ``matplotlib.figure.Figure`` directly (never pyplot), so plotting works
headless, needs no backend switch, and leaves a user's interactive backend alone.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from icml26.shared.atomic import atomic_path

__all__ = ["HOUSE_STYLE", "PALETTE", "figure", "save_figure"]

#: Colour-blind-safe palette (Okabe-Ito), used in this order for methods in every package.
PALETTE = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#F0E442",
    "#000000",
)

HOUSE_STYLE: dict[str, Any] = {
    "figure.dpi": 110,
    "savefig.dpi": 130,
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "lines.linewidth": 1.6,
    "axes.prop_cycle": None,  # filled lazily with PALETTE (needs matplotlib's cycler)
}


def _style() -> dict[str, Any]:
    from cycler import cycler

    style = dict(HOUSE_STYLE)
    style["axes.prop_cycle"] = cycler(color=list(PALETTE))
    return style


@contextmanager
def figure(
    path: str | os.PathLike[str],
    nrows: int = 1,
    ncols: int = 1,
    *,
    width: float | None = None,
    height: float | None = None,
    title: str | None = None,
    **subplots_kw: Any,
) -> Iterator[tuple[Any, Any]]:
    """Create a styled figure, yield ``(fig, axes)``, and save it atomically to ``path``.

    ``axes`` is a single Axes for a 1x1 grid, else an array (as ``plt.subplots``; pass
    ``squeeze=False`` for a 2-D array always). Nothing is written if the block raises.

    Args:
        path: where the figure is saved (format from the suffix, PNG by default).
        nrows: rows of axes.
        ncols: columns of axes.
        width: figure width in inches (default ``3.6 * ncols + 0.6``).
        height: figure height in inches (default ``2.8 * nrows + 0.4``).
        title: the figure's title, if any.
        **subplots_kw: passed to ``Figure.subplots`` (``sharex``, ``squeeze``, ...).

    Yields:
        ``(fig, axes)``.
    """
    import matplotlib as mpl
    from matplotlib.figure import Figure

    with mpl.rc_context(_style()):  # type: ignore[arg-type]
        w = width if width is not None else 3.6 * ncols + 0.6
        h = height if height is not None else 2.8 * nrows + 0.4
        fig = Figure(figsize=(w, h), layout="constrained")
        subplots_kw.setdefault("squeeze", True)
        axes = fig.subplots(nrows, ncols, **subplots_kw)
        if title:
            fig.suptitle(title)
        yield fig, axes
        save_figure(fig, path)


def save_figure(fig: Any, path: str | os.PathLike[str]) -> Path:
    """Save ``fig`` to ``path`` (format from its suffix, PNG by default) atomically.

    Args:
        fig: a matplotlib figure.
        path: the file (its folder is created if missing).

    Returns:
        ``path`` as a ``Path``.
    """
    path = Path(path)
    if not path.suffix:
        path = path.with_suffix(".png")
    with atomic_path(path, suffix=path.suffix) as tmp:
        fig.savefig(tmp, format=path.suffix.lstrip("."))
    return path

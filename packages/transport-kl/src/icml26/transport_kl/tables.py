"""Tables of the main job: the control-front grid as markdown."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from icml26.transport_kl.pareto import cell_key

__all__ = ["front_grid_table"]


def front_grid_table(
    metrics: Mapping[str, float], kappas: Sequence[float], spreads: Sequence[float]
) -> str:
    """WKL's gap to KL per ``kappa x spread`` cell: ``gap ± SE (upper; worst)``.

    Args:
        metrics: the run's flat metrics (``front.<cell>.wkl.*``).
        kappas: the grid's anisotropies (rows).
        spreads: the grid's gain spreads (columns).

    Returns:
        A markdown table (negative gap: WKL's front is below KL's).
    """
    head = "| kappa, gain spread -> | " + " | ".join(f"{g:g}" for g in spreads) + " |"
    rows = [head, "|---" * (len(spreads) + 1) + "|"]
    for k in kappas:
        cells = []
        for g in spreads:
            key = f"front.{cell_key(k, g)}.wkl"
            cells.append(
                f"{metrics[key + '.gap']:+.3f} ± {metrics[key + '.gap_se']:.3f} "
                f"({metrics[key + '.upper']:+.3f}; {metrics[key + '.worst']:+.3f})"
            )
        rows.append(f"| {k:g} | " + " | ".join(cells) + " |")
    note = (
        "WKL's mean log state-cost gap to KL at equal control energy, ± SE over systems "
        "(upper = gap + 2 SE; worst = largest gap at any energy of any system)."
    )
    return note + "\n\n" + "\n".join(rows) + "\n"

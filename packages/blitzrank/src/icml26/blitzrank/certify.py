"""Certification: is the top-m already determined by the answers so far?

Take the tournament graph's closure with its equivalence classes (tiers). For an item ``i``
let ``a(i)`` be the items known to be strictly above its class, ``b(i)`` those strictly below
and ``c(i)`` its class size. Every ranking consistent with the answers (a linear extension
of the condensation, with a tier kept together) puts ``i``'s class in positions
``a(i) + 1 .. n - b(i)``. Hence, exactly:

* **set** mode (which m items, in any order): ``i`` is surely in the top-m iff
  ``n - b(i) <= m``, surely out iff ``a(i) >= m``. The top-m set is certified when every item
  is surely in or surely out, or sits in a *resolved* tier (``a + b + c = n``) that straddles
  position m: a tie no answer can break, reported as ``boundary_tie``.
* **ordered** mode (the top-m and their order): certified when every item that can still be
  in the top-m (``a(i) < m``) is resolved. With a consistent oracle (singleton tiers) this is
  "each of the top-m is comparable with all n - 1 others", the exact condition for the
  ranks 1..m to be the same in every linear extension.

With a consistent oracle no further answer can then change the output (soundness, tested with
``hypothesis``); the certificate is reached for every consistent oracle because the scheduler
always asks about an undetermined pair (completeness).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from icml26.blitzrank.graph import GraphState, TournamentGraph

__all__ = ["Certificate", "Mode", "certify", "open_items"]

Mode = Literal["ordered", "set"]


@dataclass(frozen=True)
class Certificate:
    """Where the top-m stands.

    Attributes:
        certified: the top-m (set, or ordered list) is determined.
        mode: ``"ordered"`` or ``"set"``.
        surely_in: items that are in the top-m in every consistent ranking.
        surely_out: items that are in none.
        boundary_tie: a resolved tier straddles position m (a preference cycle across the
            cut): the top-m is then certified up to that tie.
        open: items whose status still needs answers (empty when certified).
    """

    certified: bool
    mode: Mode
    surely_in: tuple[int, ...]
    surely_out: tuple[int, ...]
    boundary_tie: bool
    open: tuple[int, ...] = field(default=())


def _check_m(m: int, n: int) -> None:
    if isinstance(m, bool) or not isinstance(m, int | np.integer) or not 1 <= m <= n:
        raise ValueError(f"m must be an integer in 1..n={n}, got {m!r}")


def open_items(state: GraphState, m: int, mode: Mode) -> np.ndarray:
    """Boolean mask of items whose top-m status (or rank, in ordered mode) is not yet known."""
    _check_m(m, state.n)
    n = state.n
    a, b, c = state.above, state.below, state.class_size
    resolved = (a + b + c) == n
    if mode == "ordered":
        return (a < m) & ~resolved
    if mode == "set":
        surely_in = (n - b) <= m
        surely_out = a >= m
        straddle_tie = resolved & (a < m) & (a + c > m)
        return ~(surely_in | surely_out | straddle_tie)
    raise ValueError(f"mode must be 'ordered' or 'set', got {mode!r}")


def certify(graph: TournamentGraph, m: int, mode: Mode = "ordered") -> Certificate:
    """The certificate of ``graph`` for its top-``m`` (see the module docstring)."""
    st = graph.state()
    _check_m(m, st.n)
    is_open = open_items(st, m, mode)
    a, b, c = st.above, st.below, st.class_size
    n = st.n
    resolved = (a + b + c) == n
    surely_in = np.flatnonzero((n - b) <= m)
    surely_out = np.flatnonzero(a >= m)
    tie = bool(np.any(resolved & (a < m) & (a + c > m)))
    opened = np.flatnonzero(is_open)
    return Certificate(
        certified=opened.size == 0,
        mode=mode,
        surely_in=tuple(int(i) for i in surely_in),
        surely_out=tuple(int(i) for i in surely_out),
        boundary_tie=tie,
        open=tuple(int(i) for i in opened),
    )

"""Sequential decisions on Sudoku: every proposed move is checked weakly or strongly.

A noisy solver fills a 9x9 puzzle (unique solution) one move at a time. Each move is an item
of the stream: the weak verifier scores it from local evidence, the strong verifier is the
exact solver check *does the grid after this move still have a solution*, and the policy
accepts (commits the move), rejects (the proposer must try another digit for that cell) or
defers (the solver decides). An accepted wrong move silently dooms the puzzle: every later
move is wrong too, until a cell runs out of candidates. So errors compound, the stream depends
on the policy's own past decisions, and the share of puzzles solved is the final reliability.

Proposer: picks a random empty cell and a digit uniformly among the digits its row and column
allow (it overlooks the 3x3 boxes, as a hasty solver does) that were not rejected there since
the last committed move. A
rejected right digit costs moves, not the puzzle; the puzzle is lost when no cell has an
option left.

Weak verifier: the same row-and-column view: ``1 / #candidates`` of the cell, raised to 1 for
a *hidden single* (the digit fits nowhere else in its row or column) and set to 0 when placing
it would leave a row or column peer without a candidate: cheap, local, blind to boxes and to a
doomed grid, so confidently wrong at times.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from icml26.weak_strong.policies import Policy, Trace, TraceRecorder

__all__ = [
    "SudokuRun",
    "candidates",
    "count_solutions",
    "line_candidates",
    "make_puzzle",
    "run_sudoku",
    "solve",
    "weak_score",
]

ALL = 0x3FE  # bits 1..9
_ROWS = [[r * 9 + c for c in range(9)] for r in range(9)]
_COLS = [[r * 9 + c for r in range(9)] for c in range(9)]
_BOXES = [
    [(br * 3 + i) * 9 + bc * 3 + j for i in range(3) for j in range(3)]
    for br in range(3)
    for bc in range(3)
]
_UNITS_OF = [[_ROWS[k // 9], _COLS[k % 9], _BOXES[(k // 27) * 3 + (k % 9) // 3]] for k in range(81)]
_PEERS = [sorted({p for u in _UNITS_OF[k] for p in u} - {k}) for k in range(81)]


def candidates(grid: Sequence[int], cell: int) -> int:
    """Bitmask of digits allowed in ``cell`` by its row, column and box (bit d = digit d)."""
    used = 0
    for p in _PEERS[cell]:
        used |= 1 << grid[p]
    return ALL & ~used


_LINE_PEERS = [sorted((set(_ROWS[k // 9]) | set(_COLS[k % 9])) - {k}) for k in range(81)]


def line_candidates(grid: Sequence[int], cell: int) -> int:
    """Digits allowed in ``cell`` by its row and column only: the proposer's and the weak
    verifier's partial view (blind to the 3x3 boxes)."""
    used = 0
    for p in _LINE_PEERS[cell]:
        used |= 1 << grid[p]
    return ALL & ~used


def _digits(mask: int) -> list[int]:
    return [d for d in range(1, 10) if mask >> d & 1]


def _search(grid: list[int], limit: int, rng: np.random.Generator | None) -> int:
    """Count solutions up to ``limit`` by backtracking (fewest candidates first); the first
    solution found is left in ``grid`` when ``limit == 1``."""
    best, best_mask, best_n = -1, 0, 10
    for k in range(81):
        if grid[k] == 0:
            m = candidates(grid, k)
            n = m.bit_count()
            if n < best_n:
                best, best_mask, best_n = k, m, n
                if n <= 1:
                    break
    if best < 0:
        return 1
    if best_n == 0:
        return 0
    digits = _digits(best_mask)
    if rng is not None:
        rng.shuffle(digits)
    found = 0
    for d in digits:
        grid[best] = d
        found += _search(grid, limit - found, rng)
        if found >= limit:
            if limit == 1:
                return found
            break
    grid[best] = 0
    return found


def solve(grid: Sequence[int]) -> list[int] | None:
    """A solution of ``grid`` (81 ints, 0 = empty), or None: the strong verifier."""
    if len(grid) != 81 or any(not (0 <= v <= 9) for v in grid):
        raise ValueError("a grid is 81 integers in 0..9 (0 = empty)")
    g = list(grid)
    for k in range(81):
        if g[k] and not (candidates(g, k) >> g[k] & 1):
            return None
    return g if _search(g, 1, None) == 1 else None


def count_solutions(grid: Sequence[int], limit: int = 2) -> int:
    """Number of solutions, counted up to ``limit``."""
    return _search(list(grid), limit, None)


def make_puzzle(rng: np.random.Generator, *, blanks: int = 45) -> tuple[list[int], list[int]]:
    """A random puzzle with a unique solution and up to ``blanks`` empty cells."""
    if not (0 <= blanks <= 64):
        raise ValueError(f"blanks must lie in 0..64, got {blanks}")
    full = [0] * 81
    _search(full, 1, rng)
    puzzle = list(full)
    removed = 0
    for k in rng.permutation(81).tolist():
        if removed >= blanks:
            break
        keep = puzzle[k]
        puzzle[k] = 0
        if count_solutions(puzzle, 2) != 1:
            puzzle[k] = keep
        else:
            removed += 1
    return puzzle, full


def weak_score(grid: Sequence[int], cell: int, digit: int) -> float:
    """The local weak verifier (module docstring): row and column evidence only."""
    mask = line_candidates(grid, cell)
    if not mask >> digit & 1:
        return 0.0
    g = list(grid)
    g[cell] = digit
    for p in _LINE_PEERS[cell]:
        if g[p] == 0 and line_candidates(g, p) == 0:
            return 0.0
    for unit in (_ROWS[cell // 9], _COLS[cell % 9]):
        if all(q == cell or g[q] != 0 or not (line_candidates(grid, q) >> digit & 1) for q in unit):
            return 1.0  # hidden single in its row or column
    return 1.0 / mask.bit_count()


@dataclass
class SudokuRun:
    """A policy's run over a list of puzzles."""

    trace: Trace
    solved: int
    puzzles: int


def run_sudoku(
    policy: Policy,
    puzzles: Sequence[tuple[list[int], list[int]]],
    *,
    seed: int = 0,
    max_moves: int = 400,
) -> SudokuRun:
    """Solve ``puzzles`` (``(puzzle, solution)`` pairs) move by move under ``policy``.

    The truth of a move is whether the grid after it still has a solution; with a unique
    solution that is *the grid so far agrees with it*, which is what is computed for every
    move (the solver, :func:`solve`, is what a deferred move costs in a deployment and agrees
    with it, see the tests).
    """
    rng = np.random.default_rng(seed)
    rec = TraceRecorder(policy)
    solved = 0
    for puzzle, solution in puzzles:
        grid = list(puzzle)
        on_path = True
        banned: dict[int, int] = {}
        for _ in range(max_moves):
            empty = [k for k in range(81) if grid[k] == 0]
            if not empty:
                solved += int(grid == list(solution))
                break
            open_cells = [k for k in empty if line_candidates(grid, k) & ~banned.get(k, 0)]
            if not open_cells:
                break  # a contradiction, or every remaining option rejected: puzzle lost
            cell = open_cells[int(rng.integers(len(open_cells)))]
            options = _digits(line_candidates(grid, cell) & ~banned.get(cell, 0))
            digit = options[int(rng.integers(len(options)))]
            s = weak_score(grid, cell, digit)
            h = on_path and solution[cell] == digit
            _, ok = rec.record(s, h)
            if ok:
                grid[cell] = digit
                on_path = h
                banned.clear()  # progress: rejected digits may be proposed again
            else:
                banned[cell] = banned.get(cell, 0) | (1 << digit)
    trace = rec.trace()
    return SudokuRun(trace, solved, len(puzzles))

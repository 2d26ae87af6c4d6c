"""The privacy layer: k-anonymous groups, user-level differential privacy, a leak audit.

Guarantees (stated precisely in the README):

* **k-anonymity over users.** Every released statistic is computed over a group (the whole
  log, a domain, a month, a cluster, an approval group) holding at least ``k`` distinct
  ``user_id`` values; smaller groups are suppressed, and the count of suppressions is
  released instead.
* **User-level epsilon-DP (optional).** Each user's conversations are capped at ``c``
  (a deterministic choice by conversation id); every released table of counts is a histogram
  in which one conversation falls in exactly one cell, so adding or removing one user
  changes the table by at most ``c`` in L1, and Laplace noise of scale ``c / epsilon_t``
  makes the table ``epsilon_t``-DP. Tables compose sequentially: the ledger records the sum
  of their ``epsilon_t`` as the budget spent. Every rate and interval is post-processing of
  the noisy tables.
* **Leak audit.** After a run, every output file is searched for every PII string planted in
  (or given for) the input; the number of hits is released as ``privacy.pii_leaks``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = [
    "DEFAULT_K",
    "KAnonymity",
    "PrivacyLedger",
    "cap_contributions",
    "laplace_noise",
    "pii_leak_audit",
]

#: Minimum distinct users per released group. Clio releases a cluster only above a minimum
#: number of distinct accounts; we could not check its exact figure offline and use 25.
DEFAULT_K = 25


@dataclass
class KAnonymity:
    """Decides which groups may be released, and remembers the smallest one released."""

    k: int = DEFAULT_K
    released_sizes: list[int] = field(default_factory=list)
    suppressed: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError(f"k must be at least 1, got {self.k}")

    def allow(self, name: str, user_ids: Iterable[str] | np.ndarray) -> bool:
        """True (and the size is recorded) when the group has at least ``k`` distinct users."""
        n_users = len(set(np.asarray(list(user_ids)).tolist()))
        if n_users >= self.k:
            self.released_sizes.append(n_users)
            return True
        self.suppressed.append(name)
        return False

    @property
    def min_group_size(self) -> int:
        return min(self.released_sizes) if self.released_sizes else 0


def cap_contributions(user_ids: Sequence[str], conv_ids: Sequence[str], cap: int) -> np.ndarray:
    """Bool mask keeping at most ``cap`` conversations per user (those with the smallest
    hash of their id, so the choice does not depend on the log's order)."""
    if cap < 1:
        raise ValueError(f"the contribution cap must be at least 1, got {cap}")
    keys = [hashlib.blake2b(c.encode(), digest_size=8).digest() for c in conv_ids]
    order = sorted(range(len(conv_ids)), key=lambda i: (user_ids[i], keys[i]))
    keep = np.zeros(len(conv_ids), dtype=bool)
    last, run = None, 0
    for i in order:
        u = user_ids[i]
        run = run + 1 if u == last else 1
        last = u
        keep[i] = run <= cap
    return keep


def laplace_noise(
    table: np.ndarray, *, sensitivity: float, epsilon: float, rng: np.random.Generator
) -> np.ndarray:
    """``table`` plus i.i.d. Laplace noise of scale ``sensitivity / epsilon``."""
    if not epsilon > 0:
        raise ValueError(f"epsilon must be positive, got {epsilon}")
    if not sensitivity > 0:
        raise ValueError(f"sensitivity must be positive, got {sensitivity}")
    return np.asarray(table, float) + rng.laplace(0.0, sensitivity / epsilon, np.shape(table))


@dataclass
class PrivacyLedger:
    """Releases count tables, noised when ``epsilon`` is set, and records the spend.

    Args:
        epsilon: total budget, split evenly over ``n_tables`` tables (``None``: no DP).
        n_tables: how many tables the analysis will release.
        cap: per-user contribution bound ``c`` (the L1 sensitivity of each table).
    """

    epsilon: float | None
    n_tables: int
    cap: int
    rng: np.random.Generator
    spent: float = 0.0
    tables: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.epsilon is not None and not self.epsilon > 0:
            raise ValueError(f"epsilon must be positive or None, got {self.epsilon}")
        if self.n_tables < 1 or self.cap < 1:
            raise ValueError("n_tables and cap must be at least 1")

    @property
    def per_table_epsilon(self) -> float | None:
        return None if self.epsilon is None else self.epsilon / self.n_tables

    @property
    def scale(self) -> float:
        """Laplace scale on every released count (0 without DP)."""
        eps = self.per_table_epsilon
        return 0.0 if eps is None else self.cap / eps

    def release(self, name: str, table: np.ndarray) -> np.ndarray:
        """The table as released (noised under DP); the spend is recorded."""
        if len(self.tables) >= self.n_tables:
            raise RuntimeError(f"privacy budget planned for {self.n_tables} tables, asked for more")
        self.tables.append(name)
        eps = self.per_table_epsilon
        if eps is None:
            return np.asarray(table, float)
        self.spent += eps
        return laplace_noise(table, sensitivity=float(self.cap), epsilon=eps, rng=self.rng)


def pii_leak_audit(
    folder: str | os.PathLike[str], pii_strings: Iterable[str]
) -> tuple[int, list[str]]:
    """Count PII strings found in any file under ``folder`` (text or binary).

    Returns:
        ``(hits, files)``: the number of (string, file) hits and the files holding any.
    """
    needles = sorted({s for s in pii_strings if s and len(s) >= 4})
    hits, files = 0, []
    for path in sorted(Path(folder).rglob("*")):
        if not path.is_file():
            continue
        data = path.read_bytes()
        text = data.decode("utf-8", errors="ignore")
        found = sum(1 for s in needles if s in text)
        if found:
            hits += found
            files.append(str(path))
    return hits, files

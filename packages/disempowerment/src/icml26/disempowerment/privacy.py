"""The privacy layer: k-anonymous groups, user-level differential privacy, a release manifest
and a leak audit.

* **k-anonymity over users.** Every released statistic is computed over a group (the whole
  log, a domain, a month, an approval group, a cluster) holding at least ``k`` distinct
  ``user_id`` values; smaller groups are suppressed.
* **User-level epsilon-DP (optional).** Each user's conversations are capped at ``c`` (a
  deterministic choice by conversation id). Every released table of counts is a histogram in
  which one conversation falls in exactly one cell, so adding or removing one user changes it
  by at most ``c`` in L1, and Laplace noise of scale ``c / epsilon_t`` makes it
  ``epsilon_t``-DP. Under DP the k-anonymity *gate* is noisy too: the distinct-user counts of
  a partition's groups (the log, the domains, the months, the two approval groups) are
  released with Laplace noise of scale ``min(c, groups) / epsilon_t`` (one user is in at most
  that many of the groups) and a group is released when its *noisy* count reaches ``k``, so
  the suppression pattern, the smallest group size and the user count are post-processing of
  DP releases, not exact. The tables and the gates compose sequentially: the ledger records
  the sum of their ``epsilon_t``. Every rate and interval is post-processing. The month
  window (first month, length) is public configuration, never read from the log. A run that
  analyses the log more than once (the judge study measures a subset with the judge and with
  the baseline classifier) gives each analysis an equal share of the run's budget, and
  ``privacy.dp_epsilon_spent`` is their sum.
* **Release manifest.** :func:`release_manifest` says, for every released metric, under
  which guarantee it is released (DP, k-anonymous only, labelled set only, synthetic
  validation only, run-time measurement, setting).
* **Leak audit.** After a run, every output file is searched for every PII string planted in
  (or given for) the input; the number of hits is released as ``privacy.pii_leaks``.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from icml26.disempowerment.config import DEFAULT_K

__all__ = [
    "DEFAULT_K",
    "GUARANTEES",
    "KAnonymity",
    "PrivacyLedger",
    "cap_contributions",
    "laplace_noise",
    "pii_in_text",
    "pii_leak_audit",
    "release_manifest",
]


@dataclass
class KAnonymity:
    """Decides which groups may be released, and remembers the smallest one released.

    Args:
        k: minimum distinct users per released group.
        noise_scale: Laplace scale added to each distinct-user count before the comparison
            with ``k`` (0: the exact count; set by the analysis under DP, see the module
            docstring).
        rng: the noise's random stream (needed when ``noise_scale > 0``).

    Attributes:
        released_sizes: the (noisy, under DP) user counts of the released groups.
        suppressed: names of the suppressed groups.

    Raises:
        ValueError: ``k < 1``, a negative scale, or noise without ``rng``.
    """

    k: int = DEFAULT_K
    noise_scale: float = 0.0
    rng: np.random.Generator | None = None
    released_sizes: list[float] = field(default_factory=list)
    suppressed: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError(f"k must be at least 1, got {self.k}")
        if self.noise_scale < 0 or (self.noise_scale > 0 and self.rng is None):
            raise ValueError("noise_scale must be >= 0, and a noisy gate needs rng")

    def allow(self, name: str, user_ids: Iterable[str] | np.ndarray) -> bool:
        """Whether a group may be released (its size is recorded when it may).

        Args:
            name: the group's name (recorded when it is suppressed).
            user_ids: the user id of each conversation in the group.

        Returns:
            True when the group's distinct-user count (plus the gate's noise) is at least k.
        """
        n_users = float(len(set(np.asarray(list(user_ids)).tolist())))
        if self.noise_scale > 0:
            assert self.rng is not None
            n_users += float(self.rng.laplace(0.0, self.noise_scale))
        if n_users >= self.k:
            self.released_sizes.append(n_users)
            return True
        self.suppressed.append(name)
        return False

    @property
    def min_group_size(self) -> float:
        """The smallest released group's (noisy, under DP) user count; 0 when none."""
        return min(self.released_sizes) if self.released_sizes else 0.0


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

    def gate(self, k: int, groups: int) -> KAnonymity:
        """A k-anonymity gate for one partition into ``groups`` groups, noisy under DP.

        One user is in at most ``min(cap, groups)`` of the groups, so the vector of their
        distinct-user counts has that L1 sensitivity; the gate counts as one released table.
        """
        if self.epsilon is None:
            return KAnonymity(k)
        self._spend(f"gate.{len(self.tables)}")
        eps = self.per_table_epsilon
        assert eps is not None
        return KAnonymity(k, noise_scale=min(self.cap, groups) / eps, rng=self.rng)

    def _spend(self, name: str) -> None:
        if len(self.tables) >= self.n_tables:
            raise RuntimeError(f"privacy budget planned for {self.n_tables} tables, asked for more")
        self.tables.append(name)
        if self.per_table_epsilon is not None:
            self.spent += self.per_table_epsilon

    def release(self, name: str, table: np.ndarray) -> np.ndarray:
        """The table as released (noised under DP); the spend is recorded."""
        self._spend(name)
        eps = self.per_table_epsilon
        if eps is None:
            return np.asarray(table, float)
        return laplace_noise(table, sensitivity=float(self.cap), epsilon=eps, rng=self.rng)


_WORD_RE = re.compile(r"\w+")


def pii_in_text(text: str, pii: Iterable[str]) -> int:
    """How many of the PII strings (of at least 4 characters) occur in ``text`` as tokens of
    their own (see :func:`pii_leak_audit`).

    A string is looked for only when each of its words is a word of ``text`` (a set lookup),
    so tens of thousands of strings are checked against a file in well under a second.
    """
    words = set(_WORD_RE.findall(text))
    hits = 0
    for s in {s for s in pii if s and len(s) >= 4}:
        parts = _WORD_RE.findall(s)
        if parts and all(p in words for p in parts):
            hits += bool(re.search(rf"(?<![\w.]){re.escape(s)}(?![\w])", text))
    return hits


def pii_leak_audit(
    folder: str | os.PathLike[str], pii_strings: Iterable[str]
) -> tuple[int, list[str]]:
    """Count PII strings found in any file under ``folder`` (text or binary).

    A string of at least 4 characters counts where it stands as a token of its own (not
    inside a longer word or number: a 5-digit ZIP code inside ``0.0012345`` is no leak).

    Args:
        folder: the run folder.
        pii_strings: the PII strings planted in (or given for) the input.

    Returns:
        ``(hits, files)``: the number of (string, file) hits and the files holding any.
    """
    needles = list(pii_strings)
    hits, files = 0, []
    for path in sorted(Path(folder).rglob("*")):
        if not path.is_file():
            continue
        found = pii_in_text(path.read_bytes().decode("utf-8", errors="ignore"), needles)
        if found:
            hits += found
            files.append(str(path))
    return hits, files


#: The guarantees a released metric can carry (see :func:`release_manifest`).
GUARANTEES: dict[str, str] = {
    "dp": "user-level epsilon-DP (Laplace on capped counts and on the k-anonymity gates); "
    "the labelled set enters without DP; all analyses of the log together spend "
    "privacy.dp_epsilon_spent",
    "k_anonymous": "computed from exact counts over groups of >= k distinct users; no DP "
    "(dp_epsilon unset)",
    "k_anonymous_not_dp": "groups of >= k distinct users (terms used by >= k users); "
    "exact, not covered by DP even when dp_epsilon is set",
    "labelled_set": "computed on the labelled (training / calibration / audit) set only, "
    "which is assumed consented; not DP",
    "input_file": "exact counts about the input file's lines; not DP",
    "exact_aggregate": "an exact count or share over the whole log (which has >= k users); not DP",
    "judge_subset": "exact figures of the judge's replies on its audit rows and its random "
    "log subset (malformed and dropped shares); not DP",
    "synthetic": "synthetic validation only (planted truth, planted PII, fresh synthetic "
    "logs); absent on a user's log",
    "runtime": "run-time measurements (seconds, memory, throughput); not data-dependent "
    "beyond the log's size",
    "setting": "a configuration value",
}

_MANIFEST_PREFIXES: tuple[tuple[str, str], ...] = (
    ("privacy.k", "setting"),
    ("privacy.dp_epsilon", "setting"),
    ("privacy.dp_analyses", "setting"),
    ("privacy.dp_laplace_scale", "setting"),
    ("privacy.released_tables", "setting"),
    ("privacy.pii_leaks", "synthetic"),
    ("privacy.pii_strings_checked", "synthetic"),
    ("clusters.", "k_anonymous_not_dp"),
    ("classifier.", "labelled_set"),
    ("calibration.", "labelled_set"),
    # the judge study: its rates (judge.rate.*, judge_tfidf.rate.*, ...) are analyses of the
    # log like the main one (DP under DP, with their own share of the budget); the rest:
    ("judge.privacy.", "setting"),
    ("judge_tfidf.privacy.", "setting"),
    ("judge.agreement.", "labelled_set"),
    ("judge.kappa.", "labelled_set"),
    ("judge.macro_f1", "labelled_set"),
    ("judge.domain_accuracy", "labelled_set"),
    ("judge.covered.", "synthetic"),
    ("judge.identified", "labelled_set"),
    ("judge.malformed_rate", "judge_subset"),
    ("judge.dropped", "judge_subset"),
    ("judge.n_audit_positive", "labelled_set"),
    ("judge.n_audit", "setting"),
    ("judge.n_log", "setting"),
    ("judge.tokens", "runtime"),
    ("judge.seconds_per_item", "runtime"),
    ("choice.", "labelled_set"),
    ("input.", "input_file"),
    ("throughput", "runtime"),
    ("memory.", "runtime"),
    ("stage2.", "exact_aggregate"),
    ("scrub.replaced.", "exact_aggregate"),
    ("scrub.", "synthetic"),
    ("planted.", "synthetic"),
    ("abs_error", "synthetic"),
    ("covered.", "synthetic"),
    ("coverage.", "synthetic"),
    ("null", "synthetic"),
)


def release_manifest(metrics: Iterable[str], *, dp: bool) -> dict[str, str]:
    """Under which guarantee each released metric is released.

    Args:
        metrics: the metric keys of a run.
        dp: whether the run set ``dp_epsilon``.

    Returns:
        ``{key: guarantee}`` with guarantees from :data:`GUARANTEES`: the analyses' figures
        (rates, domain rates, trend, approval, amplifiers, the user and conversation counts,
        the smallest group, the suppressions; the judge study's ``judge.rate.*`` and
        ``judge_tfidf.rate.*`` likewise) are ``dp`` under DP and ``k_anonymous`` without;
        every other key by its prefix.
    """
    out = {}
    for key in metrics:
        kind = next((g for p, g in _MANIFEST_PREFIXES if key.startswith(p)), None)
        out[key] = kind or ("dp" if dp else "k_anonymous")
    return out

"""Population-optimal weak-strong policies and their two-threshold structure.

A policy sees a weak score ``S`` and chooses, possibly at random, to *accept*, *reject*, or
*defer* to the strong verifier (whose verdict ``H`` then decides). Over a known joint law of
``(S, H)`` the best policy solves::

    minimise   P(defer)
    subject to P(accept | H = 0) <= alpha,   P(reject | H = 1) <= beta.

On a discrete law with atoms ``s_i``, joint masses ``p1_i = P(S = s_i, H = 1)`` and
``p0_i = P(S = s_i, H = 0)``, this is a linear programme in the per-atom probabilities
``a_i`` (accept) and ``r_i`` (reject). Dropping ``a_i + r_i <= 1`` splits it into two
fractional knapsacks: accepting atom ``i`` costs ``p0_i`` of the budget ``alpha pi_0`` and
earns mass ``p0_i + p1_i``, a ratio ``1 / (1 - eta_i)`` with ``eta_i = P(H = 1 | S = s_i)``;
rejecting costs ``p1_i`` of ``beta pi_1`` for a ratio ``1 / eta_i``. So the optimum accepts
the atoms of highest ``eta`` and rejects those of lowest ``eta``, each up to its budget, with
one randomised atom at each boundary: **two thresholds on the calibrated score** ``eta``.
If the two sets meet, every atom is decided and nothing is deferred. When ``eta`` is
increasing in ``s`` (a calibrated, or monotonically miscalibrated, verifier) the thresholds
sit on the raw score axis; otherwise thresholding the raw score loses value, which is how
calibration enters. How much is deferred depends on how much mass sits at ``eta`` near 0 or
1, which is how sharpness enters.

``order="score"`` restricts the search to thresholds on the raw score (what a deployed policy
that only sees ``S`` can do); ``order="eta"`` is the unrestricted optimum.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from icml26.weak_strong._validate import check_level, check_stream

__all__ = [
    "PopulationPolicy",
    "ScoreLaw",
    "optimal_policy",
    "policy_risks",
    "score_thresholds",
]

Order = Literal["eta", "score"]


@dataclass(frozen=True)
class ScoreLaw:
    """A discrete joint law of weak score and correctness.

    Attributes:
        atoms: the distinct score values, increasing, in [0, 1].
        p_correct: ``P(S = atom, H = 1)`` per atom.
        p_incorrect: ``P(S = atom, H = 0)`` per atom. The masses sum to 1.
    """

    atoms: NDArray[np.float64]
    p_correct: NDArray[np.float64]
    p_incorrect: NDArray[np.float64]

    def __post_init__(self) -> None:
        a = np.asarray(self.atoms, dtype=np.float64)
        p1 = np.asarray(self.p_correct, dtype=np.float64)
        p0 = np.asarray(self.p_incorrect, dtype=np.float64)
        if a.ndim != 1 or a.size == 0 or p1.shape != a.shape or p0.shape != a.shape:
            raise ValueError(
                f"atoms, p_correct and p_incorrect must be 1-D arrays of one non-zero length, "
                f"got shapes {a.shape}, {p1.shape}, {p0.shape}"
            )
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(p1)) and np.all(np.isfinite(p0))):
            raise ValueError("a score law must hold finite numbers only")
        if a.min() < 0 or a.max() > 1 or np.any(np.diff(a) <= 0):
            raise ValueError("atoms must be strictly increasing and lie in [0, 1]")
        if p1.min() < 0 or p0.min() < 0:
            raise ValueError("probabilities must be non-negative")
        total = p1.sum() + p0.sum()
        if not np.isclose(total, 1.0, atol=1e-9):
            raise ValueError(f"the masses must sum to 1, got {total}")
        object.__setattr__(self, "atoms", a)
        object.__setattr__(self, "p_correct", p1)
        object.__setattr__(self, "p_incorrect", p0)

    @classmethod
    def from_samples(cls, scores: Any, labels: Any, *, bins: int | None = None) -> ScoreLaw:
        """The empirical law of a sample; with ``bins``, scores are pooled in equal-width bins
        (each bin's atom is the mean score in it)."""
        s, y = check_stream(scores, labels)
        if s.size == 0:
            raise ValueError("cannot build a score law from an empty sample")
        if bins is not None:
            if bins < 1:
                raise ValueError(f"bins must be at least 1, got {bins}")
            idx = np.minimum((s * bins).astype(np.intp), bins - 1)
            counts = np.bincount(idx, minlength=bins)
            keep = counts > 0
            atoms = np.bincount(idx, weights=s, minlength=bins)[keep] / counts[keep]
            c1 = np.bincount(idx, weights=y.astype(float), minlength=bins)[keep]
            c0 = counts[keep] - c1
            # Bin means are increasing because bins are ordered and disjoint.
            return cls(atoms, c1 / s.size, c0 / s.size)
        atoms, inv = np.unique(s, return_inverse=True)
        c1 = np.bincount(inv, weights=y.astype(float), minlength=atoms.size)
        c0 = np.bincount(inv, minlength=atoms.size) - c1
        return cls(atoms, c1 / s.size, c0 / s.size)

    @classmethod
    def from_density(
        cls, eta_of_score: Any, density: Any, *, grid: int = 2001, eps: float = 1e-12
    ) -> ScoreLaw:
        """Discretise a continuous law: score density ``density(s)`` and ``eta(s)`` on a grid of
        ``grid`` equal cells (evaluated at their midpoints)."""
        if grid < 2:
            raise ValueError(f"grid must be at least 2, got {grid}")
        s = (np.arange(grid) + 0.5) / grid  # cell midpoints: densities may blow up at 0 or 1
        d = np.clip(np.asarray(density(s), dtype=np.float64), 0.0, None)
        eta = np.clip(np.asarray(eta_of_score(s), dtype=np.float64), 0.0, 1.0)
        if d.sum() <= eps:
            raise ValueError("the density integrates to zero on [0, 1]")
        w = d / d.sum()
        return cls(s, w * eta, w * (1 - eta))

    @property
    def mass(self) -> NDArray[np.float64]:
        return self.p_correct + self.p_incorrect

    @property
    def pi1(self) -> float:
        """``P(H = 1)``, the base accuracy of the answers."""
        return float(self.p_correct.sum())

    @property
    def eta(self) -> NDArray[np.float64]:
        """``P(H = 1 | S = atom)`` (0.5 on atoms of zero mass)."""
        m = self.mass
        return np.divide(self.p_correct, m, out=np.full_like(m, 0.5), where=m > 0)


@dataclass(frozen=True)
class PopulationPolicy:
    """Per-atom probabilities of accepting and rejecting (the rest is deferred)."""

    law: ScoreLaw
    accept: NDArray[np.float64]
    reject: NDArray[np.float64]

    @property
    def defer(self) -> NDArray[np.float64]:
        return np.clip(1.0 - self.accept - self.reject, 0.0, 1.0)


def _fill(
    order: NDArray[np.intp], cost: NDArray[np.float64], budget: float, randomize: bool
) -> NDArray[np.float64]:
    """Greedy knapsack along ``order``: take atoms while their cost fits ``budget``."""
    take = np.zeros(cost.size)
    spent = 0.0
    tol = 1e-12
    for i in order:
        c = cost[i]
        if spent + c <= budget + tol:
            take[i] = 1.0
            spent += c
        else:
            if randomize and c > 0:
                take[i] = max(0.0, (budget - spent) / c)
            break
    return take


def optimal_policy(
    law: ScoreLaw,
    alpha: float,
    beta: float,
    *,
    order: Order = "eta",
    randomize: bool = True,
) -> PopulationPolicy:
    """The policy minimising ``P(defer)`` under the two error constraints (module docstring).

    Args:
        law: the joint law of score and correctness.
        alpha: target incorrect-acceptance rate ``P(accept | H = 0)``.
        beta: target incorrect-rejection rate ``P(reject | H = 1)``.
        order: ``"eta"`` thresholds the calibrated score (the unrestricted optimum);
            ``"score"`` thresholds the raw score (the best policy that only sees ``S``).
        randomize: randomise the boundary atom to use the budgets exactly (the LP optimum);
            ``False`` gives the best deterministic threshold pair.

    Returns:
        The :class:`PopulationPolicy` (accept / reject probability per atom).

    Raises:
        ValueError: a level outside (0, 1) or an unknown ``order``.
    """
    alpha, beta = check_level(alpha, "alpha"), check_level(beta, "beta")
    if order not in ("eta", "score"):
        raise ValueError(f"order must be 'eta' or 'score', got {order!r}")
    key = law.eta if order == "eta" else law.atoms
    # Stable sorts: among equal keys the higher score goes first for acceptance.
    idx = np.arange(law.atoms.size)
    acc_order = np.lexsort((-idx, -key))
    rej_order = np.lexsort((idx, key))
    pi0, pi1 = 1.0 - law.pi1, law.pi1
    a = _fill(acc_order, law.p_incorrect, alpha * pi0, randomize)
    r = _fill(rej_order, law.p_correct, beta * pi1, randomize)
    # Where the two knapsacks overlap every atom is decided; trim rejection to stay a policy.
    r = np.minimum(r, 1.0 - a)
    return PopulationPolicy(law, a, r)


def policy_risks(policy: PopulationPolicy) -> dict[str, float]:
    """Incorrect-acceptance/-rejection rates, strong frequency and final accuracy of a policy.

    Args:
        policy: a :class:`PopulationPolicy` (per-atom accept / reject probabilities).

    Returns:
        ``{"incorrect_accept", "incorrect_reject", "strong_freq", "final_accuracy"}``.
    """
    law = policy.law
    pi0, pi1 = 1.0 - law.pi1, law.pi1
    ia = float(np.dot(law.p_incorrect, policy.accept) / pi0) if pi0 > 0 else 0.0
    ir = float(np.dot(law.p_correct, policy.reject) / pi1) if pi1 > 0 else 0.0
    strong = float(np.dot(law.mass, policy.defer))
    acc = 1.0 - float(np.dot(law.p_incorrect, policy.accept) + np.dot(law.p_correct, policy.reject))
    return {
        "incorrect_accept": ia,
        "incorrect_reject": ir,
        "strong_freq": strong,
        "final_accuracy": acc,
    }


def score_thresholds(law: ScoreLaw, alpha: float, beta: float) -> tuple[float, float]:
    """The best deterministic pair ``(tau_a, tau_r)`` on the raw score axis.

    The policy is: accept when ``s > tau_a``, reject when ``s <= tau_r`` (and not accepted),
    defer otherwise, the convention of :mod:`icml26.weak_strong.policies`.
    """
    pol = optimal_policy(law, alpha, beta, order="score", randomize=False)
    acc_atoms = law.atoms[pol.accept > 0.5]
    rej_atoms = law.atoms[pol.reject > 0.5]
    below = law.atoms[law.atoms < acc_atoms.min()] if acc_atoms.size else law.atoms
    # tau_a: the largest atom not accepted (or -1 when everything is accepted).
    tau_a = float(below.max()) if below.size else -1.0
    tau_r = float(rej_atoms.max()) if rej_atoms.size else -1.0
    return tau_a, tau_r

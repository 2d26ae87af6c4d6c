"""The population study: optimal policies on known score laws, checked against an LP solver.

Two facts of the paper on laws we design (so they are tests of the implementation, reported
as figures, not claims): sharper calibrated verifiers need fewer strong calls, and a verifier
with a band of confident mistakes costs extra strong calls when thresholded on its raw score.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from icml26.shared import rng_for
from icml26.weak_strong.keys import akey
from icml26.weak_strong.population import ScoreLaw, optimal_policy, policy_risks

__all__ = ["SHARPNESS_FAMILY", "lp_defer", "population_laws", "population_study"]

#: Beta concentration ``kappa`` of the calibrated laws, sharp to blunt.
SHARPNESS_FAMILY = {"sharp": 0.5, "medium": 2.0, "blunt": 8.0}
_MEAN = 0.6


def _beta_pdf(a: float, b: float) -> Callable[[np.ndarray], np.ndarray]:
    from scipy.stats import beta as beta_dist

    return lambda s: beta_dist.pdf(s, a, b)


def _confident_mistakes(s: np.ndarray) -> np.ndarray:
    """``eta(s) = s`` except a band of confidently wrong scores, ``eta = 0.15`` on (0.8, 0.9]."""
    return np.where((s > 0.8) & (s <= 0.9), 0.15, s)


def population_laws() -> dict[str, ScoreLaw]:
    """The laws of the study: a calibrated Beta family and a non-monotone one.

    Returns:
        ``{"sharp", "medium", "blunt", "nonmonotone"} -> ScoreLaw``.
    """
    laws = {
        name: ScoreLaw.from_density(lambda s: s, _beta_pdf(k * _MEAN, k * (1 - _MEAN)))
        for name, k in SHARPNESS_FAMILY.items()
    }
    laws["nonmonotone"] = ScoreLaw.from_density(_confident_mistakes, _beta_pdf(2 * _MEAN, 2 * 0.4))
    return laws


def lp_defer(law: ScoreLaw, alpha: float, beta: float) -> float:
    """The LP optimum of ``P(defer)`` by a generic solver (HiGHS), the reference for the
    two-threshold solution.

    Args:
        law: a discrete law of score and correctness.
        alpha: target incorrect-acceptance rate.
        beta: target incorrect-rejection rate.

    Returns:
        The smallest strong-call frequency meeting both targets.

    Raises:
        RuntimeError: the solver fails.
    """
    from scipy.optimize import linprog

    n = law.atoms.size
    m = law.mass
    c = np.concatenate([-m, -m])  # maximise P(accept) + P(reject)
    pi0, pi1 = 1 - law.pi1, law.pi1
    a_ub = np.zeros((2 + n, 2 * n))
    a_ub[0, :n] = law.p_incorrect
    a_ub[1, n:] = law.p_correct
    a_ub[2:, :n] = np.eye(n)
    a_ub[2:, n:] = np.eye(n)
    b_ub = np.concatenate([[alpha * pi0, beta * pi1], np.ones(n)])
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, bounds=(0, 1), method="highs")
    if not res.success:
        raise RuntimeError(f"the LP solver failed: {res.message}")
    return float(1.0 + res.fun)


def population_study(alphas: Sequence[float], seed: int, n_laws: int = 25) -> dict[str, float]:
    """Strong-call frequency of the optimal policy on each law (calibrated-score and raw-score
    thresholds), each law's sharpness, and the largest gap to the LP solver on random laws.

    Args:
        alphas: targets (``alpha = beta``).
        seed: the run's seed (random laws come from its ``"laws"`` stream).
        n_laws: random discrete laws checked against the LP solver.

    Returns:
        ``population.*`` metrics.
    """
    out: dict[str, float] = {}
    for name, law in population_laws().items():
        eta = law.eta
        mean = float(np.dot(law.mass, eta))
        out[f"population.sharpness.{name}"] = float(np.dot(law.mass, (eta - mean) ** 2))
        for alpha in alphas:
            for order in ("eta", "score"):
                risks = policy_risks(optimal_policy(law, alpha, alpha, order=order))
                out[f"population.strong_freq.{name}.{order}_order.{akey(alpha)}"] = risks[
                    "strong_freq"
                ]
            out[f"population.strong_freq.{name}.{akey(alpha)}"] = out[
                f"population.strong_freq.{name}.eta_order.{akey(alpha)}"
            ]
    rng = rng_for(seed, "laws")
    gaps = []
    for _ in range(n_laws):
        n = int(rng.integers(5, 40))
        atoms = np.sort(rng.choice(np.linspace(0, 1, 1001), size=n, replace=False))
        mass = rng.dirichlet(np.ones(2 * n))
        law = ScoreLaw(atoms, mass[:n], mass[n:])
        a, b = rng.uniform(0.01, 0.45, size=2)
        ours = policy_risks(optimal_policy(law, a, b))["strong_freq"]
        gaps.append(abs(ours - lp_defer(law, a, b)))
    out["population.lp_gap"] = float(max(gaps))
    return out

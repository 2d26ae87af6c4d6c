"""The error-control guarantee of the online algorithm, as numbers for a given run.

For :class:`~icml26.weak_strong.policies.OnlineWeakStrong` with step ``eta``, exploration floor
``p_min`` and initial thresholds ``tau_a^1, tau_r^1``, on **any** stream (even one chosen by an
adversary who sees the past, but not the exploration coin of the current item)::

    #(incorrect accepted) - alpha #(incorrect)
        <= C_a - M^a_T,      C_a = max(0, (1 - tau_a^1) / eta + (1 - alpha) / p_min)
    #(correct rejected)   - beta  #(correct)
        <= C_r + M^r_T,      C_r = max(0, tau_r^1 / eta + (1 - beta) / p_min)

``C`` comes from the thresholds staying bounded on one side (above 1 nothing is accepted, so
``tau_a`` only falls there; below 0 nothing is rejected, so ``tau_r`` only rises); ``M`` is
the martingale of importance-weighting noise, with one-sided increments at most ``b`` and
predictable variance ``V_T``. Freedman's inequality, made uniform over ``V_T`` by peeling
on a doubling grid, bounds ``-M^a_T`` and ``M^r_T`` with probability ``1 - delta`` in total.
Dividing by ``#(incorrect)`` (``#(correct)``) gives bounds on the two rates that tend to
``alpha`` (``beta``) as the stream grows; exploration controls the martingale, the step size
the constant.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from icml26.weak_strong.policies import ACCEPT, REJECT, OnlineWeakStrong, Trace

__all__ = ["ErrorBound", "bound_constants", "freedman_radius", "online_error_bounds"]


def freedman_radius(variance: float, b: float, delta: float) -> float:
    """``eps`` with ``exp(-eps^2 / (2 (variance + b eps / 3))) = delta`` (Freedman, 1975)."""
    if not (0 < delta < 1):
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    if variance < 0 or b <= 0:
        raise ValueError(f"need variance >= 0 and b > 0, got {variance}, {b}")
    log_term = math.log(1.0 / delta)
    c = b * log_term / 3.0
    return c + math.sqrt(c * c + 2.0 * variance * log_term)


def _peeled_radius(variance: float, b: float, delta: float, v_max: float) -> float:
    """Freedman's radius valid simultaneously over a doubling grid of variance levels."""
    levels = max(1, math.ceil(math.log2(max(v_max, 2.0))) + 1)
    v_level = 2.0 ** math.ceil(math.log2(max(variance, 1.0)))
    return freedman_radius(v_level, b, delta / levels)


@dataclass(frozen=True)
class ErrorBound:
    """One side of the guarantee for one run."""

    rate: float  # the measured rate (incorrect acceptance or incorrect rejection)
    target: float  # alpha or beta
    bound: float  # the high-probability upper bound on the rate
    constant: float  # C
    radius: float  # the martingale radius
    count: int  # #(incorrect) or #(correct)

    @property
    def holds(self) -> bool:
        return self.rate <= self.bound + 1e-12


def bound_constants(policy: OnlineWeakStrong) -> tuple[float, float]:
    """The constants ``C_a``, ``C_r`` of the guarantee (module docstring): the deterministic
    slack of the rates is ``C_a / #wrong`` and ``C_r / #right``, so a tolerance ``tol`` needs
    ``C_r / tol`` right answers (and ``C_a / tol`` wrong ones).

    Args:
        policy: an online policy (its settings, not its state, are read).

    Returns:
        ``(C_a, C_r)``.
    """
    eta, p_min = policy.step_size, policy.explore_min
    c_a = max(0.0, (1.0 - policy.tau_a0) / eta + (1.0 - policy.alpha) / p_min)
    c_r = max(0.0, policy.tau_r0 / eta + (1.0 - policy.beta) / p_min)
    return c_a, c_r


def online_error_bounds(
    policy: OnlineWeakStrong, trace: Trace, *, delta: float = 0.05
) -> dict[str, ErrorBound]:
    """The accept- and reject-side guarantees for ``trace``, produced by ``policy`` from its
    initial state (uses its initial thresholds, step size, exploration floor and targets).

    Args:
        policy: the online policy that produced ``trace``.
        trace: its :class:`~icml26.weak_strong.policies.Trace`.
        delta: total failure probability of the two bounds.

    Returns:
        ``{"accept": ErrorBound, "reject": ErrorBound}``: each side's rate, the bound on it
        (``target + (C + radius) / count``) and its parts.

    Raises:
        ValueError: ``delta`` outside (0, 1).
    """
    if not (0 < delta < 1):
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    y, region, p = trace.labels, trace.region, trace.prob
    alpha, beta, p_min = policy.alpha, policy.beta, policy.explore_min
    n = y.size
    inv = (1.0 - p) / p  # variance of Q/p - 1 for a Bernoulli(p) query
    wrong, right = ~y, y
    acc, rej = region == ACCEPT, region == REJECT

    # accept side
    c_a, c_r = bound_constants(policy)
    v_a = float(np.sum(inv[wrong & acc]) * (1 - alpha) ** 2 + np.sum(inv[wrong & rej]) * alpha**2)
    b_a = max(1.0 - alpha, alpha * (1.0 / p_min - 1.0))
    vmax_a = n * max((1 - alpha) ** 2, alpha**2) * (1.0 / p_min - 1.0)
    r_a = _peeled_radius(v_a, b_a, delta / 2, vmax_a)
    # reject side
    v_r = float(np.sum(inv[right & rej]) * (1 - beta) ** 2 + np.sum(inv[right & acc]) * beta**2)
    b_r = max(1.0 - beta, beta * (1.0 / p_min - 1.0))
    vmax_r = n * max((1 - beta) ** 2, beta**2) * (1.0 / p_min - 1.0)
    r_r = _peeled_radius(v_r, b_r, delta / 2, vmax_r)

    n0, n1 = int(wrong.sum()), int(right.sum())
    ia = float((trace.accepted & wrong).sum() / n0) if n0 else 0.0
    ir = float((~trace.accepted & right).sum() / n1) if n1 else 0.0
    return {
        "accept": ErrorBound(ia, alpha, alpha + (c_a + r_a) / n0 if n0 else 1.0, c_a, r_a, n0),
        "reject": ErrorBound(ir, beta, beta + (c_r + r_r) / n1 if n1 else 1.0, c_r, r_r, n1),
    }

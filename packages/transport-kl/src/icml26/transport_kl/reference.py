"""Per-pair NumPy/SciPy reference implementations (the bench baseline and a test oracle).

Written the textbook way with ``scipy.linalg.sqrtm``/``logm``-free eigen-decompositions of
the transport map, independently of the JAX code in :mod:`icml26.transport_kl.gaussian`.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

__all__ = ["kl_np", "w2_np", "wkl_np"]


def kl_np(m1: np.ndarray, s1: np.ndarray, m2: np.ndarray, s2: np.ndarray) -> float:
    d = len(m1)
    c = linalg.cho_factor(s2)
    dm = m2 - m1
    logdet1 = np.linalg.slogdet(s1)[1]
    logdet2 = np.linalg.slogdet(s2)[1]
    return 0.5 * float(
        np.trace(linalg.cho_solve(c, s1)) + dm @ linalg.cho_solve(c, dm) - d + logdet2 - logdet1
    )


def w2_np(m1: np.ndarray, s1: np.ndarray, m2: np.ndarray, s2: np.ndarray) -> float:
    r1 = linalg.sqrtm(s1).real
    cross = linalg.sqrtm(r1 @ s2 @ r1).real
    dm = m2 - m1
    return float(np.sqrt(max(dm @ dm + np.trace(s1 + s2 - 2 * cross), 0.0)))


def wkl_np(m1: np.ndarray, s1: np.ndarray, m2: np.ndarray, s2: np.ndarray) -> float:
    """WKL, analog of ``KL(N1 || N2)``: the flow from ``N2`` to ``N1`` (see :func:`_wkl_flow_np`)."""
    return _wkl_flow_np(m2, s2, m1, s1)


def _wkl_flow_np(m1: np.ndarray, s1: np.ndarray, m2: np.ndarray, s2: np.ndarray) -> float:
    """WKL via the potential ``f = x^T A x / 2 + b^T x`` with ``A = log T`` (flow integrated by
    hand in the eigenbasis of ``A``: ``int_0^1 (F(1) - F(t)) dt``)."""
    r1 = linalg.sqrtm(s1).real
    r1_inv = np.linalg.inv(r1)
    t_map = r1_inv @ linalg.sqrtm(r1 @ s2 @ r1).real @ r1_inv
    tau, u = np.linalg.eigh(0.5 * (t_map + t_map.T))
    a = np.log(tau)
    v = np.diag(u.T @ s1 @ u)
    dm = u.T @ (m2 - m1)
    total = 0.0
    for ai, vi, di in zip(a, v, dm, strict=True):
        if abs(ai) < 1e-8:
            total += 0.5 * di**2
            continue
        e2 = np.exp(2 * ai)
        g = 0.5 * ai * e2 - 0.25 * (e2 - 1.0)
        total += g * (vi + di**2 / (np.exp(ai) - 1.0) ** 2)
    return float(total)

"""Shared fixtures: single-threaded XLA (the CI machine has 2 shared cores) and test pairs."""

from __future__ import annotations

import os

os.environ.setdefault(
    "XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
)

import numpy as np
import pytest


@pytest.fixture
def pair() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A fixed, generic (non-commuting) 2-D Gaussian pair."""
    m1 = np.array([0.2, -0.4])
    m2 = np.array([1.0, 0.7])
    s1 = np.array([[1.5, 0.4], [0.4, 0.8]])
    s2 = np.array([[0.6, -0.2], [-0.2, 1.1]])
    return m1, s1, m2, s2

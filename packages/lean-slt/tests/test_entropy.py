"""The entropy integral against closed forms; the Dudley bound's argument checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate

from icml26.lean_slt.entropy import (
    DUDLEY_CONSTANT,
    dudley_bound,
    entropy_integral,
    power_law_entropy_integral,
)


@settings(max_examples=40, deadline=None)
@given(st.floats(0.1, 10.0), st.floats(0.5, 50.0), st.floats(0.01, 1.0))
def test_power_law_closed_form(scale: float, power: float, frac: float) -> None:
    D = frac * scale
    num = entropy_integral(lambda e: power * np.log(scale / e), D)
    assert num == pytest.approx(power_law_entropy_integral(scale, power, D), rel=1e-6)


def test_integral_constant_lt_two() -> None:
    # integral_constant_lt_two: ∫_0^1 sqrt(log(1 + 2/u)) du < 2 (LinearRegression/IntegralBounds)
    v = entropy_integral(lambda u: np.log1p(2 / u), 1.0)
    ref, _ = integrate.quad(lambda u: math.sqrt(math.log1p(2 / u)), 0, 1, limit=200)
    assert v == pytest.approx(ref, rel=1e-7)
    assert v < 2


def test_step_function_is_exact() -> None:
    # N = 4 on (0, 0.5), N = 2 on [0.5, 1), N = 1 after: integral = 0.5 sqrt(log 4) + 0.5 sqrt(log 2)
    def log_n(e: np.ndarray) -> np.ndarray:
        return np.where(e < 0.5, math.log(4), np.where(e < 1.0, math.log(2), 0.0))

    exact = 0.5 * math.sqrt(math.log(4)) + 0.5 * math.sqrt(math.log(2))
    assert entropy_integral(log_n, 2.0, breakpoints=[0.5, 1.0], steps=True) == pytest.approx(exact)
    assert entropy_integral(log_n, 2.0, breakpoints=[0.5, 1.0]) == pytest.approx(exact, rel=1e-12)
    assert dudley_bound(log_n, 2.0, 3.0, breakpoints=[0.5, 1.0], steps=True) == pytest.approx(
        DUDLEY_CONSTANT * 3.0 * exact
    )


def test_constant() -> None:
    assert pytest.approx(12 * math.sqrt(2)) == DUDLEY_CONSTANT


@pytest.mark.parametrize(("kw", "msg"), [({"sigma": -1.0}, "sigma"), ({"sigma": 0.0}, "sigma")])
def test_bad_sigma(kw: dict[str, float], msg: str) -> None:
    with pytest.raises(ValueError, match=msg):
        dudley_bound(lambda e: np.zeros_like(e), 1.0, **kw)


def test_bad_diameter_and_nonfinite() -> None:
    with pytest.raises(ValueError, match="diameter"):
        entropy_integral(lambda e: np.zeros_like(e), 0.0)
    with pytest.raises(ValueError, match="not finite"):
        entropy_integral(lambda e: np.full_like(e, np.inf), 1.0)
    with pytest.raises(ValueError, match="breakpoints"):
        entropy_integral(lambda e: np.zeros_like(e), 1.0, steps=True)
    with pytest.raises(ValueError, match="diameter must be <= scale"):
        power_law_entropy_integral(1.0, 1.0, 2.0)

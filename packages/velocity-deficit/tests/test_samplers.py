"""Samplers integrate known ODEs to their stated order; SSC's schedule and neutrality."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.velocity_deficit.model import VelocityMLP
from icml26.velocity_deficit.samplers import integrate, steps_for_nfe, time_grid
from icml26.velocity_deficit.ssc import ScaleSchedule, corrected


def _ode(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """dx/dt = (2t - 1) x + cos(t): non-autonomous, linear."""
    return (2 * t - 1) * x + torch.cos(t)


def _exact(x0: float) -> float:
    # x(t) = e^{t^2 - t} (x0 + int_0^t e^{-(s^2 - s)} cos s ds); at t = 1 the prefactor is 1
    n = 200_000
    s = (torch.arange(n, dtype=torch.float64) + 0.5) / n
    return x0 + float((torch.exp(-(s**2 - s)) * torch.cos(s)).mean())


@pytest.mark.parametrize(("method", "order"), [("euler", 1), ("heun", 2), ("midpoint", 2)])
def test_convergence_order(method: str, order: int) -> None:
    x0 = torch.tensor([[0.7]], dtype=torch.float64)
    exact = _exact(0.7)
    errs = [abs(float(integrate(_ode, x0, steps=n, method=method)) - exact) for n in (20, 40, 80)]
    rates = [math.log2(errs[i] / errs[i + 1]) for i in range(2)]
    assert all(abs(r - order) < 0.15 for r in rates), rates


def test_power_grid_and_custom_grid() -> None:
    x0 = torch.tensor([[0.7]], dtype=torch.float64)
    g = time_grid(200, "power", rho=2.0)
    assert g[0] == 0
    assert g[-1] == 1
    assert torch.all(g[1:] > g[:-1])
    assert abs(float(integrate(_ode, x0, grid=g, method="heun")) - _exact(0.7)) < 1e-5
    _out, path = integrate(_ode, x0, grid=[0.0, 0.5, 1.0], return_path=True)
    assert len(path) == 3


def test_nfe_and_grid_errors() -> None:
    assert steps_for_nfe(50, "euler") == 50
    assert steps_for_nfe(50, "heun") == 25
    with pytest.raises(ValueError, match="NFE must be an integer >= 1"):
        steps_for_nfe(0, "euler")
    with pytest.raises(ValueError, match="not a multiple"):
        steps_for_nfe(5, "midpoint")
    with pytest.raises(ValueError, match="unknown sampler"):
        steps_for_nfe(5, "rk45")
    x0 = torch.zeros(2, 2)
    with pytest.raises(ValueError, match="steps must be an integer >= 1"):
        integrate(_ode, x0, steps=0)
    with pytest.raises(ValueError, match="from 0 \\(noise\\) to 1"):
        integrate(_ode, x0, grid=[0.0, 0.5, 0.9])
    with pytest.raises(ValueError, match="strictly increasing"):
        integrate(_ode, x0, grid=[0.0, 0.6, 0.5, 1.0])
    with pytest.raises(ValueError, match="velocity returned shape"):
        integrate(lambda x, t: x[:, :1], x0, steps=2)
    with pytest.raises(ValueError, match="NaN"):
        integrate(_ode, torch.full((2, 2), float("nan")), steps=2)


@pytest.mark.parametrize("method", ["euler", "heun", "midpoint"])
def test_neutral_ssc_equals_plain_sampler_exactly(method: str) -> None:
    model = VelocityMLP(5, width=16, depth=1).eval()

    def fn(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return model(x, t)

    x0 = torch.randn(32, 5)
    for schedule in (ScaleSchedule("power", 0.0, 2.0), ScaleSchedule("window", 0.0, t_stop=0.3)):
        assert schedule.neutral
        plain = integrate(fn, x0, steps=7, method=method)
        ssc = integrate(corrected(fn, schedule), x0, steps=7, method=method)
        assert torch.equal(plain, ssc)


@given(alpha=st.floats(-0.5, 1.0), beta=st.floats(1.0, 5.0))
@settings(max_examples=20, deadline=None)
def test_power_schedule_shape_and_integral(alpha: float, beta: float) -> None:
    s = ScaleSchedule("power", alpha, beta)
    assert float(s(0.0)) == pytest.approx(1 + alpha)
    assert float(s(1.0)) == pytest.approx(1.0)
    # constant unit velocity: the corrected flow moves by int_0^1 gamma = 1 + alpha / (beta + 1)
    out = integrate(
        corrected(lambda x, t: torch.ones_like(x), s),
        torch.zeros(1, 1, dtype=torch.float64),
        steps=400,
        method="midpoint",
    )
    assert float(out) == pytest.approx(1 + alpha / (beta + 1), abs=1e-4)


def test_window_schedule_and_labels() -> None:
    s = ScaleSchedule("window", 0.2, t_stop=0.4)
    assert torch.allclose(
        s(torch.tensor([0.0, 0.39, 0.4, 0.9])), torch.tensor([1.2, 1.2, 1.0, 1.0])
    )
    assert ScaleSchedule("power", -0.05, 2.0).label() == "am0p05_b2"
    with pytest.raises(ValueError, match="alpha"):
        ScaleSchedule("power", -1.5)
    with pytest.raises(ValueError, match="beta"):
        ScaleSchedule("power", 0.1, 0.0)
    with pytest.raises(ValueError, match="kind"):
        ScaleSchedule("linear", 0.1)  # type: ignore[arg-type]


def test_ssc_strength_from_the_start_ratio() -> None:
    """``gamma(0) = 1 / R(0)`` restores the target speed at the noise end; ``gamma(1) = 1``."""
    s = ScaleSchedule.from_start_ratio(0.8, beta=2.0)
    assert float(s(0.0)) == pytest.approx(1.25)
    assert float(s(1.0)) == 1.0
    assert s.alpha == pytest.approx(0.25)
    assert s.beta == 2.0
    assert ScaleSchedule.from_start_ratio(1.0).neutral
    w = ScaleSchedule.from_start_ratio(0.5, kind="window", t_stop=0.3)
    assert float(w(0.2)) == pytest.approx(2.0)
    assert float(w(0.5)) == 1.0
    for bad in (0.0, -0.3, float("nan")):
        with pytest.raises(ValueError, match="start velocity ratio"):
            ScaleSchedule.from_start_ratio(bad)

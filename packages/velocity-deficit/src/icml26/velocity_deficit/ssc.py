"""The Scale Schedule Corrector (SSC): training-free rescaling of a trained velocity field.

SSC replaces ``v(x, t)`` by ``gamma(t) v(x, t)`` at sampling time ("one line of code"). Its
shape follows the paper's asymmetry: the MSE-trained field is too short where the trajectory
starts (kinetic stagnation, harmful), and its contraction near the data is a useful denoiser,
so ``gamma > 1`` early and ``gamma -> 1`` at t = 1 (t = 0 noise, t = 1 data). The paper gives no
formula in its abstract; we expose two families and sweep their parameters:

* ``power``:  ``gamma(t) = 1 + alpha (1 - t)^beta``  (a secondhand summary of the paper's form;
  ``beta`` sets how fast the injection fades);
* ``window``: ``gamma(t) = 1 + alpha`` for ``t < t_stop``, else 1 (inject only early).

Magnitude (:meth:`ScaleSchedule.from_start_ratio`): the paper sizes the injection by the
measured deficit where the trajectory starts. With ``R(0) = E|v(x_0, 0)| / E|x1 - x0|`` the
velocity ratio of the trained model at the noise end, ``gamma(0) = 1 / R(0)`` restores the
target speed there, i.e. ``alpha = 1 / R(0) - 1``; the decay ``beta`` (how soon the schedule
returns to 1, keeping the end-of-path contraction) is the one free parameter left.

``alpha = 0`` is the neutral schedule: the corrected sampler equals the plain one exactly
(multiplication by 1.0 is exact in floating point). ``alpha < 0`` contracts instead: the sweep
includes it as a control.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch

from icml26.velocity_deficit.samplers import VelocityFn

__all__ = ["ScaleSchedule", "corrected"]


@dataclass(frozen=True)
class ScaleSchedule:
    """``gamma(t)`` of SSC (module docstring).

    Attributes:
        kind: ``power`` or ``window``.
        alpha: injection strength (``gamma(0) = 1 + alpha``); 0 is neutral.
        beta: decay exponent of ``power`` (> 0).
        t_stop: end of the injection window of ``window``, in (0, 1].
    """

    kind: Literal["power", "window"] = "power"
    alpha: float = 0.0
    beta: float = 1.0
    t_stop: float = 0.5

    def __post_init__(self) -> None:
        if self.kind not in ("power", "window"):
            raise ValueError(f"SSC kind must be 'power' or 'window', got {self.kind!r}")
        if not math.isfinite(self.alpha) or self.alpha <= -1:
            raise ValueError(f"SSC alpha must be finite and > -1 (gamma > 0), got {self.alpha}")
        if not (self.beta > 0 and math.isfinite(self.beta)):
            raise ValueError(f"SSC beta must be > 0, got {self.beta}")
        if not 0 < self.t_stop <= 1:
            raise ValueError(f"SSC t_stop must lie in (0, 1], got {self.t_stop}")

    @property
    def neutral(self) -> bool:
        return self.alpha == 0.0

    def __call__(self, t: torch.Tensor | float) -> torch.Tensor:
        """``gamma(t)`` (same shape as ``t``)."""
        t = torch.as_tensor(t)
        if self.kind == "power":
            return 1.0 + self.alpha * (1.0 - t).clamp_min(0) ** self.beta
        return torch.where(t < self.t_stop, 1.0 + self.alpha, 1.0).to(
            t.dtype if t.is_floating_point() else torch.float64
        )

    @classmethod
    def from_start_ratio(
        cls,
        r0: float,
        *,
        kind: Literal["power", "window"] = "power",
        beta: float = 1.0,
        t_stop: float = 0.5,
    ) -> ScaleSchedule:
        """The schedule with ``gamma(0) = 1 / r0`` (``alpha = 1 / r0 - 1``), ``r0`` the measured
        start ratio ``R(0)`` of the model being corrected (module docstring)."""
        if not (math.isfinite(r0) and r0 > 0):
            raise ValueError(f"the start velocity ratio R(0) must be finite and > 0, got {r0}")
        return cls(kind, alpha=1.0 / r0 - 1.0, beta=beta, t_stop=t_stop)

    def label(self) -> str:
        """A metric-key-safe name, e.g. ``a0p2_b2`` (``p`` for the decimal point, ``m`` for minus)."""

        def fmt(v: float) -> str:
            return f"{v:g}".replace("-", "m").replace(".", "p")

        second = fmt(self.beta) if self.kind == "power" else "w" + fmt(self.t_stop)
        return f"a{fmt(self.alpha)}_b{second}"


def corrected(velocity: VelocityFn, schedule: ScaleSchedule) -> VelocityFn:
    """``(x, t) -> gamma(t) velocity(x, t)``: SSC around any velocity function."""

    def v_ssc(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return schedule(t).to(dtype=x.dtype, device=x.device) * velocity(x, t)

    return v_ssc

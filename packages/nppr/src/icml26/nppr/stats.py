"""Confidence intervals for robustness rates, and the sample sizes a half-width needs.

Every metric here is a mean over inputs of a per-input rate in [0, 1]:

* clean accuracy and AR: a 0/1 outcome per input (one "sample" each);
* PR and NPPR: the Monte-Carlo rate ``k_i / m`` of ``m`` perturbations that keep the label.

The interval for such a mean is a **Wilson score interval with a Kish design-effect sample
size**: the variance of the mean is estimated from the spread of the per-input rates across
inputs (which holds both the between-input variation and the Monte-Carlo noise), turned into
an effective number of Bernoulli draws ``n_eff = p(1-p) / var(mean)``, capped at the total
number of draws ``n m``, and given to Wilson's formula. For 0/1 outcomes ``n_eff`` is the
number of inputs (the plain Wilson interval); when every input has the same rate it falls back
to Wilson over all ``n m`` draws, so a perfectly robust model gets ``[1 - O(1/nm), 1]`` rather
than a zero-width interval. Wilson's formula is :func:`icml26.shared.stats.wilson_interval` (tested against SciPy there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from icml26.shared.stats import wilson_interval, z_quantile

__all__ = [
    "Estimate",
    "estimate_from_rates",
    "inputs_for_halfwidth",
    "samples_for_halfwidth",
]


def _z(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be in (0, 1), got {level}")
    return z_quantile(level)


@dataclass(frozen=True)
class Estimate:
    """A robustness rate with its interval and what it cost.

    Attributes:
        value: the mean over inputs of the per-input rate.
        lo, hi: the interval (``level``, see the module docstring for the method).
        n_inputs: inputs averaged over.
        samples_per_input: Monte-Carlo draws per input (1 for clean accuracy and AR).
        forward_passes: classifier forward passes spent (gradient steps count as one each).
        seconds: wall time spent.
        rates: the per-input rates.
    """

    value: float
    lo: float
    hi: float
    n_inputs: int
    samples_per_input: int
    forward_passes: int = 0
    seconds: float = 0.0
    level: float = 0.95
    rates: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)

    @property
    def halfwidth(self) -> float:
        """Half the interval's width."""
        return (self.hi - self.lo) / 2

    def as_metrics(self, key: str) -> dict[str, float]:
        """The estimate as metrics.

        Args:
            key: the metric key.

        Returns:
            ``{key: value, key.lo: lo, key.hi: hi}``.
        """
        return {key: self.value, f"{key}.lo": self.lo, f"{key}.hi": self.hi}

    def on(self, mask: np.ndarray) -> Estimate:
        """The same estimate averaged over the inputs ``mask`` selects (e.g. clean-correct).

        Args:
            mask: a boolean array, one entry per input.

        Returns:
            A new :class:`Estimate` over the selected inputs (cost figures kept).

        Raises:
            ValueError: ``mask`` of the wrong length, or selecting no input.
        """
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != self.rates.shape:
            raise ValueError(f"mask has shape {mask.shape}, the rates {self.rates.shape}")
        if not mask.any():
            raise ValueError("the mask selects no input")
        return estimate_from_rates(
            self.rates[mask],
            self.samples_per_input,
            level=self.level,
            forward_passes=self.forward_passes,
            seconds=self.seconds,
        )


def estimate_from_rates(
    rates: np.ndarray,
    samples_per_input: int,
    *,
    level: float = 0.95,
    forward_passes: int = 0,
    seconds: float = 0.0,
) -> Estimate:
    """An :class:`Estimate` of the mean of ``rates`` (per-input rates from ``m`` draws each)."""
    rates = np.asarray(rates, dtype=np.float64)
    if rates.ndim != 1 or rates.size == 0:
        raise ValueError("rates must be a non-empty 1-D array of per-input rates")
    if not np.all(np.isfinite(rates)) or rates.min() < 0 or rates.max() > 1:
        raise ValueError("per-input rates must be finite and in [0, 1]")
    if samples_per_input < 1:
        raise ValueError("samples_per_input must be >= 1")
    n = rates.size
    p = float(rates.mean())
    total = float(n * samples_per_input)
    # ddof=0 so that 0/1 outcomes give n_eff = n exactly (the plain Wilson interval).
    var_mean = float(rates.var()) / n if n > 1 else 0.0
    n_eff = min(total, p * (1 - p) / var_mean) if var_mean > 0 and 0 < p < 1 else total
    lo, hi = wilson_interval(p * n_eff, n_eff, level)
    return Estimate(
        value=p,
        lo=lo,
        hi=hi,
        n_inputs=n,
        samples_per_input=samples_per_input,
        forward_passes=forward_passes,
        seconds=seconds,
        level=level,
        rates=rates,
    )


def samples_for_halfwidth(halfwidth: float, p: float = 0.5, level: float = 0.95) -> int:
    """Independent 0/1 draws for a normal-approximation half-width ``halfwidth`` at rate ``p``
    (``p = 0.5`` is the worst case): ``n = z^2 p (1 - p) / h^2``."""
    if not 0 < halfwidth < 1:
        raise ValueError(f"halfwidth must be in (0, 1), got {halfwidth}")
    if not 0 <= p <= 1:
        raise ValueError(f"p must be in [0, 1], got {p}")
    z = _z(level)
    return max(1, math.ceil(z * z * max(p * (1 - p), 1e-12) / halfwidth**2))


def inputs_for_halfwidth(estimate: Estimate, halfwidth: float) -> int:
    """Inputs needed (at the same draws per input) for a half-width ``halfwidth``, from the
    spread of ``estimate``'s per-input rates: ``n = z^2 s^2 / h^2``."""
    if not 0 < halfwidth < 1:
        raise ValueError(f"halfwidth must be in (0, 1), got {halfwidth}")
    z = _z(estimate.level)
    rates = estimate.rates
    s2 = float(rates.var(ddof=1)) if rates.size > 1 else 0.25
    if s2 == 0:
        p = estimate.value
        s2 = max(p * (1 - p), 1.0 / (estimate.n_inputs * estimate.samples_per_input))
    return max(1, math.ceil(z * z * s2 / halfwidth**2))

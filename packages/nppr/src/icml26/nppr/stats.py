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
than a zero-width interval. A percentile bootstrap over inputs is offered as a check.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as _st

__all__ = [
    "Estimate",
    "bootstrap_interval",
    "clopper_pearson_interval",
    "estimate_from_rates",
    "inputs_for_halfwidth",
    "samples_for_halfwidth",
    "wilson_interval",
]


def _z(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be in (0, 1), got {level}")
    return float(_st.norm.ppf(0.5 + level / 2.0))


def wilson_interval(successes: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial rate ``successes / n`` (``n`` may be fractional)."""
    if n <= 0:
        raise ValueError(f"n must be positive, got {n}")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, n], got {successes} of {n}")
    z = _z(level)
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # At p = 0 or 1 the bound is exactly 0 or 1 in exact arithmetic; do not let rounding move it.
    lo = 0.0 if successes <= 0 else max(0.0, centre - half)
    hi = 1.0 if successes >= n else min(1.0, centre + half)
    return lo, hi


def clopper_pearson_interval(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact (conservative) Clopper-Pearson interval from the beta quantiles."""
    if n <= 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n and n > 0, got {successes} of {n}")
    alpha = 1.0 - level
    lo = 0.0 if successes == 0 else float(_st.beta.ppf(alpha / 2, successes, n - successes + 1))
    hi = 1.0 if successes == n else float(_st.beta.ppf(1 - alpha / 2, successes + 1, n - successes))
    return lo, hi


def bootstrap_interval(
    rates: np.ndarray, level: float = 0.95, n_boot: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap over inputs of the mean per-input rate."""
    rates = np.asarray(rates, dtype=np.float64)
    if rates.ndim != 1 or rates.size == 0:
        raise ValueError("rates must be a non-empty 1-D array")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, rates.size, size=(n_boot, rates.size))
    means = rates[idx].mean(axis=1)
    a = (1.0 - level) / 2
    return float(np.quantile(means, a)), float(np.quantile(means, 1 - a))


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
        return (self.hi - self.lo) / 2

    def as_metrics(self, key: str) -> dict[str, float]:
        """``{key: value, key.lo: lo, key.hi: hi}`` (the issue's metric contract)."""
        return {key: self.value, f"{key}.lo": self.lo, f"{key}.hi": self.hi}


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

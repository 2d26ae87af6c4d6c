"""Online decision-making environments with exactly computed regret (NumPy only).

An environment is named ``<kind>_k<K>_t<T>``:

* ``bernoulli``: stochastic K-armed bandit, arm means ``μ_k ~ U(0, 1)``, rewards
  ``Bernoulli(μ_k)``, bandit feedback (only the chosen arm's reward is seen).
* ``gaussian``: means ``μ_k ~ U(0, 1)``, rewards ``N(μ_k, σ²)`` with ``σ = 0.5`` (the same
  gaps, a different reward process).
* ``nonstationary``: Bernoulli rewards whose means are redrawn from ``U(0, 1)`` at
  ``n_changes`` evenly spaced change points (abruptly changing bandit).
* ``experts``: full-information online learning: each round every arm's reward is revealed
  (Bernoulli with means ``U(0, 1)``); regret is against the best fixed arm in hindsight.
* ``restaurants``: a ``bernoulli`` bandit that LLM policies see described as a story
  (choosing restaurants, a customer likes the meal or not): the natural-language-described
  scenario. Numerically identical to ``bernoulli``.

Every instance carries its whole reward table ``rewards[n, t, k]`` drawn up front, so all
policies evaluated on the same instances face the same randomness (common random numbers)
and regret is a deterministic function of the actions.

Regret (computed exactly, per step, so curves are cumulative sums):

* stochastic and non-stationary bandits: the (dynamic) pseudo-regret
  ``R_T = Σ_t (max_k μ_{t,k} − μ_{t,a_t})``, the expectation over rewards given the actions;
* experts: the realised regret against the best fixed arm in hindsight,
  ``R_t = max_k Σ_{s≤t} r_{s,k} − Σ_{s≤t} r_{s,a_s}`` (may be negative).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from icml26.rmft.config import ENV_NAME, KINDS

__all__ = [
    "KINDS",
    "EnvSpec",
    "Instances",
    "cumulative_regret",
    "parse_env",
    "sample_instances",
]

Kind = Literal["bernoulli", "gaussian", "nonstationary", "experts", "restaurants"]
_NAME = ENV_NAME
GAUSSIAN_SIGMA = 0.5


@dataclass(frozen=True)
class EnvSpec:
    """An environment family: kind, number of arms ``K``, horizon ``T``.

    Raises:
        ValueError: unknown kind, ``K < 2`` or ``T < 1``.
    """

    kind: Kind
    n_arms: int
    horizon: int
    n_changes: int = 3  # nonstationary only

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown environment kind {self.kind!r}; expected one of {KINDS}")
        if isinstance(self.n_arms, bool) or not isinstance(self.n_arms, int) or self.n_arms < 2:
            raise ValueError(f"an environment needs K >= 2 arms, got K = {self.n_arms!r}")
        if isinstance(self.horizon, bool) or not isinstance(self.horizon, int) or self.horizon < 1:
            raise ValueError(f"the horizon must be T >= 1, got T = {self.horizon!r}")
        if self.n_changes < 0:
            raise ValueError(f"n_changes must be >= 0, got {self.n_changes}")

    @property
    def name(self) -> str:
        return f"{self.kind}_k{self.n_arms}_t{self.horizon}"

    @property
    def full_information(self) -> bool:
        """True when every arm's reward is revealed each round (experts)."""
        return self.kind == "experts"

    @property
    def binary_rewards(self) -> bool:
        return self.kind != "gaussian"


def parse_env(name: str | EnvSpec) -> EnvSpec:
    """``"bernoulli_k5_t50"`` -> ``EnvSpec("bernoulli", 5, 50)``.

    Args:
        name: an environment name ``<kind>_k<K>_t<T>`` (see the module docstring), or an
            :class:`EnvSpec` (returned as is).

    Returns:
        The :class:`EnvSpec`.

    Raises:
        ValueError: the name does not match ``<kind>_k<K>_t<T>`` or its values are invalid.
    """
    if isinstance(name, EnvSpec):
        return name
    match = _NAME.match(str(name))
    if not match:
        raise ValueError(
            f"environment name {name!r} must look like '<kind>_k<K>_t<T>' with kind in {KINDS}"
        )
    return EnvSpec(match["kind"], int(match["k"]), int(match["t"]))  # type: ignore[arg-type]


@dataclass(frozen=True)
class Instances:
    """``n`` instances of an environment.

    Attributes:
        spec: the environment.
        means: ``(n, T, K)`` expected reward of each arm at each step.
        rewards: ``(n, T, K)`` realised reward of each arm at each step (drawn up front).
    """

    spec: EnvSpec
    means: np.ndarray
    rewards: np.ndarray

    def __post_init__(self) -> None:
        _n, t, k = self.means.shape
        if self.rewards.shape != self.means.shape:
            raise ValueError(f"rewards {self.rewards.shape} and means {self.means.shape} differ")
        if (t, k) != (self.spec.horizon, self.spec.n_arms):
            raise ValueError(f"tables are (T, K) = {(t, k)} but the spec says {self.spec}")

    @property
    def n(self) -> int:
        return int(self.means.shape[0])

    def repeat(self, m: int) -> Instances:
        """Each instance ``m`` times in a row (``[i0, i0, ..., i1, i1, ...]``): several
        rollouts of one policy on the same instance and the same reward table."""
        if m < 1:
            raise ValueError(f"m must be >= 1, got {m}")
        return Instances(
            self.spec, np.repeat(self.means, m, axis=0), np.repeat(self.rewards, m, axis=0)
        )

    def worst_step_regret(self) -> np.ndarray:
        """``(n, T)``: the regret of the worst arm at each step, ``max_k μ_{t,k} - min_k μ_{t,k}``
        (what an unparsable LLM reply is charged when rollouts are selected)."""
        return self.means.max(axis=2) - self.means.min(axis=2)

    def step_regret(self, actions: np.ndarray) -> np.ndarray:
        """Per-step regret ``(n, T)`` of ``actions`` ``(n, T)``; its cumulative sum along
        time is the regret curve (see the module docstring)."""
        actions = np.asarray(actions)
        if actions.shape != self.means.shape[:2]:
            raise ValueError(
                f"actions must have shape (n, T) = {self.means.shape[:2]}, got {actions.shape}"
            )
        if actions.min(initial=0) < 0 or actions.max(initial=0) >= self.spec.n_arms:
            raise ValueError(f"actions must lie in 0..{self.spec.n_arms - 1}")
        rows = np.arange(self.n)[:, None]
        steps = np.arange(self.spec.horizon)[None, :]
        if self.spec.full_information:
            cum = np.cumsum(self.rewards, axis=1)  # (n, T, K)
            got = np.cumsum(self.rewards[rows, steps, actions], axis=1)
            curve = cum.max(axis=2) - got
            return np.diff(curve, axis=1, prepend=0.0)
        return self.means.max(axis=2) - self.means[rows, steps, actions]


def cumulative_regret(instances: Instances, actions: np.ndarray) -> np.ndarray:
    """Regret curve ``(n, T)``: entry ``[i, t]`` is the regret after step ``t + 1``."""
    return np.cumsum(instances.step_regret(actions), axis=1)


def sample_instances(spec: EnvSpec | str, n: int, rng: np.random.Generator) -> Instances:
    """Draw ``n`` instances with their reward tables (see the module docstring).

    Args:
        spec: the environment (a name or an :class:`EnvSpec`).
        n: how many instances.
        rng: draws the arm means and the rewards.

    Returns:
        :class:`Instances` with ``means`` and ``rewards`` of shape ``(n, T, K)``.

    Raises:
        ValueError: ``n < 1`` or a bad environment name.
    """
    spec = parse_env(spec)
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    k, t = spec.n_arms, spec.horizon
    if spec.kind == "nonstationary":
        segments = min(spec.n_changes + 1, t)
        seg_means = rng.uniform(0.0, 1.0, size=(n, segments, k))
        seg_of_step = np.minimum(np.arange(t) * segments // t, segments - 1)
        means = seg_means[:, seg_of_step, :]
    else:
        means = np.broadcast_to(rng.uniform(0.0, 1.0, size=(n, 1, k)), (n, t, k)).copy()
    if spec.kind == "gaussian":
        rewards = means + GAUSSIAN_SIGMA * rng.standard_normal(size=means.shape)
    else:
        rewards = (rng.uniform(size=means.shape) < means).astype(np.float64)
    return Instances(spec, means, rewards)

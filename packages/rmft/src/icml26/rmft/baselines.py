"""Classical online-learning algorithms, batched over instances (the reference policies).

* :class:`UCB` — UCB1 (Auer, Cesa-Bianchi & Fischer 2002): each arm once, then
  ``argmax_k  mean_k + sqrt(c · ln t / n_k)``, ``c = 2``.
* :class:`ThompsonSampling` — Beta(1 + successes, 1 + failures) posteriors for binary rewards;
  Gaussian posteriors ``N(mean_k, σ² / (n_k + 1))`` otherwise.
* :class:`Greedy` — each arm once, then the best empirical mean (follow-the-leader with full
  information). The "LLMs are greedy agents" failure mode.
* :class:`EXP3` — exponential weights with importance-weighted reward estimates and uniform
  exploration ``γ`` (Auer et al. 2002), tuned for the horizon.
* :class:`Hedge` — exponential weights on full-information rewards, ``η = sqrt(8 ln K / T)``
  (the FTRL/Hedge reference for the experts setting).
* :class:`RandomPolicy`, :class:`Oracle` (plays the best arm of each step: zero regret).

Ties are broken uniformly at random.
"""

from __future__ import annotations

import math

import numpy as np

from icml26.rmft.envs import GAUSSIAN_SIGMA, EnvSpec, Instances

__all__ = [
    "EXP3",
    "UCB",
    "Greedy",
    "Hedge",
    "Oracle",
    "RandomPolicy",
    "ThompsonSampling",
    "make_baseline",
]


def _argmax_random_ties(scores: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    best = scores.max(axis=1, keepdims=True)
    ties = np.isclose(scores, best, rtol=0.0, atol=1e-12) | (scores == best)
    noise = rng.random(scores.shape)
    return np.argmax(np.where(ties, noise, -1.0), axis=1)


class _Counting:
    """Per-arm counts and reward sums of what was observed (bandit feedback)."""

    name = "counting"

    def reset(self, spec: EnvSpec, n: int, rng: np.random.Generator) -> None:
        self.spec, self.n, self.rng = spec, n, rng
        self.counts = np.zeros((n, spec.n_arms))
        self.sums = np.zeros((n, spec.n_arms))
        self.full_sums = np.zeros((n, spec.n_arms))

    def update(
        self, t: int, actions: np.ndarray, rewards: np.ndarray, full: np.ndarray | None
    ) -> None:
        rows = np.arange(self.n)
        self.counts[rows, actions] += 1
        self.sums[rows, actions] += rewards
        if full is not None:
            self.full_sums += full

    def _unpulled_first(self, scores: np.ndarray) -> np.ndarray:
        """argmax of ``scores`` except that rows with an unpulled arm pull one of those."""
        unpulled = self.counts == 0
        scores = np.where(unpulled.any(axis=1, keepdims=True), unpulled.astype(float), scores)
        return _argmax_random_ties(scores, self.rng)


class UCB(_Counting):
    def __init__(self, c: float = 2.0) -> None:
        if c <= 0:
            raise ValueError(f"UCB exploration constant must be > 0, got {c}")
        self.c = c
        self.name = "ucb"

    def act(self, t: int) -> np.ndarray:
        n_k = np.maximum(self.counts, 1)
        bonus = np.sqrt(self.c * math.log(max(t, 1)) / n_k)
        return self._unpulled_first(self.sums / n_k + bonus)


class ThompsonSampling(_Counting):
    name = "ts"

    def act(self, t: int) -> np.ndarray:
        if self.spec.binary_rewards:
            draws = self.rng.beta(1.0 + self.sums, 1.0 + self.counts - self.sums)
        else:
            mean = self.sums / (self.counts + 1.0)
            draws = mean + GAUSSIAN_SIGMA / np.sqrt(self.counts + 1.0) * self.rng.standard_normal(
                self.counts.shape
            )
        return _argmax_random_ties(draws, self.rng)


class Greedy(_Counting):
    name = "greedy"

    def act(self, t: int) -> np.ndarray:
        if self.spec.full_information:
            return _argmax_random_ties(self.full_sums, self.rng)
        return self._unpulled_first(self.sums / np.maximum(self.counts, 1))


class _ExpWeights:
    def _sample(self, probs: np.ndarray) -> np.ndarray:
        u = self.rng.random((probs.shape[0], 1))
        idx = (np.cumsum(probs, axis=1) < u).sum(axis=1)
        return np.minimum(idx, probs.shape[1] - 1)


class EXP3(_ExpWeights):
    """EXP3 with ``γ = min(1, sqrt(K ln K / ((e − 1) T)))`` and ``η = γ / K``; rewards are
    clipped to ``[0, 1]`` for the importance-weighted estimates."""

    name = "exp3"

    def reset(self, spec: EnvSpec, n: int, rng: np.random.Generator) -> None:
        k, horizon = spec.n_arms, spec.horizon
        self.n, self.k, self.rng = n, k, rng
        self.gamma = min(1.0, math.sqrt(k * math.log(k) / ((math.e - 1) * horizon)))
        self.eta = self.gamma / k
        self.scores = np.zeros((n, k))
        self.probs = np.full((n, k), 1.0 / k)

    def act(self, t: int) -> np.ndarray:
        z = self.eta * self.scores
        w = np.exp(z - z.max(axis=1, keepdims=True))
        self.probs = (1 - self.gamma) * w / w.sum(axis=1, keepdims=True) + self.gamma / self.k
        return self._sample(self.probs)

    def update(
        self, t: int, actions: np.ndarray, rewards: np.ndarray, full: np.ndarray | None
    ) -> None:
        rows = np.arange(self.n)
        self.scores[rows, actions] += np.clip(rewards, 0.0, 1.0) / self.probs[rows, actions]


class Hedge(_ExpWeights):
    """Hedge / exponential weights (FTRL with entropy): ``p_t ∝ exp(η Σ_{s<t} r_s)``.

    With bandit feedback it falls back to the observed rewards only (then it is a poor
    bandit algorithm: it is meant for the experts setting)."""

    name = "hedge"

    def reset(self, spec: EnvSpec, n: int, rng: np.random.Generator) -> None:
        self.n, self.k, self.rng = n, spec.n_arms, rng
        self.eta = math.sqrt(8 * math.log(spec.n_arms) / spec.horizon)
        self.scores = np.zeros((n, spec.n_arms))

    def act(self, t: int) -> np.ndarray:
        z = self.eta * self.scores
        w = np.exp(z - z.max(axis=1, keepdims=True))
        return self._sample(w / w.sum(axis=1, keepdims=True))

    def update(
        self, t: int, actions: np.ndarray, rewards: np.ndarray, full: np.ndarray | None
    ) -> None:
        if full is not None:
            self.scores += full
        else:
            self.scores[np.arange(self.n), actions] += rewards


class RandomPolicy:
    name = "random"

    def reset(self, spec: EnvSpec, n: int, rng: np.random.Generator) -> None:
        self.n, self.k, self.rng = n, spec.n_arms, rng

    def act(self, t: int) -> np.ndarray:
        return self.rng.integers(0, self.k, size=self.n)

    def update(self, *args: object) -> None:
        pass


class Oracle:
    """Knows the means: plays ``argmax_k μ_{t,k}`` (zero pseudo-regret on bandits)."""

    name = "oracle"

    def __init__(self, instances: Instances) -> None:
        self.instances = instances

    def reset(self, spec: EnvSpec, n: int, rng: np.random.Generator) -> None:
        if n != self.instances.n or spec != self.instances.spec:
            raise ValueError("Oracle must be rolled out on the instances it was built for")

    def act(self, t: int) -> np.ndarray:
        return np.argmax(self.instances.means[:, t, :], axis=1)

    def update(self, *args: object) -> None:
        pass


_BASELINES = {
    "ucb": UCB,
    "ts": ThompsonSampling,
    "greedy": Greedy,
    "exp3": EXP3,
    "hedge": Hedge,
    "random": RandomPolicy,
}


def make_baseline(name: str) -> UCB | ThompsonSampling | Greedy | EXP3 | Hedge | RandomPolicy:
    """A baseline by its metric name (``ucb``, ``ts``, ``greedy``, ``exp3``, ``hedge``,
    ``random``)."""
    if name not in _BASELINES:
        raise ValueError(f"unknown baseline {name!r}; expected one of {sorted(_BASELINES)}")
    return _BASELINES[name]()

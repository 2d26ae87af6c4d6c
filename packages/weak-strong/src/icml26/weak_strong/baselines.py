"""The baselines the online algorithm is compared with, all on the :class:`Policy` protocol.

* :class:`AlwaysStrong`: exhaustive strong verification;
* :class:`ScoreBlind`: accepts with probability alpha and rejects with probability beta
  whatever the score, asks the strong verifier otherwise: both errors exactly on target at
  ``1 - alpha - beta`` strong calls (the placebo a control claim must fail);
* :class:`WeakOnly`: one cut on the weak score, never a strong call;
* :class:`FixedThresholds`: two fixed thresholds;
* :class:`CalibratedThresholds`: thresholds set once on a calibration split (split
  conformal), valid when the rest of the stream is exchangeable with it;
* :class:`LabelFreeThresholds`: thresholds from unlabelled scores trusted as probabilities;
* :class:`RandomizedOracle` (:func:`oracle_policy`): the hindsight optimum for the stream's
  own law among policies that read the score, i.e. two thresholds on the score randomised
  at the boundary atoms (:func:`~icml26.weak_strong.population.optimal_policy` with
  ``order="score"``; thresholding the per-atom truth instead would read each continuous
  score's own label).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from icml26.weak_strong._validate import (
    check_label,
    check_level,
    check_score,
    check_scores,
    check_stream,
)
from icml26.weak_strong.policies import (
    ACCEPT,
    DEFER,
    REJECT,
    Step,
    region_of,
    valid_score,
)
from icml26.weak_strong.population import (
    PopulationPolicy,
    ScoreLaw,
    optimal_policy,
    score_thresholds,
)

__all__ = [
    "AlwaysStrong",
    "CalibratedThresholds",
    "FixedThresholds",
    "LabelFreeThresholds",
    "RandomizedOracle",
    "ScoreBlind",
    "WeakOnly",
    "conformal_thresholds",
    "label_free_thresholds",
    "oracle_policy",
]


class AlwaysStrong:
    """Send every item to the strong verifier (exhaustive verification)."""

    name = "always_strong"
    use_verdict = True

    def decide(self, score: float) -> Step:
        valid_score(score)
        return Step(DEFER, True, 1.0)

    def observe(self, step: Step, score: float, label: bool) -> None:
        pass

    @property
    def thresholds(self) -> tuple[float, float]:
        return 1.0, 0.0


class ScoreBlind:
    """Ignore the score: accept with probability ``alpha``, reject with probability ``beta``,
    ask the strong verifier otherwise.

    Its incorrect acceptance is ``alpha`` and its incorrect rejection ``beta`` in expectation
    on any stream, at a strong-call frequency of ``1 - alpha - beta``: a claim of error
    control that this policy passes measures nothing about the weak verifier.

    Args:
        alpha: acceptance probability (the incorrect-acceptance target).
        beta: rejection probability (the incorrect-rejection target).
        seed: seeds the coins.

    Raises:
        ValueError: ``alpha`` or ``beta`` outside ``(0, 1)``, or ``alpha + beta >= 1``.
    """

    name = "score_blind"
    use_verdict = True

    def __init__(self, alpha: float, beta: float, *, seed: int | None = None) -> None:
        self.alpha = check_level(alpha, "alpha")
        self.beta = check_level(beta, "beta")
        if self.alpha + self.beta >= 1:
            raise ValueError(f"alpha + beta must be < 1, got {self.alpha} + {self.beta}")
        self._rng = np.random.default_rng(seed)

    def decide(self, score: float) -> Step:
        valid_score(score)
        u = float(self._rng.random())
        if u < self.alpha:
            return Step(ACCEPT, False, 1.0)
        if u < self.alpha + self.beta:
            return Step(REJECT, False, 1.0)
        return Step(DEFER, True, 1.0)

    def observe(self, step: Step, score: float, label: bool) -> None:
        pass


class FixedThresholds:
    """Accept ``s > tau_a``, reject ``s <= tau_r``, defer in between; thresholds never move."""

    name = "fixed"
    use_verdict = False

    def __init__(self, tau_a: float, tau_r: float, *, name: str | None = None) -> None:
        if not (math.isfinite(tau_a) and math.isfinite(tau_r)):
            raise ValueError(f"thresholds must be finite, got {tau_a}, {tau_r}")
        self.tau_a, self.tau_r = float(tau_a), float(tau_r)
        if name:
            self.name = name

    def decide(self, score: float) -> Step:
        region = region_of(valid_score(score), self.tau_a, self.tau_r)
        return Step(region, region == DEFER, 1.0)

    def observe(self, step: Step, score: float, label: bool) -> None:
        pass

    @property
    def thresholds(self) -> tuple[float, float]:
        return self.tau_a, self.tau_r


class WeakOnly(FixedThresholds):
    """Trust the weak verifier alone: accept ``s > threshold``, reject otherwise, never query."""

    name = "weak_only"

    def __init__(self, threshold: float = 0.5) -> None:
        threshold = check_score(threshold, "threshold")
        super().__init__(threshold, threshold)


def conformal_thresholds(
    scores: Any, labels: Any, alpha: float, beta: float
) -> tuple[float, float]:
    """Split-conformal thresholds from a labelled calibration sample.

    With ``n0`` incorrect calibration scores, ``tau_a`` is their ``ceil((n0 + 1)(1 - alpha))``-th
    smallest, so a new exchangeable incorrect item has ``P(s > tau_a) <= alpha``; with ``n1``
    correct scores, items strictly below the ``floor(beta (n1 + 1))``-th smallest are rejected,
    so ``P(reject | H = 1) <= beta``. Without enough data a threshold falls back to accepting
    (rejecting) nothing.
    """
    s, y = check_stream(scores, labels)
    alpha, beta = check_level(alpha, "alpha"), check_level(beta, "beta")
    wrong, right = np.sort(s[~y]), np.sort(s[y])
    k = math.ceil((wrong.size + 1) * (1 - alpha))
    tau_a = float(wrong[k - 1]) if k <= wrong.size else 1.0
    m = math.floor(beta * (right.size + 1))
    tau_r = float(np.nextafter(right[m - 1], -np.inf)) if m >= 1 else -1.0
    return tau_a, tau_r


def label_free_thresholds(scores: Any, alpha: float, beta: float) -> tuple[float, float]:
    """Thresholds set from *unlabelled* scores by trusting them as probabilities.

    If the verifier is calibrated, ``P(S = s, H = 1) = s P(S = s)``, so the error rates of any
    threshold pair can be computed without a single strong verdict: this is the best score
    threshold pair for the law in which each score ``s`` is right with probability ``s``. It
    holds the targets exactly when the verifier is calibrated and misses them when it is not,
    which is what makes calibration valuable.
    """
    s = check_scores(scores)
    if s.size == 0:
        raise ValueError("label_free_thresholds needs at least one score")
    atoms, inv = np.unique(s, return_inverse=True)
    mass = np.bincount(inv, minlength=atoms.size) / s.size
    law = ScoreLaw(atoms, mass * atoms, mass * (1.0 - atoms))
    return score_thresholds(law, alpha, beta)


class LabelFreeThresholds(FixedThresholds):
    """Fixed thresholds from :func:`label_free_thresholds` on the first ``n_calibration``
    scores; never queries the strong verifier outside the band, needs no labels."""

    name = "label_free"

    def __init__(self, alpha: float, beta: float, n_calibration: int) -> None:
        self.alpha = check_level(alpha, "alpha")
        self.beta = check_level(beta, "beta")
        if n_calibration < 1:
            raise ValueError(f"n_calibration must be at least 1, got {n_calibration}")
        self.n_calibration = int(n_calibration)
        self._seen: list[float] = []
        super().__init__(1.0, -1.0)  # defer everything until the thresholds are set
        self._ready = False

    def decide(self, score: float) -> Step:
        if not self._ready:
            self._seen.append(valid_score(score))
            if len(self._seen) >= self.n_calibration:
                self.tau_a, self.tau_r = label_free_thresholds(self._seen, self.alpha, self.beta)
                self._ready = True
        return super().decide(score)


class CalibratedThresholds:
    """Fixed thresholds tuned on a calibration split (the first ``n_calibration`` items).

    The calibration items are all strong-verified (and paid for); then the policy freezes
    :func:`conformal_thresholds`, valid when the rest of the stream is exchangeable with the
    split, and not otherwise (drift, adversarial order).
    """

    name = "fixed_calibrated"
    use_verdict = False

    def __init__(self, alpha: float, beta: float, n_calibration: int) -> None:
        self.alpha = check_level(alpha, "alpha")
        self.beta = check_level(beta, "beta")
        if n_calibration < 1:
            raise ValueError(f"n_calibration must be at least 1, got {n_calibration}")
        self.n_calibration = int(n_calibration)
        self._scores: list[float] = []
        self._labels: list[bool] = []
        self._fixed: FixedThresholds | None = None

    def decide(self, score: float) -> Step:
        if self._fixed is None:
            valid_score(score)
            return Step(DEFER, True, 1.0)
        return self._fixed.decide(score)

    def observe(self, step: Step, score: float, label: bool) -> None:
        if self._fixed is not None:
            return
        self._scores.append(score)
        self._labels.append(check_label(label))
        if len(self._scores) >= self.n_calibration:
            tau_a, tau_r = conformal_thresholds(self._scores, self._labels, self.alpha, self.beta)
            self._fixed = FixedThresholds(tau_a, tau_r)

    @property
    def thresholds(self) -> tuple[float, float]:
        return self._fixed.thresholds if self._fixed is not None else (1.0, 0.0)


class RandomizedOracle:
    """A population policy played item by item: an item whose score is atom ``i`` of the law is
    accepted with probability ``accept[i]``, rejected with ``reject[i]``, deferred otherwise
    (a score between atoms takes the nearest atom).

    Args:
        policy: a :class:`~icml26.weak_strong.population.PopulationPolicy`.
        seed: seed or generator of the randomisation coins.
        name: the policy's name in metric keys.
    """

    use_verdict = False

    def __init__(
        self,
        policy: PopulationPolicy,
        *,
        seed: int | np.random.Generator | None = None,
        name: str = "oracle",
    ) -> None:
        self.policy = policy
        self.name = name
        self._atoms = policy.law.atoms
        self._acc = policy.accept
        self._acc_or_rej = policy.accept + policy.reject
        self._rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)

    def _atom(self, score: float) -> int:
        i = int(np.searchsorted(self._atoms, score))
        if i >= self._atoms.size:
            return self._atoms.size - 1
        if i > 0 and score - self._atoms[i - 1] < self._atoms[i] - score:
            return i - 1
        return i

    def decide(self, score: float) -> Step:
        """Accept, reject or defer ``score`` with its atom's probabilities."""
        i = self._atom(valid_score(score))
        u = self._rng.random()
        if u < self._acc[i]:
            return Step(ACCEPT, False, 1.0)
        if u < self._acc_or_rej[i]:
            return Step(REJECT, False, 1.0)
        return Step(DEFER, True, 1.0)

    def observe(self, step: Step, score: float, label: bool) -> None:
        """Nothing to learn: the oracle knows the law."""

    @property
    def thresholds(self) -> tuple[float, float]:
        """No thresholds on the score (NaN, NaN): the policy is randomised per atom."""
        return math.nan, math.nan


def oracle_policy(
    scores: Any,
    labels: Any,
    alpha: float,
    beta: float,
    *,
    seed: int | np.random.Generator | None = None,
) -> RandomizedOracle:
    """The hindsight oracle for a stream: the randomised two-threshold optimum on the score
    (fewest strong calls with both errors at their targets) for the stream's own law.

    Args:
        scores: the stream's weak scores.
        labels: its strong verdicts.
        alpha: target incorrect-acceptance rate.
        beta: target incorrect-rejection rate.
        seed: seed of the randomisation coins.

    Returns:
        A :class:`RandomizedOracle`.

    Raises:
        ValueError: a bad stream or level.
    """
    law = ScoreLaw.from_samples(scores, labels)
    return RandomizedOracle(optimal_policy(law, alpha, beta, order="score"), seed=seed)

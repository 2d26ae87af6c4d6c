"""Weak-strong verification policies on a stream, one decision at a time.

Every policy follows one protocol. For each item it is shown the weak score ``s`` and returns
a :class:`Step`: its *region* (``ACCEPT``, ``DEFER`` to the strong verifier, ``REJECT``),
whether the strong verifier is queried, and the importance weight of that query. When the
strong verifier is queried the policy is told the verdict ``H`` through :meth:`observe`.

The final verdict of an item is its region's (accept/reject); a deferred item takes the strong
verdict. A policy may also query in its accept or reject region purely to *explore* (collect
unbiased feedback); by default such a query does not change the verdict (the paper's
accounting), ``use_verdict=True`` lets it (which can only lower both errors).

Policies here: :class:`OnlineWeakStrong` (the paper's online algorithm), and the baselines
:class:`AlwaysStrong`, :class:`WeakOnly`, :class:`FixedThresholds` (the population oracle
when its thresholds come from the law, see :func:`oracle_policy`) and
:class:`CalibratedThresholds` (thresholds set once on a calibration split, conformal style).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from icml26.weak_strong._validate import check_level, check_score, check_scores, check_stream
from icml26.weak_strong.population import ScoreLaw, score_thresholds

__all__ = [
    "ACCEPT",
    "DEFER",
    "REJECT",
    "AlwaysStrong",
    "CalibratedThresholds",
    "FixedThresholds",
    "LabelFreeThresholds",
    "OnlineWeakStrong",
    "Policy",
    "Step",
    "Trace",
    "TraceRecorder",
    "WeakOnly",
    "conformal_thresholds",
    "decide_and_verify",
    "label_free_thresholds",
    "oracle_policy",
    "run_policy",
]

REJECT, DEFER, ACCEPT = 0, 1, 2


class Step(NamedTuple):
    """One decision: region, whether the strong verifier is queried, query probability."""

    region: int
    queried: bool
    prob: float


@runtime_checkable
class Policy(Protocol):
    """The protocol of every policy (see the module docstring)."""

    name: str
    use_verdict: bool

    def decide(self, score: float) -> Step: ...

    def observe(self, step: Step, score: float, label: bool) -> None: ...


class _Uniforms:
    """Uniform draws from a NumPy generator, fetched in blocks (one draw per decision is hot)."""

    def __init__(self, seed: int | np.random.Generator | None, block: int = 4096) -> None:
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        self.block = block
        self.buf: list[float] = []

    def __call__(self) -> float:
        if not self.buf:
            self.buf = self.rng.random(self.block).tolist()
            self.buf.reverse()
        return self.buf.pop()


def _score(score: float) -> float:
    """``score`` if it is a number in [0, 1], else a ``ValueError`` naming it.

    On the hot path of every ``decide``: one chained comparison, which NaN fails too."""
    try:
        if 0.0 <= score <= 1.0:
            return score
    except TypeError:
        pass
    return check_score(score)  # raises: NaN, out of [0, 1], or not a number


def _region(score: float, tau_a: float, tau_r: float) -> int:
    """Accept above ``tau_a``; else reject at or below ``tau_r``; defer in between."""
    if score > tau_a:
        return ACCEPT
    if score <= tau_r:
        return REJECT
    return DEFER


class OnlineWeakStrong:
    """The online algorithm: two thresholds moved by importance-weighted feedback.

    At step ``t`` the item with weak score ``s_t`` falls in the accept region ``s_t > tau_a``,
    the reject region ``s_t <= tau_r`` or the uncertain band between. Band items always go to
    the strong verifier; accept/reject-region items go with exploration probability
    ``p_t = max(p_min, p_0 / sqrt(t))``. On a queried item with verdict ``H_t`` and weight
    ``w_t = 1 / p_t`` (1 in the band)::

        g_a = w_t [H_t = 0] ((1 - alpha) if accepted-region else -alpha)
        g_r = w_t [H_t = 1] (-(1 - beta) if rejected-region else beta)
        tau_a <- tau_a + eta g_a,    tau_r <- tau_r + eta g_r.

    Given the past, ``E[g_a] = [H_t = 0]([accepted region] - alpha)``: the sum of the steps is
    an unbiased, bounded-increment estimate of ``#(incorrect accepted) - alpha #(incorrect)``.
    Since ``tau_a`` cannot climb past ``1 + eta (1 - alpha) / p_min`` (above 1 nothing is
    accepted, so it only falls), the excess ``#(incorrect accepted) - alpha #(incorrect)`` is at
    most ``(1 - tau_a^1) / eta + (1 - alpha) / p_min`` plus a martingale, on *any* stream;
    likewise for rejections. :mod:`icml26.weak_strong.guarantees` turns this into a bound.

    Args:
        alpha: target incorrect-acceptance rate ``P(accept | H = 0)``, in (0, 1).
        beta: target incorrect-rejection rate ``P(reject | H = 1)``, in (0, 1).
        step_size: ``eta``.
        tau_a, tau_r: initial thresholds.
        explore: ``p_0``; explore_min: ``p_min`` (both in (0, 1]).
        use_verdict: let exploration queries override the region's verdict.
        seed: seed or generator for the exploration coins.
    """

    name = "online"

    def __init__(
        self,
        alpha: float,
        beta: float,
        *,
        step_size: float = 0.05,
        tau_a: float = 0.7,
        tau_r: float = 0.3,
        explore: float = 0.3,
        explore_min: float = 0.05,
        use_verdict: bool = False,
        seed: int | np.random.Generator | None = None,
    ) -> None:
        self.alpha = check_level(alpha, "alpha")
        self.beta = check_level(beta, "beta")
        if not (step_size > 0 and math.isfinite(step_size)):
            raise ValueError(f"step_size must be a positive number, got {step_size}")
        if not (0 < explore_min <= 1 and 0 < explore <= 1):
            raise ValueError(
                f"explore and explore_min must lie in (0, 1], got {explore}, {explore_min}"
            )
        for nm, v in (("tau_a", tau_a), ("tau_r", tau_r)):
            if not math.isfinite(v):
                raise ValueError(f"{nm} must be finite, got {v}")
        self.step_size = float(step_size)
        self.tau_a0, self.tau_r0 = float(tau_a), float(tau_r)
        self.tau_a, self.tau_r = float(tau_a), float(tau_r)
        self.explore, self.explore_min = float(explore), float(explore_min)
        self.use_verdict = bool(use_verdict)
        self.t = 0
        self._u = _Uniforms(seed)

    def explore_prob(self, t: int) -> float:
        """``p_t = max(p_min, p_0 / sqrt(t))``."""
        return max(self.explore_min, self.explore / math.sqrt(t))

    def decide(self, score: float) -> Step:
        region = _region(_score(score), self.tau_a, self.tau_r)
        self.t += 1
        if region == DEFER:
            return Step(DEFER, True, 1.0)
        p = max(self.explore_min, self.explore / math.sqrt(self.t))
        return Step(region, self._u() < p, p)

    def observe(self, step: Step, score: float, label: bool) -> None:
        if not step.queried:
            raise ValueError("observe() is only for items sent to the strong verifier")
        w = 1.0 / step.prob
        if label:
            if step.region == REJECT:
                self.tau_r -= self.step_size * w * (1.0 - self.beta)
            else:
                self.tau_r += self.step_size * w * self.beta
        else:
            if step.region == ACCEPT:
                self.tau_a += self.step_size * w * (1.0 - self.alpha)
            else:
                self.tau_a -= self.step_size * w * self.alpha

    @property
    def thresholds(self) -> tuple[float, float]:
        return self.tau_a, self.tau_r


class AlwaysStrong:
    """Send every item to the strong verifier (exhaustive verification)."""

    name = "always_strong"
    use_verdict = True

    def decide(self, score: float) -> Step:
        _score(score)
        return Step(DEFER, True, 1.0)

    def observe(self, step: Step, score: float, label: bool) -> None:
        pass

    @property
    def thresholds(self) -> tuple[float, float]:
        return 1.0, 0.0


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
        region = _region(_score(score), self.tau_a, self.tau_r)
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
            self._seen.append(_score(score))
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
            _score(score)
            return Step(DEFER, True, 1.0)
        return self._fixed.decide(score)

    def observe(self, step: Step, score: float, label: bool) -> None:
        if self._fixed is not None:
            return
        self._scores.append(score)
        self._labels.append(bool(label))
        if len(self._scores) >= self.n_calibration:
            tau_a, tau_r = conformal_thresholds(self._scores, self._labels, self.alpha, self.beta)
            self._fixed = FixedThresholds(tau_a, tau_r)

    @property
    def thresholds(self) -> tuple[float, float]:
        return self._fixed.thresholds if self._fixed is not None else (1.0, 0.0)


def oracle_policy(scores: Any, labels: Any, alpha: float, beta: float) -> FixedThresholds:
    """The population oracle for a stream: the best fixed score thresholds for the stream's own
    (hindsight) law, i.e. :func:`~icml26.weak_strong.population.score_thresholds`."""
    tau_a, tau_r = score_thresholds(ScoreLaw.from_samples(scores, labels), alpha, beta)
    return FixedThresholds(tau_a, tau_r, name="oracle")


@dataclass
class Trace:
    """What a policy did on a stream, item by item."""

    scores: NDArray[np.float64]
    labels: NDArray[np.bool_]
    accepted: NDArray[np.bool_]
    queried: NDArray[np.bool_]
    region: NDArray[np.int8]
    prob: NDArray[np.float64]
    tau_a: NDArray[np.float64]
    tau_r: NDArray[np.float64]
    extra: dict[str, Any] = field(default_factory=dict)


def decide_and_verify(policy: Policy, score: float, label: bool) -> tuple[Step, bool]:
    """One item through the protocol of the module docstring: ``decide``, and when the policy
    queries the strong verifier, ``observe`` its verdict ``label``. Returns the step and the
    item's final verdict (accepted or not): a deferred item, or any queried item of a
    ``use_verdict`` policy, takes the strong verdict; every other item its region's.

    The one place the decide / observe / verdict loop is written: :func:`run_policy`, the
    adaptive adversary, the Sudoku runs and the bench all go through it."""
    step = policy.decide(score)
    if step.queried:
        policy.observe(step, score, label)
        if step.region == DEFER or policy.use_verdict:
            return step, bool(label)
    return step, step.region == ACCEPT


class TraceRecorder:
    """Collects a :class:`Trace` item by item (thresholds read before each decision).

    ``record(score, label)`` runs one item through :func:`decide_and_verify` and stores it;
    ``trace()`` returns the arrays. A policy without ``thresholds`` records NaN thresholds.
    """

    def __init__(self, policy: Policy, *, record_thresholds: bool = True) -> None:
        self.policy = policy
        self._thr = record_thresholds and hasattr(policy, "thresholds")
        self._cols: tuple[list[Any], ...] = ([], [], [], [], [], [], [], [])

    def record(self, score: float, label: bool) -> tuple[Step, bool]:
        tau = self.policy.thresholds if self._thr else (math.nan, math.nan)  # type: ignore[attr-defined]
        step, accepted = decide_and_verify(self.policy, score, label)
        for col, v in zip(
            self._cols,
            (score, label, accepted, step.queried, step.region, step.prob, tau[0], tau[1]),
            strict=True,
        ):
            col.append(v)
        return step, accepted

    def __len__(self) -> int:
        return len(self._cols[0])

    def trace(self) -> Trace:
        s, y, acc, q, reg, prob, ta, tr = self._cols
        return Trace(
            np.asarray(s, dtype=np.float64),
            np.asarray(y, dtype=np.bool_),
            np.asarray(acc, dtype=np.bool_),
            np.asarray(q, dtype=np.bool_),
            np.asarray(reg, dtype=np.int8),
            np.asarray(prob, dtype=np.float64),
            np.asarray(ta, dtype=np.float64),
            np.asarray(tr, dtype=np.float64),
        )


def run_policy(
    policy: Policy,
    scores: Any,
    labels: Any,
    *,
    record_thresholds: bool = True,
    on_step: Callable[[int, Step], None] | None = None,
) -> Trace:
    """Feed a stream to ``policy``; return its :class:`Trace` (thresholds before each item)."""
    s, y = check_stream(scores, labels)
    rec = TraceRecorder(policy, record_thresholds=record_thresholds)
    for t, (score, label) in enumerate(zip(s.tolist(), y.tolist(), strict=True)):
        step, _ = rec.record(score, label)
        if on_step is not None:
            on_step(t, step)
    return rec.trace()

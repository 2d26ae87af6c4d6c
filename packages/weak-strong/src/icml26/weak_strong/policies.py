"""Weak-strong verification policies on a stream, one decision at a time.

Every policy follows one protocol. For each item it is shown the weak score ``s`` and returns
a :class:`Step`: its *region* (``ACCEPT``, ``DEFER`` to the strong verifier, ``REJECT``),
whether the strong verifier is queried, and the importance weight of that query. When the
strong verifier is queried the policy is told the verdict ``H`` through :meth:`observe`.

The final verdict of an item is its region's (accept/reject); a deferred item takes the strong
verdict. A policy may also query in its accept or reject region purely to *explore* (collect
unbiased feedback); by default such a query does not change the verdict (the paper's
accounting), ``use_verdict=True`` lets it (which can only lower both errors).

Here: :class:`OnlineWeakStrong` (the paper's online algorithm), the protocol, and the loop
that feeds a stream to any policy (:func:`decide_and_verify`, :class:`TraceRecorder`,
:func:`run_policy`). The baselines live in :mod:`icml26.weak_strong.baselines`.

Feedback may arrive late: a :class:`Step` carries everything :meth:`OnlineWeakStrong.observe`
needs (region and query probability), so verdicts can be observed in any order, after any
number of later decisions (tested). :meth:`OnlineWeakStrong.decide_batch` decides many items
at once with the current thresholds, which is the same thing for a batch.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from icml26.weak_strong._validate import (
    check_label,
    check_labels,
    check_level,
    check_score,
    check_scores,
    check_stream,
)
from icml26.weak_strong.config import DEFAULT_STEP_SIZE

__all__ = [
    "ACCEPT",
    "DEFAULT_STEP_SIZE",
    "DEFER",
    "REJECT",
    "OnlineWeakStrong",
    "Policy",
    "Step",
    "StepBatch",
    "Trace",
    "TraceRecorder",
    "decide_and_verify",
    "region_of",
    "run_policy",
    "valid_score",
]


REJECT = 0
"""Region code of a score at or below ``tau_r``: the answer is rejected (``Step.region``)."""
DEFER = 1
"""Region code of a score between the thresholds: the strong verifier decides."""
ACCEPT = 2
"""Region code of a score above ``tau_a``: the answer is accepted."""


class Step(NamedTuple):
    """One decision.

    Attributes:
        region: ``ACCEPT``, ``REJECT`` or ``DEFER``.
        queried: whether the strong verifier is asked (always in the band; with the
            exploration probability elsewhere).
        prob: the probability with which this item was queried (1 in the band).
        owner: the deciding :class:`OnlineWeakStrong`'s token (``""`` for other policies):
            ``observe`` refuses a step of another policy.
        number: the step's number ``t`` at its policy (``observe`` refuses a step seen twice).
        score: the weak score it was decided on (``observe`` refuses another score).
    """

    region: int
    queried: bool
    prob: float
    owner: str = ""
    number: int = 0
    score: float | None = None


@dataclass(frozen=True)
class StepBatch:
    """Decisions on a batch of items (:meth:`OnlineWeakStrong.decide_batch`), as arrays.

    Attributes:
        region: ``ACCEPT`` / ``REJECT`` / ``DEFER`` per item.
        queried: whether the strong verifier is asked, per item.
        prob: the query probability per item.
        score: the weak scores the batch was decided on (``None``: not recorded).
        owner: the deciding policy's token, as :attr:`Step.owner`.
        start: the step number ``t`` of the batch's first item.
    """

    region: NDArray[np.int8]
    queried: NDArray[np.bool_]
    prob: NDArray[np.float64]
    score: NDArray[np.float64] | None = None
    owner: str = ""
    start: int = 0

    def __len__(self) -> int:
        return int(self.region.size)

    def __getitem__(self, i: int) -> Step:
        score = None if self.score is None else float(self.score[i])
        return Step(
            int(self.region[i]),
            bool(self.queried[i]),
            float(self.prob[i]),
            self.owner,
            self.start + int(i),
            score,
        )

    def steps(self) -> list[Step]:
        """The batch as one :class:`Step` per item (to pass to ``observe``)."""
        return [self[i] for i in range(len(self))]


@runtime_checkable
class Policy(Protocol):
    """The protocol of every policy: write your own with these four members and every
    runner, metric and bound of the package takes it.

    Attributes:
        name: the policy's name in metric keys.
        use_verdict: a queried item's final verdict is the strong verifier's.

    ``decide(score) -> Step`` chooses for one weak score; ``observe(step, score, label)``
    takes a queried item's strong verdict (any time after ``decide``).
    """

    name: str
    use_verdict: bool

    def decide(self, score: float) -> Step:
        """Choose for one item from its weak score.

        Args:
            score: the weak verifier's score in ``[0, 1]``.

        Returns:
            The decision: its region, whether the strong verifier is asked and with what
            probability.
        """
        ...

    def observe(self, step: Step, score: float, label: bool) -> None:
        """Take a queried item's strong verdict, any time after its ``decide``.

        Args:
            step: the :class:`Step` ``decide`` returned for the item.
            score: the weak score the item was decided on.
            label: the strong verifier's verdict (the answer is correct).
        """
        ...


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


def valid_score(score: Any) -> float:
    """``score`` if it is a real number in [0, 1], else a ``ValueError`` naming it.

    On the hot path of every ``decide``: a plain float in range passes with one class test
    and one chained comparison (which NaN fails); anything else (a string, a bool, NaN, out
    of range) goes through :func:`~icml26.weak_strong._validate.check_score`."""
    if score.__class__ is float and 0.0 <= score <= 1.0:
        return score
    return check_score(score)


def region_of(score: float, tau_a: float, tau_r: float) -> int:
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
        step_size: ``eta`` (default :data:`DEFAULT_STEP_SIZE`).
        tau_a: the initial accept threshold.
        tau_r: the initial reject threshold.
        explore: ``p_0``.
        explore_min: ``p_min`` (both in (0, 1]).
        use_verdict: let exploration queries override the region's verdict.
        seed: seed or generator for the exploration coins.

    Raises:
        ValueError: a level outside (0, 1), a non-positive step size, exploration
            probabilities outside (0, 1], non-finite thresholds.
    """

    name = "online"

    def __init__(
        self,
        alpha: float,
        beta: float,
        *,
        step_size: float = DEFAULT_STEP_SIZE,
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
        self._owner = secrets.token_hex(8)
        self._pending: dict[int, float] = {}  # queried steps not yet observed: t -> score
        # pending steps a restored state brought along: t -> the token of the policy that
        # decided them (its Steps carry that token; this policy's own Steps carry _owner)
        self._inherited: dict[int, str] = {}

    def explore_prob(self, t: int) -> float:
        """``p_t = max(p_min, p_0 / sqrt(t))``."""
        return max(self.explore_min, self.explore / math.sqrt(t))

    def decide(self, score: float) -> Step:
        """Decide one item from its weak score.

        Args:
            score: the weak verifier's score, a real number in [0, 1].

        Returns:
            The :class:`Step`; when ``step.queried``, pass the strong verdict to
            :meth:`observe` (now or later).

        Raises:
            ValueError: ``score`` is not a real number in [0, 1] (strings, bools, NaN).
        """
        score = valid_score(score)
        region = region_of(score, self.tau_a, self.tau_r)
        self.t += 1
        t = self.t
        if region == DEFER:
            self._pending[t] = score
            return Step(DEFER, True, 1.0, self._owner, t, score)
        p = max(self.explore_min, self.explore / math.sqrt(t))
        queried = self._u() < p
        if queried:
            self._pending[t] = score
        return Step(region, queried, p, self._owner, t, score)

    def decide_batch(self, scores: Any) -> StepBatch:
        """Decide a batch of items at once with the current thresholds (no feedback between
        them, as when verdicts arrive after the batch). Equal, item by item, to calling
        :meth:`decide` on each score in order (same coins; tested).

        Args:
            scores: 1-D array of weak scores in [0, 1].

        Returns:
            A :class:`StepBatch`; observe the queried items' verdicts with
            :meth:`observe_batch` or one by one with :meth:`observe`.

        Raises:
            ValueError: a score that is not a real number in [0, 1].
        """
        s = check_scores(scores)
        n = s.size
        region = np.where(s > self.tau_a, ACCEPT, np.where(s <= self.tau_r, REJECT, DEFER)).astype(
            np.int8
        )
        t = self.t + np.arange(1, n + 1)
        prob = np.maximum(self.explore_min, self.explore / np.sqrt(t))
        band = region == DEFER
        prob[band] = 1.0
        queried = band.copy()
        for i in np.flatnonzero(~band):  # one coin per non-band item, as decide() draws
            queried[i] = self._u() < prob[i]
        start = self.t + 1
        self.t += n
        for j in np.flatnonzero(queried).tolist():
            self._pending[start + j] = float(s[j])
        return StepBatch(region, queried, prob, s.astype(np.float64), self._owner, start)

    def observe(self, step: Step, score: float, label: bool | int) -> None:
        """Update the thresholds with the strong verdict of a queried item.

        May be called any time after :meth:`decide` returned ``step`` (delayed feedback), once
        per step: the update uses only the step's region and query probability.

        Args:
            step: the step :meth:`decide` (or :meth:`decide_batch`) of this policy returned
                for the item.
            score: the item's weak score, the one it was decided on (not used by the update;
                kept for the :class:`Policy` protocol, and checked).
            label: the strong verdict, ``True``/``False`` or 0/1 (1 = correct).

        Raises:
            ValueError: ``step`` was not queried or its ``prob`` is not in (0, 1]; ``step``
                comes from another policy (or was built by hand); ``step`` was already
                observed; ``score`` differs from the score ``step`` was decided on; or
                ``label`` is not a boolean or 0/1. Nothing is changed then.
        """
        if not step.queried:
            raise ValueError("observe() is only for items sent to the strong verifier")
        if not (isinstance(step.prob, int | float) and 0.0 < step.prob <= 1.0):
            raise ValueError(
                f"step.prob must be the query probability in (0, 1], got {step.prob!r} "
                "(pass the Step that decide() returned)"
            )
        if step.owner != self._inherited.get(step.number, self._owner):
            raise ValueError(
                "observe() got a Step this policy did not decide (from another policy, or "
                "built by hand): pass the Step that this policy's decide() returned"
            )
        decided = self._pending.get(step.number)
        if decided is None:
            raise ValueError(
                f"observe() got step {step.number} a second time: each queried Step takes "
                "exactly one verdict"
            )
        if score != decided:
            raise ValueError(
                f"observe() got score {score!r} for step {step.number}, decided on score "
                f"{decided!r}: pass the item's own weak score"
            )
        correct = label if label.__class__ is bool else check_label(label)
        del self._pending[step.number]
        w = 1.0 / step.prob
        if correct:
            if step.region == REJECT:
                self.tau_r -= self.step_size * w * (1.0 - self.beta)
            else:
                self.tau_r += self.step_size * w * self.beta
        else:
            if step.region == ACCEPT:
                self.tau_a += self.step_size * w * (1.0 - self.alpha)
            else:
                self.tau_a -= self.step_size * w * self.alpha

    def observe_batch(self, batch: StepBatch, labels: Any) -> None:
        """:meth:`observe` every queried item of ``batch``, in order.

        Args:
            batch: what :meth:`decide_batch` returned.
            labels: one verdict per item of the batch (only the queried ones are read).

        Raises:
            ValueError: ``labels`` of another length or not booleans / 0/1.
        """
        y = check_labels(labels)
        if y.size != len(batch):
            raise ValueError(f"labels has {y.size} verdicts for a batch of {len(batch)}")
        for i in np.flatnonzero(batch.queried):
            step = batch[int(i)]
            self.observe(step, math.nan if step.score is None else step.score, bool(y[i]))

    def state_dict(self) -> dict[str, Any]:
        """The policy's whole state as plain JSON values: settings, thresholds, step count and
        the exploration generator (so a restored policy takes the same decisions).

        Returns:
            A dict for :meth:`load_state_dict` (``json.dumps``-able).
        """
        return {
            "alpha": self.alpha,
            "beta": self.beta,
            "step_size": self.step_size,
            "tau_a0": self.tau_a0,
            "tau_r0": self.tau_r0,
            "tau_a": self.tau_a,
            "tau_r": self.tau_r,
            "explore": self.explore,
            "explore_min": self.explore_min,
            "use_verdict": self.use_verdict,
            "t": self.t,
            "rng": self._u.rng.bit_generator.state,
            "coins": list(self._u.buf),
            "owner": self._owner,
            "pending": [
                [t, s, self._inherited[t]] if t in self._inherited else [t, s]
                for t, s in self._pending.items()
            ],
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned.

        The restored policy continues the saved one: it takes the verdicts of the steps the
        saved one had queried and not yet observed (the Steps it returned stay valid). It
        decides under a fresh owner token, so two policies restored from one state refuse
        each other's new Steps (each still takes the saved pending Steps: both are copies).

        Args:
            state: a state dict of an :class:`OnlineWeakStrong` with this policy's targets.

        Raises:
            ValueError: a key is missing; the state's ``alpha`` or ``beta`` differs from this
                policy's (construct the policy with the saved targets: a state never changes
                what a policy guarantees); or a value is out of range (a step size or an
                exploration rate that is not positive and finite, a threshold that is NaN or
                infinite, a negative step count). Nothing is changed then.
        """
        missing = sorted(set(self.state_dict()) - set(state))
        if missing:
            raise ValueError(f"state dict lacks {missing}")
        _check_state(state)
        for key in ("alpha", "beta"):
            if check_level(state[key], key) != getattr(self, key):
                raise ValueError(
                    f"state dict has {key}={state[key]!r} but this policy targets "
                    f"{key}={getattr(self, key)!r}: construct the policy with the saved targets"
                )
        self.step_size = float(state["step_size"])
        self.tau_a0, self.tau_r0 = float(state["tau_a0"]), float(state["tau_r0"])
        self.tau_a, self.tau_r = float(state["tau_a"]), float(state["tau_r"])
        self.explore, self.explore_min = float(state["explore"]), float(state["explore_min"])
        self.use_verdict = bool(state["use_verdict"])
        self.t = int(state["t"])
        self._u.rng.bit_generator.state = state["rng"]
        self._u.buf = [float(c) for c in state["coins"]]
        self._owner = secrets.token_hex(8)
        self._pending = {int(e[0]): float(e[1]) for e in state["pending"]}
        self._inherited = {
            int(e[0]): str(e[2]) if len(e) == 3 else str(state["owner"]) for e in state["pending"]
        }

    @property
    def thresholds(self) -> tuple[float, float]:
        """The current ``(tau_a, tau_r)``."""
        return self.tau_a, self.tau_r


def _check_state(state: dict[str, Any]) -> None:
    """Refuse a state dict with a value no policy could hold, naming the key."""
    for key in ("step_size", "tau_a0", "tau_r0", "tau_a", "tau_r", "explore", "explore_min"):
        v = state[key]
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise ValueError(f"state dict: {key} must be a finite number, got {v!r}")
    if not state["step_size"] > 0:
        raise ValueError(f"state dict: step_size must be > 0, got {state['step_size']!r}")
    for key in ("explore", "explore_min"):
        if not 0 < state[key] <= 1:
            raise ValueError(f"state dict: {key} must lie in (0, 1], got {state[key]!r}")
    t = state["t"]
    if isinstance(t, bool) or not isinstance(t, int) or t < 0:
        raise ValueError(f"state dict: t (steps taken) must be an integer >= 0, got {t!r}")
    if not isinstance(state["owner"], str):
        raise ValueError(f"state dict: owner must be a string, got {state['owner']!r}")
    pending = state["pending"]
    if not isinstance(pending, list | tuple) or not all(
        isinstance(e, list | tuple) and (len(e) == 2 or (len(e) == 3 and isinstance(e[2], str)))
        for e in pending
    ):
        raise ValueError(
            "state dict: pending must be a list of [step, score] or [step, score, owner] entries"
        )


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
    """Feed a recorded stream to ``policy``, item by item through :func:`decide_and_verify`.

    Args:
        policy: any policy of the protocol.
        scores: weak scores in [0, 1] (real numbers).
        labels: strong verdicts (booleans or 0/1).
        record_thresholds: record the thresholds before each item.
        on_step: called with ``(t, step)`` after each item.

    Returns:
        The :class:`Trace`.

    Raises:
        ValueError: bad scores or labels, or arrays of different lengths.
    """
    s, y = check_stream(scores, labels)
    rec = TraceRecorder(policy, record_thresholds=record_thresholds)
    for t, (score, label) in enumerate(zip(s.tolist(), y.tolist(), strict=True)):
        step, _ = rec.record(score, label)
        if on_step is not None:
            on_step(t, step)
    return rec.trace()

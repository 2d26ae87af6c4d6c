"""The Scale Schedule Corrector (SSC): a training-free rescaling of a trained velocity field.

SSC samples with ``gamma(t) v(x, t)`` in place of ``v(x, t)`` ("one line of code"). The
paper's asymmetry: a field too slow where the trajectory starts stagnates (harmful), while its
contraction near the data denoises (useful), so ``gamma > 1`` early and ``gamma -> 1`` at
t = 1 (t = 0 noise, t = 1 data).

**How much.** The paper sizes the injection from the measured deficit at the start,
``gamma(0) = 1 / R(0)`` with ``R(0) = E|v(x0, 0)| / E|x1 - x0|`` (:meth:`ScaleSchedule.
from_start_ratio`). But the *exact* field has ``R_exact(0) < 1`` too: ``v*(x0, 0) = E[x1] -
x0``, about ``1 / sqrt(1 + var)`` of the target's length, so that sizing multiplies a field that
is already right by about 1.44 on unit-variance data and wrecks it. What a model lacks is
``R_learned(t) / R_exact(t)``; :class:`DeficitSchedule` restores exactly that,

    gamma(t) = 1 + (q(t) - 1) (1 - t)^beta,      q(t) = R_exact(t) / R_learned(t),

(``q`` read from the measured profile between its times and *held* at ``q(t_max)`` beyond the
last one, so the boost reaches mid-trajectory, damped only by the taper; at ``t = 0`` this is
the issue's ``gamma(0) = R_exact(0) / R_learned(0)``). ``beta = 0`` (the raw profile, which
never returns to 1) is allowed but not a default candidate: the paper's asymmetry wants
``gamma -> 1`` at the data end. :func:`calibrate` picks the taper ``beta`` or *no correction
at all* (:data:`IDENTITY`) by the Fréchet distance of samples to held-out data, and keeps a
correction only if it beats the identity beyond the noise of that comparison: every candidate
is sampled from the same ``replicates`` noise draws, and a correction is kept only if its mean
*paired* FD drop ``FD(identity) - FD(candidate)`` exceeds ``noise_margin`` standard errors of
those paired drops (:func:`paired_fd_gains`): a model that lacks nothing keeps its field, and
a correction that wins one draw by chance is not kept.

Every schedule is a callable ``t -> gamma(t)`` with a ``label()`` (a metric-key part) and
``gamma0``; :func:`corrected` applies one to any velocity model ``(x, t, ...) -> v`` with
scalar or per-sample ``t`` and data of any shape.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np
import torch
from torch import nn

from icml26.shared.keys import number_part
from icml26.velocity_deficit.diagnostics import RatioProfile, exact_ratio, velocity_ratio
from icml26.velocity_deficit.flow import per_sample
from icml26.velocity_deficit.metrics import frechet_distance
from icml26.velocity_deficit.samplers import EVALS_PER_STEP, Method, integrate, steps_for_nfe

__all__ = [
    "IDENTITY",
    "MAX_FLAT_FEATURES",
    "Calibration",
    "DeficitSchedule",
    "PairedScores",
    "SSCSettings",
    "ScaleCorrected",
    "ScaleSchedule",
    "Schedule",
    "calibrate",
    "choose_schedule",
    "corrected",
    "paired_fd_gains",
    "select_schedule",
]

VelocityFn = Callable[..., torch.Tensor]
Features = Callable[[torch.Tensor], np.ndarray]


class Schedule(Protocol):
    """What SSC needs of a schedule."""

    def __call__(self, t: torch.Tensor | float) -> torch.Tensor: ...

    def label(self) -> str: ...

    @property
    def gamma0(self) -> float: ...


@dataclass(frozen=True)
class ScaleSchedule:
    """A parametric ``gamma(t)``: the paper's form and a window, for sweeps and the baseline.

    * ``power``:  ``gamma(t) = 1 + alpha (1 - t)^beta`` (a secondhand summary of the paper's form);
    * ``window``: ``gamma(t) = 1 + alpha`` for ``t < t_stop``, else 1.

    ``alpha = 0`` is neutral (multiplying by 1.0 is exact in floating point).

    Attributes:
        kind: ``power`` or ``window``.
        alpha: injection strength (``gamma(0) = 1 + alpha``), > -1.
        beta: decay exponent of ``power`` (> 0).
        t_stop: end of the ``window``, in (0, 1].

    Raises:
        ValueError: a parameter out of range.
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
        """Whether this schedule is the identity."""
        return self.alpha == 0.0

    @property
    def gamma0(self) -> float:
        """``gamma(0)``."""
        return 1.0 + self.alpha

    def __call__(self, t: torch.Tensor | float) -> torch.Tensor:
        """``gamma(t)`` (same shape as ``t``)."""
        t = torch.as_tensor(t)
        if not t.is_floating_point():
            t = t.to(torch.float64)
        if self.kind == "power":
            return 1.0 + self.alpha * (1.0 - t).clamp_min(0) ** self.beta
        return torch.where(t < self.t_stop, 1.0 + self.alpha, 1.0).to(t.dtype)

    @classmethod
    def from_start_ratio(
        cls,
        r0: float,
        *,
        kind: Literal["power", "window"] = "power",
        beta: float = 1.0,
        t_stop: float = 0.5,
    ) -> ScaleSchedule:
        """The paper's sizing ``gamma(0) = 1 / R(0)`` from the model's start ratio ``r0``.

        Kept as the uncalibrated baseline: it also "corrects" the exact field's Jensen gap
        (module docstring), so prefer :func:`calibrate`.

        Args:
            r0: the measured ``R(0)`` of the model.
            kind: ``power`` or ``window``.
            beta: the ``power`` decay.
            t_stop: the ``window`` end.

        Returns:
            The schedule with ``alpha = 1 / r0 - 1``.

        Raises:
            ValueError: ``r0`` not finite and positive.
        """
        if not (math.isfinite(r0) and r0 > 0):
            raise ValueError(f"the start velocity ratio R(0) must be finite and > 0, got {r0}")
        return cls(kind, alpha=1.0 / r0 - 1.0, beta=beta, t_stop=t_stop)

    def label(self) -> str:
        """A metric-key part, e.g. ``a0p2_b2`` (``identity`` when neutral)."""
        if self.neutral:
            return "identity"
        second = number_part(self.beta) if self.kind == "power" else "w" + number_part(self.t_stop)
        return f"a{number_part(self.alpha)}_b{second}"


#: No correction: SSC's calibration can always choose it.
IDENTITY = ScaleSchedule()


@dataclass(frozen=True)
class DeficitSchedule:
    """``gamma(t) = 1 + (q(t) - 1) (1 - t)^beta`` with ``q = R_exact / R_learned`` (module docstring).

    Attributes:
        gain: the profile ``q(t)`` of what the model lacks (``exact / learned``).
        beta: the taper toward ``gamma(1) = 1`` (0: the raw profile, no taper: ``gamma`` stays
            ``q(t_max)`` to ``t = 1``).
        name: the label's stem (``deficit``; another name tells apart a schedule of the same
            form built from another profile, e.g. a placebo's random one).

    Raises:
        ValueError: ``beta`` negative or not finite, or ``name`` not a plain key part.
    """

    gain: RatioProfile
    beta: float = 1.0
    name: str = "deficit"

    def __post_init__(self) -> None:
        if not (self.beta >= 0 and math.isfinite(self.beta)):
            raise ValueError(f"the deficit schedule's taper beta must be >= 0, got {self.beta}")
        if not self.name.replace("_", "").isalnum() or not self.name.islower():
            raise ValueError(
                f"the schedule's name must be a lower-case key part, got {self.name!r}"
            )

    @property
    def gamma0(self) -> float:
        """``gamma(0) = R_exact(0) / R_learned(0)``."""
        return float(self.gain(0.0))

    def __call__(self, t: torch.Tensor | float) -> torch.Tensor:
        """``gamma(t)`` (same shape as ``t``)."""
        t = torch.as_tensor(t)
        if not t.is_floating_point():
            t = t.to(torch.float64)
        q = self.gain(t)
        if self.beta == 0:
            return q
        return 1.0 + (q - 1.0) * (1.0 - t).clamp_min(0) ** self.beta

    def label(self) -> str:
        """``<name>_b<beta>`` (``deficit_b1``)."""
        return f"{self.name}_b{number_part(self.beta)}"


class ScaleCorrected(nn.Module):
    """``(x, t, ...) -> gamma(t) velocity(x, t, ...)``: SSC around any velocity model.

    ``t`` may be a scalar or one time per sample (shape ``(n,)``); ``gamma`` is applied per
    row, broadcast over every other dimension (vectors ``(n, d)`` or images ``(n, C, H, W)``).
    Extra arguments (labels, a class embedding) are passed through.

    Args:
        velocity: an ``nn.Module`` or any callable ``(x, t, ...) -> v``.
        schedule: the ``gamma(t)`` to apply.
    """

    def __init__(self, velocity: VelocityFn, schedule: Schedule) -> None:
        super().__init__()
        self.velocity = velocity
        self.schedule = schedule

    def forward(
        self, x: torch.Tensor, t: torch.Tensor | float, *args: Any, **kwargs: Any
    ) -> torch.Tensor:
        gamma = self.schedule(per_sample(t, x).to(torch.float64)).to(x.dtype)
        return gamma * self.velocity(x, t, *args, **kwargs)


def corrected(velocity: VelocityFn, schedule: Schedule) -> ScaleCorrected:
    """SSC around any velocity model: ``gamma(t) velocity(x, t, ...)`` (see :class:`ScaleCorrected`).

    Args:
        velocity: an ``nn.Module`` or callable ``(x, t, ...) -> v`` (for a model that takes
            ``(t, x)``, as torchcfm's U-Net does, pass ``lambda x, t: unet(t, x)``).
        schedule: a :class:`ScaleSchedule`, a :class:`DeficitSchedule`, or a calibrated one
            (``calibrate(...).schedule``).

    Returns:
        The corrected model (an ``nn.Module``; callable like the original).
    """
    return ScaleCorrected(velocity, schedule)


@dataclass(frozen=True)
class SSCSettings:
    """How :func:`calibrate` sizes and chooses SSC.

    Attributes:
        betas: the deficit schedule's tapers to try (0, the raw ``R_exact / R_learned`` that
            never returns to 1, is allowed but against the paper's ``gamma(1) = 1``).
        nfe: the sampling budget SSC is calibrated for.
        sampler: ``euler``, ``heun`` or ``midpoint``.
        n_samples: samples per candidate and noise draw (scored against the held-out reference).
        ratio_samples: pairs per time when measuring ``R_learned``.
        seed: seeds the calibration's sampling noise (its own stream: not the evaluation's).
        ratio_seed: seeds the ``(x0, x1)`` draws of ``R(t)``; ``R_learned`` and ``R_exact`` are
            measured on the same draws (a paired ratio), so give a precomputed ``exact``
            profile this seed and the same reference (default: ``seed + 1``).
        times: where ``R`` is measured when ``exact`` is a field.
        min_gain: a correction must beat the identity's validation FD by this fraction.
        noise_margin: and its mean paired FD drop must exceed this many standard errors of the
            paired drops over ``replicates`` noise draws (:func:`paired_fd_gains`); 0 keeps
            any mean drop. The default 2 keeps the identity unless a correction is clearly
            better.
        replicates: independent noise draws every candidate is sampled from (the same draws
            for every candidate: a paired comparison); at least 2 when ``noise_margin > 0``
            (one draw has no standard error).

    Raises:
        ValueError: a setting out of range.
    """

    betas: tuple[float, ...] = (1.0, 3.0)
    nfe: int = 50
    sampler: Method = "euler"
    n_samples: int = 500
    ratio_samples: int = 500
    seed: int = 0
    ratio_seed: int | None = None
    times: tuple[float, ...] = (0.0, 0.05, 0.1, 0.25, 0.5, 0.75, 0.95)
    min_gain: float = 0.0
    noise_margin: float = 2.0
    replicates: int = 4

    def __post_init__(self) -> None:
        if not self.betas or any(not (b >= 0 and math.isfinite(b)) for b in self.betas):
            raise ValueError(f"betas must be finite and >= 0, got {self.betas}")
        if self.sampler not in EVALS_PER_STEP:
            raise ValueError(
                f"unknown sampler {self.sampler!r}; choose from {', '.join(EVALS_PER_STEP)}"
            )
        steps_for_nfe(self.nfe, self.sampler)
        if self.n_samples < 2 or self.ratio_samples < 1:
            raise ValueError("n_samples must be >= 2 and ratio_samples >= 1")
        if not 0 <= self.min_gain < 1:
            raise ValueError(f"min_gain must lie in [0, 1), got {self.min_gain}")
        if not (self.noise_margin >= 0 and math.isfinite(self.noise_margin)):
            raise ValueError(f"noise_margin must be finite and >= 0, got {self.noise_margin}")
        if self.replicates < 1 or (self.noise_margin > 0 and self.replicates < 2):
            raise ValueError(
                f"replicates must be >= 2 to estimate SSC's noise margin (noise_margin="
                f"{self.noise_margin}), got {self.replicates}; set noise_margin=0 to choose "
                "on one draw without a margin"
            )


@dataclass(frozen=True)
class Calibration:
    """What :func:`calibrate` measured and chose.

    Attributes:
        schedule: the chosen schedule (:data:`IDENTITY` when no correction scored better).
        scores: mean validation FD of every candidate over the noise draws, by label
            (``identity`` included).
        learned: the model's ``R(t)``.
        exact: the exact field's ``R(t)`` at the same times.
        candidates: the schedules scored (the identity first).
        gains: each correction's mean paired FD drop ``FD(identity) - FD(candidate)``
            over the noise draws, by label (:func:`paired_fd_gains`; ``-inf`` if it diverged).
        gain_se: the standard error of those paired drops, by label (the margin's unit).
        fds: every candidate's FD on each noise draw, by label.
    """

    schedule: Schedule
    scores: dict[str, float]
    learned: RatioProfile
    exact: RatioProfile
    candidates: tuple[Schedule, ...] = field(default=(), repr=False)
    gains: dict[str, float] = field(default_factory=dict)
    gain_se: dict[str, float] = field(default_factory=dict)
    fds: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def learned_vs_exact(self) -> RatioProfile:
        """``R_learned(t) / R_exact(t)``: 1 where the model lacks nothing."""
        return self.learned / self.exact

    @property
    def is_identity(self) -> bool:
        """Whether calibration kept the model's own field."""
        return self.schedule.label() == "identity"


#: Most values per row :func:`calibrate` scores by FD on the flattened data (without
#: ``features=``): a 64 x 64 x 3 image is 12,288 (a 1.2 GB covariance); beyond, pass features.
MAX_FLAT_FEATURES = 4096


def _param_dtype(model: VelocityFn) -> torch.dtype | None:
    """The floating dtype of an ``nn.Module``'s first parameter (``None`` for plain callables)."""
    if isinstance(model, nn.Module):
        for p in model.parameters():
            if p.is_floating_point():
                return p.dtype
    return None


def _flat_features(x: torch.Tensor) -> np.ndarray:
    return x.detach().flatten(1).cpu().double().numpy()


@dataclass(frozen=True)
class PairedScores:
    """Every candidate's validation FD on the same noise draws (:func:`paired_fd_gains`).

    Attributes:
        fds: per label, the FD of each noise draw (``inf`` where the samples diverged).
        gains: per correction (not the fallback), the mean paired drop
            ``FD(fallback) - FD(candidate)`` over the draws (``-inf`` if any draw diverged).
        gain_se: the standard error of those paired drops (NaN with one draw).
    """

    fds: dict[str, np.ndarray]
    gains: dict[str, float]
    gain_se: dict[str, float]

    @property
    def scores(self) -> dict[str, float]:
        """Each candidate's mean FD over the draws."""
        return {k: float(np.mean(v)) for k, v in self.fds.items()}


def paired_fd_gains(
    model: VelocityFn,
    reference: torch.Tensor,
    candidates: Sequence[Schedule],
    settings: SSCSettings,
    *,
    features: Features | None = None,
    reuse: dict[str, np.ndarray] | None = None,
) -> PairedScores:
    """Score every candidate on the same ``settings.replicates`` noise draws.

    Draw ``r`` samples ``settings.n_samples`` noise rows (one generator seeded with
    ``settings.seed``, drawn in turn), integrates them under every candidate and takes the FD
    to ``reference``. Because the candidates share the draws, the difference of two
    candidates' FDs on one draw carries little sampling noise; its spread over the draws is
    the noise of the comparison SSC's choice makes.

    Args:
        model: the velocity model ``(x, t) -> v``.
        reference: held-out data ``(N, ...)``.
        candidates: schedules to score; the first is the fallback the gains are measured from.
        settings: sampler, budget, samples per draw, number of draws and seed.
        features: maps samples to features for the FD (default: the flattened data).
        reuse: per label, FDs already measured with these same settings, reference and
            features (e.g. a :class:`Calibration`'s ``fds``); those candidates are not sampled
            again.

    Returns:
        The :class:`PairedScores`.
    """
    feats = features or _flat_features
    gen = torch.Generator().manual_seed(settings.seed)
    ref_features = feats(reference)
    steps = steps_for_nfe(settings.nfe, settings.sampler)
    known = {k: v for k, v in (reuse or {}).items() if len(v) == settings.replicates}
    fds: dict[str, list[float]] = {s.label(): list(known.get(s.label(), [])) for s in candidates}
    for _ in range(settings.replicates):
        noise = torch.randn(
            settings.n_samples, *reference.shape[1:], generator=gen, dtype=reference.dtype
        ).to(reference.device)
        for schedule in candidates:
            if schedule.label() in known:
                continue
            x = integrate(corrected(model, schedule), noise, steps=steps, method=settings.sampler)
            ok = bool(torch.all(torch.isfinite(x)))
            fd = frechet_distance(feats(x), ref_features) if ok else math.inf
            fds[schedule.label()].append(fd)
    arrays = {k: np.asarray(v, dtype=float) for k, v in fds.items()}
    base = arrays[candidates[0].label()]
    gains: dict[str, float] = {}
    ses: dict[str, float] = {}
    for schedule in candidates[1:]:
        label = schedule.label()
        d = base - arrays[label]
        if not np.all(np.isfinite(d)):
            gains[label], ses[label] = -math.inf, math.nan
            continue
        gains[label] = float(d.mean())
        ses[label] = float(d.std(ddof=1) / math.sqrt(d.size)) if d.size > 1 else math.nan
    return PairedScores(arrays, gains, ses)


def choose_schedule(
    paired: PairedScores,
    candidates: Sequence[Schedule],
    settings: SSCSettings,
    min_gain: float | None = None,
) -> Schedule:
    """SSC's decision rule on paired scores (:func:`select_schedule` without the sampling).

    A candidate other than the first (the fallback) is eligible only if its mean paired FD
    drop exceeds ``settings.noise_margin`` standard errors of the drops (when the margin is
    on) and ``min_gain`` times the fallback's mean FD; the eligible one with the lowest mean
    FD is returned, else the fallback.

    Args:
        paired: every candidate's FDs on shared draws (:func:`paired_fd_gains`).
        candidates: the schedules scored, the fallback first.
        settings: ``noise_margin`` and ``min_gain``.
        min_gain: overrides ``settings.min_gain``.

    Returns:
        The chosen schedule.

    Raises:
        ValueError: the margin is on but a correction's paired SE cannot be estimated
            (fewer than two finite draws).
    """
    gain = settings.min_gain if min_gain is None else min_gain
    scores = paired.scores
    fallback = candidates[0]
    base = scores[fallback.label()]
    kept = []
    for s in candidates[1:]:
        mean, se = paired.gains[s.label()], paired.gain_se[s.label()]
        if not math.isfinite(mean) or mean <= gain * base:
            continue  # diverged, or no better than the fallback
        if settings.noise_margin > 0:
            if not math.isfinite(se):
                raise ValueError(
                    f"SSC's noise margin cannot be estimated for {s.label()!r}: its paired FD "
                    f"drops have no standard error ({len(paired.fds[s.label()])} draw(s)); "
                    "use replicates >= 2"
                )
            if mean <= settings.noise_margin * se:
                continue
        kept.append(s)
    return min(kept, key=lambda s: scores[s.label()]) if kept else fallback


def select_schedule(
    model: VelocityFn,
    reference: torch.Tensor,
    candidates: Sequence[Schedule],
    settings: SSCSettings,
    *,
    features: Features | None = None,
    min_gain: float | None = None,
    reuse: dict[str, np.ndarray] | None = None,
) -> tuple[Schedule, PairedScores]:
    """The candidate whose samples lie closest (FD) to ``reference`` beyond the paired noise.

    Every candidate is scored on the same ``settings.replicates`` noise draws
    (:func:`paired_fd_gains`). A candidate other than the first (the fallback) is eligible
    only if its mean paired FD drop from the fallback exceeds ``settings.noise_margin``
    standard errors of the paired drops and ``min_gain`` times the fallback's mean FD; the
    eligible candidate with the lowest mean FD is chosen, else the fallback.

    Args:
        model: the velocity model ``(x, t) -> v``.
        reference: held-out data ``(N, ...)``.
        candidates: schedules to score; the first is the fallback.
        settings: sampler, budget, sample count, draws, margin and seed.
        features: maps samples to features for the FD (default: the flattened data).
        min_gain: overrides ``settings.min_gain``.
        reuse: FDs already measured on these draws (:func:`paired_fd_gains`).

    Returns:
        ``(best, paired scores)`` (``.scores``: mean validation FD by label; a diverged
        candidate scores ``inf``).
    """
    paired = paired_fd_gains(model, reference, candidates, settings, features=features, reuse=reuse)
    return choose_schedule(paired, candidates, settings, min_gain), paired


def calibrate(
    model: VelocityFn,
    reference: torch.Tensor | np.ndarray,
    settings: SSCSettings | None = None,
    *,
    exact: RatioProfile | VelocityFn | None = None,
    features: Features | None = None,
) -> Calibration:
    """Size SSC from what ``model`` lacks and keep it only where it helps on held-out data.

    Measures ``R_learned(t)`` on ``reference``, divides the exact field's ``R_exact(t)`` by it,
    builds one :class:`DeficitSchedule` per taper in ``settings.betas``, and returns the
    candidate (the identity included) whose samples have the lowest mean FD to ``reference``
    over ``settings.replicates`` shared noise draws; a correction must beat the identity by
    ``settings.noise_margin`` standard errors of its *paired* FD drops (:func:`select_schedule`)
    and by ``settings.min_gain``.

    Args:
        model: the velocity model ``(x, t) -> v`` (``t`` a 0-d tensor, as :func:`integrate`
            passes it; wrap a ``(t, x)`` model in a lambda).
        reference: held-out data ``(N, ...)``, never the data you report on.
        settings: :class:`SSCSettings` (defaults: 50 Euler steps, 500 samples).
        exact: ``R_exact``: a measured :class:`RatioProfile`, the exact field itself (a
            mixture's ``optimal_velocity``), or ``None`` for the closed form at ``t = 0``
            (``E[x1] - x0``, valid for any data): then ``q`` is constant and the schedule is the
            paper's power form with ``gamma(0) = R_exact(0) / R_learned(0)``.
        features: maps samples to features for the FD (a classifier's penultimate layer,
            Inception for images; default: the flattened data).

    Returns:
        The :class:`Calibration`.

    Raises:
        ValueError: ``reference`` is not a finite batch, the model returns NaN or infinite
            velocities, the model's output shape differs from its input's, or the data has more than :data:`MAX_FLAT_FEATURES` values per row
            and no ``features`` (the FD's covariance of flattened pixels would not fit in memory).
    """
    settings = settings or SSCSettings()
    ref = torch.as_tensor(reference)
    dtype = _param_dtype(model)
    if dtype is not None:  # float64 data for a float32 model: the model's dtype
        ref = ref.to(dtype)
    elif not ref.is_floating_point():
        ref = ref.to(torch.float32)
    per_row = math.prod(ref.shape[1:]) if ref.ndim >= 2 else 0
    if features is None and per_row > MAX_FLAT_FEATURES:
        raise ValueError(
            f"reference rows hold {per_row} values: FD on flattened data needs a "
            f"{per_row} x {per_row} covariance; pass features= (e.g. an Inception or "
            f"classifier embedding) for data with more than {MAX_FLAT_FEATURES} values per row"
        )
    if ref.ndim < 2 or len(ref) < 2:
        raise ValueError(f"reference must be a batch (N >= 2, ...), got shape {tuple(ref.shape)}")
    if not bool(torch.isfinite(ref).all()):
        raise ValueError("reference contains NaN or infinite values")
    ratio_seed = settings.seed + 1 if settings.ratio_seed is None else settings.ratio_seed
    if exact is None or not isinstance(exact, RatioProfile):
        times = (0.0,) if exact is None else settings.times
        gen = torch.Generator().manual_seed(ratio_seed)
        exact = exact_ratio(ref, times, field=exact, n=settings.ratio_samples, generator=gen)
    gen = torch.Generator().manual_seed(ratio_seed)  # the same draws as R_exact's
    learned_r = velocity_ratio(model, ref, exact.times, n=settings.ratio_samples, generator=gen)
    if not all(math.isfinite(v) and v > 0 for v in learned_r.values()):
        name = type(model).__name__
        raise ValueError(
            f"the model ({name}) returns NaN, infinite or all-zero velocities on the reference "
            f"rows (its speed ratio R(t) = {dict(learned_r)}); check its weights and inputs "
            "before calibrating SSC"
        )
    learned = RatioProfile(exact.times, tuple(learned_r.values()))
    gain = exact / learned
    candidates: list[Schedule] = [IDENTITY, *(DeficitSchedule(gain, b) for b in settings.betas)]
    best, paired = select_schedule(model, ref, candidates, settings, features=features)
    return Calibration(
        best,
        paired.scores,
        learned,
        exact,
        tuple(candidates),
        paired.gains,
        paired.gain_se,
        paired.fds,
    )

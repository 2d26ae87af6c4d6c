"""The experiment's method steps: one dataset prepared, its models trained, one seed evaluated.

Per dataset (:func:`prepare_dataset`): the FD feature classifier (trained on the training
split only); ``R_exact(t)`` from what a user has, the data (the closed form at ``t = 0`` and
the training set's own exact field up to ``empirical_t_max``), which sizes SSC and MAFM's
target on every dataset; on the mixtures also the *oracle* profile from the mixture's closed-form
field at every time (a diagnostic: ``learned_vs_exact``; it sizes nothing); and the reference
figures: the FD floor of disjoint held-out sets the classifier never saw, each as large as a
generated sample set (mean, its SE and one set's SD), and the mixture's log-likelihood of
held-out rows.

Per (regime, seed) (:func:`evaluate_seed`): each model's ``R(t)`` and ``R_learned / R_exact``,
its FM loss against the exact field's, MAFM's ``lambda`` chosen on validation, SSC calibrated
on validation (:func:`icml26.velocity_deficit.ssc.calibrate`) and, as the uncalibrated
comparison, the paper's ``gamma(0) = 1 / R(0)``; then every variant sampled from the same test
noise at every NFE and scored on the test split.

**Placebos** (each a real variant of the run with its own keys, so every comparative claim has
one that *could* pass): ``ssc_random``, SSC's procedure (tapers, validation choice, noise
margin) on a gain of random size and the right direction, ``q^u``, ``u ~ U(0, 2)``
(:func:`random_ssc`); ``mafm_random`` / ``mafm_paper_random``, MAFM of
each form trained toward a random target level (:func:`mafm_target`).

Metric keys (``<d>`` dataset, ``<r>`` regime ``fit`` / ``short``, ``<v>`` a variant of
:data:`VARIANTS`; numbers written by
:func:`icml26.shared.keys.number_part`, so ``t = 0.25`` is ``t0p25``):
``fd.<d>.<r>.<v>.nfe<k>``, ``integration_lag.*``, ``loglik.*`` and ``loglik_gap.*`` (mixtures),
``sw.*`` (at ``select_nfe`` and the baseline's ``reference_nfe``), ``velocity_ratio.<d>.<r>.<m>.t<t>`` (``<m>`` a model: ``baseline`` or a MAFM family),
``learned_vs_exact.<d>.<r>.<m>.t<t>`` and ``learned_vs_exact_mean.<d>.<r>.<m>`` (against the
oracle profile on mixtures),
``fm_loss.<d>.<r>.<m>``, ``fm_loss_test.*``, ``fm_excess_loss.*`` (mixtures),
``ssc_val.<d>.<r>.<m>.<schedule>``, ``ssc_gamma0.<d>.<r>.<m>``, ``ssc_identity.<d>.<r>.<m>``,
``ssc_val_gain.<d>.<r>.<m>.<schedule>`` and ``ssc_val_gain_se.<d>.<r>.<m>.<schedule>`` (the
mean paired validation FD drop from the identity over SSC's noise draws and its SE, the
margin's unit),
``ssc_naive_gamma0.<d>.<r>.<m>``, ``ssc_random_gamma0|_u|_identity.<d>.<r>.baseline``,
``<family>_val.<d>.<r>.l<lambda>`` and ``<family>_lambda.<d>.<r>`` per MAFM family;
per dataset ``velocity_ratio_exact.<d>.t<t>`` (oracle on mixtures), ``velocity_ratio_exact_data.<d>.t<t>``
(at validation points with the training rows as the field's bank: SSC's and MAFM's),
``fd_floor.<d>``, ``fd_floor_se.<d>`` (a standard error), ``fd_floor_sd.<d>``, ``fd_floor_sets.<d>`` (:func:`fd_floor`), ``loglik_real.<d>``,
``classifier_accuracy.<d>``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import torch

from icml26.shared import log, rng_for, seed_for
from icml26.shared.keys import metric_key, number_part
from icml26.velocity_deficit.config import Regime, RunConfig
from icml26.velocity_deficit.data import Dataset, load_dataset
from icml26.velocity_deficit.diagnostics import (
    RatioProfile,
    exact_ratio,
    integration_lag,
    velocity_ratio,
)
from icml26.velocity_deficit.flow import fm_loss, linear_path
from icml26.velocity_deficit.metrics import FeatureClassifier, sliced_wasserstein
from icml26.velocity_deficit.model import VelocityMLP
from icml26.velocity_deficit.samplers import integrate, steps_for_nfe, time_grid
from icml26.velocity_deficit.ssc import (
    IDENTITY,
    Calibration,
    DeficitSchedule,
    Features,
    ScaleSchedule,
    Schedule,
    SSCSettings,
    VelocityFn,
    calibrate,
    corrected,
    select_schedule,
)
from icml26.velocity_deficit.train import TrainSettings, train_velocity_model

__all__ = [
    "VARIANTS",
    "Prepared",
    "SeedResult",
    "evaluate_seed",
    "fit_classifier",
    "load_model",
    "mafm_family",
    "mafm_target",
    "model_names",
    "placebo_draw",
    "prepare_dataset",
    "random_ssc",
    "samples_per_cell",
    "train_model",
]

#: Sampler variants, in table order: model, and the schedule applied to it (the ``*_random``
#: variants are the placebos: :func:`random_ssc`, :func:`mafm_target`).
VARIANTS = (
    "baseline",
    "ssc",
    "ssc_naive",
    "ssc_random",
    "mafm",
    "mafm_ssc",
    "mafm_paper",
    "mafm_random",
    "mafm_paper_random",
)

#: Model-name prefix of each MAFM family (``<prefix>_l<lambda>``) and the ``mafm_targets``
#: entry that trains it; a method family brings its placebo (``<prefix>_random``) along.
MAFM_FAMILIES = {
    "mafm": "exact",
    "mafm_paper": "paper",
    "mafm_random": "exact",
    "mafm_paper_random": "paper",
}


def placebo_draw(seed: int, *stream: str, low: float = -1.0, high: float = 1.0) -> float:
    """A placebo's ``u ~ U(low, high)``, from its own stream (never the data's or the model's).

    Args:
        seed: the training seed.
        *stream: the stream's name parts (placebo kind, dataset, regime).
        low: the draw's lower end.
        high: the draw's upper end.

    Returns:
        ``u`` in ``[low, high)``.
    """
    return float(rng_for(seed, "placebo", *stream).uniform(low, high))


def random_ssc(cal: Calibration, u: float, beta: float) -> DeficitSchedule:
    """SSC's placebo candidate: SSC's schedule with gain ``q(t)^u`` instead of ``q(t)``.

    ``q = R_exact / R_learned`` is what the model lacks; ``q^u`` with ``u ~ U(0, 2)`` keeps
    the correction's direction (a slow field is sped up) but draws its size at random, from
    none (``u = 0``) to twice the measured deficit in log. The placebo then goes through SSC's
    own choice (:func:`random_ssc_choice`): the same tapers, the same validation FD, the same
    noise margin, the identity reachable. It is SSC's procedure with a random instead of a
    measured size, so a rule it also meets does not need the measurement.

    Args:
        cal: SSC's calibration of the model (its measured ``R_learned`` and ``R_exact``).
        u: the random exponent.
        beta: the taper.

    Returns:
        The candidate schedule (label ``random_b<beta>``).
    """
    gain = cal.exact / cal.learned
    values = tuple(float(q) ** u for q in gain.values)
    return DeficitSchedule(RatioProfile(gain.times, values), beta, name="random")


def random_ssc_choice(
    cal: Calibration,
    u: float,
    model: VelocityFn,
    x_val: torch.Tensor,
    settings: SSCSettings,
    features: Features | None,
) -> Schedule:
    """The placebo ``ssc_random``: :func:`random_ssc` candidates chosen as SSC chooses.

    Args:
        cal: SSC's calibration of ``model`` (its profiles).
        u: the random exponent (``U(0, 2)``, :func:`placebo_draw`).
        model: the model.
        x_val: the validation rows SSC was calibrated on.
        settings: SSC's settings (those of ``cal``: the identity's FDs on its draws are reused).
        features: the FD's feature map.

    Returns:
        The chosen schedule (:data:`IDENTITY` where no random-size candidate beats it).
    """
    candidates: list[Schedule] = [IDENTITY, *(random_ssc(cal, u, b) for b in settings.betas)]
    same = {"identity": cal.fds["identity"]} if "identity" in cal.fds else None
    best, _ = select_schedule(model, x_val, candidates, settings, features=features, reuse=same)
    return best


def mafm_target(prep: Prepared, family: str | None, seed: int) -> RatioProfile | float | None:
    """MAFM's target ``rho(t)`` for a model family (``None``: the paper's ``rho = 1``).

    ``mafm``: ``R_exact(t)`` at validation points, training rows as the bank (the magnitude term up to its last time);
    ``mafm_paper``: the paper's ``rho = 1`` at every time. Their placebos keep each form but
    draw the level at random, ``u ~ U(-1, 1)`` per seed, within one Jensen-gap width
    ``m = |log R_exact(0)|`` of the exact field's level: ``mafm_random`` is
    ``R_exact(t) exp(u m)``, ``mafm_paper_random`` the constant ``R_exact(0) exp(u m)`` at
    every time (the paper's ``rho = 1`` is its end ``u = 1``). Same weight, same lambda sweep,
    the target's size and direction random.

    Args:
        prep: the dataset.
        family: :func:`mafm_family` of the model name (``None`` for FM).
        seed: the training seed (the placebo's draw).

    Returns:
        The target :func:`icml26.velocity_deficit.flow.mafm_loss` takes.
    """
    if family in (None, "mafm_paper"):
        return None
    if family == "mafm":
        return prep.exact
    r0 = prep.exact.values[0]
    c = math.exp(placebo_draw(seed, family, prep.name) * abs(math.log(r0)))
    if family == "mafm_random":
        return RatioProfile(prep.exact.times, tuple(v * c for v in prep.exact.values))
    return r0 * c


def ratio_seed(config: RunConfig, name: str) -> int:
    """The seed of every ``R(t)`` draw on dataset ``name``: learned and exact ratios are
    measured on the same ``(x0, x1)`` pairs, so their quotient carries no draw noise."""
    return seed_for(config.seed, "ratio", name) % 2**62


def t_part(t: float) -> str:
    """A time as a key part: ``0.25 -> "t0p25"``."""
    return "t" + number_part(float(t))


def fit_classifier(ds: Dataset, config: RunConfig, device: str) -> FeatureClassifier:
    """The FD feature classifier, trained on the training split only.

    Args:
        ds: the dataset.
        config: the run's config (``classifier_steps``, ``seed``).
        device: where to train.

    Returns:
        The fitted classifier (identity features for unlabelled data).
    """
    clf = FeatureClassifier(ds.dim, ds.n_classes).to(device)
    return clf.fit(
        ds.x_train,
        ds.y_train,
        steps=config.classifier_steps,
        seed=seed_for(config.seed, "classifier", ds.name) % 2**62,
    )


@dataclass(frozen=True)
class Prepared:
    """One dataset ready for the experiment.

    Attributes:
        ds: the data (train / val / test).
        clf: the FD feature classifier.
        exact: ``R_exact(t)`` from the data alone (closed form at ``t = 0``, the training
            rows' field up to ``empirical_t_max``): what SSC and MAFM are sized from.
        n: samples per cell (:func:`samples_per_cell`).
        metrics: the dataset's reference figures (floor, real log-likelihood, accuracy,
            ``velocity_ratio_exact``).
        oracle: on mixtures, ``R_exact(t)`` of the closed-form field at every ratio time (a
            diagnostic only: a user of a real model has no such field).
    """

    ds: Dataset
    clf: FeatureClassifier
    exact: RatioProfile
    n: int
    metrics: dict[str, float] = field(default_factory=dict)
    oracle: RatioProfile | None = None

    @property
    def name(self) -> str:
        """The dataset's metric-key name."""
        return self.ds.name


def reference_figures(ds: Dataset, clf: FeatureClassifier, config: RunConfig) -> dict[str, Any]:
    """The exact field's profiles and the dataset's reference figures (a JSON stage).

    Args:
        ds: the dataset.
        clf: its FD classifier.
        config: the run's config.

    Returns:
        ``{"times", "ratios", "oracle_times", "oracle_ratios", "metrics"}``: ``R_exact`` from
        the data at ``times`` (what SSC and MAFM use), the mixture's closed-form profile
        (empty lists without a density) and the flat metrics.
    """
    name = ds.name
    x_val = torch.as_tensor(ds.x_val)
    times = tuple(t for t in config.ratio_times if t <= config.empirical_t_max)
    bank = ds.x_train[:10_000] if any(t > 0 for t in times) else None
    gen = torch.Generator().manual_seed(ratio_seed(config, name))
    exact = exact_ratio(x_val, times, bank=bank, n=config.ratio_samples, generator=gen)
    oracle = None
    if ds.gmm is not None:  # the same draws (a prefix of the times): a paired comparison
        gen = torch.Generator().manual_seed(ratio_seed(config, name))
        oracle = exact_ratio(
            x_val,
            config.ratio_times,
            field=ds.gmm.optimal_velocity,
            n=config.ratio_samples,
            generator=gen,
        )
    flat = fd_floor(clf, ds, samples_per_cell(config, len(ds.x_val)))
    if not clf.identity and ds.y_test is not None:
        flat[metric_key("classifier_accuracy", name)] = clf.accuracy_on(ds.x_test, ds.y_test)
    if ds.gmm is not None:
        flat[metric_key("loglik_real", name)] = float(ds.gmm.log_prob(ds.x_test).mean())
    for t, r in zip(exact.times, exact.values, strict=True):
        flat[metric_key("velocity_ratio_exact_data", name, t_part(t))] = r
    shown = oracle or exact
    for t, r in zip(shown.times, shown.values, strict=True):
        flat[metric_key("velocity_ratio_exact", name, t_part(t))] = r
    return {
        "times": list(exact.times),
        "ratios": list(exact.values),
        "oracle_times": list(oracle.times) if oracle else [],
        "oracle_ratios": list(oracle.values) if oracle else [],
        "metrics": flat,
    }


def fd_floor(clf: FeatureClassifier, ds: Dataset, n: int) -> dict[str, float]:
    """The FD of ``n`` held-out rows to the test split: what a perfect sampler of ``n`` scores.

    The validation rows (never seen by the classifier) cut into ``k = len(x_val) // n``
    *disjoint* sets of ``n`` rows, in split order (the split is already a random permutation):
    each is an i.i.d. sample of ``n`` real rows, sized like a generated sample set, so the floor
    is comparable with a sampler's FD and no row counts twice (resampling with replacement
    repeats rows, which lowers the effective sample size and inflates the floor).

    Args:
        clf: the FD classifier.
        ds: the dataset.
        n: rows per set (the samples per cell).

    Returns:
        ``fd_floor.<d>`` (mean over the ``k`` sets), ``fd_floor_se.<d>`` (its standard error,
        ``sd / sqrt(k)``), ``fd_floor_sd.<d>`` (the standard deviation of one set's FD: how far
        a sample set's FD moves by chance alone) and ``fd_floor_sets.<d>`` (``k``).

    Raises:
        ValueError: fewer than two disjoint sets fit in the validation split.
    """
    k = len(ds.x_val) // n if n > 0 else 0
    if k < 2:
        raise ValueError(
            f"{ds.name}: the FD floor needs at least two disjoint held-out sets of {n} rows, but "
            f"the validation split holds {len(ds.x_val)}: raise n_val or lower n_samples"
        )
    values = [clf.fd(ds.x_val[i * n : (i + 1) * n], ds.x_test) for i in range(k)]
    sd = float(np.std(values, ddof=1))
    return {
        metric_key("fd_floor", ds.name): float(np.mean(values)),
        metric_key("fd_floor_se", ds.name): sd / float(np.sqrt(k)),
        metric_key("fd_floor_sd", ds.name): sd,
        metric_key("fd_floor_sets", ds.name): float(k),
    }


def samples_per_cell(config: RunConfig, n_val: int) -> int:
    """Samples per (variant, NFE) cell: ``n_samples``, at most half the validation split (the
    FD floor needs two disjoint held-out sets of that size)."""
    return max(1, min(config.n_samples, n_val // 2))


def prepare_dataset(
    spec: str, config: RunConfig, clf: FeatureClassifier, reference: dict[str, Any]
) -> Prepared:
    """Assemble a :class:`Prepared` from the loaded data, classifier and reference figures.

    Args:
        spec: the dataset spec.
        config: the run's config.
        clf: the fitted classifier.
        reference: :func:`reference_figures`'s output.

    Returns:
        The :class:`Prepared` dataset.
    """
    ds = load_data(spec, config)
    exact = RatioProfile(tuple(reference["times"]), tuple(reference["ratios"]))
    oracle = None
    if reference["oracle_times"]:
        oracle = RatioProfile(tuple(reference["oracle_times"]), tuple(reference["oracle_ratios"]))
    n = samples_per_cell(config, len(ds.x_val))
    return Prepared(ds, clf, exact, n, dict(reference["metrics"]), oracle)


def load_data(spec: str, config: RunConfig) -> Dataset:
    """The dataset ``spec`` with the config's split sizes (deterministic in ``config.seed``)."""
    return load_dataset(
        spec, n_train=config.n_train, n_val=config.n_val, n_test=config.n_test, seed=config.seed
    )


def model_names(spec: str, config: RunConfig, regime: str) -> dict[str, float]:
    """The models trained per (dataset, regime, seed): ``{name: MAFM lambda}`` (0: FM).

    Args:
        spec: the dataset spec.
        config: the run's config.
        regime: ``fit`` or ``short``.

    Returns:
        ``baseline`` (FM) and, on ``compare`` datasets in ``mafm_regimes``, per lambda
        ``mafm_l<lambda>`` (target ``R_exact`` from the data) and ``mafm_paper_l<lambda>``
        (the paper's ``rho = 1``), as ``mafm_targets`` asks, each with its placebo
        ``<family>_random_l<lambda>`` (:func:`mafm_target`).
    """
    names = {"baseline": 0.0}
    if spec in config.compare and regime in config.mafm_regimes:
        for prefix, target in MAFM_FAMILIES.items():
            if target in config.mafm_targets:
                names |= {f"{prefix}_l{number_part(lam)}": lam for lam in config.mafm_lambdas}
    return names


def mafm_family(method: str) -> str | None:
    """The MAFM family (a key of :data:`MAFM_FAMILIES`) of a model name; ``None`` for FM."""
    head, sep, _ = method.rpartition("_l")
    return head if sep and head in MAFM_FAMILIES else None


def train_model(
    prep: Prepared,
    regime: Regime,
    lam: float,
    config: RunConfig,
    seed: int,
    tag: str,
    *,
    family: str | None = None,
) -> dict[str, torch.Tensor]:
    """Train one model (FM for ``lam == 0``, else MAFM) and return its EMA state.

    Baseline and MAFM models of one seed share their initialisation and batch draws (a
    paired design: they differ only in the objective).

    Args:
        prep: the dataset.
        regime: model size and steps.
        lam: MAFM's lambda (0: plain FM).
        config: the run's config.
        seed: the training seed.
        tag: a name for log lines.
        family: the MAFM family (its target: :func:`mafm_target`); ``None`` with ``lam == 0``.

    Returns:
        The EMA model's ``state_dict`` (CPU tensors).
    """
    target = mafm_target(prep, family, seed)
    settings = TrainSettings(
        steps=regime.train_steps,
        batch_size=config.batch_size,
        lr=config.lr,
        ema_decay=config.ema_decay,
        width=regime.width,
        depth=regime.depth,
        skip=regime.skip,
        objective="mafm" if lam > 0 else "fm",
        coupling=config.coupling,
        mafm_lambda=lam,
        mafm_power=config.mafm_power,
        mafm_target=target,
    )
    model_seed = seed_for(seed, "model", prep.name) % 2**62
    model, _ = train_velocity_model(
        prep.ds.x_train, None, settings, seed=model_seed, device=config.device, tag=tag
    )
    return {k: v.detach().cpu() for k, v in model.state_dict().items()}


def load_model(
    state: dict[str, torch.Tensor], dim: int, regime: Regime, device: str
) -> VelocityMLP:
    """A :class:`VelocityMLP` of ``regime``'s size with ``state`` loaded (eval mode)."""
    model = VelocityMLP(dim, regime.width, regime.depth, skip=regime.skip)
    model.load_state_dict(state)
    return model.to(device).eval()


@dataclass
class SeedResult:
    """One (dataset, regime, seed) evaluation: flat metrics and the samples plotted."""

    metrics: dict[str, float]
    samples: dict[str, np.ndarray]

    def pack(self) -> dict[str, np.ndarray]:
        """As arrays only (the NUMPY stage saver: no pickle)."""
        keys = np.array(list(self.metrics), dtype=str)
        values = np.array(list(self.metrics.values()), dtype=np.float64)
        return {"_keys": keys, "_values": values, **{f"s_{k}": v for k, v in self.samples.items()}}

    @classmethod
    def unpack(cls, arrays: dict[str, np.ndarray]) -> SeedResult:
        """Inverse of :meth:`pack`."""
        metrics = {
            str(k): float(v) for k, v in zip(arrays["_keys"], arrays["_values"], strict=True)
        }
        samples = {k[2:]: v for k, v in arrays.items() if k.startswith("s_")}
        return cls(metrics, samples)


class _Sampler:
    """Samples of one model + schedule at one NFE from fixed noise, computed once."""

    def __init__(self, noise: torch.Tensor, config: RunConfig) -> None:
        self.noise, self.config = noise, config
        self.cache: dict[tuple[str, str, int], np.ndarray] = {}

    def __call__(self, name: str, model: VelocityMLP, schedule: Schedule, nfe: int) -> np.ndarray:
        """Samples of model ``name`` (the cache key, with the schedule's label and ``nfe``)."""
        key = (name, schedule.label(), nfe)
        if key not in self.cache:
            steps = steps_for_nfe(nfe, self.config.sampler)
            fn = corrected(model, schedule)
            grid = time_grid(steps, self.config.grid)
            x = integrate(fn, self.noise, grid=grid, method=self.config.sampler)
            assert isinstance(x, torch.Tensor)
            self.cache[key] = x.detach().cpu().numpy()
        return self.cache[key]


def score(samples: np.ndarray, prep: Prepared, seed: int, *, sw: bool = True) -> dict[str, float]:
    """Test-split figures of one sample set: FD, integration lag, SW, mixture log-likelihood.

    Args:
        samples: generated samples ``(n, d)``.
        prep: the dataset.
        seed: seeds the SW projections.
        sw: also the sliced Wasserstein distance (the slowest of them).

    Returns:
        ``{"fd", "integration_lag"[, "sw"][, "loglik", "loglik_gap"]}`` (NaN for diverged
        samples).
    """
    ds = prep.ds
    names = (
        ["fd", "integration_lag"]
        + (["sw"] if sw else [])
        + (["loglik", "loglik_gap"] if ds.gmm else [])
    )
    if not np.all(np.isfinite(samples)):
        return dict.fromkeys(names, float("nan"))
    out = {
        "fd": prep.clf.fd(samples, ds.x_test),
        "integration_lag": integration_lag(samples, ds.x_test),
    }
    if sw:
        out["sw"] = sliced_wasserstein(samples, ds.x_test, seed=seed)
    if ds.gmm is not None:
        out["loglik"] = float(ds.gmm.log_prob(samples).mean())
        out["loglik_gap"] = out["loglik"] - prep.metrics[metric_key("loglik_real", ds.name)]
    return out


def _ratios(
    prep: Prepared, models: dict[str, VelocityMLP], regime: str, config: RunConfig
) -> dict[str, float]:
    """``R(t)`` and ``R_learned / R_exact`` of each model, on the validation split."""
    flat: dict[str, float] = {}
    x_val = torch.as_tensor(prep.ds.x_val, device=config.device)
    for method, model in models.items():
        # the exact profile's draws (its times are a prefix of ratio_times): a paired ratio
        gen = torch.Generator().manual_seed(ratio_seed(config, prep.name))
        r = velocity_ratio(model, x_val, config.ratio_times, n=config.ratio_samples, generator=gen)
        for t in config.ratio_times:
            flat[metric_key("velocity_ratio", prep.name, regime, method, t_part(t))] = r[t]
        exact = prep.oracle or prep.exact  # the diagnostic: the oracle where there is one
        rel = [r[t] / e for t, e in zip(exact.times, exact.values, strict=True)]
        for t, q in zip(exact.times, rel, strict=True):
            flat[metric_key("learned_vs_exact", prep.name, regime, method, t_part(t))] = q
        flat[metric_key("learned_vs_exact_mean", prep.name, regime, method)] = float(np.mean(rel))
    return flat


@torch.no_grad()
def _fit_check(
    prep: Prepared, models: dict[str, VelocityMLP], regime: str, config: RunConfig, seed: int
) -> dict[str, float]:
    """FM loss on training and test pairs; on mixtures against the exact field's (the floor)."""
    ds, name, flat = prep.ds, prep.name, {}
    gen = torch.Generator().manual_seed(seed_for(seed, "fit-check", name) % 2**62)
    n = 4 * config.ratio_samples
    pairs = {}
    for split, x in (("train", ds.x_train), ("test", ds.x_test)):
        x1 = torch.as_tensor(x)[torch.randint(0, len(x), (n,), generator=gen)]
        pairs[split] = (torch.randn(x1.shape, generator=gen), x1, torch.rand(n, generator=gen))
    for method, model in models.items():
        for split, (x0, x1, t) in pairs.items():
            xt, u = linear_path(x0, x1, t)
            v = model(xt.to(config.device), t.to(config.device)).cpu()
            key = "fm_loss" if split == "train" else "fm_loss_test"
            flat[metric_key(key, name, regime, method)] = float(fm_loss(v, u))
    if ds.gmm is not None:
        x0, x1, t = pairs["train"]
        xt, u = linear_path(x0, x1, t)
        floor = float(fm_loss(ds.gmm.optimal_velocity(xt, t), u))
        flat[metric_key("fm_loss_exact", name)] = floor
        for method in models:
            loss = flat[metric_key("fm_loss", name, regime, method)]
            flat[metric_key("fm_excess_loss", name, regime, method)] = loss / floor - 1
    return flat


def _choose_mafm(
    prep: Prepared,
    mafm: dict[str, VelocityMLP],
    lambdas: dict[str, float],
    regime: str,
    settings: SSCSettings,
    x_val: torch.Tensor,
    family: str = "mafm",
) -> tuple[str, dict[str, float]]:
    """MAFM's lambda with the lowest validation FD of the plain sampler (among lambda > 0).

    Keys ``<family>_val.<d>.<r>.l<lambda>`` and ``<family>_lambda.<d>.<r>``."""
    scores = {}
    one_draw = replace(settings, replicates=1, noise_margin=0.0)  # no correction: no margin
    for method, model in mafm.items():
        _, val = select_schedule(model, x_val, [IDENTITY], one_draw, features=prep.clf.features)
        scores[method] = val.scores["identity"]
    best = min(mafm, key=scores.__getitem__)
    flat = {
        metric_key(f"{family}_val", prep.name, regime, "l" + number_part(lambdas[m])): v
        for m, v in scores.items()
    }
    flat[metric_key(f"{family}_lambda", prep.name, regime)] = lambdas[best]
    return best, flat


def _naive(
    prep: Prepared, model: VelocityMLP, r0: float, settings: SSCSettings, x_val: torch.Tensor
) -> Schedule:
    """The paper's sizing ``gamma(0) = 1 / R(0)``, its decay chosen on validation."""
    betas = [b for b in settings.betas if b > 0] or [1.0]
    candidates = [ScaleSchedule.from_start_ratio(r0, beta=b) for b in betas]
    # the paper's form: its best taper on one draw, no margin (as before the paired margin)
    lowest = replace(settings, replicates=1, noise_margin=0.0)
    best, _ = select_schedule(model, x_val, candidates, lowest, features=prep.clf.features)
    return best


def _calibrations(
    prep: Prepared,
    models: dict[str, VelocityMLP],
    regime: str,
    settings: SSCSettings,
    x_val: torch.Tensor,
) -> tuple[dict[str, Calibration], dict[str, float]]:
    """SSC calibrated on validation for each model, with its figures."""
    flat: dict[str, float] = {}
    cals: dict[str, Calibration] = {}
    for method, model in models.items():
        cal = calibrate(model, x_val, settings, exact=prep.exact, features=prep.clf.features)
        cals[method] = cal
        for label, value in cal.scores.items():
            flat[metric_key("ssc_val", prep.name, regime, method, label)] = value
        flat[metric_key("ssc_gamma0", prep.name, regime, method)] = cal.schedule.gamma0
        flat[metric_key("ssc_identity", prep.name, regime, method)] = float(cal.is_identity)
        for label, value in cal.gains.items():
            flat[metric_key("ssc_val_gain", prep.name, regime, method, label)] = value
            se = cal.gain_se[label]
            flat[metric_key("ssc_val_gain_se", prep.name, regime, method, label)] = se
    return cals, flat


def evaluate_seed(
    prep: Prepared,
    models: dict[str, VelocityMLP],
    lambdas: dict[str, float],
    regime: str,
    config: RunConfig,
    seed: int,
) -> SeedResult:
    """Every measurement of one (dataset, regime, seed) (module docstring).

    Args:
        prep: the dataset.
        models: ``baseline`` and any ``mafm_l<lambda>`` models of this seed.
        lambdas: each model's MAFM lambda (:func:`model_names`).
        regime: ``fit`` or ``short`` (a key part).
        config: the run's config.
        seed: the training seed (noise streams derive from it).

    Returns:
        The flat metrics and the samples at ``select_nfe`` (for the figures).
    """
    name = prep.name
    settings = SSCSettings(
        betas=config.ssc_betas,
        nfe=config.select_nfe,
        sampler=config.sampler,
        n_samples=min(config.val_samples, len(prep.ds.x_val)),
        ratio_samples=config.ratio_samples,
        seed=seed_for(seed, "validation-noise", name) % 2**62,
        ratio_seed=ratio_seed(config, name),
        min_gain=config.ssc_min_gain,
        noise_margin=config.ssc_noise_margin,
        replicates=config.ssc_replicates,
    )
    x_val = torch.as_tensor(prep.ds.x_val, device=config.device)
    flat: dict[str, float] = {}
    chosen = {"baseline": models["baseline"]}
    for family in MAFM_FAMILIES:
        mafm = {m: models[m] for m in models if mafm_family(m) == family}
        if mafm:
            best, picked = _choose_mafm(prep, mafm, lambdas, regime, settings, x_val, family)
            flat |= picked
            chosen[family] = mafm[best]
    flat |= _ratios(prep, chosen, regime, config)
    flat |= _fit_check(prep, chosen, regime, config, seed)
    sized = {m: chosen[m] for m in ("baseline", "mafm") if m in chosen}
    cals, cal_flat = _calibrations(prep, sized, regime, settings, x_val)
    flat |= cal_flat
    r0 = flat[metric_key("velocity_ratio", name, regime, "baseline", "t0")]
    naive = _naive(prep, chosen["baseline"], r0, settings, x_val)
    flat[metric_key("ssc_naive_gamma0", name, regime, "baseline")] = naive.gamma0
    u = placebo_draw(seed, "ssc", name, regime, low=0.0, high=2.0)
    placebo = random_ssc_choice(
        cals["baseline"], u, chosen["baseline"], x_val, settings, prep.clf.features
    )
    flat[metric_key("ssc_random_gamma0", name, regime, "baseline")] = placebo.gamma0
    flat[metric_key("ssc_random_u", name, regime, "baseline")] = u
    flat[metric_key("ssc_random_identity", name, regime, "baseline")] = float(
        placebo.label() == "identity"
    )
    variants: dict[str, tuple[str, Schedule]] = {
        "baseline": ("baseline", IDENTITY),
        "ssc": ("baseline", cals["baseline"].schedule),
        "ssc_naive": ("baseline", naive),
        "ssc_random": ("baseline", placebo),
    }
    if "mafm" in chosen:
        variants["mafm_ssc"] = ("mafm", cals["mafm"].schedule)
    variants |= {f: (f, IDENTITY) for f in MAFM_FAMILIES if f in chosen}
    gen = torch.Generator().manual_seed(seed_for(seed, "test-noise", name) % 2**62)
    noise = torch.randn(prep.n, prep.ds.dim, generator=gen).to(config.device)
    sample = _Sampler(noise, config)
    samples: dict[str, np.ndarray] = {}
    for variant, (method, schedule) in variants.items():
        budgets = [*config.nfe, *([config.reference_nfe] if variant == "baseline" else [])]
        for k in dict.fromkeys(budgets):
            x = sample(method, chosen[method], schedule, k)
            sw = k in (config.select_nfe, config.reference_nfe)
            for metric, value in score(x, prep, seed, sw=sw).items():
                flat[metric_key(metric, name, regime, variant, f"nfe{k}")] = value
            if k == config.select_nfe:
                samples[variant] = x
    log(
        f"{name}/{regime} seed {seed}: SSC gamma(0) {cals['baseline'].schedule.gamma0:.3f} "
        f"({cals['baseline'].schedule.label()}), naive {naive.gamma0:.3f}"
    )
    return SeedResult(flat, samples)

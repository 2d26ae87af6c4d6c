"""Configs of ``icml26 run nppr`` and ``icml26 bench nppr``, and their profiles (light imports).

``RunConfig`` groups its fields by stage: data and classifiers, budgets and inputs, the
fixed-distribution PR baselines, the universal-perturbation baseline, the AR attack ensemble,
and the NPPR mixture. ``BenchConfig`` sizes the cost benchmark. Profiles are instances:
``SMOKE`` (tests, seconds), ``QUICK`` (at most 5 minutes on one core), ``FULL`` (about 30).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from icml26.shared.keys import number_part

__all__ = [
    "ARCHS",
    "DATASETS",
    "FORMS",
    "FULL",
    "QUICK",
    "SMOKE",
    "TRAININGS",
    "BenchConfig",
    "RunConfig",
    "eps_tag",
    "parse_model_name",
]

FORMS = ("none", "x", "y", "xy")
DATASETS = ("mnist5k", "digits", "mnist1d", "npz", "imagefolder", "cifar10", "cifar100")
EMBEDDED = ("mnist5k", "digits", "mnist1d")
ARCHS = ("cnn", "resnet")
TRAININGS = ("std", "at")


def eps_tag(eps: float) -> str:
    """The sweep-key part of a budget: ``0.1 -> 'eps0p1'``.

    Args:
        eps: the L-inf budget.

    Returns:
        ``"eps"`` followed by :func:`icml26.shared.keys.number_part` of ``eps``.
    """
    return "eps" + number_part(float(eps))


def parse_model_name(name: str) -> tuple[str, str]:
    """Split a model name of the run: ``'cnn_at' -> ('cnn', 'at')``.

    Args:
        name: ``<arch>_<training>``.

    Returns:
        ``(arch, training)``.

    Raises:
        ValueError: an unknown architecture or training.
    """
    arch, _, training = name.partition("_")
    if arch not in ARCHS or training not in TRAININGS:
        raise ValueError(
            f"model name {name!r} must be <arch>_<training> with arch in {ARCHS} and training "
            f"in {TRAININGS}"
        )
    return arch, training


def _at_least(minimum: int, **values: int) -> None:
    small = [k for k, v in values.items() if v < minimum]
    if small:
        raise ValueError(f"these settings must be >= {minimum}: {', '.join(small)}")


@dataclass(frozen=True)
class RunConfig:
    """``icml26 run nppr``: train classifiers, then AR, PR, a universal perturbation and NPPR.

    Every model is trained and measured ``replicates`` times (model initialisation and
    training order, fitting and selection inputs, Monte-Carlo draws from separate seed
    streams); the claims are decided on the mean and standard error over replicates. The
    first replicate also writes the per-key figures with their 95% intervals and runs the
    budget sweep.

    Data and classifiers:
        dataset: ``mnist5k``, ``digits``, ``mnist1d`` (embedded) or ``npz`` / ``imagefolder``
            / ``cifar10`` / ``cifar100`` (``data_path``; standard train and test splits).
        model_path: measure your classifier (an icml26-nppr safetensors file or TorchScript)
            under the name ``user`` instead of training ``models``.
        models: ``<arch>_<std|at>`` names trained on the train split.
        extra_datasets, extra_models: the headline measurement on other embedded data
            (first replicate only; keys ``<metric>.<dataset>_<model>``).
        width, epochs, batch_size, lr, at_method, at_eps, n_train: classifier training
            (``at_eps`` 0.05, half the evaluated ``eps``: the twin is not measured at the
            budget it was trained for).
    Budgets and inputs:
        eps: the headline L-inf budget; sweep_eps: other budgets (first replicate).
        n_eval: test images measured (drawn from the test split in each replicate).
        n_fit, n_select: train-split images the mixture and the universal perturbation are
            fitted on, and the ones that pick the tuned noise and the best form; both
            disjoint from the classifier's ``n_train`` images and from each other.
    Fixed-distribution PR:
        mc_samples: draws per input; noise_scale: our Gaussian / Laplace scale over eps;
        tuned_scales: the scales :func:`~icml26.nppr.baselines.tuned_fixed_pr` searches.
    Universal perturbation:
        uap_steps, uap_lr: Adam steps and learning rate on one shared perturbation (and one
            per class), decoded like the mixture's (``latent_size``, tanh).
    AR (the ``apgd_square`` ensemble, ART's attacks; see :mod:`icml26.nppr.baselines.attacks`):
        pgd_steps, pgd_restarts; aa_inputs: the evaluation subset of the ensemble;
        aa_iters, aa_targets, square_queries: its APGD iterations, targets, Square queries.
    NPPR:
        forms, k, latent_size, hidden, logstd_lo, logstd_hi, weight_floor: the mixture;
        fit_steps, fit_batch, fit_samples, fit_lr, tau_start, tau_end, entropy_weight,
        diversity_weight: its fitting (:class:`~icml26.nppr.fit.FitConfig`).

    Other fields:
        device: the torch device (``cpu``, ``cuda``).
        threads: CPU threads of the job, set by the runner before it starts.
        sweep_inputs: test inputs of the budget sweep (the first ones of the test split).
        level: confidence level of every interval.
        sweep_mc_samples: Monte-Carlo draws per input in the budget sweep.
        sweep_fit_steps: the mixture's fitting steps in the budget sweep.
        halfwidth: the target half-width of ``inputs_needed.*`` (inputs to reach it at
            ``level``).
    """

    seed: int = 0
    device: str = "cpu"
    threads: int = 1
    replicates: int = 3
    dataset: str = "mnist5k"
    data_path: Path | None = None
    model_path: Path | None = None
    models: tuple[str, ...] = ("cnn_std", "cnn_at")
    extra_datasets: tuple[str, ...] = ()
    extra_models: tuple[str, ...] = ("cnn_std", "cnn_at")
    # classifiers
    width: int = 12
    epochs: int = 10
    batch_size: int = 64
    lr: float = 5e-3
    at_method: str = "fgsm"
    at_eps: float = 0.05
    n_train: int = 2800
    # budgets and inputs
    eps: float = 0.1
    sweep_eps: tuple[float, ...] = (0.05, 0.1, 0.2, 0.3)
    n_eval: int = 500
    n_fit: int = 1000
    n_select: int = 200
    sweep_inputs: int = 200
    level: float = 0.95
    # PR
    mc_samples: int = 64
    sweep_mc_samples: int = 32
    tuned_scales: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 64.0)
    noise_scale: float = 1.0
    # universal perturbation
    uap_steps: int = 150
    uap_lr: float = 0.1
    # AR
    pgd_steps: int = 20
    pgd_restarts: int = 1
    aa_inputs: int = 100
    aa_iters: int = 50
    aa_targets: int = 2
    square_queries: int = 500
    # NPPR
    forms: tuple[str, ...] = FORMS
    k: int = 4
    latent_size: int = 14
    hidden: int = 64
    logstd_lo: float = -2.0
    logstd_hi: float = 1.0
    weight_floor: float = 0.5
    fit_steps: int = 150
    sweep_fit_steps: int = 100
    fit_batch: int = 32
    fit_samples: int = 4
    fit_lr: float = 0.02
    tau_start: float = 1.0
    tau_end: float = 0.2
    entropy_weight: float = 0.01
    diversity_weight: float = 0.001
    halfwidth: float = 0.02

    def __post_init__(self) -> None:
        if self.dataset not in DATASETS:
            raise ValueError(f"dataset must be one of {DATASETS}, got {self.dataset!r}")
        needs_path = self.dataset not in EMBEDDED
        if needs_path and self.data_path is None:
            raise ValueError(f"dataset={self.dataset} needs data_path")
        if not needs_path and self.data_path is not None:
            raise ValueError(
                "data_path is used only by dataset=npz, imagefolder, cifar10 or cifar100"
            )
        if self.data_path is not None and not Path(self.data_path).exists():
            raise ValueError(f"data_path {self.data_path} does not exist")
        if self.model_path is not None and not Path(self.model_path).is_file():
            raise ValueError(f"model_path {self.model_path} does not exist")
        if self.model_path is None:
            if not self.models:
                raise ValueError("models must name at least one <arch>_<std|at> classifier")
            for name in self.models:
                parse_model_name(name)
        for name in self.extra_models:
            parse_model_name(name)
        bad = [d for d in self.extra_datasets if d not in EMBEDDED or d == self.dataset]
        if bad:
            raise ValueError(
                f"extra_datasets must be embedded datasets other than {self.dataset}: {bad}"
            )
        if not self.forms or any(f not in FORMS for f in self.forms):
            raise ValueError(f"forms must be a non-empty subset of {FORMS}, got {self.forms}")
        for name, value in (
            ("eps", self.eps),
            ("at_eps", self.at_eps),
            *(("sweep_eps", e) for e in self.sweep_eps),
        ):
            if not 0 < value < 1:
                raise ValueError(f"{name} must be in (0, 1) for inputs in [0, 1], got {value}")
        if self.at_method not in ("fgsm", "pgd"):
            raise ValueError(f"at_method must be fgsm or pgd, got {self.at_method!r}")
        _at_least(
            1,
            threads=self.threads,
            replicates=self.replicates,
            width=self.width,
            epochs=self.epochs,
            batch_size=self.batch_size,
            n_train=self.n_train,
            n_eval=self.n_eval,
            n_fit=self.n_fit,
            n_select=self.n_select,
            sweep_inputs=self.sweep_inputs,
            mc_samples=self.mc_samples,
            sweep_mc_samples=self.sweep_mc_samples,
            uap_steps=self.uap_steps,
            pgd_steps=self.pgd_steps,
            pgd_restarts=self.pgd_restarts,
            aa_inputs=self.aa_inputs,
            aa_iters=self.aa_iters,
            k=self.k,
            latent_size=self.latent_size,
            hidden=self.hidden,
            fit_steps=self.fit_steps,
            sweep_fit_steps=self.sweep_fit_steps,
            fit_batch=self.fit_batch,
            fit_samples=self.fit_samples,
        )
        if self.aa_targets < 0 or self.square_queries < 0:
            raise ValueError("aa_targets and square_queries must be >= 0")
        if not self.logstd_lo < self.logstd_hi:
            raise ValueError("logstd_lo must be below logstd_hi")
        if not 0 <= self.weight_floor < 1:
            raise ValueError(f"weight_floor must be in [0, 1), got {self.weight_floor}")
        if not 0 < self.level < 1 or not 0 < self.halfwidth < 0.5:
            raise ValueError("level must be in (0, 1) and halfwidth in (0, 0.5)")
        positive = (self.lr, self.fit_lr, self.uap_lr, self.tau_start, self.tau_end)
        if min(*positive, self.noise_scale) <= 0:
            raise ValueError(
                "lr, fit_lr, uap_lr, tau_start, tau_end and noise_scale must be positive"
            )
        if not self.tuned_scales or min(self.tuned_scales) <= 0:
            raise ValueError("tuned_scales must be positive noise scales")
        if not self.device.startswith("cuda") and self.device != "cpu":
            raise ValueError(f"device must be cpu or cuda[:N], got {self.device!r}")


@dataclass(frozen=True)
class BenchConfig:
    """``icml26 bench nppr``: cost (wall time, forward passes) of NPPR vs PR and PGD to a CI
    half-width, and how NPPR's cost grows with K and with the number of inputs.

    Attributes:
        seed: the run's seed; separate random streams are drawn from it.
        device: the torch device (``cpu``, ``cuda``).
        threads: CPU threads of the job, set by the runner before it starts.
        eps: the L-inf budget.
        halfwidth: the confidence-interval half-width whose cost is measured (95%).
        epochs: training epochs of the ``cnn_std`` classifier.
        width: its width.
        n_pilot: test inputs of the pilot estimates.
        mc_samples: draws per input.
        pgd_steps: PGD steps.
        fit_steps: the mixture's fitting steps.
        ks: mixture sizes K whose fitting step is timed.
        k_steps: fitting steps timed per K.
        input_counts: input counts whose evaluation is timed (the log-log slope).
    """

    seed: int = 0
    device: str = "cpu"
    threads: int = 1
    eps: float = 0.1
    halfwidth: float = 0.02
    epochs: int = 3
    width: int = 8
    n_pilot: int = 200
    mc_samples: int = 64
    pgd_steps: int = 20
    fit_steps: int = 150
    ks: tuple[int, ...] = (1, 2, 4, 8, 16)
    k_steps: int = 20
    input_counts: tuple[int, ...] = (100, 200, 400, 800)

    def __post_init__(self) -> None:
        if not 0 < self.eps < 1 or not 0 < self.halfwidth < 0.5:
            raise ValueError("eps must be in (0, 1) and halfwidth in (0, 0.5)")
        if len(self.ks) < 2 or min(self.ks) < 1:
            raise ValueError("ks needs at least two positive values")
        if len(self.input_counts) < 2 or min(self.input_counts) < 1:
            raise ValueError("input_counts needs at least two positive values")
        _at_least(
            1,
            threads=self.threads,
            epochs=self.epochs,
            width=self.width,
            n_pilot=self.n_pilot,
            mc_samples=self.mc_samples,
            pgd_steps=self.pgd_steps,
            fit_steps=self.fit_steps,
            k_steps=self.k_steps,
        )


SMOKE = RunConfig(
    replicates=2,
    epochs=1,
    n_train=600,
    n_eval=40,
    n_fit=60,
    n_select=30,
    sweep_inputs=30,
    mc_samples=8,
    sweep_mc_samples=4,
    tuned_scales=(1.0, 64.0),
    uap_steps=4,
    pgd_steps=3,
    aa_inputs=10,
    aa_iters=3,
    aa_targets=1,
    square_queries=5,
    fit_steps=4,
    sweep_fit_steps=2,
    latent_size=7,
    hidden=16,
    sweep_eps=(0.05, 0.1),
)
QUICK = RunConfig(sweep_eps=(0.05, 0.1, 0.2))  # eps 0.3 in full: room for the no-floor refits
FULL = RunConfig(
    models=("cnn_std", "cnn_at", "resnet_std", "resnet_at"),
    extra_datasets=("digits", "mnist1d"),
    epochs=12,
    n_eval=1000,
    mc_samples=100,
    aa_inputs=500,
    aa_iters=100,
    aa_targets=3,
    square_queries=1000,
    pgd_restarts=2,
    uap_steps=400,
    fit_steps=400,
    sweep_fit_steps=200,
    sweep_inputs=500,
    sweep_mc_samples=64,
    k=8,
)

BENCH_SMOKE = BenchConfig(
    epochs=1,
    n_pilot=30,
    mc_samples=8,
    pgd_steps=3,
    fit_steps=3,
    ks=(1, 2),
    k_steps=2,
    input_counts=(20, 40),
)
BENCH_QUICK = BenchConfig()
BENCH_FULL = BenchConfig(
    epochs=5,
    n_pilot=500,
    mc_samples=100,
    fit_steps=400,
    ks=(1, 2, 4, 8, 16, 32),
    k_steps=40,
    input_counts=(100, 200, 400, 800, 1600),
)

"""Configs of ``icml26 run inctnp`` (:class:`RunConfig`) and ``icml26 bench inctnp``
(:class:`BenchConfig`); light imports only (``paper.py`` builds the profiles from them)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from icml26.shared.devices import check_torch_device

__all__ = ["BENCH_PROFILES", "GROUPS", "PROFILES", "BenchConfig", "RunConfig"]

GROUPS = ("gp", "gp2d", "diabetes", "temperature", "csv")


@dataclass(frozen=True)
class RunConfig:
    """``icml26 run inctnp``: train TNP-D and incTNP over seeds, compare them at an equal
    number of targets seen and at convergence, measure implicit Bayesianness, time updates.

    Attributes:
        seed: the run's seed (every stream is derived from it by name).
        device: ``cpu`` or ``cuda[:i]`` (training, evaluation and latency).
        threads: torch CPU threads (the runner applies it).
        groups: training task families: ``gp`` (1-D GP tasks, a random RBF / Matern-5/2 /
            periodic kernel per task, evaluated per kernel), ``gp2d`` (2-D RBF GP),
            ``diabetes`` (scikit-learn's table), ``temperature`` (Seattle 2010 hourly windows,
            streaming), ``csv`` (your table: ``csv_path``, ``csv_target``).
        csv_path, csv_target: the CSV group's table and target column.
        width, layers, heads: the backbone shared by TNP-D and incTNP.
        seeds: independent trainings of each model per group (standard errors over them).
        max_steps: the cap of every training, in incTNP steps: both models stop at the
            targets incTNP sees in this many steps (``max_steps * batch_size *
            (n_points - 1)``); TNP-D, which sees about half as many targets per step, takes
            about twice the steps.
        budget_steps: the equal-targets budget is the number of targets incTNP sees in this
            many steps (``budget_steps * batch_size * (n_points - 1)``); TNP-D gets the same
            number of targets.
        eval_every, patience, min_delta, val_tasks: convergence: the validation NLL (on
            ``val_tasks`` tasks from the training split), evaluated every ``eval_every``
            incTNP steps' worth of targets (the same clock for both models), has not
            improved by more than ``min_delta`` nats over ``patience`` evaluations.
        batch_size, n_points, lr: training batches (tasks x points) and the learning rate.
        n_test_tasks, ctx_sizes: test tasks per evaluation task and the context sizes scored.
        bayes_points, bayes_perms, bayes_tasks, bayes_samples: the implicit-Bayes measures.
        latency_sizes, latency_repeats: the update-latency timing (medians over repeats).

    Raises:
        ValueError: unknown groups, a missing CSV, or out-of-range numbers.
    """

    seed: int = 0
    device: str = "cpu"
    threads: int = 1
    groups: tuple[str, ...] = ("gp", "diabetes", "temperature")
    csv_path: Path | None = None
    csv_target: str = ""
    width: int = 64
    layers: int = 3
    heads: int = 4
    seeds: int = 3
    max_steps: int = 2000
    budget_steps: int = 500
    eval_every: int = 50
    patience: int = 5
    min_delta: float = 0.01
    val_tasks: int = 32
    batch_size: int = 16
    n_points: int = 64
    lr: float = 5e-4
    n_test_tasks: int = 64
    ctx_sizes: tuple[int, ...] = (4, 8, 16, 32, 48)
    bayes_points: int = 24
    bayes_perms: int = 8
    bayes_tasks: int = 16
    bayes_samples: int = 32
    latency_sizes: tuple[int, ...] = (64, 96, 128, 192, 256, 384, 512, 768, 1024)
    latency_repeats: int = 15

    def __post_init__(self) -> None:
        unknown = [g for g in self.groups if g not in GROUPS]
        if unknown or not self.groups:
            raise ValueError(
                f"groups must be a non-empty subset of {', '.join(GROUPS)}; unknown: {unknown}"
            )
        if "csv" in self.groups:
            if self.csv_path is None or not self.csv_target:
                raise ValueError("the csv group needs csv_path and csv_target")
            if not Path(self.csv_path).expanduser().is_file():
                raise ValueError(f"csv_path: {str(self.csv_path)!r} is not an existing file")
        elif self.csv_path is not None or self.csv_target:
            raise ValueError(
                "csv_path and csv_target are used only by the csv group: add csv to groups "
                "(e.g. --set groups=gp,csv) or drop them"
            )
        if any(c < 1 or c >= self.n_points for c in self.ctx_sizes):
            raise ValueError(f"ctx_sizes must lie in [1, n_points={self.n_points})")
        if self.bayes_points > self.n_points or self.bayes_points < 4:
            raise ValueError("bayes_points must be in [4, n_points]")
        if self.bayes_perms < 3:
            raise ValueError(
                "bayes_perms must be >= 3 (exchangeability_kl compares each order with a "
                "mixture of the others)"
            )
        if self.bayes_samples < 1 or self.bayes_tasks < 1:
            raise ValueError("bayes_samples and bayes_tasks must be >= 1")
        if len(self.latency_sizes) < 2 or min(self.latency_sizes) < 1:
            raise ValueError("latency_sizes needs at least two positive sizes")
        if self.threads < 1 or self.max_steps < 1 or self.n_test_tasks < 1:
            raise ValueError("threads, max_steps and n_test_tasks must be >= 1")
        if self.seeds < 2:
            raise ValueError("seeds must be >= 2 (standard errors over seeds)")
        if self.budget_steps < 1 or self.eval_every < 1 or self.patience < 1:
            raise ValueError("budget_steps, eval_every and patience must be >= 1")
        if self.min_delta < 0 or self.val_tasks < 1 or self.latency_repeats < 3:
            raise ValueError("min_delta >= 0, val_tasks >= 1 and latency_repeats >= 3 (quartiles)")
        if self.width % self.heads:
            raise ValueError("width must be divisible by heads")
        check_torch_device(self.device)


@dataclass(frozen=True)
class BenchConfig:
    """``icml26 bench inctnp``: update latency and cache memory up to N = 4096 (paper's model).

    Attributes:
        seed, device, threads: as for :class:`RunConfig`.
        width, layers, heads: the model (the paper's 128 x 5 x 8).
        sizes: context sizes N.
        repeats: timed repeats per size (median and quartiles).

    Raises:
        ValueError: fewer than two sizes or three repeats.
    """

    seed: int = 0
    device: str = "cpu"
    threads: int = 1
    width: int = 128
    layers: int = 5
    heads: int = 8
    sizes: tuple[int, ...] = (64, 128, 256, 512, 1024, 2048, 4096)
    repeats: int = 10

    def __post_init__(self) -> None:
        if len(self.sizes) < 2 or min(self.sizes) < 1 or self.repeats < 3 or self.threads < 1:
            raise ValueError("sizes needs >= 2 positive sizes; repeats >= 3, threads >= 1")
        check_torch_device(self.device)


PROFILES = {
    "smoke": RunConfig(
        groups=("gp",),
        width=16,
        layers=1,
        heads=2,
        seeds=2,
        max_steps=200,
        budget_steps=80,
        eval_every=25,
        patience=3,
        val_tasks=8,
        batch_size=8,
        n_points=24,
        n_test_tasks=8,
        ctx_sizes=(4, 12),
        bayes_points=8,
        bayes_perms=3,
        bayes_samples=4,
        bayes_tasks=2,
        latency_sizes=(16, 32, 64),
        latency_repeats=3,
    ),
    # quick: the GP group, a small backbone, 3 seeds; each training stops at convergence or
    # at incTNP's targets in 1000 steps (TNP-D: about 2000 steps); the equal-targets budget
    # is incTNP's targets in 250 steps.
    "quick": RunConfig(
        groups=("gp",),
        width=32,
        layers=2,
        heads=4,
        max_steps=1000,
        budget_steps=250,
        eval_every=50,
        n_points=48,
        ctx_sizes=(4, 8, 16, 32),
        n_test_tasks=48,
        bayes_tasks=12,
    ),
    # full: three groups, the 64 x 3 backbone; the cap is incTNP's targets in 1000 steps
    # (TNP-D about 2000 steps): about 30 minutes on one core, estimated from quick's CPU time.
    "full": RunConfig(
        groups=("gp", "diabetes", "temperature"),
        max_steps=1000,
        budget_steps=250,
        n_test_tasks=128,
        bayes_tasks=32,
        latency_repeats=25,
    ),
}

BENCH_PROFILES = {
    "smoke": BenchConfig(width=32, layers=2, heads=4, sizes=(16, 32, 64), repeats=3),
    "quick": BenchConfig(),
    "full": BenchConfig(sizes=(64, 128, 256, 512, 1024, 2048, 4096, 8192), repeats=21),
}

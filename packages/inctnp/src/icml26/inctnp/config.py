"""Configs of ``icml26 run inctnp`` (:class:`RunConfig`) and ``icml26 bench inctnp``
(:class:`BenchConfig`); light imports only (``paper.py`` builds the profiles from them)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from icml26.shared.devices import check_torch_device

__all__ = ["GROUPS", "BenchConfig", "RunConfig"]

GROUPS = ("gp", "gp2d", "diabetes", "temperature", "csv")


@dataclass(frozen=True)
class RunConfig:
    """``icml26 run inctnp``: train TNP-D and incTNP with equal budgets, evaluate, time updates.

    ``groups``: training task families. ``gp`` = 1-D GP tasks with a random kernel per task
    (RBF / Matern-5/2 / periodic), evaluated per kernel; ``gp2d`` = 2-D RBF GP; ``diabetes`` =
    scikit-learn's diabetes table; ``temperature`` = Seattle hourly 2010 windows (streaming);
    ``csv`` = your table (``csv_path``, ``csv_target``).
    """

    seed: int = 0
    device: str = "cpu"
    threads: int = 1
    groups: tuple[str, ...] = ("gp", "diabetes", "temperature")
    csv_path: Path | None = None
    csv_target: str = ""
    # model (shared by TNP-D and incTNP)
    width: int = 64
    layers: int = 3
    heads: int = 4
    # training (equal budget for both models)
    steps: int = 1000
    batch_size: int = 16
    n_points: int = 64
    lr: float = 5e-4
    # evaluation
    n_test_tasks: int = 64
    ctx_sizes: tuple[int, ...] = (4, 8, 16, 32, 48)
    bayes_points: int = 24
    bayes_perms: int = 8
    bayes_tasks: int = 16
    bayes_samples: int = 32  # Monte Carlo draws per order for exchangeability_kl
    latency_sizes: tuple[int, ...] = (64, 128, 256, 512, 1024)
    latency_repeats: int = 10

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
        if self.threads < 1 or self.steps < 1 or self.n_test_tasks < 1:
            raise ValueError("threads, steps and n_test_tasks must be >= 1")
        if self.width % self.heads:
            raise ValueError("width must be divisible by heads")
        check_torch_device(self.device)


@dataclass(frozen=True)
class BenchConfig:
    """``icml26 bench inctnp``: update latency and cache memory up to N = 4096 (paper's model)."""

    seed: int = 0
    device: str = "cpu"
    threads: int = 1
    width: int = 128
    layers: int = 5
    heads: int = 8
    sizes: tuple[int, ...] = (64, 128, 256, 512, 1024, 2048, 4096)
    repeats: int = 10

    def __post_init__(self) -> None:
        if len(self.sizes) < 2 or min(self.sizes) < 1 or self.repeats < 1 or self.threads < 1:
            raise ValueError("sizes needs >= 2 positive sizes; repeats and threads must be >= 1")
        check_torch_device(self.device)

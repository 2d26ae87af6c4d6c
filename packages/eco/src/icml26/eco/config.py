"""Configs of the main job (:class:`RunConfig`) and the benchmark (:class:`BenchConfig`).

Light on purpose (no torch import): ``paper.py`` builds the profiles from these classes and
is loaded by ``icml26 list``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from icml26.shared.devices import check_torch_device

__all__ = [
    "ABLATIONS",
    "ALL_SCHEMES",
    "RTN_SCHEMES",
    "SR_SCHEMES",
    "SWEEP_WORKLOADS",
    "WORKLOADS",
    "BenchConfig",
    "RunConfig",
]

WORKLOADS = ("dense_lm", "moe_lm", "mlp")
SWEEP_WORKLOADS = (*WORKLOADS, "logreg")
_KINDS = ("master", "naive", "eco")
ALL_SCHEMES: tuple[str, ...] = (
    "fp32",
    *tuple(
        f"{kind}_{fmt}_{r}" for fmt in ("fp8", "int4") for kind in _KINDS for r in ("rtn", "sr")
    ),
)

RTN_SCHEMES: tuple[str, ...] = tuple(s for s in ALL_SCHEMES if s.endswith("_rtn"))
SR_SCHEMES: tuple[str, ...] = tuple(s for s in ALL_SCHEMES if s.endswith("_sr"))

# ablation name -> what it changes (applied by icml26.eco.ablations, which imports torch)
ABLATIONS: dict[str, str] = {
    "no_decay": "constant learning rate after warm-up (no decay)",
    "decay_to_zero": "cosine decay to 0 instead of to 10% of the peak rate",
    "error_buffer": "exact error feedback: e kept in an FP32 buffer (master-weight memory)",
    "scale_at_injection": "injection scaled by this step's rate and bias correction, not the "
    "replaying step's",
    "quantize_all": "norms, biases, embeddings and the router stored quantized too",
    "delayed_scale": "quantize on the previous iterate's scale (clipping error injected)",
    "inject_then_rescale": "inject the error on the old scale, then rescale (error lost)",
    "per_group": "one scale per 16 elements of the last dimension",
    "per_tensor": "one scale per tensor",
    "beta1_080": "first-moment coefficient 0.8 (the injection follows it)",
    "beta1_095": "first-moment coefficient 0.95 (the injection follows it)",
    "steps_x4": "four times the training steps (same schedule shape)",
}


def _positive(obj: object, *names: str) -> None:
    for name in names:
        value = getattr(obj, name)
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise ValueError(f"{name} must be > 0, got {value!r}")


def _check_schemes(field: str, schemes: tuple[str, ...]) -> None:
    unknown = [s for s in schemes if s not in ALL_SCHEMES]
    if unknown:
        raise ValueError(f"{field}: unknown schemes {unknown}; known: {', '.join(ALL_SCHEMES)}")
    if not schemes:
        raise ValueError(f"{field} must name at least one scheme")


def _check_seeds(field: str, seeds: tuple[int, ...], *, allow_empty: bool = False) -> None:
    bad = any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in seeds)
    if bad or len(set(seeds)) != len(seeds) or (not seeds and not allow_empty):
        raise ValueError(f"{field} must be distinct integer seeds >= 0, got {seeds}")


def _check_groups(fp8: int | None, int4: int | None) -> None:
    if fp8 is not None and fp8 < 1:
        raise ValueError(f"fp8_group_size must be >= 1 or none, got {fp8}")
    if int4 is not None and (int4 < 2 or int4 % 2):
        raise ValueError(f"int4_group_size must be an even number >= 2 or none, got {int4}")


@dataclass(frozen=True)
class RunConfig:
    """The main job: the schemes on the workloads over paired seeds, an lr sweep, ablations.

    Workloads: ``dense_lm`` and ``moe_lm`` (byte-level transformer LMs trained from scratch on
    ``text_file``, or the Python standard library's source when empty) and ``mlp`` (MNIST-5k);
    the sweep may also use ``logreg`` (softmax regression on MNIST-5k, a convex problem).

    Seeds: ``seed`` fixes the data (corpus split, validation windows, MNIST split); every
    training seed of ``seeds`` fixes a model initialisation, a batch order and the rounding
    draws, shared by every scheme trained with it (paired comparisons). ``schemes`` train on
    every workload at every seed (on ``moe_lm`` at ``moe_seeds`` too); ``extra_schemes`` only
    at ``seeds[0]`` on ``extra_workloads`` (the main table); the sweep at ``sweep_seeds``, the ablations at
    ``ablation_seeds``.

    ``sweep_steps`` are the steps at the largest rate; with ``sweep_equal_budget`` a rate
    ``lr`` trains ``sweep_steps * max(sweep_lrs) / lr`` steps. Matrices use
    ``fp8_group_size`` / ``int4_group_size`` elements of the last dimension per scale
    (``none`` = per tensor); norms, biases, embeddings and routers stay float32 unless
    ``quantize_all``. ``peak_memory`` measures the peak memory of the last step of every run
    at ``seeds[0]`` (activations and dequantized copies included).

    Attributes:
        seed: the data seed.
        seeds: the paired training seeds of ``schemes`` on every workload.
        moe_seeds: further paired seeds of ``schemes`` on ``moe_lm`` only.
        workloads: the workloads of the main table (names in ``WORKLOADS``).
        schemes: the schemes trained at every seed (names in ``ALL_SCHEMES`` or ``fp32``).
        extra_schemes: schemes trained at ``seeds[0]`` only, on ``extra_workloads``.
        extra_workloads: where ``extra_schemes`` train.
        text_file: a UTF-8 text file for the language models ("" = the standard library).
        corpus_bytes: bytes of text read (the last 10% held out for validation).
        seq_len: the language models' context, in bytes.
        d_model: the transformers' width.
        n_layers: their depth.
        n_heads: attention heads (must divide ``d_model``).
        d_ff: the dense feed-forward width.
        n_experts: experts per MoE layer.
        top_k: experts per token.
        moe_d_ff: each expert's feed-forward width.
        lm_batch_size: sequences per step.
        lm_steps: training steps of a language model.
        lm_lr: their peak learning rate (every scheme the same).
        val_batches: validation batches (of ``lm_batch_size`` windows).
        mlp_hidden: the MLP's hidden width.
        mlp_batch_size: MNIST images per step.
        mlp_steps: the MLP's training steps.
        mlp_lr: its peak learning rate.
        beta1: AdamW's first-moment coefficient (carries ECO's injection).
        beta2: AdamW's second-moment coefficient.
        weight_decay: decoupled weight decay (0: the experiments never decay).
        fp8_group_size: FP8 elements per scale (None: per tensor).
        int4_group_size: INT4 elements per scale (None: per tensor).
        quantize_all: also store norms, biases, embeddings and routers quantized.
        peak_memory: measure each run's peak step memory at ``seeds[0]``.
        sweep_workload: the lr sweep's workload (``logreg``: convex).
        sweep_schemes: the schemes of the sweep.
        sweep_lrs: its rates (empty: no sweep).
        sweep_steps: its steps at the largest rate.
        sweep_equal_budget: give every rate the same ``lr * steps``.
        sweep_seeds: its paired seeds.
        ablations: names in ``ABLATIONS`` (empty: no ablation stage).
        ablation_workloads: where they run.
        ablation_schemes: the ``eco_*`` schemes ablated.
        ablation_seeds: their paired seeds.
        device: ``"cpu"`` or a CUDA device.
        threads: torch intra-op threads (0: torch's default).
    """

    seed: int = 0
    seeds: tuple[int, ...] = (0, 1, 2)
    moe_seeds: tuple[int, ...] = ()
    workloads: tuple[str, ...] = WORKLOADS
    schemes: tuple[str, ...] = ("fp32", *RTN_SCHEMES)
    extra_schemes: tuple[str, ...] = SR_SCHEMES
    extra_workloads: tuple[str, ...] = ("moe_lm",)
    text_file: str = ""
    corpus_bytes: int = 2_000_000
    # language models
    seq_len: int = 64
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    d_ff: int = 256
    n_experts: int = 4
    top_k: int = 2
    moe_d_ff: int = 128
    lm_batch_size: int = 8
    lm_steps: int = 200
    lm_lr: float = 3e-3
    val_batches: int = 8
    # MNIST MLP
    mlp_hidden: int = 256
    mlp_batch_size: int = 128
    mlp_steps: int = 300
    mlp_lr: float = 1e-3
    # optimiser / formats
    beta1: float = 0.9
    beta2: float = 0.95
    weight_decay: float = 0.0
    fp8_group_size: int | None = None
    int4_group_size: int | None = 16
    quantize_all: bool = False
    peak_memory: bool = True
    # learning-rate sweep (naive removal's error ~ 1/lr): by default on a convex problem
    # (softmax regression on MNIST-5k), with steps ∝ 1/lr so every rate gets the same lr·steps
    # budget and the comparison is between (near-)stationary errors, as in the theorem
    sweep_workload: str = "logreg"
    sweep_schemes: tuple[str, ...] = ("master_fp8_rtn", "naive_fp8_rtn", "eco_fp8_rtn")
    sweep_lrs: tuple[float, ...] = (1e-2, 3e-3, 1e-3)
    sweep_steps: int = 150
    sweep_equal_budget: bool = True
    sweep_seeds: tuple[int, ...] = (0, 1, 2)
    # ablations (names in ABLATIONS) of the ECO schemes named, on the workloads named, over
    # paired seeds (every seed trains master, naive, ECO and each ablation on the same
    # initialisation and batches); empty = no ablation stage
    ablations: tuple[str, ...] = ("scale_at_injection", "quantize_all")
    ablation_workloads: tuple[str, ...] = ("moe_lm",)
    ablation_schemes: tuple[str, ...] = ("eco_fp8_rtn", "eco_int4_rtn")
    ablation_seeds: tuple[int, ...] = (0, 1, 2)
    device: str = "cpu"
    threads: int = 0  # torch intra-op threads; 0 = torch's default

    def seeds_for(self, workload: str) -> tuple[int, ...]:
        """The paired seeds ``workload`` trains the main schemes at (``seeds``, and
        ``moe_seeds`` too on ``moe_lm``).

        Args:
            workload: a name in ``WORKLOADS``.

        Returns:
            The seeds, ``seeds[0]`` first.
        """
        return (*self.seeds, *self.moe_seeds) if workload == "moe_lm" else self.seeds

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        for name in ("workloads", "extra_workloads"):
            value = getattr(self, name)
            if [w for w in value if w not in WORKLOADS] or (name == "workloads" and not value):
                raise ValueError(f"{name} must be a subset of {WORKLOADS}, got {value}")
        _check_schemes("schemes", self.schemes)
        if self.extra_schemes:
            _check_schemes("extra_schemes", self.extra_schemes)
        for name in ("seeds", "sweep_seeds"):
            _check_seeds(name, getattr(self, name), allow_empty=name == "sweep_seeds")
        if self.moe_seeds:
            _check_seeds("seeds and moe_seeds", (*self.seeds, *self.moe_seeds), allow_empty=False)
        _positive(
            self,
            "corpus_bytes",
            "seq_len",
            "d_model",
            "n_layers",
            "n_heads",
            "d_ff",
            "moe_d_ff",
            "lm_batch_size",
            "lm_steps",
            "lm_lr",
            "val_batches",
            "mlp_hidden",
            "mlp_batch_size",
            "mlp_steps",
            "mlp_lr",
            "sweep_steps",
        )
        if self.d_model % self.n_heads:
            raise ValueError(f"n_heads {self.n_heads} must divide d_model {self.d_model}")
        if not 1 <= self.top_k <= self.n_experts:
            raise ValueError(f"need 1 <= top_k <= n_experts, got {self.top_k}, {self.n_experts}")
        if not (0 < self.beta1 < 1 and 0 < self.beta2 < 1):
            raise ValueError(f"betas must be in (0, 1), got {self.beta1}, {self.beta2}")
        if self.weight_decay < 0:
            raise ValueError(f"weight_decay must be >= 0, got {self.weight_decay}")
        _check_groups(self.fp8_group_size, self.int4_group_size)
        if self.sweep_workload not in SWEEP_WORKLOADS:
            raise ValueError(
                f"sweep_workload must be one of {SWEEP_WORKLOADS}, got {self.sweep_workload!r}"
            )
        if self.sweep_lrs:
            _check_schemes("sweep_schemes", self.sweep_schemes)
            if any(not lr > 0 for lr in self.sweep_lrs):
                raise ValueError(f"sweep_lrs must be positive, got {self.sweep_lrs}")
        if self.threads < 0:
            raise ValueError(f"threads must be >= 0, got {self.threads}")
        self._check_ablations()
        check_torch_device(self.device)
        self._check_text_file()

    def _check_ablations(self) -> None:
        if not self.ablations:
            return
        unknown = [a for a in self.ablations if a not in ABLATIONS]
        if unknown:
            raise ValueError(f"ablations: unknown {unknown}; known: {', '.join(ABLATIONS)}")
        bad = [w for w in self.ablation_workloads if w not in WORKLOADS]
        if bad or not self.ablation_workloads:
            raise ValueError(
                f"ablation_workloads must be a non-empty subset of {WORKLOADS}, got "
                f"{self.ablation_workloads}"
            )
        _check_schemes("ablation_schemes", self.ablation_schemes)
        not_eco = [s for s in self.ablation_schemes if not s.startswith("eco_")]
        if not_eco:
            raise ValueError(f"ablation_schemes must be eco_* schemes, got {not_eco}")
        _check_seeds("ablation_seeds", self.ablation_seeds)

    def _check_text_file(self) -> None:
        """``text_file`` exists, and some language model reads it (a setting nothing would use
        is an error naming the settings that would)."""
        if not self.text_file:
            return
        lms = {"dense_lm", "moe_lm"}
        sweeps_an_lm = bool(self.sweep_lrs) and self.sweep_workload in lms
        if not (lms & set(self.workloads) or sweeps_an_lm):
            raise ValueError(
                f"text_file={self.text_file!r} is read only by the language models: add dense_lm "
                "or moe_lm to workloads (or sweep_workload), or drop text_file"
            )
        if not Path(self.text_file).expanduser().is_file():
            raise ValueError(f"text_file: {self.text_file!r} is not an existing file")


@dataclass(frozen=True)
class BenchConfig:
    """Optimizer-step time and static memory per scheme on one model (``dense_lm``/``moe_lm``).

    Step times are reported over ``torch.optim.AdamW``'s on the same model
    (``step_time_ratio.<scheme>``); ``reference`` is the scheme marked on the step-time plot.

    Attributes:
        seed: seeds the model and the batch.
        model: ``"moe_lm"`` or ``"dense_lm"``.
        schemes: the schemes timed.
        reference: the scheme marked on the plot.
        d_model: the transformer's width.
        n_layers: its depth.
        n_heads: attention heads.
        d_ff: the feed-forward (and each expert's) width.
        n_experts: experts per MoE layer.
        top_k: experts per token.
        seq_len: context in bytes.
        batch_size: sequences per step.
        warmup_steps: untimed steps first (the fused step compiles there).
        timed_steps: timed steps per round.
        rounds: rounds (a ratio is the median over rounds).
        fp8_group_size: FP8 elements per scale (None: per tensor).
        int4_group_size: INT4 elements per scale.
        fused: also time ECO-FP8-RTN with ``fused=True``.
        device: ``"cpu"`` or a CUDA device.
        threads: torch intra-op threads (0: torch's default).
    """

    seed: int = 0
    model: str = "moe_lm"
    schemes: tuple[str, ...] = ALL_SCHEMES
    reference: str = "master_fp8_rtn"
    d_model: int = 128
    n_layers: int = 2
    n_heads: int = 4
    d_ff: int = 512
    n_experts: int = 8
    top_k: int = 2
    seq_len: int = 64
    batch_size: int = 8
    warmup_steps: int = 2
    timed_steps: int = 10
    rounds: int = 2
    fp8_group_size: int | None = None
    int4_group_size: int | None = 16
    fused: bool = True  # also time ECO-FP8-RTN's compiled step (compiles in the warm-up)
    device: str = "cpu"
    threads: int = 0

    def __post_init__(self) -> None:
        if self.model not in ("dense_lm", "moe_lm"):
            raise ValueError(f"model must be 'dense_lm' or 'moe_lm', got {self.model!r}")
        _check_schemes("schemes", self.schemes)
        if self.reference not in self.schemes:
            raise ValueError(f"reference {self.reference!r} must be one of schemes")
        _positive(self, "d_model", "n_layers", "n_heads", "d_ff", "seq_len", "batch_size")
        _positive(self, "timed_steps", "rounds")
        if self.warmup_steps < 0:
            raise ValueError(f"warmup_steps must be >= 0, got {self.warmup_steps}")
        if self.d_model % self.n_heads:
            raise ValueError(f"n_heads {self.n_heads} must divide d_model {self.d_model}")
        if not 1 <= self.top_k <= self.n_experts:
            raise ValueError(f"need 1 <= top_k <= n_experts, got {self.top_k}, {self.n_experts}")
        _check_groups(self.fp8_group_size, self.int4_group_size)
        if self.threads < 0:
            raise ValueError(f"threads must be >= 0, got {self.threads}")
        check_torch_device(self.device)

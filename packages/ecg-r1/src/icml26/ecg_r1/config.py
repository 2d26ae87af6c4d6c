"""Run and bench configs (frozen dataclasses, validated before anything is written)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["BenchConfig", "RunConfig"]


@dataclass(frozen=True)
class RunConfig:
    """One ``icml26 run ecg-r1``.

    Attributes:
        n_train, n_test: simulated records (wave model) for training and evaluation.
        n_neurokit: ECGSYN records for the neurokit2 validation of the delineation.
        enc_steps, enc_batch, enc_lr: pretraining of each encoder.
        lm: ``"tiny"`` (a Llama from scratch) or a causal-LM spec for
            :func:`icml26.shared.llm.load_causal_lm` (``"smollm2-135m-instruct-q4_1"``, a folder,
            an HF id) trained with LoRA.
        lm_hidden, lm_layers, vocab_size: the tiny LM's sizes.
        sft_steps, sft_batch, sft_lr: supervised fine-tuning.
        grpo_steps, grpo_prompts, grpo_generations, grpo_lr: GRPO (the shared TRL path);
            the generation cap is not a knob: 1.25x the 95th percentile of the SFT answers'
            token lengths (reported as ``generation_cap.*`` beside ``answer_tokens_p95.*``).
        grpo_beta: KL coefficient to the SFT model (TRL's ``beta``; 0 for a LoRA checkpoint:
            TRL's reference for a peft model is the model with its adapters disabled, which
            keeps the projectors but is the pre-SFT decoder, so a KL to it would pull towards
            the untrained checkpoint, not towards the SFT model).
        grpo_temperature: sampling temperature of the rollouts (the loss scores tokens
            under the same temperature).
        max_new_tokens: 0 (default): the measured generation cap; > 0 caps it lower (the
            smoke profile only: its answers are then truncated and say nothing).
        seeds: seeds of ``sft_only``, ``ecg_r1`` and ``no_dropout`` (the hallucination and
            dropout claims' SEs are over them); the other methods run on the first seed.
        p_drop, p_swap: interleaved modality dropout (0.5, 0.1 in the official code).
        reward_weights: diagnosis, evidence, format.
        records: a user's WFDB record (path without extension) or CSV file to interpret with
            the trained model after the run (optional; written to ``user_interpretations.json``).
        records_fs: the CSV sampling rate (WFDB records carry their own).
        device: ``"cpu"`` or ``"cuda[:i]"``.
        threads: CPU threads (the runner sets them). 1 by default: on the loaded 2-core
            machine one seed's SFT + GRPO stage ran over 29 min with the default two threads
            (killed unfinished) and 12 min with one.
        llm_model: "" (skip) or a causal-LM spec (``"smollm2-135m-instruct-q4_1"``, a folder, an HF
            id): after the tiny-model study, ECG-R1 alone is trained once more on this
            checkpoint with LoRA (``llm_sft_steps`` of SFT with modality dropout, then
            ``llm_grpo_steps`` of GRPO with the evidence rewards) and scored on the first
            ``llm_test`` test records; reported as ``*.ecg_r1_llm``, without a claim (the
            budget allows one method at this size on a CPU).
        llm_sft_batch: the checkpoint's SFT batch size.
        llm_sft_lr: its SFT learning rate.
        llm_grpo_prompts: its prompts per GRPO step.
        llm_grpo_generations: its completions per prompt.
    """

    n_train: int = 300
    n_test: int = 40
    n_neurokit: int = 1
    enc_steps: int = 80
    enc_batch: int = 32
    enc_lr: float = 3e-3
    lm: str = "tiny"
    lm_hidden: int = 96
    lm_layers: int = 2
    vocab_size: int = 600
    sft_steps: int = 100
    sft_batch: int = 12
    sft_lr: float = 4e-3
    grpo_steps: int = 10
    grpo_prompts: int = 8
    grpo_generations: int = 6
    grpo_lr: float = 5e-5
    grpo_beta: float = 0.04
    seeds: int = 3
    max_new_tokens: int = 0
    grpo_temperature: float = 0.7
    p_drop: float = 0.5
    p_swap: float = 0.1
    reward_weights: tuple[float, float, float] = (1.0, 1.0, 0.5)
    records: str = ""
    records_fs: float = 0.0
    device: str = "cpu"
    threads: int = 1
    seed: int = 0
    llm_model: str = ""
    llm_sft_steps: int = 40
    llm_sft_batch: int = 4
    llm_sft_lr: float = 1e-3
    llm_grpo_steps: int = 4
    llm_grpo_prompts: int = 2
    llm_grpo_generations: int = 4
    llm_test: int = 24

    def __post_init__(self) -> None:
        for name in (
            "n_train",
            "n_test",
            "enc_steps",
            "enc_batch",
            "sft_steps",
            "sft_batch",
            "grpo_prompts",
            "lm_hidden",
            "lm_layers",
            "seeds",
            "llm_sft_batch",
            "llm_grpo_prompts",
            "llm_test",
        ):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if self.n_train < 16 or self.n_test < 4:
            raise ValueError(
                f"need n_train >= 16 and n_test >= 4, got {self.n_train}, {self.n_test}"
            )
        if (
            self.n_neurokit < 0
            or self.grpo_steps < 0
            or self.grpo_beta < 0
            or self.max_new_tokens < 0
        ):
            raise ValueError("n_neurokit, grpo_steps, grpo_beta and max_new_tokens must be >= 0")
        if self.llm_sft_steps < 0 or self.llm_grpo_steps < 0:
            raise ValueError("llm_sft_steps and llm_grpo_steps must be >= 0")
        if self.llm_grpo_generations < 2:
            raise ValueError(
                f"llm_grpo_generations must be >= 2 (a group), got {self.llm_grpo_generations}"
            )
        if self.llm_model and self.lm != "tiny":
            raise ValueError(
                "llm_model adds an ECG-R1 run on a checkpoint beside the tiny-model study; with "
                f"lm={self.lm!r} every method already uses a checkpoint (leave llm_model empty)"
            )
        if self.llm_model and self.llm_test > self.n_test:
            raise ValueError(f"llm_test ({self.llm_test}) must be <= n_test ({self.n_test})")
        if self.grpo_generations < 2:
            raise ValueError(
                f"grpo_generations must be >= 2 (a group), got {self.grpo_generations}"
            )
        for name in ("enc_lr", "sft_lr", "grpo_lr", "grpo_temperature", "llm_sft_lr"):
            v = getattr(self, name)
            if not (v > 0 and math.isfinite(v)):
                raise ValueError(f"{name} must be a positive number, got {v!r}")
        for name in ("p_drop", "p_swap"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        if len(self.reward_weights) != 3 or not all(
            math.isfinite(w) and w >= 0 for w in self.reward_weights
        ):
            raise ValueError(
                f"reward_weights must be three non-negative numbers, got {self.reward_weights}"
            )
        if self.vocab_size < 300:
            raise ValueError(
                f"vocab_size must be >= 300 (bytes + special tokens), got {self.vocab_size}"
            )
        if self.lm_hidden % 4:
            raise ValueError(f"lm_hidden must divide by 4 heads, got {self.lm_hidden}")
        if self.records:
            p = Path(self.records)
            if p.suffix.lower() == ".csv":
                if not p.is_file():
                    raise ValueError(f"records: no CSV file at {p}")
                if not self.records_fs > 0:
                    raise ValueError("records: a CSV file needs records_fs (its sampling rate, Hz)")
            else:
                if not p.with_suffix(".hea").is_file():
                    raise ValueError(
                        f"records: no WFDB header {p.with_suffix('.hea')} (give the record path without extension, or a .csv)"
                    )
                if self.records_fs:
                    raise ValueError(
                        "records_fs is used only with a CSV file (a WFDB header carries its own rate)"
                    )
        elif self.records_fs:
            raise ValueError("records_fs is used only with records=<file.csv>")
        if not (self.device == "cpu" or self.device.startswith("cuda")):
            raise ValueError(f"device must be 'cpu' or 'cuda[:i]', got {self.device!r}")

    @property
    def encoder(self) -> dict[str, Any]:
        """Keyword arguments of :func:`~icml26.ecg_r1.methods.train_encoders`."""
        return {
            "steps": self.enc_steps,
            "batch_size": self.enc_batch,
            "lr": self.enc_lr,
            "seed": self.seed,
            "device": self.device,
        }


@dataclass(frozen=True)
class BenchConfig:
    """``icml26 bench ecg-r1``: simulation and delineation throughput, tokens per
    interpretation, GRPO step time."""

    n_simulate: int = 256
    n_delineate: int = 16
    grpo_steps: int = 3
    grpo_prompts: int = 4
    grpo_generations: int = 6
    lm_hidden: int = 96
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("n_simulate", "n_delineate", "grpo_steps", "grpo_prompts", "lm_hidden"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if self.grpo_generations < 2:
            raise ValueError("grpo_generations must be >= 2")

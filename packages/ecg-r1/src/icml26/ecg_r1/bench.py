"""``icml26 bench ecg-r1``: records simulated and delineated per second (wave model vs
neurokit2's ECGSYN), images drawn per second, tokens per interpretation, GRPO step time.
CPU process time."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from icml26.ecg_r1.config import BenchConfig
from icml26.ecg_r1.data import to_model_signal
from icml26.ecg_r1.delineate import measure_features
from icml26.ecg_r1.encoders import ImageEncoder, SignalEncoder
from icml26.ecg_r1.methods import PolicySettings, new_policy
from icml26.ecg_r1.model import PROMPT, EncodedBank, ModalityDropout
from icml26.ecg_r1.nk_validation import simulate_neurokit
from icml26.ecg_r1.protocol import protocol_answer
from icml26.ecg_r1.render import ImageRasteriser
from icml26.ecg_r1.train import answer_ids, train_grpo
from icml26.ecg_r1.wavemodel import sample_params, simulate
from icml26.shared import RunDir, rng_for
from icml26.shared.llm.grpo import GRPOSettings

__all__ = ["bench"]


def _timed(fn: Any) -> tuple[Any, float]:
    t = time.process_time()
    out = fn()
    return out, max(time.process_time() - t, 1e-9)


def bench(cfg: BenchConfig, run_dir: RunDir) -> dict[str, Any]:
    """Simulation, rasterisation and delineation throughput, tokens per interpretation,
    GRPO step time (the shared TRL path, tiny model).

    Args:
        cfg: the bench config.
        run_dir: the run folder.

    Returns:
        The flat bench metrics.
    """
    rng = rng_for(cfg.seed, "bench")
    simulate(sample_params(rng, 4), rng)  # warm-up
    corpus, t_sim = _timed(lambda: simulate(sample_params(rng, cfg.n_simulate), rng))
    _, t_nk = _timed(lambda: simulate_neurokit(75.0, 1.0, seed=cfg.seed))
    raster = ImageRasteriser(corpus.fs)
    images, t_img = _timed(lambda: raster(corpus.signals[: min(64, cfg.n_simulate)]))
    n_del = min(cfg.n_delineate, cfg.n_simulate)
    _, t_del = _timed(lambda: [measure_features(x, corpus.fs) for x in corpus.signals[:n_del]])
    texts = [protocol_answer(f) for f in corpus.features]
    n = min(32, cfg.n_simulate)
    sig = to_model_signal(corpus.signals[:n], corpus.fs)
    bank = EncodedBank.build(
        SignalEncoder().eval(), ImageEncoder().eval(), sig, (images[:n] * 255).astype(np.uint8)
    )
    policy = PolicySettings(hidden=cfg.lm_hidden)
    model, tok = new_policy(policy, [PROMPT, *texts], bank, seed=cfg.seed)
    tokens = float(np.mean([len(t) for t in answer_ids(model, tok, texts[:n])]))
    settings = GRPOSettings(
        steps=cfg.grpo_steps,
        prompts_per_step=cfg.grpo_prompts,
        num_generations=cfg.grpo_generations,
        max_completion_length=int(tokens) + 8,
        loss_type="dapo",
        dynamic_sampling=False,
    )
    _, t_grpo = _timed(
        lambda: train_grpo(
            model, tok, bank, corpus.features[:n], settings, dropout=ModalityDropout(), rng=rng
        )
    )
    return {
        "throughput.simulate_records_per_s": cfg.n_simulate / t_sim,
        "throughput.neurokit_records_per_s": 1 / t_nk,
        "throughput.images_per_s": len(images) / t_img,
        "throughput.delineate_records_per_s": n_del / t_del,
        "tokens_per_interpretation": tokens,
        "grpo_step_s": t_grpo / cfg.grpo_steps,
        "grpo_completions_per_step": cfg.grpo_prompts * cfg.grpo_generations,
        "grpo_completion_tokens": int(tokens) + 8,
    }

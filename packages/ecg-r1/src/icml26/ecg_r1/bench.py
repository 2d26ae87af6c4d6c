"""``icml26 bench ecg-r1``: records simulated and delineated per second (wave model vs
neurokit2's ECGSYN), images drawn per second, tokens per interpretation, GRPO step time.
CPU process time, one thread."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from icml26.ecg_r1.config import BenchConfig
from icml26.shared import RunDir, seed_everything

__all__ = ["bench"]


def _timed(fn: Any) -> tuple[Any, float]:
    t = time.process_time()
    out = fn()
    return out, max(time.process_time() - t, 1e-9)


def bench(cfg: BenchConfig, run_dir: RunDir) -> dict[str, Any]:
    import torch

    from icml26.ecg_r1.data import to_model_signal
    from icml26.ecg_r1.delineate import measure_features
    from icml26.ecg_r1.encoders import ImageEncoder, SignalEncoder
    from icml26.ecg_r1.model import ECGR1Model, EncodedBank, ModalityDropout
    from icml26.ecg_r1.nk_validation import simulate_neurokit
    from icml26.ecg_r1.protocol import protocol_answer
    from icml26.ecg_r1.render import ImageRasteriser
    from icml26.ecg_r1.train import train_grpo
    from icml26.ecg_r1.wavemodel import sample_params, simulate
    from icml26.shared.llm.grpo import GRPOSettings
    from icml26.shared.llm.tiny import TinyModelConfig, make_tiny_lm

    torch.set_num_threads(1)
    rng = seed_everything(cfg.seed)
    simulate(sample_params(rng, 4), rng)  # warm-up
    corpus, t_sim = _timed(lambda: simulate(sample_params(rng, cfg.n_simulate), rng))
    _, t_nk = _timed(lambda: simulate_neurokit(75.0, 1.0, seed=cfg.seed))
    raster = ImageRasteriser(corpus.fs)
    images, t_img = _timed(lambda: raster(corpus.signals[: min(64, cfg.n_simulate)]))
    n_del = min(cfg.n_delineate, cfg.n_simulate)
    _, t_del = _timed(lambda: [measure_features(x, corpus.fs) for x in corpus.signals[:n_del]])
    texts = [protocol_answer(f) for f in corpus.features]
    special = ["<think>", "</think>", "<answer>", "</answer>", "<sig>", "<img>"]
    lm, tok = make_tiny_lm(texts, special_tokens=special, vocab_size=600,
                           config=TinyModelConfig(hidden_size=cfg.lm_hidden, intermediate_size=2 * cfg.lm_hidden, max_positions=384))  # fmt: skip
    tokens = float(np.mean([len(tok(t)["input_ids"]) for t in texts]))
    n = min(32, cfg.n_simulate)
    bank = EncodedBank.build(SignalEncoder().eval(), ImageEncoder().eval(), to_model_signal(corpus.signals[:n], corpus.fs),
                             (images[:n] * 255).astype(np.uint8))  # fmt: skip
    model = ECGR1Model(
        lm, tok, sig_width=64, img_width=64, read_dim=bank.sig_read.shape[1], n_sig=8, n_img=8
    )
    settings = GRPOSettings(steps=cfg.grpo_steps, prompts_per_step=cfg.grpo_prompts, num_generations=cfg.grpo_generations,
                            max_completion_length=int(tokens) + 8, loss_type="dapo", dynamic_sampling=False)  # fmt: skip
    _, t_grpo = _timed(
        lambda: train_grpo(
            model, bank, corpus.features[:n], settings, dropout=ModalityDropout(), rng=rng
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

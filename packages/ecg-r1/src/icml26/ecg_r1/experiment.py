"""``icml26 run ecg-r1``: a recipe of named stages (each resumes from the run folder).

1. ``data``: the wave-model corpus (train, test) with images;
2. ``targets``: the delineator's features of every training record (the SFT targets);
3. ``delineation``: the ``rules`` baseline and the feature errors (simulated, neurokit2, real);
4. ``encoders``: both encoders pretrained, then frozen (the ``signal_cnn`` baseline reads one);
5. ``seed<k>``: per seed, ``sft_only`` (protocol SFT with dropout) and ``ecg_r1`` (the same
   model after GRPO with the evidence rewards);
6. ``no_dropout``, ``free_text``, ``no_readout``: the ablations, on the first seed;
7. ``ecg_r1_llm``: ECG-R1 on a checkpoint (``llm_model``), when set; ``user_record``: the
   trained model on the user's record (``records``), when set.

Metrics, tables and figures follow from the stages (:mod:`~icml26.ecg_r1.summary`,
:mod:`~icml26.ecg_r1.figures`).
"""

from __future__ import annotations

from typing import Any

from icml26.ecg_r1.config import RunConfig
from icml26.ecg_r1.data import make_dataset
from icml26.ecg_r1.figures import write_figures
from icml26.ecg_r1.methods import (
    MethodSpec,
    frozen_encoders,
    measured_targets,
    run_llm_method,
    train_encoders,
)
from icml26.ecg_r1.model import EncodedBank, ModalityDropout
from icml26.ecg_r1.render import ImageRasteriser
from icml26.ecg_r1.report import interpret_record
from icml26.ecg_r1.summary import delineation_metrics, summarise
from icml26.ecg_r1.tables import write_tables
from icml26.shared import JSON, PICKLE, TORCH, RunDir, Stages, log, rng_for

__all__ = ["run"]

ABLATIONS = (
    MethodSpec("no_dropout", dropout=False, grpo=True),
    MethodSpec("free_text", answers="free_text"),
    MethodSpec("no_readout", readout=False),
)


def run(cfg: RunConfig, run_dir: RunDir) -> dict[str, Any]:
    """The study (module docstring).

    Args:
        cfg: the run's config.
        run_dir: the run folder.

    Returns:
        The flat metrics (keys in :mod:`icml26.ecg_r1.summary`).
    """
    stages = Stages(run_dir)
    raster = ImageRasteriser(200.0, 10.0)
    train, test = stages.once(
        "data",
        lambda: tuple(
            make_dataset(n, rng_for(cfg.seed, part), rasteriser=raster)
            for n, part in ((cfg.n_train, "train"), (cfg.n_test, "test"))
        ),
        saver=PICKLE,
    )
    log(f"ecg-r1: {len(train)} train / {len(test)} test records")
    targets = stages.once("targets", lambda: measured_targets(train.raw, train.fs), saver=PICKLE)
    deline = stages.once("delineation", lambda: delineation_metrics(cfg, test), saver=JSON)
    enc = stages.once(
        "encoders",
        lambda: train_encoders(
            train,
            steps=cfg.enc_steps,
            batch_size=cfg.enc_batch,
            lr=cfg.enc_lr,
            seed=cfg.seed,
            device=cfg.device,
        ),
        saver=TORCH,
    )
    se, ie = frozen_encoders(enc, cfg.device)
    banks = tuple(
        EncodedBank.build(se, ie, d.signals, d.images, device=cfg.device) for d in (train, test)
    )
    common = {
        "policy": cfg.policy,
        "sft": cfg.sft,
        "grpo": cfg.grpo,
        "drop": ModalityDropout(cfg.p_drop, cfg.p_swap),
        "train": train,
        "targets": targets,
        "banks": banks,
        "n_eval": len(test),
    }
    seeds = [
        stages.once(
            f"seed{k}",
            lambda k=k: run_llm_method(
                MethodSpec("ecg_r1", grpo=True),
                seed=cfg.seed + k,
                save_to=run_dir.path / f"model_ecg_r1_seed{k}" if k == 0 else None,
                **common,
            ),
        )
        for k in range(cfg.seeds)
    ]
    ablations = {
        spec.name: stages.once(
            spec.name, lambda spec=spec: run_llm_method(spec, seed=cfg.seed, **common)
        )
        for spec in ABLATIONS
    }
    llm = None
    if cfg.llm_model:
        llm_common = common | {
            "policy": cfg.llm_policy,
            "sft": cfg.llm_sft,
            "grpo": cfg.llm_grpo,
            "n_eval": cfg.llm_test,
        }
        llm = stages.once(
            "ecg_r1_llm",
            lambda: run_llm_method(MethodSpec("ecg_r1", grpo=True), seed=cfg.seed, **llm_common),
        )
    if cfg.records:
        report = stages.once(
            "user_record",
            lambda: interpret_record(
                run_dir.path / "model_ecg_r1_seed0",
                cfg.records,
                (se, ie),
                fs=cfg.records_fs or None,
            ),
            saver=JSON,
        )
        run_dir.write_json("user_interpretations.json", report)
    metrics = summarise(test, deline, seeds, ablations, llm, se, cfg)
    write_tables(run_dir, metrics)
    write_figures(run_dir, metrics, test, seeds[0]["texts"]["both"][0])
    return metrics

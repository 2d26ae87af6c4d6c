"""``icml26 run ecg-r1``: a recipe of named stages (each resumes from the run folder).

1. ``train``, ``test``: the wave-model corpus with images;
2. ``targets``: the delineator's features of every training record (the SFT targets);
3. ``delineation``: the ``rules`` baseline and the feature errors (simulated, neurokit2, real);
4. ``encoders``: both encoders pretrained, then frozen (the ``signal_cnn`` baseline reads one);
5. ``seed<k>``: per seed, ``sft_only`` (protocol SFT with dropout) and ``ecg_r1`` (the same
   model after GRPO with the evidence rewards);
6. ``no_dropout_seed<k>``: per seed, ECG-R1 without modality dropout (from the same initial
   weights as ``seed<k>``: the dropout claims pair by seed); ``free_text``, ``no_readout``:
   the other ablations, on the first seed;
7. ``ecg_r1_llm``: ECG-R1 on a checkpoint (``llm_model``), when set; ``user_record``: the
   trained model on the user's record (``records``), when set.

Metrics, tables and figures follow from the stages (:mod:`~icml26.ecg_r1.summary`,
:mod:`~icml26.ecg_r1.figures`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from icml26.ecg_r1.config import RunConfig
from icml26.ecg_r1.data import make_dataset
from icml26.ecg_r1.encoders import save_encoders
from icml26.ecg_r1.figures import write_figures
from icml26.ecg_r1.methods import (
    MethodSpec,
    frozen_encoders,
    measured_targets,
    method_inputs,
    run_llm_method,
    train_encoders,
)
from icml26.ecg_r1.model import EncodedBank
from icml26.ecg_r1.render import ImageRasteriser
from icml26.ecg_r1.report import interpret_record
from icml26.ecg_r1.summary import delineation_metrics, summarise
from icml26.ecg_r1.tables import write_tables
from icml26.shared import JSON, PICKLE, TORCH, RunDir, Stages, log, rng_for

__all__ = ["run"]

ECG_R1 = MethodSpec("ecg_r1", grpo=True)
NO_DROPOUT = MethodSpec("no_dropout", dropout=False, grpo=True)
ABLATIONS = (
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
    sizes = {"train": cfg.n_train, "test": cfg.n_test}
    train, test = (
        stages.once(
            part,
            lambda n=n, part=part: make_dataset(n, rng_for(cfg.seed, part), rasteriser=raster),
            saver=PICKLE,
        )
        for part, n in sizes.items()
    )
    log(f"ecg-r1: {len(train)} train / {len(test)} test records")
    targets = stages.once("targets", lambda: measured_targets(train.raw, train.fs), saver=PICKLE)
    deline = stages.once("delineation", lambda: delineation_metrics(cfg, test), saver=JSON)
    enc = stages.once("encoders", lambda: train_encoders(train, **cfg.encoder), saver=TORCH)
    se, ie = frozen_encoders(enc, cfg.device)
    banks = tuple(
        EncodedBank.build(se, ie, d.signals, d.images, device=cfg.device) for d in (train, test)
    )
    inputs = method_inputs(cfg, train, targets, banks, len(test))
    seeds = [
        stages.once(
            f"seed{k}",
            lambda k=k: run_llm_method(
                ECG_R1, inputs, seed=cfg.seed + k, save_to=_model_dir(run_dir, k)
            ),
        )
        for k in range(cfg.seeds)
    ]
    no_dropout = [
        stages.once(
            f"no_dropout_seed{k}", lambda k=k: run_llm_method(NO_DROPOUT, inputs, seed=cfg.seed + k)
        )
        for k in range(cfg.seeds)
    ]
    save_encoders(run_dir.path / "model_ecg_r1_seed0", se, ie)  # the folder interprets alone
    ablations = {
        s.name: stages.once(s.name, lambda s=s: run_llm_method(s, inputs, seed=cfg.seed))
        for s in ABLATIONS
    }
    llm = None
    if cfg.llm_model:
        big = method_inputs(cfg, train, targets, banks, cfg.llm_test, checkpoint=True)
        llm = stages.once("ecg_r1_llm", lambda: run_llm_method(ECG_R1, big, seed=cfg.seed))
    if cfg.records:
        model_dir, fs = run_dir.path / "model_ecg_r1_seed0", cfg.records_fs or None
        report = stages.once("user_record", lambda: interpret_record(model_dir, cfg.records, fs=fs))
        run_dir.write_json("user_interpretations.json", report)
    metrics = summarise(test, deline, seeds, no_dropout, ablations, llm, se, cfg)
    write_tables(run_dir, metrics)
    write_figures(run_dir, metrics, test, seeds[0]["texts"]["both"][0])
    return metrics


def _model_dir(run_dir: RunDir, k: int) -> Path | None:
    """The first seed's ECG-R1 is saved (``save_pretrained`` folder and ``.pt``)."""
    return run_dir.path / "model_ecg_r1_seed0" if k == 0 else None

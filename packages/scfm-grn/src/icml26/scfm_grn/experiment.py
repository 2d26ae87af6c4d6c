"""``icml26 run scfm-grn``: the benchmark as a recipe of named stages.

Stages (saved under ``<run>/stages/``; a killed run resumes at the first unfinished one):

1. ``pretrain``: the scFM, pretrained by masked reconstruction on the corpus
   (:func:`icml26.scfm_grn.pretraining.pretrained_scfm`; checkpoints every 250 steps), and
   ``pretrain_summary``: its losses and masked variance explained on held-out datasets;
2. ``features_<dataset>``: VVP, GT and every baseline's scores per dataset
   (:func:`icml26.scfm_grn.evaluate.extract`);
3. ``replicate_<r>``: one replicate's split, translators, scores and nulls
   (:func:`icml26.scfm_grn.evaluate.score_replicate`).

Then the summary over replicates (:func:`icml26.scfm_grn.tables.replicate_summary`) and the
plots (:mod:`icml26.scfm_grn.figures`). The runner sets threads and the seed.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import torch

from icml26.scfm_grn.config import RunConfig
from icml26.scfm_grn.corpus import Corpus, build_corpus
from icml26.scfm_grn.data import ExpressionData
from icml26.scfm_grn.evaluate import Features, extract, score_replicate
from icml26.scfm_grn.figures import plot_losses, plot_network, plot_pr, plot_trajectories
from icml26.scfm_grn.model import ScFM, ScFMConfig, save_scfm
from icml26.scfm_grn.pretraining import pooled_covariance, pretrain_summary, pretrained_scfm
from icml26.scfm_grn.tables import replicate_summary
from icml26.shared import NUMPY, TORCH, RunDir, Stages, log

__all__ = ["run"]


def _features(
    stages: Stages, model: ScFM, data: ExpressionData, cfg: RunConfig, tfs: Any, prior: Any
) -> Features:
    """Stage ``features_<dataset>``: the arrays saved as ``.npz``, the dataset from the corpus."""

    def compute() -> dict[str, np.ndarray]:
        f = extract(model, data, cfg, tfs=tfs, prior=prior)
        arrays = {"vvp": f.vvp, "gt": f.gt, "pairs": f.pairs}
        arrays |= {f"score_{k}": v for k, v in f.scores.items()}
        arrays |= {f"seconds_{k}": np.array([v]) for k, v in f.seconds.items()}
        if f.sources is not None:
            arrays["sources"] = f.sources
        return arrays

    a = stages.once(f"features_{data.name}", compute, saver=NUMPY)
    scores = {k[6:]: a[k] for k in a if k.startswith("score_")}
    seconds = {k[8:]: float(a[k][0]) for k in a if k.startswith("seconds_")}
    return Features(data, a["vvp"], a["gt"], scores, seconds, a.get("sources"), a["pairs"])


def _pretrain(stages: Stages, cfg: RunConfig, corpus: Corpus, run_dir: RunDir) -> tuple[ScFM, dict]:
    """Stages ``pretrain`` (weights, chosen on the validation datasets) and
    ``pretrain_summary`` (losses, the validation curve, variance explained)."""
    vocab = corpus.vocabulary()
    trace: dict[str, Any] = {"losses": []}

    def train() -> dict[str, torch.Tensor]:
        model, losses, sel = pretrained_scfm(
            cfg, vocab, corpus.pretrain, run_dir, validation=corpus.validation
        )
        trace.update(losses=losses, curve=sel.curve, best_step=sel.best_step)
        return {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}

    state = stages.once("pretrain", train, saver=TORCH)
    model = ScFM(vocab, ScFMConfig(cfg.width, cfg.layers, cfg.heads))
    model.load_state_dict(state)
    model = model.to(cfg.device).eval()
    with run_dir.artefact("scfm.safetensors") as tmp:
        save_scfm(model, tmp)
    summary = partial(
        pretrain_summary,
        model,
        corpus.train,
        corpus.tests,  # pooled: datasets none of whose cells were pretrained on
        corpus.validation,
        cfg.seed,
        trace,
        corpus.pretrain,
        also=[corpus.krumsiek11],  # its other half was pretrained on: reported alone
    )
    return model, stages.once("pretrain_summary", summary)


def run(config: RunConfig, run_dir: RunDir) -> dict[str, Any]:
    """The main job: the stages above, then the summary and the plots.

    Args:
        config: the run's config.
        run_dir: the run folder.

    Returns:
        Every ``<metric>.<split>.<method>`` (mean over replicates) with its SE, chance level,
        z-score, p-value and gain over the best baseline; the pretraining summary; sizes.

    Raises:
        RuntimeError: a CUDA device asked for and not available.
    """
    if config.device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {config.device!r} asked for but CUDA is not available")
    stages = Stages(run_dir)
    corpus = build_corpus(config)
    log(f"corpus: {len(corpus.pretrain)} pretraining sets, {len(corpus.tests)} test sets")
    model, pre = _pretrain(stages, config, corpus, run_dir)
    log(f"scFM: masked variance explained {pre['pretrain.variance_explained']:.3f} (test datasets)")
    # the corpus_correlation baseline: |pooled covariance| of the pretraining cells only
    vocab = list(corpus.vocabulary())
    feature = partial(
        _features,
        stages,
        model,
        cfg=config,
        prior=(vocab, pooled_covariance(corpus.pretrain, vocab)),
    )
    feats = {
        "train": [feature(corpus.train, tfs=None)],
        "tests": [feature(d, tfs=None) for d in corpus.tests],
        "krumsiek11": [feature(corpus.krumsiek11, tfs=None)],
        "user": [] if corpus.user is None else [feature(corpus.user, tfs=corpus.user_tfs)],
    }
    cache: dict[str, Any] = {}
    replicates = [
        stages.once(f"replicate_{r}", partial(score_replicate, feats, config, r, cache))
        for r in range(config.replicates)
    ]
    metrics = replicate_summary(replicates)
    metrics.update({k: v for k, v in pre.items() if k not in ("losses", "val_curve")})
    for name, sec in feats["train"][0].seconds.items():
        metrics[f"cpu_seconds.train_features.{name}"] = sec
    train = feats["train"][0]
    plot_pr(run_dir, replicates[0]["curves"])
    plot_trajectories(
        run_dir,
        train.data.labels(),
        train.vvp,
        train.gt,
        np.linspace(-2, 2, config.vvp_values),
        np.linspace(-1.5, 1.5, config.gt_levels),
    )
    plot_network(run_dir, corpus.krumsiek11.genes, replicates[0]["curves"]["krumsiek11"])
    plot_losses(run_dir, pre["losses"])
    return metrics

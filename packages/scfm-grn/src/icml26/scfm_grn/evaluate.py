"""Features of one dataset, and one replicate of the benchmark scored against a null.

:func:`extract` reads VVP and GT out of the frozen scFM and every baseline's scores for one
dataset. :func:`score_replicate` draws one replicate (the gene split, the translators, the
balanced AUPRC's negatives and the ``random`` method's ranking, each from its own seed
stream), scores every method on every split, and attaches each split's null distribution: the
same metrics for ``null_permutations`` random rankings of the same pairs (averaged over a
split's datasets, as its figure is).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from icml26.scfm_grn.baselines import (
    genie3_scores,
    grnboost2_scores,
    mutual_information_scores,
    pearson_scores,
    spearman_scores,
)
from icml26.scfm_grn.benchmark import GeneSplit, all_pairs, split_genes
from icml26.scfm_grn.candidates import candidate_pairs
from icml26.scfm_grn.config import BASELINES, METHODS, NULL_METHOD, RunConfig
from icml26.scfm_grn.data import ExpressionData
from icml26.scfm_grn.features import (
    attention_scores,
    embedding_scores,
    gradient_trajectory,
    virtual_value_perturbation,
    zero_out_scores,
)
from icml26.scfm_grn.metrics import METRICS, chance_levels, score_all
from icml26.scfm_grn.model import CellModel
from icml26.scfm_grn.translator import Translator, TranslatorConfig, pair_features, standardise
from icml26.shared import seed_for

__all__ = [
    "Features",
    "corpus_scores",
    "extract",
    "fit_translators",
    "method_scores",
    "score_replicate",
]

#: Methods whose scores a replicate keeps for the figures.
CURVE_METHODS = ("ensemble", "vvp", "gt", "genie3", "correlation", "attention", "zero_out")


@dataclass
class Features:
    """One dataset's inter-gene features (``[S, G, F]``) and baseline scores (``[G, G]``).

    ``sources`` are the gene indices of the feature rows (all genes unless TF -> gene
    candidates restrict them); ``pairs`` are the dataset's candidate pairs.
    """

    data: ExpressionData
    vvp: NDArray[np.float32]
    gt: NDArray[np.float32]
    scores: dict[str, NDArray[Any]]
    seconds: dict[str, float]
    sources: NDArray[np.int64] | None = None
    pairs: NDArray[np.int64] | None = None


def _baselines(
    model: CellModel,
    data: ExpressionData,
    cfg: RunConfig,
    prior: tuple[Sequence[str], NDArray[np.float64]] | None,
) -> dict[str, Callable]:
    x, seed = data.values, cfg.seed
    out: dict[str, Callable] = {}
    if prior is not None:
        out["corpus_correlation"] = lambda: corpus_scores(prior, data.genes)
    return out | {
        "correlation": lambda: pearson_scores(x),
        "spearman": lambda: spearman_scores(x),
        "mi": lambda: mutual_information_scores(x),
        "genie3": lambda: genie3_scores(x, n_trees=cfg.genie3_trees, seed=seed),
        "grnboost2": lambda: grnboost2_scores(x, n_estimators=cfg.grnboost2_estimators, seed=seed),
        "attention": lambda: attention_scores(model, data, n_cells=cfg.baseline_cells, seed=seed),
        "zero_out": lambda: zero_out_scores(
            model, data, n_cells=cfg.zero_out_cells, mask_groups=cfg.mask_groups, seed=seed
        ),
        "embedding": lambda: embedding_scores(model, data, n_cells=cfg.baseline_cells, seed=seed),
    }


def corpus_scores(
    prior: tuple[Sequence[str], NDArray[np.float64]], genes: Sequence[str]
) -> NDArray[np.float64]:
    """The ``corpus_correlation`` baseline: |pooled covariance| of the pretraining corpus
    (:func:`icml26.scfm_grn.pretraining.pooled_covariance`) restricted to ``genes``.

    Args:
        prior: ``(vocabulary, [V, V] pooled covariance over the pretraining cells)``.
        genes: the dataset's genes (each in the vocabulary).

    Returns:
        ``[G, G]`` scores (0 for pairs no pretraining dataset measured together).

    Raises:
        ValueError: a gene outside the vocabulary.
    """
    vocab, cov = prior
    pos = {g: i for i, g in enumerate(vocab)}
    missing = [g for g in genes if g not in pos]
    if missing:
        raise ValueError(f"genes outside the pretraining vocabulary: {missing[:5]}")
    idx = np.array([pos[g] for g in genes])
    return np.abs(np.asarray(cov, dtype=np.float64)[np.ix_(idx, idx)])


def extract(
    model: CellModel,
    data: ExpressionData,
    cfg: RunConfig,
    *,
    baselines: bool = True,
    tfs: Sequence[str] | None = None,
    prior: tuple[Sequence[str], NDArray[np.float64]] | None = None,
) -> Features:
    """VVP and GT features and every baseline's scores for one dataset.

    Args:
        model: the frozen scFM.
        data: the dataset.
        cfg: the run's config (levels, mask groups, GT mode, baseline sizes).
        baselines: also compute the baselines' scores.
        tfs: restrict the candidate pairs (and the features' source rows) to TF -> gene.
        prior: ``(vocabulary, pooled covariance of the pretraining cells)`` for the
            ``corpus_correlation`` baseline (:func:`corpus_scores`); without it that baseline
            is not computed (and :func:`method_scores` refuses the features).

    Returns:
        :class:`Features` with each part's CPU seconds.
    """
    secs: dict[str, float] = {}

    def timed(name: str, fn: Callable[[], Any]) -> Any:
        t0 = time.process_time()
        out = fn()
        secs[name] = time.process_time() - t0
        return out

    sources, pairs = candidate_pairs(data.genes, tfs)
    rows = None if tfs is None else sources
    common = {"mask_groups": cfg.mask_groups, "seed": cfg.seed, "sources": rows}
    vvp = timed(
        "vvp",
        lambda: virtual_value_perturbation(
            model, data.genes, levels=tuple(np.linspace(-2, 2, cfg.vvp_values)), **common
        ),
    )
    gt = timed(
        "gt",
        lambda: gradient_trajectory(
            model,
            data.genes,
            levels=tuple(np.linspace(-1.5, 1.5, cfg.gt_levels)),
            mode=cfg.gt_mode,
            **common,
        ),
    )
    scores = {}
    if baselines:
        scores = {name: timed(name, fn) for name, fn in _baselines(model, data, cfg, prior).items()}
    return Features(data, vvp, gt, scores, secs, rows, pairs)


def fit_translators(
    train: Features, split: GeneSplit, cfg: RunConfig, seed: int
) -> tuple[Translator, Translator]:
    """One translator on VVP features, one on GT, both on the training pairs only.

    Args:
        train: the training dataset's features.
        split: the replicate's gene split.
        cfg: the run's config (translator size and steps).
        seed: the translators' initialisation.

    Returns:
        ``(vvp translator, gt translator)``.
    """
    labels = train.data.labels()
    y = labels[split.train_pairs[:, 0], split.train_pairs[:, 1]]
    tcfg = TranslatorConfig(hidden=cfg.translator_hidden, steps=cfg.translator_steps, seed=seed)
    vvp = standardise(train.vvp, train.sources)
    gt = standardise(train.gt, train.sources)
    vvp_t = Translator(tcfg).fit(pair_features(vvp, split.train_pairs, train.sources), y)
    gt_t = Translator(tcfg).fit(pair_features(gt, split.train_pairs, train.sources), y)
    return vvp_t, gt_t


def method_scores(
    feats: Features,
    pairs: NDArray[np.int64],
    translators: tuple[Translator, Translator],
    rng: np.random.Generator,
) -> dict[str, NDArray[np.float64]]:
    """Every method's scores on ``pairs``: ours through the translators, the baselines raw,
    ``vvp_abs`` (the mean |VVP response| of a pair, no translator: an untrained readout of
    the same features) and ``random`` (a random ranking: the placebo).

    Args:
        feats: the dataset's features.
        pairs: the scored pairs.
        translators: the replicate's VVP and GT translators.
        rng: draws the random ranking.

    Returns:
        ``{method: [N] scores}``.
    """
    vvp_t, gt_t = translators
    p_vvp = vvp_t.predict(
        pair_features(standardise(feats.vvp, feats.sources), pairs, feats.sources)
    )
    p_gt = gt_t.predict(pair_features(standardise(feats.gt, feats.sources), pairs, feats.sources))
    out = {"vvp": p_vvp, "gt": p_gt, "ensemble": 0.5 * (p_vvp + p_gt)}
    missing = [b for b in BASELINES if b not in feats.scores]
    if missing:
        raise ValueError(f"{feats.data.name}: no scores for baselines {missing} (extract's prior?)")
    for name in BASELINES:
        out[name] = np.asarray(feats.scores[name], dtype=np.float64)[pairs[:, 0], pairs[:, 1]]
    out["vvp_abs"] = np.abs(pair_features(feats.vvp, pairs, feats.sources)).mean(-1)
    out[NULL_METHOD] = rng.random(len(pairs))
    return out


def _split_items(
    feats: Mapping[str, list[Features]], split: GeneSplit
) -> dict[str, list[tuple[Features, NDArray[np.int64]]]]:
    train = feats["train"][0]
    items = {
        "seen": [(train, split.seen_pairs)],
        "unseen_genes": [(train, split.unseen_pairs)],
        "unseen_dataset": [(f, all_pairs(f.data.n_genes)) for f in feats["tests"]],
        "krumsiek11": [(f, all_pairs(f.data.n_genes)) for f in feats["krumsiek11"]],
    }
    if feats.get("user"):
        items["user"] = [(f, f.pairs) for f in feats["user"]]  # type: ignore[misc]
    return items


def score_replicate(
    feats: Mapping[str, list[Features]],
    cfg: RunConfig,
    replicate: int,
    null_cache: dict[str, dict[str, NDArray[np.float64]]] | None = None,
) -> dict[str, Any]:
    """One replicate: split, translators, every method's metrics per split, and the nulls.

    Args:
        feats: ``{"train": [..], "tests": [..], "krumsiek11": [..], "user": [..]}``.
        cfg: the run's config.
        replicate: the replicate's index (its seed streams).
        null_cache: null distributions of splits whose pairs do not change between replicates
            (filled and reused).

    Returns:
        ``{"metrics": {"<metric>.<split>.<method>": value}, "null": {"<metric>.<split>":
        [permutations] values}, "sizes": {"n_pairs.<split>": .., "n_edges.<split>": ..},
        "curves": {split: labels, pairs and a few methods' scores of its first dataset}}``.
    """
    seeds = {k: seed_for(cfg.seed, k, replicate) for k in ("split", "translator", "negatives")}
    train = feats["train"][0]
    split = split_genes(
        train.data.labels(), unseen_fraction=cfg.unseen_fraction, seed=seeds["split"]
    )
    translators = fit_translators(train, split, cfg, seeds["translator"])
    rng = np.random.default_rng(seed_for(cfg.seed, "random_method", replicate))
    metrics: dict[str, float] = {}
    null: dict[str, list[float]] = {}
    sizes: dict[str, float] = {}
    curves: dict[str, dict[str, Any]] = {}
    cache = {} if null_cache is None else null_cache
    for name, items in _split_items(feats, split).items():
        tables, nulls = [], []
        for k, (f, pairs) in enumerate(items):
            labels = f.data.labels()[pairs[:, 0], pairs[:, 1]]
            if labels.sum() in (0, labels.size):
                raise ValueError(f"{f.data.name}: the scored pairs need both edges and non-edges")
            scores = method_scores(f, pairs, translators, rng)
            if k == 0:
                curves[name] = {
                    "labels": labels.tolist(),
                    "pairs": pairs.tolist(),
                    "scores": {m: scores[m].tolist() for m in CURVE_METHODS},
                }
            tables.append(
                {m: score_all(labels, scores[m], seed=seeds["negatives"]) for m in METHODS}
            )
            key, fixed = f"{name}.{k}", name not in ("seen", "unseen_genes")
            if fixed and key in cache:
                perms = cache[key]
            else:
                perms = chance_levels(
                    labels,
                    permutations=cfg.null_permutations,
                    seed=seed_for(cfg.seed, "null", name, k, replicate),
                )
                if fixed:
                    cache[key] = perms
            nulls.append(perms)
        for metric in METRICS:
            for method in METHODS:
                values = [t[method][metric] for t in tables]
                metrics[f"{metric}.{name}.{method}"] = float(np.mean(values))
            null[f"{metric}.{name}"] = np.mean([n[metric] for n in nulls], axis=0).tolist()
        sizes[f"n_pairs.{name}"] = float(np.mean([len(p) for _, p in items]))
        sizes[f"n_edges.{name}"] = float(
            np.mean([f.data.labels()[p[:, 0], p[:, 1]].sum() for f, p in items])
        )
    return {"metrics": metrics, "null": null, "sizes": sizes, "curves": curves}

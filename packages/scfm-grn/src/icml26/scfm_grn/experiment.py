"""``icml26 run scfm-grn`` and ``icml26 bench scfm-grn``.

The run, stage by stage::

    corpus = build_corpus(cfg)                        # SERGIO datasets + krumsiek11 + pbmc
    model, losses = build_scfm(cfg, corpus, run_dir)  # masked-reconstruction pretraining
    feats = {d: extract(model, d, cfg)}               # VVP, GT and the baselines' scores
    vvp_t, gt_t = fit_translators(feats[train], split, cfg)
    metrics = score_splits(...)                       # EPR, AUPRC ratio, balanced AUPRC, AUROC
"""

from __future__ import annotations

import resource
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from icml26.scfm_grn.baselines import (
    genie3_scores,
    grnboost2_scores,
    mutual_information_scores,
    pearson_scores,
    spearman_scores,
)
from icml26.scfm_grn.benchmark import GeneSplit, all_pairs, split_genes
from icml26.scfm_grn.corpus import Corpus, build_corpus
from icml26.scfm_grn.data import ExpressionData
from icml26.scfm_grn.features import (
    attention_scores,
    embedding_scores,
    gradient_trajectory,
    virtual_value_perturbation,
    zero_out_scores,
)
from icml26.scfm_grn.metrics import score_all
from icml26.scfm_grn.model import ScFM, ScFMConfig, load_scfm, save_scfm
from icml26.scfm_grn.paper import BASELINES, METHODS, BenchConfig, RunConfig
from icml26.scfm_grn.pretrain import PretrainConfig, pretrain
from icml26.scfm_grn.translator import Translator, TranslatorConfig, pair_features, standardise
from icml26.shared import PALETTE, figure, log, seed_everything

__all__ = ["Features", "bench", "build_scfm", "extract", "fit_translators", "run", "score_pairs"]

CHECKPOINT_EVERY = 250


@dataclass
class Features:
    """One dataset's inter-gene features (``[G, G, F]``) and baseline scores (``[G, G]``)."""

    data: ExpressionData
    vvp: NDArray[np.float32]
    gt: NDArray[np.float32]
    scores: dict[str, NDArray[Any]]
    seconds: dict[str, float]


def _device(cfg: RunConfig | BenchConfig) -> str:
    if cfg.device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {cfg.device!r} asked for but CUDA is not available")
    return cfg.device


def build_scfm(cfg: RunConfig, corpus: Corpus, run_dir: Any) -> tuple[ScFM, list[float]]:
    """Pretrain the scFM (resuming from the run folder's checkpoints) or load one."""
    device = _device(cfg)
    final = run_dir.path / "scfm.safetensors"
    if cfg.scfm_checkpoint is not None:
        model = load_scfm(cfg.scfm_checkpoint, device)
        missing = [g for g in corpus.vocabulary() if g not in model.vocab]
        if missing:
            raise KeyError(f"scfm_checkpoint lacks genes of the benchmark: {missing[:10]}")
        return model.eval(), []
    if final.is_file():
        log("pretrained scFM found in the run folder; skipping pretraining")
        losses = [r["pretrain_loss"] for r in run_dir.read_metrics() if "pretrain_loss" in r]
        return load_scfm(final, device).eval(), losses
    torch.manual_seed(cfg.seed)
    model = ScFM(corpus.vocabulary(), ScFMConfig(cfg.width, cfg.layers, cfg.heads)).to(device)
    pcfg = PretrainConfig(
        steps=cfg.pretrain_steps,
        batch_size=cfg.batch_size,
        max_genes=cfg.max_genes,
        lr=cfg.lr,
        seed=cfg.seed,
    )
    latest = run_dir.checkpoints.latest()
    state = latest[1] if latest is not None else None

    def on_step(step: int, loss: float, st: dict[str, Any]) -> None:
        if step % 50 == 0:
            run_dir.log_metrics(step, pretrain_loss=loss)
        if (step + 1) % CHECKPOINT_EVERY == 0 and step + 1 < cfg.pretrain_steps:
            run_dir.checkpoints.save(step + 1, st)

    losses = pretrain(model, corpus.pretrain, pcfg, state=state, on_step=on_step)
    with run_dir.artefact("scfm.safetensors") as tmp:
        save_scfm(model, tmp)
    return model.eval(), losses


def extract(
    model: ScFM, data: ExpressionData, cfg: RunConfig, *, baselines: bool = True
) -> Features:
    """VVP and GT features and every baseline's score matrix for one dataset."""
    secs: dict[str, float] = {}

    def timed(name: str, fn: Any) -> Any:
        t0 = time.process_time()
        out = fn()
        secs[name] = time.process_time() - t0
        return out

    seed = cfg.seed
    vvp = timed(
        "vvp",
        lambda: virtual_value_perturbation(
            model,
            data.genes,
            levels=tuple(np.linspace(-2, 2, cfg.vvp_values)),
            mask_groups=cfg.mask_groups,
            seed=seed,
        ),
    )
    gt = timed(
        "gt",
        lambda: gradient_trajectory(
            model,
            data.genes,
            levels=tuple(np.linspace(-1.5, 1.5, cfg.gt_levels)),
            mask_groups=cfg.mask_groups,
            mode=cfg.gt_mode,
            seed=seed,
        ),
    )
    scores: dict[str, NDArray[Any]] = {}
    if baselines:
        x = data.values
        scores["correlation"] = timed("correlation", lambda: pearson_scores(x))
        scores["spearman"] = timed("spearman", lambda: spearman_scores(x))
        scores["mi"] = timed("mi", lambda: mutual_information_scores(x))
        scores["genie3"] = timed(
            "genie3", lambda: genie3_scores(x, n_trees=cfg.genie3_trees, seed=seed)
        )
        scores["grnboost2"] = timed(
            "grnboost2",
            lambda: grnboost2_scores(x, n_estimators=cfg.grnboost2_estimators, seed=seed),
        )
        scores["attention"] = timed(
            "attention",
            lambda: attention_scores(model, data, n_cells=cfg.baseline_cells, seed=seed),
        )
        scores["zero_out"] = timed(
            "zero_out",
            lambda: zero_out_scores(
                model, data, n_cells=cfg.zero_out_cells, mask_groups=cfg.mask_groups, seed=seed
            ),
        )
        scores["embedding"] = timed(
            "embedding",
            lambda: embedding_scores(model, data, n_cells=cfg.baseline_cells, seed=seed),
        )
    return Features(data, vvp, gt, scores, secs)


def fit_translators(
    train: Features, split: GeneSplit, cfg: RunConfig
) -> tuple[Translator, Translator]:
    """One translator on VVP features, one on GT, both on the training pairs only."""
    labels = train.data.labels()
    y = labels[split.train_pairs[:, 0], split.train_pairs[:, 1]]
    tcfg = TranslatorConfig(hidden=cfg.translator_hidden, steps=cfg.translator_steps, seed=cfg.seed)
    vvp_t = Translator(tcfg).fit(pair_features(standardise(train.vvp), split.train_pairs), y)
    gt_t = Translator(tcfg).fit(pair_features(standardise(train.gt), split.train_pairs), y)
    return vvp_t, gt_t


def method_scores(
    feats: Features, pairs: NDArray[np.int64], translators: tuple[Translator, Translator]
) -> dict[str, NDArray[np.float64]]:
    """Every method's score on ``pairs`` (ours through the translators, baselines raw)."""
    vvp_t, gt_t = translators
    p_vvp = vvp_t.predict(pair_features(standardise(feats.vvp), pairs))
    p_gt = gt_t.predict(pair_features(standardise(feats.gt), pairs))
    out = {"vvp": p_vvp, "gt": p_gt, "ensemble": 0.5 * (p_vvp + p_gt)}
    for name in BASELINES:
        out[name] = np.asarray(feats.scores[name], dtype=np.float64)[pairs[:, 0], pairs[:, 1]]
    return out


def score_pairs(
    feats: Features, pairs: NDArray[np.int64], translators: tuple[Translator, Translator], seed: int
) -> tuple[dict[str, dict[str, float]], NDArray[np.int64], dict[str, NDArray[np.float64]]]:
    """``{metric: {method: value}}`` on ``pairs``, plus the labels and scores used."""
    labels = feats.data.labels()[pairs[:, 0], pairs[:, 1]]
    if labels.sum() == 0 or labels.sum() == labels.size:
        raise ValueError(f"{feats.data.name}: the scored pairs need both edges and non-edges")
    scores = method_scores(feats, pairs, translators)
    out: dict[str, dict[str, float]] = {}
    for method in METHODS:
        for metric, value in score_all(labels, scores[method], seed=seed).items():
            out.setdefault(metric, {})[method] = value
    return out, labels, scores


def _mean_tables(tables: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    return {
        metric: {m: float(np.mean([t[metric][m] for t in tables])) for m in tables[0][metric]}
        for metric in tables[0]
    }


def run(cfg: RunConfig, run_dir: Any) -> dict[str, Any]:
    torch.set_num_threads(cfg.threads)
    seed_everything(cfg.seed, torch=True)
    t_start = time.process_time()
    corpus = build_corpus(cfg)
    log(
        f"corpus: universe {corpus.universe.n_genes} genes / {len(corpus.universe.edges)} edges, "
        f"{len(corpus.pretrain)} pretraining sets, train {corpus.train.n_genes} genes, "
        f"{len(corpus.tests)} test sets"
    )
    t_data = time.process_time()
    model, losses = build_scfm(cfg, corpus, run_dir)
    t_pre = time.process_time()
    log(
        f"scFM pretrained: masked MSE {np.mean(losses[:20]) if losses else float('nan'):.3f} -> "
        f"{np.mean(losses[-50:]) if losses else float('nan'):.3f}"
    )
    split = split_genes(corpus.train.labels(), unseen_fraction=cfg.unseen_fraction, seed=cfg.seed)
    train_f = extract(model, corpus.train, cfg)
    translators = fit_translators(train_f, split, cfg)
    evals: dict[str, list[tuple[Features, NDArray[np.int64]]]] = {
        "seen": [(train_f, split.seen_pairs)],
        "unseen_genes": [(train_f, split.unseen_pairs)],
        "unseen_dataset": [
            (f, all_pairs(f.data.n_genes)) for f in (extract(model, d, cfg) for d in corpus.tests)
        ],
        "krumsiek11": [(kf := extract(model, corpus.krumsiek11, cfg), all_pairs(kf.data.n_genes))],
    }
    if corpus.user is not None:
        uf = extract(model, corpus.user, cfg)
        evals["user"] = [(uf, all_pairs(uf.data.n_genes))]
    metrics: dict[str, Any] = {}
    curves: dict[str, tuple[NDArray[np.int64], dict[str, NDArray[np.float64]]]] = {}
    for split_name, items in evals.items():
        tables = []
        for k, (feats, pairs) in enumerate(items):
            table, labels, scores = score_pairs(feats, pairs, translators, cfg.seed)
            tables.append(table)
            if k == 0:
                curves[split_name] = (labels, scores)
        for metric, per_method in _mean_tables(tables).items():
            for method, value in per_method.items():
                metrics[f"{metric}.{split_name}.{method}"] = value
        metrics[f"n_pairs.{split_name}"] = float(np.mean([len(p) for _, p in items]))
        metrics[f"n_edges.{split_name}"] = float(
            np.mean([f.data.labels()[p[:, 0], p[:, 1]].sum() for f, p in items])
        )
    t_end = time.process_time()
    metrics["pretrain.loss_first"] = float(np.mean(losses[:20])) if losses else float("nan")
    metrics["pretrain.loss_last"] = float(np.mean(losses[-50:])) if losses else float("nan")
    metrics["cpu_seconds.data"] = t_data - t_start
    metrics["cpu_seconds.pretrain"] = t_pre - t_data
    metrics["cpu_seconds.features_and_scoring"] = t_end - t_pre
    for name, sec in train_f.seconds.items():
        metrics[f"cpu_seconds.train_features.{name}"] = sec
    _plot_pr(run_dir, curves)
    _plot_trajectories(run_dir, train_f, cfg)
    _plot_network(run_dir, evals["krumsiek11"][0][0], translators)
    if losses:
        _plot_losses(run_dir, losses)
    return metrics


# -- plots ------------------------------------------------------------------------------------

_SHOWN = ("ensemble", "vvp", "gt", "genie3", "correlation", "attention", "zero_out")


def _plot_pr(run_dir: Any, curves: dict[str, Any]) -> None:
    from sklearn.metrics import precision_recall_curve

    with figure(
        run_dir.plot_path("pr_curves"), ncols=len(curves), width=3.6 * len(curves), height=3.4
    ) as (_fig, axes):
        axes = np.atleast_1d(axes)
        for ax, (split, (labels, scores)) in zip(axes, curves.items(), strict=True):
            for k, name in enumerate(_SHOWN):
                p, r, _ = precision_recall_curve(labels, scores[name])
                ax.plot(
                    r,
                    p,
                    color=PALETTE[k % len(PALETTE)],
                    lw=2 if name == "ensemble" else 1,
                    label=name,
                )
            ax.axhline(labels.mean(), color="grey", ls=":", lw=1)
            ax.set(title=split, xlabel="recall", ylabel="precision", ylim=(0, 1.02))
        axes[0].legend(fontsize=7)


def _plot_trajectories(run_dir: Any, feats: Features, cfg: RunConfig) -> None:
    labels = feats.data.labels()
    off = ~np.eye(labels.shape[0], dtype=bool)
    edge, non = (labels == 1) & off, (labels == 0) & off
    panels = (
        ("VVP response", feats.vvp, np.linspace(-2, 2, cfg.vvp_values), "value of gene i"),
        ("Gradient Trajectory", feats.gt, np.linspace(-1.5, 1.5, cfg.gt_levels), "baseline level"),
    )
    with figure(run_dir.plot_path("trajectories"), ncols=2, width=8, height=3.4) as (_fig, axes):
        for ax, (title, f, xs, xlabel) in zip(axes, panels, strict=True):
            for k, (name, sel) in enumerate((("true edges", edge), ("non-edges", non))):
                mag = np.abs(f[sel])
                mean, sd = mag.mean(axis=0), mag.std(axis=0)
                ax.plot(xs, mean, color=PALETTE[k], label=f"{name} (mean |feature|)")
                ax.fill_between(xs, mean - sd / 2, mean + sd / 2, color=PALETTE[k], alpha=0.2)
            i, j = np.argwhere(edge)[0]
            ax.plot(
                xs,
                np.abs(f[i, j]),
                color=PALETTE[0],
                ls="--",
                lw=1,
                label=f"edge {feats.data.genes[i]}->{feats.data.genes[j]}",
            )
            ax.set(title=title, xlabel=xlabel, ylabel="|out_j response|")
        axes[0].legend(fontsize=7)


def _plot_network(
    run_dir: Any, feats: Features, translators: tuple[Translator, Translator]
) -> None:
    import networkx as nx

    genes = feats.data.genes
    labels = feats.data.labels()
    pairs = all_pairs(len(genes))
    p = method_scores(feats, pairs, translators)["ensemble"]
    k = int(labels.sum())
    top = pairs[np.argsort(-p)[:k]]
    truth = nx.DiGraph([(genes[i], genes[j]) for i, j in np.argwhere(labels == 1)])
    pred = nx.DiGraph([(genes[i], genes[j]) for i, j in top])
    pos = nx.circular_layout(sorted(genes))
    with figure(run_dir.plot_path("network_krumsiek11"), ncols=2, width=9, height=4.4) as (
        _fig,
        axes,
    ):
        nx.draw_networkx(
            truth,
            pos,
            ax=axes[0],
            node_color="#dddddd",
            node_size=700,
            font_size=7,
            edge_color="#444444",
            arrowsize=10,
        )
        axes[0].set_title(f"krumsiek11 truth ({k} edges)")
        colours = ["#2a9d8f" if truth.has_edge(u, v) else "#e76f51" for u, v in pred.edges]
        nx.draw_networkx(
            pred,
            pos,
            ax=axes[1],
            node_color="#dddddd",
            node_size=700,
            font_size=7,
            edge_color=colours,
            arrowsize=10,
        )
        axes[1].set_title(f"ensemble top {k} (green = true)")
        for ax in axes:
            ax.axis("off")


def _plot_losses(run_dir: Any, losses: list[float]) -> None:
    with figure(run_dir.plot_path("pretrain_loss"), width=4.5, height=3.2) as (_fig, ax):
        w = max(1, len(losses) // 50)
        smooth = np.convolve(losses, np.ones(w) / w, mode="valid")
        ax.plot(smooth, color=PALETTE[0])
        ax.set(xlabel="step", ylabel="masked MSE", title="scFM pretraining")


# -- bench ------------------------------------------------------------------------------------


def _peak_rss_mib() -> float:
    """Peak resident memory of this process so far (MiB)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def _fit_exponent(xs: list[float], ys: list[float]) -> float:
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def bench(cfg: BenchConfig, run_dir: Any) -> dict[str, Any]:
    """CPU seconds per gene pair for VVP, GT (jvp, jacrev) and GENIE3; peak RSS after each."""
    from icml26.scfm_grn.networks import scale_free_universe, subnetwork
    from icml26.scfm_grn.simulate import SimulationSpec, simulate

    torch.set_num_threads(cfg.threads)
    seed_everything(cfg.seed, torch=True)
    device = _device(cfg)
    universe = scale_free_universe(max(500, 2 * max(cfg.gene_counts)), seed=cfg.seed)
    model = ScFM(universe.genes, ScFMConfig(cfg.width, cfg.layers, cfg.heads)).to(device).eval()
    metrics: dict[str, Any] = {}
    per_pair: dict[str, list[float]] = {"vvp": [], "gt_jvp": [], "gt_jacrev": [], "genie3": []}
    sizes: dict[str, list[float]] = {k: [] for k in per_pair}
    for g in cfg.gene_counts:
        net = subnetwork(universe, g, seed=cfg.seed + g)
        raw = simulate(
            net, SimulationSpec(n_cell_types=2, cells_per_type=cfg.n_cells // 2, seed=cfg.seed)
        )
        data = ExpressionData.build(f"bench{g}", net.genes, raw, net, "continuous")
        n_pairs = g * (g - 1)
        jobs = {
            "vvp": lambda d=data: virtual_value_perturbation(model, d.genes),
            "gt_jvp": lambda d=data: gradient_trajectory(model, d.genes, mode="jvp"),
            "genie3": lambda d=data: genie3_scores(
                d.values, n_trees=cfg.genie3_trees, seed=cfg.seed
            ),
        }
        if g <= cfg.jacrev_max_genes:
            jobs["gt_jacrev"] = lambda d=data: gradient_trajectory(model, d.genes, mode="jacrev")
        for name, job in jobs.items():
            if g == cfg.gene_counts[0]:
                job()  # warm-up: first-call costs (torch.func tracing, lazy imports) are not per pair
            best = float("inf")
            for _ in range(cfg.repeats):
                t0 = time.process_time()  # CPU seconds: robust to a shared machine
                job()
                best = min(best, time.process_time() - t0)
            metrics[f"seconds.{name}.g{g}"] = best
            metrics[f"us_per_pair.{name}.g{g}"] = best / n_pairs * 1e6
            metrics[f"peak_rss_mib.after_{name}.g{g}"] = _peak_rss_mib()
            per_pair[name].append(best / n_pairs)
            sizes[name].append(g)
            log(f"G={g:4d} {name:10s} {best:8.3f} s  {best / n_pairs * 1e6:9.1f} us/pair")
    for name in per_pair:
        if len(sizes[name]) >= 2:
            metrics[f"exponent.per_pair.{name}"] = _fit_exponent(sizes[name], per_pair[name])
            metrics[f"exponent.total.{name}"] = metrics[f"exponent.per_pair.{name}"] + 2.0
    common = [n for n in sizes["gt_jacrev"] if n in sizes["gt_jvp"]]
    if common:
        g_max = max(common)
        metrics["gt_jacrev_over_jvp"] = (
            metrics[f"seconds.gt_jacrev.g{g_max}"] / metrics[f"seconds.gt_jvp.g{g_max}"]
        )
    with figure(run_dir.plot_path("bench_cost"), width=4.8, height=3.6) as (_fig, ax):
        for k, name in enumerate(per_pair):
            if sizes[name]:
                ax.loglog(
                    sizes[name], np.array(per_pair[name]) * 1e6, "o-", color=PALETTE[k], label=name
                )
        ax.set(xlabel="genes G", ylabel="µs per gene pair", title="feature cost per pair")
        ax.legend(fontsize=8)
    return metrics

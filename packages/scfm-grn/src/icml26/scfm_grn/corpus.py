"""The benchmark's datasets, built deterministically from the config's seed.

One universe network (the "genome"); SERGIO datasets of its sub-networks for pretraining
(drawn to cover every universe gene first); one training dataset; test datasets whose genes
are disjoint from the training dataset's; krumsiek11 (half of its cells join pretraining,
the other half are scored); pbmc68k_reduced (pretraining only); validation datasets (new
sub-networks drawn like the test datasets, never pretrained on and never scored: they choose
the scFM's checkpoint); an optional user dataset.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26.scfm_grn.beeline import load_beeline
from icml26.scfm_grn.candidates import highly_variable, read_gene_list
from icml26.scfm_grn.config import RunConfig
from icml26.scfm_grn.data import ExpressionData, krumsiek11, load_h5ad, pbmc68k_reduced
from icml26.scfm_grn.networks import GeneNetwork, scale_free_universe, subnetwork
from icml26.scfm_grn.simulation import SimulationSpec, simulate
from icml26.shared import rng_for

__all__ = ["Corpus", "build_corpus", "load_user_data", "simulated_dataset", "validation_datasets"]


@dataclass(frozen=True)
class Corpus:
    """The run's datasets: the universe, pretraining sets, the training and test datasets,
    krumsiek11's scored half, the user's dataset (with its TFs) if any, and the validation
    datasets (the scFM's checkpoint is chosen on them)."""

    universe: GeneNetwork
    pretrain: tuple[ExpressionData, ...]
    train: ExpressionData
    tests: tuple[ExpressionData, ...]
    krumsiek11: ExpressionData
    user: ExpressionData | None
    user_tfs: tuple[str, ...] | None = None
    validation: tuple[ExpressionData, ...] = ()

    def vocabulary(self) -> tuple[str, ...]:
        """Every gene any dataset names, universe first (the scFM's token set)."""
        seen: dict[str, None] = dict.fromkeys(self.universe.genes)
        for d in (
            *self.pretrain,
            self.train,
            *self.tests,
            self.krumsiek11,
            *(() if self.user is None else (self.user,)),
        ):
            seen.update(dict.fromkeys(d.genes))
        return tuple(seen)


def simulated_dataset(
    name: str,
    network: GeneNetwork,
    cfg: RunConfig,
    noise: str,
    seed: int,
    cells_per_type: int | None = None,
) -> ExpressionData:
    """One SERGIO dataset of ``network`` (``cfg``'s cell types, ``cells_per_type`` or
    ``cfg.cells_per_type`` cells of each; counts when noisy)."""
    spec = SimulationSpec(
        n_cell_types=cfg.n_cell_types,
        cells_per_type=cells_per_type or cfg.cells_per_type,
        noise=noise,
        noise_s=cfg.intrinsic_noise,
        seed=seed,
    )
    raw = simulate(network, spec)
    kind = "counts" if noise != "none" else "continuous"
    return ExpressionData.build(name, network.genes, raw, network, kind)


def build_corpus(cfg: RunConfig) -> Corpus:
    """Every dataset of the run, deterministic from ``cfg.seed`` (SERGIO output is cached)."""
    universe = scale_free_universe(cfg.universe_genes, seed=cfg.seed)
    rng = np.random.default_rng(cfg.seed + 1)
    # pretraining sub-networks from their own stream (the corpus's size leaves the scored
    # datasets as they are): cover the universe first, then anywhere
    pre_rng = rng_for(cfg.seed, "pretrain_networks")
    pretrain: list[ExpressionData] = []
    covered: set[str] = set()
    for k in range(cfg.n_pretrain_datasets):
        left = cfg.universe_genes - len(covered)
        exclude = covered if left >= cfg.pretrain_genes else set()
        net = subnetwork(
            universe, cfg.pretrain_genes, exclude=exclude, seed=int(pre_rng.integers(2**31))
        )
        covered.update(net.genes)
        noise = cfg.pretrain_noise[k % len(cfg.pretrain_noise)]
        seed = 1000 + cfg.seed * 100 + k
        cells = cfg.pretrain_cells_per_type
        pretrain.append(simulated_dataset(f"pretrain{k}", net, cfg, noise, seed, cells))
    train_net = subnetwork(universe, cfg.train_genes, seed=int(rng.integers(2**31)))
    train = simulated_dataset("train", train_net, cfg, cfg.train_noise, seed=2000 + cfg.seed)
    tests = []
    for k in range(cfg.n_test_datasets):
        net = subnetwork(
            universe, cfg.test_genes, exclude=train_net.genes, seed=int(rng.integers(2**31))
        )
        noise = cfg.test_noise[k % len(cfg.test_noise)]
        tests.append(
            simulated_dataset(f"test{k}_{noise}", net, cfg, noise, seed=3000 + cfg.seed * 100 + k)
        )
    validation = validation_datasets(cfg, universe, train_net.genes)
    kr = krumsiek11()
    perm = np.random.default_rng(cfg.seed + 2).permutation(kr.n_cells)
    half = kr.n_cells // 2
    kr_pre = kr.cell_subset(np.sort(perm[:half]), "krumsiek11_pretrain")
    kr_eval = kr.cell_subset(np.sort(perm[half:]), "krumsiek11")
    extra: list[ExpressionData] = [kr_pre]
    if cfg.use_pbmc:
        extra.append(pbmc68k_reduced())
    user, tfs = load_user_data(cfg)
    if user is not None:
        extra.append(user)
    # the training dataset's cells join pretraining unlabelled (an scFM's corpus is unlabelled
    # expression); the test datasets' cells never do: only their genes are known to the scFM
    return Corpus(
        universe,
        (*pretrain, train, *extra),
        train,
        tuple(tests),
        kr_eval,
        user,
        tfs,
        validation,
    )


def validation_datasets(
    cfg: RunConfig, universe: GeneNetwork, train_genes: tuple[str, ...]
) -> tuple[ExpressionData, ...]:
    """``cfg.n_val_datasets`` datasets drawn as the test datasets are (``test_genes`` genes
    outside the training dataset's, ``test_noise`` presets in turn) from their own seed stream:
    new sub-networks and new cells, in neither pretraining nor any scored split."""
    rng = rng_for(cfg.seed, "validation")
    out = []
    for k in range(cfg.n_val_datasets):
        net = subnetwork(
            universe, cfg.test_genes, exclude=train_genes, seed=int(rng.integers(2**31))
        )
        noise = cfg.test_noise[k % len(cfg.test_noise)]
        out.append(
            simulated_dataset(f"val{k}_{noise}", net, cfg, noise, seed=int(rng.integers(2**31)))
        )
    return tuple(out)


def load_user_data(cfg: RunConfig) -> tuple[ExpressionData | None, tuple[str, ...] | None]:
    """The user's dataset (``user_h5ad`` + ``user_edges``, or ``user_beeline``), reduced to its
    ``n_top_genes`` most variable genes (its TFs kept), and its TFs (``user_tfs``).

    Returns:
        ``(data, tfs)``, ``(None, None)`` without user data.

    Raises:
        ValueError: from the readers (missing columns, unknown genes, duplicated edges), or a
            TF list naming no gene of the data.
    """
    if cfg.user_beeline is not None:
        data = load_beeline(cfg.user_beeline, name="user")
    elif cfg.user_h5ad is not None:
        data = load_h5ad(
            cfg.user_h5ad,
            edges=cfg.user_edges,
            layer=cfg.user_layer,
            normalise=cfg.user_normalise,
            name="user",
        )
    else:
        return None, None
    tfs = read_gene_list(cfg.user_tfs) if cfg.user_tfs is not None else None
    if tfs is not None and not set(tfs) & set(data.genes):
        raise ValueError(f"{cfg.user_tfs} names no gene of the user data")
    if cfg.n_top_genes is not None and cfg.n_top_genes < data.n_genes:
        keep_tfs = [k for k, g in enumerate(data.genes) if tfs is not None and g in tfs]
        idx = highly_variable(
            data.raw, cfg.n_top_genes, keep=keep_tfs, counts=cfg.user_normalise == "counts"
        )
        genes = tuple(data.genes[k] for k in idx)
        net = data.network.restrict(genes) if data.network is not None else None
        data = ExpressionData(data.name, genes, data.raw[:, idx], data.values[:, idx], net)
    return data, tfs

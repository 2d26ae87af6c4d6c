"""The benchmark's datasets, built deterministically from the config's seed.

One universe network (the "genome"); SERGIO datasets of its sub-networks for pretraining
(drawn to cover every universe gene first); one training dataset; test datasets whose genes
are disjoint from the training dataset's; krumsiek11 (half of its cells join pretraining,
the other half are scored); pbmc68k_reduced (pretraining only); an optional user dataset.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26.scfm_grn.data import ExpressionData, krumsiek11, load_h5ad, pbmc68k_reduced
from icml26.scfm_grn.networks import GeneNetwork, scale_free_universe, subnetwork
from icml26.scfm_grn.paper import RunConfig
from icml26.scfm_grn.simulate import SimulationSpec, simulate

__all__ = ["Corpus", "build_corpus", "simulated_dataset"]


@dataclass(frozen=True)
class Corpus:
    universe: GeneNetwork
    pretrain: tuple[ExpressionData, ...]
    train: ExpressionData
    tests: tuple[ExpressionData, ...]
    krumsiek11: ExpressionData
    user: ExpressionData | None

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
    name: str, network: GeneNetwork, cfg: RunConfig, noise: str, seed: int
) -> ExpressionData:
    spec = SimulationSpec(
        n_cell_types=cfg.n_cell_types, cells_per_type=cfg.cells_per_type, noise=noise, seed=seed
    )
    raw = simulate(network, spec)
    kind = "counts" if noise != "none" else "continuous"
    return ExpressionData.build(name, network.genes, raw, network, kind)


def build_corpus(cfg: RunConfig) -> Corpus:
    universe = scale_free_universe(cfg.universe_genes, seed=cfg.seed)
    rng = np.random.default_rng(cfg.seed + 1)
    # pretraining sub-networks: cover the universe first, then anywhere
    pretrain: list[ExpressionData] = []
    covered: set[str] = set()
    for k in range(cfg.n_pretrain_datasets):
        left = cfg.universe_genes - len(covered)
        exclude = covered if left >= cfg.pretrain_genes else set()
        net = subnetwork(
            universe, cfg.pretrain_genes, exclude=exclude, seed=int(rng.integers(2**31))
        )
        covered.update(net.genes)
        noise = cfg.pretrain_noise[k % len(cfg.pretrain_noise)]
        pretrain.append(
            simulated_dataset(f"pretrain{k}", net, cfg, noise, seed=1000 + cfg.seed * 100 + k)
        )
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
    kr = krumsiek11()
    perm = np.random.default_rng(cfg.seed + 2).permutation(kr.n_cells)
    half = kr.n_cells // 2
    kr_pre = kr.cell_subset(np.sort(perm[:half]), "krumsiek11_pretrain")
    kr_eval = kr.cell_subset(np.sort(perm[half:]), "krumsiek11")
    extra: list[ExpressionData] = [kr_pre]
    if cfg.use_pbmc:
        extra.append(pbmc68k_reduced())
    user = None
    if cfg.user_h5ad is not None:
        user = load_h5ad(
            cfg.user_h5ad,
            edges=cfg.user_edges,
            layer=cfg.user_layer,
            normalise=cfg.user_normalise,
            name="user",
        )
        extra.append(user)
    # the training dataset's cells join pretraining unlabelled (an scFM's corpus is unlabelled
    # expression); the test datasets' cells never do: only their genes are known to the scFM
    return Corpus(universe, (*pretrain, train, *extra), train, tuple(tests), kr_eval, user)

"""Configs of ``icml26 run scfm-grn`` and ``icml26 bench scfm-grn``, and their profiles.

Light imports only (the CLI reads these for ``icml26 list``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "BASELINES",
    "BENCH_PROFILES",
    "CONTROLS",
    "CORPUS_BASELINES",
    "METHODS",
    "NOISES",
    "OURS",
    "PROFILES",
    "SPLITS",
    "BenchConfig",
    "RunConfig",
]

SPLITS = ("seen", "unseen_genes", "unseen_dataset", "krumsiek11")
OURS = ("vvp", "gt", "ensemble")
#: A random ranking scored like every method: the placebo of the comparative claims.
NULL_METHOD = "random"
BASELINES = (
    "correlation",
    "spearman",
    "mi",
    "genie3",
    "grnboost2",
    "attention",
    "zero_out",
    "embedding",
    "corpus_correlation",
)
#: Baselines that read no model: ``corpus_correlation`` ranks a pair by |pooled covariance| of
#: the pretraining corpus (z-scored values pooled over its cells; the matrix the co-expression
#: init is built from). The test networks are sub-networks of the universe the pretraining
#: sub-networks come from, so this prior alone ranks their edges: it is the placebo of
#: ``ensemble_beats_baselines_unseen_dataset``.
CORPUS_BASELINES = ("corpus_correlation",)
#: Controls read from our features without a translator: ``vvp_abs`` ranks a pair by the
#: mean |VVP response| over the M values (does the translator add or lose signal?).
CONTROLS = ("vvp_abs",)
METHODS = (*OURS, *BASELINES, *CONTROLS, NULL_METHOD)
NOISES = ("none", "DS1", "DS2", "DS3", "DS4", "DS5", "DS6", "DS7", "DS8", "DS13", "DS14")


@dataclass(frozen=True)
class RunConfig:
    """``icml26 run scfm-grn``: pretrain the scFM, extract VVP / GT features, train the
    translator on one dataset and score every method on the four splits.

    Data: one scale-free universe network of ``universe_genes`` genes (the scFM's vocabulary,
    with krumsiek11's and pbmc68k_reduced's genes); ``n_pretrain_datasets`` SERGIO datasets
    of random sub-networks for pretraining (``pretrain_cells_per_type`` cells per cell type,
    default ``cells_per_type``; with krumsiek11's first half of cells and
    pbmc68k_reduced); one training dataset of ``train_genes`` genes; ``n_test_datasets``
    datasets of ``test_genes`` genes disjoint from the training dataset's. The pretraining
    sub-networks come from their own seed stream: changing their number leaves the scored
    and validation datasets as they are.
    ``user_h5ad`` (+ ``user_edges``) or ``user_beeline`` (a BEELINE dataset folder with
    ``ExpressionData.csv`` and ``refNetwork.csv``) adds a ``user`` split scored like
    ``unseen_dataset``, except that its cells join pretraining unlabelled (as the training
    dataset's do; the scFM and the co-expression init see them, its edges never); ``user_tfs`` (one gene per line) restricts its candidate edges to
    TF -> gene and ``n_top_genes`` to its most variable genes (TFs kept).
    ``scfm_checkpoint`` loads a saved scFM (``save_scfm``) instead of pretraining.

    Cells: SERGIO draws every master regulator's production rate per "cell type"; with
    ``n_cell_types`` = 300 and ``cells_per_type`` = 1 (the default) each cell is its own
    master-regulator state, and with ``intrinsic_noise`` = 0 (SERGIO's ``noise_s``) its
    expression is the network's steady state for that state, plus the preset's technical
    noise. With SERGIO's ``noise_s`` = 1 and 10 cell types (before issue 45), two
    simulations of one network and one profile agreed on little (cell-type means correlated
    0.65, gene-gene correlations 0.13): co-expression did not carry from dataset to dataset,
    and no scFM could learn it (held-out masked variance explained 0.036, RESULTS.md).

    The scFM's checkpoint is chosen on ``n_val_datasets`` validation datasets (drawn like the
    test datasets from their own seed stream, never pretrained on, never scored): every
    ``select_every`` steps its masked variance explained there is measured and the best
    weights are kept. The quick profile's corpus size and steps were chosen on the validation
    datasets (masked variance explained 0.08 with 24 pretraining sets and 1,500 steps, 0.23
    with 72, 0.29 with 150 and 3,000 steps, 0.33 with co-expression gene embeddings;
    RESULTS.md).

    Replicates: the gene split, the translators and the random negatives of the balanced
    AUPRC are drawn ``replicates`` times (separate seed streams; the scFM and its features are
    computed once); every figure is the mean over replicates with its SE, and each metric's
    chance level is computed from ``null_permutations`` random rankings of the same pairs.

    Attributes:
        device: the torch device (``cpu``, ``cuda``).
        threads: CPU threads of the job, set by the runner before it starts.
        pretrain_genes: genes of each pretraining dataset's random sub-network.
        n_cell_types: cell types of each simulated dataset.
        pretrain_noise: SERGIO technical-noise presets of the pretraining datasets
            (``NOISE_PRESETS``: ``none``, ``DS1`` ... ``DS14``).
        train_noise: the training dataset's noise preset.
        test_noise: the test datasets' noise presets (each test dataset under each).
        use_pbmc: pretrain on pbmc68k_reduced's cells too.
        unseen_fraction: share of the training dataset's genes held out of training entirely
            (the unseen-genes split).
        width: the scFM's token width.
        layers: its transformer blocks.
        heads: its attention heads.
        pretrain_steps: pretraining steps.
        batch_size: cells per pretraining batch.
        max_genes: genes per cell at most in a pretraining sequence.
        lr: the pretraining's learning rate.
        mask_low: smallest masked share of a cell's tokens (drawn uniformly per cell).
        mask_high: largest masked share.
        select_every: steps between validation measurements (checkpoint choice).
        embedding_init: ``"coexpression"`` (gene embeddings start from the pretraining
            corpus's co-expression eigenvectors, as scBERT starts from gene2vec) or
            ``"random"``.
        vvp_values: ``M``: values of the source gene in Virtual Value Perturbation.
        gt_levels: ``T``: baseline levels of Gradient Trajectory.
        mask_groups: ``K``: groups the other genes are split into, one masked per read.
        gt_mode: ``"jvp"`` (forward mode) or ``"jacrev"`` (reverse mode) derivatives.
        translator_hidden: the translator MLP's hidden width.
        translator_steps: the translator's training steps.
        genie3_trees: trees of the GENIE3 baseline.
        grnboost2_estimators: boosting rounds of the GRNBoost2 baseline.
        baseline_cells: cells read by the attention and embedding baselines.
        zero_out_cells: cells read by the zero-out perturbation baseline.
        user_layer: read ``adata.layers[user_layer]`` of ``user_h5ad`` instead of ``adata.X``.
        user_normalise: ``"counts"`` or ``"continuous"``: how ``user_h5ad``'s values are
            normalised.
    """

    seed: int = 0
    device: str = "cpu"
    threads: int = 1
    replicates: int = 3
    null_permutations: int = 200
    # data
    universe_genes: int = 500
    n_pretrain_datasets: int = 150
    pretrain_genes: int = 64
    train_genes: int = 100
    test_genes: int = 60
    n_test_datasets: int = 3
    n_val_datasets: int = 3
    n_cell_types: int = 300
    cells_per_type: int = 1
    pretrain_cells_per_type: int | None = None
    intrinsic_noise: int = 0
    pretrain_noise: tuple[str, ...] = ("none", "DS4", "DS14")
    train_noise: str = "none"
    test_noise: tuple[str, ...] = ("none", "DS4", "DS14")
    use_pbmc: bool = True
    unseen_fraction: float = 0.4
    # scFM
    width: int = 64
    layers: int = 2
    heads: int = 4
    pretrain_steps: int = 3000
    batch_size: int = 32
    max_genes: int = 64
    lr: float = 3e-3
    mask_low: float = 0.3
    mask_high: float = 0.7
    select_every: int = 250
    embedding_init: str = "coexpression"
    # features (M = vvp_values, T = gt_levels)
    vvp_values: int = 8
    gt_levels: int = 8
    mask_groups: int = 2
    gt_mode: str = "jvp"
    # translator
    translator_hidden: int = 16
    translator_steps: int = 300
    # baselines
    genie3_trees: int = 50
    grnboost2_estimators: int = 100
    baseline_cells: int = 64
    zero_out_cells: int = 16
    # inputs of your own
    user_h5ad: Path | None = None
    user_edges: Path | None = None
    user_layer: str | None = None
    user_normalise: str = "counts"
    user_beeline: Path | None = None
    user_tfs: Path | None = None
    n_top_genes: int | None = None
    scfm_checkpoint: Path | None = None

    def __post_init__(self) -> None:
        if self.threads < 1:
            raise ValueError("threads must be >= 1")
        if self.replicates < 2:
            raise ValueError("replicates must be >= 2 (a standard error needs two)")
        if self.null_permutations < 20:
            raise ValueError("null_permutations must be >= 20")
        if self.n_top_genes is not None and self.n_top_genes < 10:
            raise ValueError("n_top_genes must be >= 10")
        if self.user_beeline is not None:
            if self.user_h5ad is not None:
                raise ValueError("give user_h5ad or user_beeline, not both")
            if not Path(self.user_beeline).is_dir():
                raise ValueError(f"user_beeline {self.user_beeline} is not a folder")
        if self.user_tfs is not None and not Path(self.user_tfs).is_file():
            raise ValueError(f"user_tfs {self.user_tfs} does not exist")
        no_user = self.user_h5ad is None and self.user_beeline is None
        if no_user and (self.user_tfs is not None or self.n_top_genes is not None):
            raise ValueError(
                "user_tfs and n_top_genes apply to user data (user_h5ad / user_beeline)"
            )
        if not self.device.startswith(("cpu", "cuda", "mps")):
            raise ValueError(f"device must be cpu, cuda[:n] or mps, got {self.device!r}")
        for name in ("pretrain_noise", "test_noise"):
            bad = [n for n in getattr(self, name) if n not in NOISES]
            if bad or not getattr(self, name):
                raise ValueError(
                    f"{name} must be non-empty presets from {', '.join(NOISES)}; bad: {bad}"
                )
        if self.train_noise not in NOISES:
            raise ValueError(f"train_noise must be one of {', '.join(NOISES)}")
        if self.universe_genes < 500:
            raise ValueError("universe_genes must be >= 500 (the scFM's 'genome')")
        if self.train_genes + self.test_genes > self.universe_genes:
            raise ValueError("train_genes + test_genes exceed universe_genes")
        if min(self.train_genes, self.test_genes, self.pretrain_genes) < 10:
            raise ValueError("train_genes, test_genes and pretrain_genes must be >= 10")
        if min(self.n_test_datasets, self.n_pretrain_datasets, self.n_val_datasets) < 1:
            raise ValueError("n_test_datasets, n_pretrain_datasets and n_val_datasets must be >= 1")
        if self.embedding_init not in ("coexpression", "random"):
            raise ValueError("embedding_init must be 'coexpression' or 'random'")
        if self.select_every < 1:
            raise ValueError("select_every must be >= 1")
        if self.n_cell_types < 1 or self.cells_per_type < 1:
            raise ValueError("n_cell_types >= 1 and cells_per_type >= 1 required")
        if self.n_cell_types * self.cells_per_type < 20:
            raise ValueError("a dataset needs >= 20 cells (n_cell_types * cells_per_type)")
        if self.pretrain_cells_per_type is not None and self.pretrain_cells_per_type < 1:
            raise ValueError("pretrain_cells_per_type must be >= 1 (or None: cells_per_type)")
        if self.intrinsic_noise not in (0, 1):
            raise ValueError("intrinsic_noise must be 0 or 1 (SERGIO's noise_s)")
        if not 0.1 <= self.unseen_fraction <= 0.6:
            raise ValueError("unseen_fraction must lie in [0.1, 0.6]")
        if self.width % self.heads or self.layers < 1:
            raise ValueError("width must be divisible by heads; layers >= 1")
        if self.pretrain_steps < 0 or self.batch_size < 1 or self.max_genes < 4 or self.lr <= 0:
            raise ValueError("pretrain_steps >= 0, batch_size >= 1, max_genes >= 4, lr > 0")
        if self.vvp_values < 2 or self.gt_levels < 1 or self.mask_groups < 1:
            raise ValueError("vvp_values >= 2, gt_levels >= 1, mask_groups >= 1 required")
        if self.gt_mode not in ("jvp", "jacrev"):
            raise ValueError("gt_mode must be 'jvp' or 'jacrev'")
        if self.translator_hidden < 1 or self.translator_steps < 1:
            raise ValueError("translator_hidden and translator_steps must be >= 1")
        if self.genie3_trees < 1 or self.grnboost2_estimators < 1:
            raise ValueError("genie3_trees and grnboost2_estimators must be >= 1")
        if self.baseline_cells < 1 or self.zero_out_cells < 1:
            raise ValueError("baseline_cells and zero_out_cells must be >= 1")
        if self.user_normalise not in ("counts", "continuous"):
            raise ValueError("user_normalise must be 'counts' or 'continuous'")
        if self.user_h5ad is not None and not Path(self.user_h5ad).is_file():
            raise ValueError(f"user_h5ad {self.user_h5ad} does not exist")
        if self.user_h5ad is None:
            for name in ("user_edges", "user_layer"):
                if getattr(self, name) is not None:
                    raise ValueError(f"{name} is only read with user_h5ad set")
        elif self.user_edges is None:
            raise ValueError("user_h5ad needs user_edges (the truth to score against)")
        if self.user_edges is not None and not Path(self.user_edges).is_file():
            raise ValueError(f"user_edges {self.user_edges} does not exist")
        if self.scfm_checkpoint is not None and not Path(self.scfm_checkpoint).is_file():
            raise ValueError(f"scfm_checkpoint {self.scfm_checkpoint} does not exist")


@dataclass(frozen=True)
class BenchConfig:
    """``icml26 bench scfm-grn``: feature-extraction seconds per gene pair for VVP, GT (jvp
    and jacrev) and GENIE3 as the gene count grows; fitted exponents; peak memory.

    Attributes:
        seed: the run's seed; separate random streams are drawn from it.
        device: the torch device (``cpu``, ``cuda``).
        threads: CPU threads of the bench (at least 1).
        gene_counts: the gene counts timed (at least two, each >= 4).
        n_cells: cells of each simulated dataset.
        width: the scFM's token width.
        layers: its transformer blocks.
        heads: its attention heads.
        genie3_trees: trees of the timed GENIE3.
        jacrev_max_genes: largest gene count timed for GT in reverse mode (``jacrev``).
        repeats: timings per size (the best is kept).
        memory_genes: genes of the peak-memory dataset (sparse counts).
        memory_top_genes: most variable genes selected from it (TFs kept).
        memory_tfs: TFs used as regulators in the memory measurement.
    """

    seed: int = 0
    device: str = "cpu"
    threads: int = 1
    gene_counts: tuple[int, ...] = (16, 32, 64, 128)
    n_cells: int = 300
    width: int = 64
    layers: int = 2
    heads: int = 4
    genie3_trees: int = 100
    jacrev_max_genes: int = 32
    repeats: int = 1
    memory_genes: int = 20000
    memory_top_genes: int = 300
    memory_tfs: int = 30

    def __post_init__(self) -> None:
        if len(self.gene_counts) < 2 or min(self.gene_counts) < 4:
            raise ValueError("gene_counts needs >= 2 sizes, each >= 4")
        if self.threads < 1 or self.repeats < 1 or self.n_cells < 10:
            raise ValueError("threads >= 1, repeats >= 1, n_cells >= 10 required")


SMOKE = RunConfig(
    threads=1,
    replicates=2,
    null_permutations=40,
    universe_genes=500,
    n_pretrain_datasets=3,
    pretrain_genes=30,
    train_genes=30,
    test_genes=20,
    n_test_datasets=1,
    n_val_datasets=1,
    n_cell_types=40,
    pretrain_noise=("none",),
    use_pbmc=False,
    width=16,
    layers=1,
    heads=2,
    pretrain_steps=10,
    select_every=5,
    batch_size=8,
    max_genes=16,
    vvp_values=4,
    gt_levels=3,
    translator_steps=30,
    genie3_trees=5,
    grnboost2_estimators=10,
    baseline_cells=8,
    zero_out_cells=4,
)
QUICK = RunConfig()
FULL = RunConfig(
    universe_genes=800,
    n_pretrain_datasets=300,
    pretrain_noise=("none", "DS4", "DS14", "DS1", "DS2", "DS13"),
    n_test_datasets=6,
    n_cell_types=600,
    width=96,
    layers=3,
    pretrain_steps=12000,
    genie3_trees=100,
    grnboost2_estimators=200,
    test_noise=("none", "DS4", "DS14", "DS1", "DS2", "DS13"),
)


PROFILES = {"smoke": SMOKE, "quick": QUICK, "full": FULL}
BENCH_PROFILES = {
    "smoke": BenchConfig(
        gene_counts=(8, 16),
        n_cells=40,
        width=16,
        layers=1,
        heads=2,
        genie3_trees=5,
        jacrev_max_genes=16,
        memory_genes=2000,
        memory_top_genes=40,
        memory_tfs=5,
    ),
    "quick": BenchConfig(),
    "full": BenchConfig(gene_counts=(16, 32, 64, 128, 256), repeats=3, jacrev_max_genes=128),
}

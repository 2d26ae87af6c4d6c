"""Masked expression reconstruction: the scFM's pretraining objective (as scGPT's GEP).

Per step: pick a dataset (with probability proportional to its cell count), ``batch_size`` of
its cells and up to ``max_genes`` of its genes, hide a fraction ``rho ~ U(mask_low,
mask_high)`` of the tokens, and minimise the mean squared error of the predicted values on
the hidden tokens. No network labels are used: the regulatory signal, if any, is implicit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import torch
from torch import Tensor

from icml26.scfm_grn.data import ExpressionData
from icml26.scfm_grn.model import ScFM, ScFMConfig, load_scfm

__all__ = [
    "GaussianConditional",
    "KnnReference",
    "PretrainConfig",
    "Selection",
    "coexpression_embeddings",
    "corpus_linear_reference",
    "knn_reference_score",
    "masked_loss",
    "masked_variance_explained",
    "pooled_covariance",
    "pretrain",
    "pretrain_summary",
    "pretrained_scfm",
    "sample_batch",
]

CHECKPOINT_EVERY = 250


@dataclass(frozen=True)
class PretrainConfig:
    """Masked-reconstruction pretraining (AdamW, one-cycle learning rate).

    Attributes:
        steps, batch_size, max_genes, lr, weight_decay: the optimisation (cells per batch,
            genes per cell sampled per step).
        mask_low, mask_high: the masked share of a cell's tokens, drawn uniformly per cell.
        seed: batches and masks.

    Raises:
        ValueError: non-positive sizes, a bad mask range.
    """

    steps: int = 1500
    batch_size: int = 32
    max_genes: int = 64
    lr: float = 2e-3
    weight_decay: float = 1e-2
    mask_low: float = 0.3
    mask_high: float = 0.7
    seed: int = 0

    def __post_init__(self) -> None:
        if self.steps < 0 or self.batch_size < 1 or self.max_genes < 2 or self.lr <= 0:
            raise ValueError("steps >= 0, batch_size >= 1, max_genes >= 2 and lr > 0 required")
        if not 0.0 < self.mask_low <= self.mask_high < 1.0:
            raise ValueError("need 0 < mask_low <= mask_high < 1")


def sample_batch(
    model: ScFM, data: ExpressionData, cfg: PretrainConfig, rng: np.random.Generator
) -> tuple[Tensor, Tensor, Tensor]:
    """``(gene_ids, values, mask)`` for one batch of one dataset (mask: at least one token
    hidden and one visible per cell)."""
    cells = rng.choice(data.n_cells, size=min(cfg.batch_size, data.n_cells), replace=False)
    n_genes = min(cfg.max_genes, data.n_genes)
    genes = rng.choice(data.n_genes, size=n_genes, replace=False)
    ids = model.token_ids([data.genes[g] for g in genes]).expand(len(cells), -1)
    values = torch.from_numpy(data.values[np.ix_(cells, genes)])
    rho = rng.uniform(cfg.mask_low, cfg.mask_high, size=(len(cells), 1))
    mask = rng.random((len(cells), n_genes)) < rho
    mask[:, 0] |= ~mask.any(axis=1)  # at least one hidden
    mask[:, 1] &= mask[:, 1:].sum(axis=1) < n_genes - 1  # at least one visible
    return ids.contiguous(), values, torch.from_numpy(mask)


def masked_loss(model: Any, gene_ids: Tensor, values: Tensor, mask: Tensor) -> Tensor:
    """Mean squared error of the predictions on the hidden tokens (a scalar tensor)."""
    pred = model.predict(gene_ids, values, mask)
    return ((pred - values) ** 2)[mask].mean()


def pretrain(
    model: ScFM,
    datasets: Sequence[ExpressionData],
    cfg: PretrainConfig,
    *,
    state: dict[str, Any] | None = None,
    on_step: Callable[[int, float, dict[str, Any]], None] | None = None,
) -> list[float]:
    """Train ``model`` in place by masked reconstruction.

    Args:
        model: the scFM.
        datasets: the corpus (drawn in proportion to their cells).
        cfg: the optimisation.
        state: an earlier ``on_step`` call's third argument: resumes a killed run (model,
            optimiser, RNG and losses so far).
        on_step: ``on_step(step, loss, state)`` after every step (the caller checkpoints).

    Returns:
        The loss of every step.

    Raises:
        ValueError: no dataset.
    """
    if not datasets:
        raise ValueError("pretraining needs at least one dataset")
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt,
        max_lr=cfg.lr,
        total_steps=max(cfg.steps, 1),
        pct_start=min(0.5, max(0.1, 3 / max(cfg.steps, 1))),  # >= 2 warm-up steps
    )
    rng = np.random.default_rng(cfg.seed)
    losses: list[float] = []
    start = 0
    if state is not None:
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        rng.bit_generator.state = state["rng"]
        losses = list(state["losses"])
        start = len(losses)
    weights = np.array([d.n_cells for d in datasets], dtype=float)
    weights /= weights.sum()
    model.train()
    for step in range(start, cfg.steps):
        data = datasets[int(rng.choice(len(datasets), p=weights))]
        loss = masked_loss(model, *sample_batch(model, data, cfg, rng))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
        if on_step is not None:
            on_step(
                step,
                losses[-1],
                {
                    "model": model.state_dict(),
                    "opt": opt.state_dict(),
                    "sched": sched.state_dict(),
                    "rng": rng.bit_generator.state,
                    "losses": losses,
                },
            )
    model.eval()
    return losses


@torch.no_grad()
def masked_variance_explained(
    model: Any,
    datasets: Sequence[ExpressionData],
    *,
    mask_rate: float = 0.5,
    batches: int = 8,
    batch_size: int = 64,
    max_genes: int = 64,
    seed: int = 0,
) -> float:
    """``1 - MSE / Var`` of the hidden values on ``datasets`` (cells the scFM never saw).

    Args:
        model: the scFM (``token_ids`` and ``predict``).
        datasets: held-out datasets.
        mask_rate: the hidden share of each cell's tokens (VVP hides about half).
        batches, batch_size, max_genes: batches drawn per dataset and their size.
        seed: the draws.

    Returns:
        The share of the hidden values' variance the predictions explain (0 for predicting
        each gene's mean of its z-scores, which is 0).
    """
    cfg = PretrainConfig(
        batch_size=batch_size, max_genes=max_genes, mask_low=mask_rate, mask_high=mask_rate
    )
    rng = np.random.default_rng(seed)
    sse, ss = 0.0, 0.0
    was_training = getattr(model, "training", False)
    model.eval()
    for data in datasets:
        for _ in range(batches):
            ids, values, mask = sample_batch(model, data, cfg, rng)
            pred = model.predict(ids, values, mask)
            target = values[mask]
            sse += float(((pred[mask] - target) ** 2).sum())
            ss += float(((target - target.mean()) ** 2).sum())
    if was_training:
        model.train()
    return 1.0 - sse / max(ss, 1e-12)


@dataclass
class Selection:
    """The validation curve and the best weights so far (checkpointed with the run)."""

    curve: list[tuple[int, float]]
    best_step: int = 0
    best_score: float = -np.inf
    best_state: dict[str, Tensor] | None = None

    def observe(self, step: int, score: float, model: ScFM) -> None:
        """Record ``score`` at ``step``; keep ``model``'s weights when they are the best."""
        self.curve.append((step, score))
        if score > self.best_score:
            self.best_step, self.best_score = step, score
            self.best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}


def pretrained_scfm(
    cfg: Any,
    vocabulary: Sequence[str],
    datasets: Sequence[ExpressionData],
    run_dir: Any,
    validation: Sequence[ExpressionData] = (),
) -> tuple[ScFM, list[float], Selection]:
    """The run's scFM: pretrained (resuming from the run folder's checkpoints) or loaded.

    With ``validation`` datasets, the masked variance explained there is measured every
    ``cfg.select_every`` steps and at the end, and the best weights are returned (the
    checkpoint is chosen on validation data, never on a scored split).

    Args:
        cfg: the run's config (``width``, ``layers``, ``heads``, ``pretrain_steps``, ...,
            ``select_every``, ``embedding_init``, ``scfm_checkpoint``, ``device``).
        vocabulary: every gene the run reads (the scFM's tokens).
        datasets: the pretraining corpus.
        run_dir: the run folder (checkpoints every ``CHECKPOINT_EVERY`` steps).
        validation: datasets that choose the checkpoint (not pretrained on).

    Returns:
        ``(model in eval mode, losses per step, the validation selection)`` (no losses and an
        empty curve for a loaded checkpoint).

    Raises:
        KeyError: a checkpoint lacking genes of the benchmark.
    """
    if cfg.scfm_checkpoint is not None:
        model = load_scfm(cfg.scfm_checkpoint, cfg.device)
        missing = [g for g in vocabulary if g not in model.vocab]
        if missing:
            raise KeyError(f"scfm_checkpoint lacks genes of the benchmark: {missing[:10]}")
        return model.eval(), [], Selection([])
    torch.manual_seed(cfg.seed)
    model = ScFM(vocabulary, ScFMConfig(cfg.width, cfg.layers, cfg.heads)).to(cfg.device)
    if cfg.embedding_init == "coexpression":
        emb = coexpression_embeddings(datasets, vocabulary, cfg.width)
        with torch.no_grad():
            model.gene_embedding.weight.copy_(torch.from_numpy(emb))
    pcfg = PretrainConfig(
        steps=cfg.pretrain_steps,
        batch_size=cfg.batch_size,
        max_genes=cfg.max_genes,
        lr=cfg.lr,
        mask_low=cfg.mask_low,
        mask_high=cfg.mask_high,
        seed=cfg.seed,
    )
    latest = run_dir.checkpoints.latest()
    selection = latest[1]["selection"] if latest is not None else Selection([])

    def validate(step: int) -> None:
        if validation:
            score = masked_variance_explained(model, validation, seed=cfg.seed)
            model.train()
            selection.observe(step, score, model)

    def on_step(step: int, loss: float, st: dict[str, Any]) -> None:
        if step % 50 == 0:
            run_dir.log_metrics(step, pretrain_loss=loss)
        if (step + 1) % cfg.select_every == 0 and step + 1 < cfg.pretrain_steps:
            validate(step + 1)
        if (step + 1) % CHECKPOINT_EVERY == 0 and step + 1 < cfg.pretrain_steps:
            run_dir.checkpoints.save(step + 1, {**st, "selection": selection})

    state = latest[1] if latest is not None else None
    losses = pretrain(model, datasets, pcfg, state=state, on_step=on_step)
    validate(cfg.pretrain_steps)
    if selection.best_state is not None:
        model.load_state_dict(selection.best_state)
    return model.eval(), losses, selection


def coexpression_embeddings(
    datasets: Sequence[ExpressionData], genes: Sequence[str], width: int, scale: float = 0.5
) -> np.ndarray:
    """Gene embeddings from the corpus's co-expression (as scBERT starts from gene2vec): the
    top ``width`` eigenvectors of :func:`pooled_covariance`, each scaled by the square root of
    its eigenvalue, then all by one factor to an entry SD of ``scale`` (the random init's).

    Args:
        datasets: the pretraining corpus (no scored or validation cell).
        genes: the vocabulary (the rows of the result).
        width: the embedding width (at most ``len(genes)``).
        scale: the entries' standard deviation.

    Returns:
        ``[len(genes), width]`` float32 array.

    Raises:
        ValueError: ``width`` above the vocabulary size.
    """
    if width > len(genes):
        raise ValueError(f"width {width} exceeds the {len(genes)} genes of the vocabulary")
    eigval, eigvec = np.linalg.eigh(pooled_covariance(datasets, genes))
    emb = eigvec[:, -width:] * np.sqrt(np.maximum(eigval[-width:], 0.0))
    return (emb / max(float(emb.std()), 1e-12) * scale).astype(np.float32)


class GaussianConditional:
    """The best linear predictor of hidden values from visible ones under a fixed covariance:
    ``E[x_h | x_v] = C_hv (C_vv + ridge I)^-1 x_v`` (values are per-gene z-scores, mean 0).

    With a dataset's own covariance it is an in-dataset reference (it has seen every cell of
    that dataset; an scFM sees one cell at a time and never that dataset's statistics).

    Args:
        genes: the gene names (the rows of ``cov``).
        cov: ``[G, G]`` covariance of the values.
        ridge: added to the visible block's diagonal.
    """

    training = False

    def __init__(self, genes: Sequence[str], cov: np.ndarray, ridge: float = 0.1) -> None:
        self.vocab = {g: i for i, g in enumerate(genes)}
        self.cov, self.ridge = np.asarray(cov, dtype=np.float64), ridge

    def eval(self) -> GaussianConditional:
        return self

    def token_ids(self, genes: Sequence[str]) -> Tensor:
        return torch.tensor([self.vocab[g] for g in genes], dtype=torch.long)

    def predict(self, gene_ids: Tensor, values: Tensor, mask: Tensor) -> Tensor:
        out = torch.zeros_like(values)
        for b in range(gene_ids.shape[0]):
            idx, hidden = gene_ids[b].numpy(), mask[b].numpy()
            c = self.cov[np.ix_(idx, idx)]
            h, v = np.flatnonzero(hidden), np.flatnonzero(~hidden)
            cvv = c[np.ix_(v, v)] + self.ridge * np.eye(len(v))
            pred = c[np.ix_(h, v)] @ np.linalg.solve(cvv, values[b, v].double().numpy())
            out[b, h] = torch.from_numpy(pred).to(out.dtype)
        return out


class KnnReference:
    """scikit-learn's ``KNNImputer`` as a masked-value predictor: hidden values are the mean of
    the ``k`` donor cells nearest on the visible genes. Donors are another set of cells of the
    same dataset (an in-dataset reference, like :class:`GaussianConditional` on its own
    covariance; out of an scFM's reach).

    Args:
        donors: the donor cells (their ``values``).
        k: neighbours.
    """

    training = False

    def __init__(self, donors: ExpressionData, k: int = 10) -> None:
        from sklearn.impute import KNNImputer

        self.vocab = {g: i for i, g in enumerate(donors.genes)}
        self.donors = donors.values.astype(np.float64)
        self.imputer = KNNImputer(n_neighbors=k).fit(self.donors)

    def eval(self) -> KnnReference:
        return self

    def token_ids(self, genes: Sequence[str]) -> Tensor:
        return torch.tensor([self.vocab[g] for g in genes], dtype=torch.long)

    def predict(self, gene_ids: Tensor, values: Tensor, mask: Tensor) -> Tensor:
        out = torch.zeros_like(values)
        n = len(self.vocab)
        for b in range(gene_ids.shape[0]):
            row = np.full((1, n), np.nan)
            idx, shown = gene_ids[b].numpy(), ~mask[b].numpy()
            row[0, idx[shown]] = values[b, shown].double().numpy()
            out[b] = torch.from_numpy(self.imputer.transform(row)[0, idx]).to(out.dtype)
        return out


def knn_reference_score(data: ExpressionData, seed: int = 0, k: int = 10) -> float:
    """Masked variance explained by :class:`KnnReference` on half of ``data``'s cells, the
    other half the donors.

    Returns:
        The figure (as :func:`masked_variance_explained`).
    """
    perm = np.random.default_rng(seed).permutation(data.n_cells)
    half = data.n_cells // 2
    donors, scored = data.cell_subset(perm[:half]), data.cell_subset(perm[half:])
    return masked_variance_explained(KnnReference(donors, k), [scored], seed=seed)


def pooled_covariance(datasets: Sequence[ExpressionData], genes: Sequence[str]) -> np.ndarray:
    """Each gene pair's mean product of values over the cells of every dataset measuring both
    (0 for pairs never measured together; 1 on the diagonal): what a linear model can carry
    from a corpus to a dataset it never saw.

    Args:
        datasets: the corpus (values are per-gene z-scores).
        genes: the rows and columns of the result (every dataset's genes among them).

    Returns:
        ``[G, G]`` matrix.
    """
    pos = {g: i for i, g in enumerate(genes)}
    total = np.zeros((len(genes), len(genes)))
    count = np.zeros((len(genes), len(genes)))
    for data in datasets:
        idx = np.array([pos[g] for g in data.genes])
        x = data.values.astype(np.float64)
        total[np.ix_(idx, idx)] += x.T @ x
        count[np.ix_(idx, idx)] += data.n_cells
    cov = np.where(count > 0, total / np.maximum(count, 1), 0.0)
    np.fill_diagonal(cov, 1.0)
    return cov


def corpus_linear_reference(
    corpus: Sequence[ExpressionData],
    genes: Sequence[str],
    validation: Sequence[ExpressionData],
    ridges: Sequence[float] = (0.3, 1.0, 3.0, 10.0),
    seed: int = 0,
) -> tuple[GaussianConditional, float]:
    """:class:`GaussianConditional` on the corpus's :func:`pooled_covariance`, its ridge the
    best of ``ridges`` on ``validation`` (masked variance explained).

    Returns:
        ``(predictor, its ridge)``.
    """
    cov = pooled_covariance(corpus, genes)
    scored = [
        (masked_variance_explained(GaussianConditional(genes, cov, r), validation, seed=seed), r)
        for r in ridges
    ]
    ridge = max(scored)[1]
    return GaussianConditional(genes, cov, ridge), ridge


def pretrain_summary(
    model: Any,
    train: ExpressionData,
    held_out: Sequence[ExpressionData],
    validation: Sequence[ExpressionData],
    seed: int,
    trace: dict[str, Any],
    corpus: Sequence[ExpressionData] = (),
    also: Sequence[ExpressionData] = (),
) -> dict[str, Any]:
    """The scFM's pretraining figures: losses, the validation curve and the chosen step, masked
    variance explained (half of each cell's genes hidden) pooled over ``held_out`` and per
    dataset, and two linear references per held-out dataset: one fitted on that dataset's own
    cells (:class:`GaussianConditional` on its covariance; out of the scFM's reach) and one
    that, like the scFM, knows only the pretraining ``corpus``
    (:func:`corpus_linear_reference`, ridge chosen on ``validation``).

    Args:
        model: the scFM.
        train: the translator's training dataset (its cells were pretrained on).
        held_out: the scored datasets whose cells the scFM never saw.
        validation: the datasets that chose the checkpoint.
        seed: the masks' draws.
        trace: ``losses``, and ``curve`` / ``best_step`` from :class:`Selection` if any.
        corpus: the pretraining datasets (no corpus reference without them or validation).
        also: datasets reported one by one but kept out of the pooled figure (krumsiek11's
            scored cells: its other cells were pretrained on).

    Returns:
        ``pretrain.*`` metrics (and ``losses`` / ``val_curve`` lists for the plots).
    """
    losses = list(trace.get("losses", []))
    out: dict[str, Any] = {"losses": losses, "val_curve": list(trace.get("curve", []))}
    if losses:
        out["pretrain.loss_first"] = float(np.mean(losses[:20]))
        out["pretrain.loss_last"] = float(np.mean(losses[-50:]))
    if "best_step" in trace and validation:
        out["pretrain.best_step"] = int(trace["best_step"])
    ve = partial(masked_variance_explained, seed=seed)
    out["pretrain.variance_explained"] = ve(model, held_out)
    for data in (train, *held_out, *also, *validation):
        out[f"pretrain.variance_explained.{data.name}"] = ve(model, [data])
    if validation:
        out["pretrain.variance_explained_validation"] = ve(model, validation)
    for data in (*held_out, *also):
        ref = GaussianConditional(data.genes, np.cov(data.values.T))
        out[f"pretrain.variance_explained_in_dataset_linear.{data.name}"] = ve(ref, [data])
        out[f"pretrain.variance_explained_in_dataset_knn.{data.name}"] = knn_reference_score(
            data, seed
        )
    if corpus and validation:
        scored = (*held_out, *also)
        genes = list(dict.fromkeys(g for d in (*corpus, *scored, *validation) for g in d.genes))
        prior, ridge = corpus_linear_reference(corpus, genes, validation, seed=seed)
        out["pretrain.corpus_linear_ridge"] = ridge
        out["pretrain.variance_explained_corpus_linear"] = ve(prior, held_out)
        for data in scored:
            out[f"pretrain.variance_explained_corpus_linear.{data.name}"] = ve(prior, [data])
    return out

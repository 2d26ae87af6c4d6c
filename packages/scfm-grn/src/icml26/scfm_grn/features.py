"""Inter-gene features read out of a frozen scFM: the paper's two methods and three
scFM baselines.

Query layout (shared by all perturbation reads). To read gene ``j``'s response to source
gene ``i``, ``j`` must be hidden (masked) so the model predicts it rather than copies it. For
every source ``i`` the other genes are split into ``K = mask_groups`` fixed groups; sequence
``(i, k)`` hides group ``k`` (never ``i``) and shows everything else. Every ordered pair
``(i, j)`` is read in exactly one sequence, and one forward pass reads ``G / K`` targets.

* **Virtual Value Perturbation** (:func:`virtual_value_perturbation`): gene ``i`` set to
  ``M`` values ``v_1 < ... < v_M``, every other visible gene at the shared virtual baseline
  ``b``; the feature is the response curve ``out_j(v_m) - mean_m out_j(v_m)`` (``[G, G, M]``).
* **Gradient Trajectory** (:func:`gradient_trajectory`): all genes at baseline level
  ``b_t`` (``t = 1..T``); the feature is ``d out_j / d v_i`` at each level (``[G, G, T]``),
  by forward-mode AD (one ``torch.func.jvp`` per sequence, tangent ``e_i``) or reverse-mode
  (``torch.func.jacrev``), chosen by ``mode``.
* Baselines: :func:`attention_scores` (mean attention of ``j`` on ``i`` over real cells),
  :func:`zero_out_scores` (in-silico knock-out: ``|mean_cells (out_j(x_i -> min) - out_j(x))|``),
  :func:`embedding_scores` (cosine of mean contextual gene embeddings).

All return ``[G, G]`` (source, target) or ``[G, G, F]`` arrays; the diagonal is unused.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from numpy.typing import NDArray
from torch import Tensor

from icml26.scfm_grn.data import ExpressionData
from icml26.scfm_grn.model import CellModel

__all__ = [
    "attention_scores",
    "embedding_scores",
    "gradient_trajectory",
    "query_layout",
    "virtual_value_perturbation",
    "zero_out_scores",
]


def _ids(model: CellModel, genes: Sequence[str]) -> Tensor:
    missing = [g for g in genes if g not in model.vocab]
    if missing:
        raise KeyError(f"genes outside the scFM's vocabulary: {', '.join(missing[:10])}")
    return torch.tensor([model.vocab[g] for g in genes], dtype=torch.long)


def _device(model: CellModel) -> torch.device:
    params = getattr(model, "parameters", None)
    if callable(params):
        for p in params():
            return p.device
    return torch.device("cpu")


def query_layout(
    n_genes: int, mask_groups: int, seed: int = 0, sources: Sequence[int] | None = None
) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """``(source, mask)``: one row per sequence ``(i, k)``; ``mask[r, j]`` hides target ``j``.

    Args:
        n_genes: the genes in each sequence.
        mask_groups: ``K``, the target groups per source.
        seed: the grouping's seed.
        sources: the source genes read (default: all); TF -> gene candidates read only TFs.

    Returns:
        Every ordered pair ``i != j`` with ``i`` among ``sources`` is hidden in exactly one
        row whose source is ``i``.
    """
    if n_genes < 2:
        raise ValueError("need at least two genes")
    k = max(1, min(mask_groups, n_genes - 1))
    group = np.empty(n_genes, dtype=np.int64)
    group[np.random.default_rng(seed).permutation(n_genes)] = np.arange(n_genes) % k
    src_list, masks = [], []
    idx = np.arange(n_genes)
    for i in range(n_genes) if sources is None else sources:
        if not 0 <= i < n_genes:
            raise ValueError(f"source index {i} outside [0, {n_genes})")
        for g in range(k):
            m = (group == g) & (idx != i)
            if m.any():
                src_list.append(i)
                masks.append(m)
    return np.array(src_list, dtype=np.int64), np.stack(masks)


def _scatter(
    out: NDArray[np.float32],
    src: NDArray[np.int64],
    masks: NDArray[np.bool_],
    sources: Sequence[int] | None,
    n_genes: int,
) -> NDArray[np.float32]:
    """Rows ``[R, L, G]`` into ``[S, G, L]`` (S = len(sources) or G), unread pairs 0."""
    row_of = {int(i): r for r, i in enumerate(range(n_genes) if sources is None else sources)}
    feats = np.zeros((len(row_of), n_genes, out.shape[1]), dtype=np.float32)
    for r, (i, m) in enumerate(zip(src, masks, strict=True)):
        feats[row_of[int(i)], m] = out[r][:, m].T
    return feats


def _chunks(n: int, size: int) -> list[slice]:
    return [slice(s, min(s + size, n)) for s in range(0, n, size)]


@torch.no_grad()
def _predict(model: CellModel, ids: Tensor, values: Tensor, mask: Tensor, chunk: int) -> Tensor:
    dev = _device(model)
    out = [
        model.predict(ids[s].to(dev), values[s].to(dev), mask[s].to(dev)).float().cpu()
        for s in _chunks(values.shape[0], chunk)
    ]
    return torch.cat(out)


def virtual_value_perturbation(
    model: CellModel,
    genes: Sequence[str],
    *,
    levels: Sequence[float] = tuple(np.linspace(-2.0, 2.0, 8)),
    baseline: float = 0.0,
    mask_groups: int = 2,
    chunk: int = 512,
    seed: int = 0,
    sources: Sequence[int] | None = None,
) -> NDArray[np.float32]:
    """Virtual Value Perturbation response curves, centred over the ``M`` values.

    Args:
        model: the frozen scFM.
        genes: the genes of every sequence (in the model's vocabulary).
        levels: the ``M`` values gene ``i`` is set to.
        baseline: the shared virtual baseline of every other visible gene.
        mask_groups: ``K`` (see :func:`query_layout`).
        chunk: sequences per forward pass.
        seed: the layout's seed.
        sources: read only these source genes (indices; TF -> gene candidates).

    Returns:
        ``[S, G(target), M]`` with ``S = G`` (or ``len(sources)``).
    """
    g = len(genes)
    src, masks = query_layout(g, mask_groups, seed, sources)
    lv = torch.tensor(list(levels), dtype=torch.float32)
    m_levels = lv.numel()
    rows = src.size * m_levels
    values = torch.full((rows, g), float(baseline))
    values[torch.arange(rows), torch.from_numpy(np.repeat(src, m_levels))] = lv.repeat(src.size)
    mask = torch.from_numpy(np.repeat(masks, m_levels, axis=0))
    ids = _ids(model, genes).expand(rows, -1)
    out = _predict(model, ids, values, mask, chunk).view(src.size, m_levels, g).numpy()
    feats = _scatter(out, src, masks, sources, g)
    feats -= feats.mean(axis=-1, keepdims=True)
    return feats


def _gt_rows(
    model: CellModel, ids: Tensor, values: Tensor, mask: Tensor, sources: Tensor, mode: str
) -> Tensor:
    """``d out / d v_source`` for each row: ``[R, G]``."""
    from torch.func import jacrev, jvp, vmap

    dev = _device(model)
    ids, values, mask, sources = ids.to(dev), values.to(dev), mask.to(dev), sources.to(dev)
    if mode == "jvp":
        tangent = torch.zeros_like(values)
        tangent[torch.arange(values.shape[0], device=dev), sources] = 1.0

        def f(v: Tensor) -> Tensor:
            return model.predict(ids, v, mask)

        dout = jvp(f, (values,), (tangent,))[1]
        return dout.detach().float().cpu()
    if mode == "jacrev":

        def one(v: Tensor, i: Tensor, m: Tensor) -> Tensor:
            return model.predict(i.unsqueeze(0), v.unsqueeze(0), m.unsqueeze(0)).squeeze(0)

        jac = vmap(jacrev(one, argnums=0))(values, ids, mask)  # [R, G_out, G_in]
        rows = torch.arange(values.shape[0], device=dev)
        return jac[rows, :, sources].detach().float().cpu()
    raise ValueError(f"mode must be 'jvp' or 'jacrev', got {mode!r}")


def gradient_trajectory(
    model: CellModel,
    genes: Sequence[str],
    *,
    levels: Sequence[float] = tuple(np.linspace(-1.5, 1.5, 8)),
    mask_groups: int = 2,
    mode: str = "jvp",
    chunk: int = 256,
    seed: int = 0,
    sources: Sequence[int] | None = None,
) -> NDArray[np.float32]:
    """Gradient Trajectory: ``d out_j / d v_i`` with every gene at each baseline level.

    Args:
        model: the frozen scFM (differentiable in its input values).
        genes: the genes of every sequence.
        levels: the ``T`` baseline levels.
        mask_groups: ``K`` (see :func:`query_layout`).
        mode: ``"jvp"`` (forward mode) or ``"jacrev"`` (reverse mode).
        chunk: sequences per pass.
        seed: the layout's seed.
        sources: read only these source genes.

    Returns:
        ``[S, G(target), T]``.

    Raises:
        ValueError: an unknown mode.
        TypeError: a model whose outputs are not differentiable in its values (e.g.
            Geneformer's rank encoding): Gradient Trajectory cannot be defined for it.
    """
    if mode not in ("jvp", "jacrev"):
        raise ValueError(f"mode must be 'jvp' or 'jacrev', got {mode!r}")
    if getattr(model, "differentiable", True) is False:
        raise TypeError(
            f"{type(model).__name__} is not differentiable in its input values: Gradient "
            "Trajectory needs a value encoder (use Virtual Value Perturbation)"
        )
    g = len(genes)
    src, masks = query_layout(g, mask_groups, seed, sources)
    lv = torch.tensor(list(levels), dtype=torch.float32)
    t_levels = lv.numel()
    rows = src.size * t_levels
    values = lv.repeat(src.size).unsqueeze(1).expand(rows, g).contiguous()
    mask = torch.from_numpy(np.repeat(masks, t_levels, axis=0))
    srcs = torch.from_numpy(np.repeat(src, t_levels))
    ids = _ids(model, genes).expand(rows, -1)
    parts = [
        _gt_rows(model, ids[s], values[s], mask[s], srcs[s], mode)
        for s in _chunks(rows, chunk if mode == "jvp" else max(1, chunk // 16))
    ]
    out = torch.cat(parts).view(src.size, t_levels, g).numpy()
    return _scatter(out, src, masks, sources, g)


def _cells(data: ExpressionData, n: int, seed: int) -> NDArray[np.int64]:
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(data.n_cells, size=min(n, data.n_cells), replace=False))


@torch.no_grad()
def attention_scores(
    model: CellModel, data: ExpressionData, *, n_cells: int = 64, chunk: int = 64, seed: int = 0
) -> NDArray[np.float32]:
    """Mean attention of target ``j`` (query) on source ``i`` (key): ``[G(source), G(target)]``."""
    attn = getattr(model, "attention", None)
    if attn is None:
        raise TypeError("this scFM exposes no attention(); the attention baseline needs it")
    cells = _cells(data, n_cells, seed)
    values = torch.from_numpy(data.values[cells])
    ids = _ids(model, data.genes).expand(len(cells), -1)
    mask = torch.zeros_like(values, dtype=torch.bool)
    dev = _device(model)
    total = torch.zeros(data.n_genes, data.n_genes)
    for s in _chunks(len(cells), chunk):
        total += attn(ids[s].to(dev), values[s].to(dev), mask[s].to(dev)).float().sum(0).cpu()
    return (total / len(cells)).T.numpy()


@torch.no_grad()
def embedding_scores(
    model: CellModel, data: ExpressionData, *, n_cells: int = 64, chunk: int = 64, seed: int = 0
) -> NDArray[np.float32]:
    """Cosine similarity of genes' mean contextual embeddings (symmetric)."""
    embed = getattr(model, "embed", None)
    if embed is None:
        raise TypeError("this scFM exposes no embed(); the embedding baseline needs it")
    cells = _cells(data, n_cells, seed)
    values = torch.from_numpy(data.values[cells])
    ids = _ids(model, data.genes).expand(len(cells), -1)
    mask = torch.zeros_like(values, dtype=torch.bool)
    dev = _device(model)
    total = None
    for s in _chunks(len(cells), chunk):
        e = embed(ids[s].to(dev), values[s].to(dev), mask[s].to(dev)).float().sum(0).cpu()
        total = e if total is None else total + e
    assert total is not None
    e = torch.nn.functional.normalize(total, dim=-1)
    return (e @ e.T).numpy()


def zero_out_scores(
    model: CellModel,
    data: ExpressionData,
    *,
    n_cells: int = 16,
    mask_groups: int = 2,
    chunk: int = 512,
    seed: int = 0,
) -> NDArray[np.float32]:
    """In-silico knock-out: ``|mean_cells (out_j | x_i at its lowest value) - (out_j | x)|``.

    The lowest observed normalised value is what a zero count maps to."""
    g = data.n_genes
    cells = _cells(data, n_cells, seed)
    real = torch.from_numpy(data.values[cells])  # [C, G]
    low = torch.from_numpy(data.values.min(axis=0))
    src, masks = query_layout(g, mask_groups, seed)
    n_rows = src.size
    c = len(cells)
    values = real.unsqueeze(0).expand(n_rows, c, g).reshape(-1, g)
    mask = torch.from_numpy(np.repeat(masks, c, axis=0))
    knocked = values.clone()
    rows = torch.arange(values.shape[0])
    sources = torch.from_numpy(np.repeat(src, c))
    knocked[rows, sources] = low[sources]
    ids = _ids(model, data.genes).expand(values.shape[0], -1)
    change = _predict(model, ids, knocked, mask, chunk) - _predict(model, ids, values, mask, chunk)
    delta = change.view(n_rows, c, g).mean(dim=1).abs().numpy()
    scores = np.zeros((g, g), dtype=np.float32)
    for r, (i, m) in enumerate(zip(src, masks, strict=True)):
        scores[i, m] = delta[r, m]
    return scores

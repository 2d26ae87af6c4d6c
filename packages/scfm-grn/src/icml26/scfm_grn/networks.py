"""Gene regulatory networks: the ground truths of the benchmark.

* :func:`scale_free_universe` draws one large directed acyclic network (>= 500 genes) by
  preferential attachment on out-degree, so a few regulators (hubs, "TFs") drive many
  targets, as in real GRNs. It plays the genome: the scFM's vocabulary covers all its genes.
* :func:`subnetwork` cuts a connected sub-network out of it (the genes one dataset measures);
  edges are the universe's edges among those genes, so two datasets of the same genes agree.
* :func:`krumsiek11_network` reads the 30-edge signed coupling list of the Boolean myeloid
  model that ships with scanpy (``sim_models/krumsiek11.txt``).
* :func:`read_edge_list` reads a user's TSV (``source<TAB>target[<TAB>sign]``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "GeneNetwork",
    "krumsiek11_network",
    "read_edge_list",
    "scale_free_universe",
    "subnetwork",
]


@dataclass(frozen=True)
class GeneNetwork:
    """A directed, signed network over named genes.

    Attributes:
        genes: gene names (unique).
        edges: ``(source, target, weight)`` triples; ``weight``'s sign is the regulation's
            sign (+ activation, - repression), its magnitude SERGIO's interaction strength K.
    """

    genes: tuple[str, ...]
    edges: tuple[tuple[str, str, float], ...]
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(set(self.genes)) != len(self.genes):
            raise ValueError("gene names must be unique")
        index = {g: i for i, g in enumerate(self.genes)}
        object.__setattr__(self, "_index", index)
        unknown = sorted({g for s, t, _ in self.edges for g in (s, t) if g not in index})
        if unknown:
            raise ValueError(f"edges name genes not in the network: {', '.join(unknown[:10])}")

    @property
    def n_genes(self) -> int:
        return len(self.genes)

    def index(self, gene: str) -> int:
        return self._index[gene]

    def adjacency(self, genes: Sequence[str] | None = None) -> NDArray[np.int64]:
        """``A[i, j] = 1`` when ``genes[i] -> genes[j]`` is an edge (self-loops dropped)."""
        genes = self.genes if genes is None else tuple(genes)
        pos = {g: i for i, g in enumerate(genes)}
        a = np.zeros((len(genes), len(genes)), dtype=np.int64)
        for s, t, _ in self.edges:
            if s in pos and t in pos and s != t:
                a[pos[s], pos[t]] = 1
        return a

    def restrict(self, genes: Iterable[str]) -> GeneNetwork:
        """The induced sub-network on ``genes`` (kept in the given order)."""
        keep = tuple(genes)
        chosen = set(keep)
        return GeneNetwork(keep, tuple(e for e in self.edges if e[0] in chosen and e[1] in chosen))

    def regulators(self) -> dict[str, list[tuple[str, float]]]:
        """``target -> [(regulator, weight), ...]``."""
        out: dict[str, list[tuple[str, float]]] = {g: [] for g in self.genes}
        for s, t, w in self.edges:
            out[t].append((s, w))
        return out


def scale_free_universe(
    n_genes: int = 600,
    *,
    n_masters: int = 30,
    max_regulators: int = 3,
    repression: float = 0.3,
    seed: int = 0,
) -> GeneNetwork:
    """A scale-free DAG: gene ``t`` picks 1..``max_regulators`` earlier genes with probability
    proportional to (out-degree + 1); the first ``n_masters`` genes have no regulator.

    Interaction strengths K are drawn in [1, 5] (SERGIO's range), negative with probability
    ``repression``.
    """
    if n_genes < 2 or not 1 <= n_masters < n_genes or max_regulators < 1:
        raise ValueError("need n_genes >= 2, 1 <= n_masters < n_genes, max_regulators >= 1")
    if not 0.0 <= repression <= 1.0:
        raise ValueError("repression must be a probability")
    rng = np.random.default_rng(seed)
    genes = tuple(f"G{i:04d}" for i in range(n_genes))
    out_degree = np.zeros(n_genes)
    edges: list[tuple[str, str, float]] = []
    for t in range(n_masters, n_genes):
        n_reg = int(rng.integers(1, max_regulators + 1))
        weights = out_degree[:t] + 1.0
        regs = rng.choice(t, size=min(n_reg, t), replace=False, p=weights / weights.sum())
        for r in regs:
            k = float(rng.uniform(1.0, 5.0))
            edges.append((genes[r], genes[t], -k if rng.random() < repression else k))
            out_degree[r] += 1
    return GeneNetwork(genes, tuple(edges))


def subnetwork(
    universe: GeneNetwork,
    size: int,
    *,
    exclude: Iterable[str] = (),
    seed: int = 0,
) -> GeneNetwork:
    """A connected sub-network of ``size`` genes, grown breadth-first (both edge directions)
    from a random hub, never using a gene in ``exclude``."""
    banned = set(exclude)
    rng = np.random.default_rng(seed)
    neighbours: dict[str, list[str]] = {g: [] for g in universe.genes}
    for s, t, _ in universe.edges:
        neighbours[s].append(t)
        neighbours[t].append(s)
    allowed = [g for g in universe.genes if g not in banned]
    if len(allowed) < size:
        raise ValueError(f"only {len(allowed)} genes are left for a sub-network of {size}")
    degree = np.array([len(neighbours[g]) for g in allowed], dtype=float)
    chosen: list[str] = []
    seen: set[str] = set()
    while len(chosen) < size:
        free = [i for i, g in enumerate(allowed) if g not in seen]
        p = degree[free] + 1.0
        start = allowed[free[int(rng.choice(len(free), p=p / p.sum()))]]
        queue = deque([start])
        seen.add(start)
        while queue and len(chosen) < size:
            g = queue.popleft()
            chosen.append(g)
            nxt = [n for n in neighbours[g] if n not in seen and n not in banned]
            rng.shuffle(nxt)
            for n in nxt:
                seen.add(n)
                queue.append(n)
    order = sorted(chosen, key=universe.index)  # keep the universe's topological order
    return universe.restrict(order)


def _scanpy_file(*parts: str) -> Path:
    import scanpy

    path = Path(scanpy.__file__).parent.joinpath(*parts)
    if not path.is_file():
        raise FileNotFoundError(f"scanpy does not ship {path} (is scanpy installed fully?)")
    return path


def krumsiek11_network() -> GeneNetwork:
    """The Krumsiek et al. (2011) myeloid network: 11 genes, 30 signed couplings.

    scanpy's file lists ``target regulator weight``; self-couplings (4 of them) are kept
    here and dropped by :meth:`GeneNetwork.adjacency`, leaving 26 directed pairs to score.
    """
    lines = _scanpy_file("sim_models", "krumsiek11.txt").read_text().splitlines()
    genes: list[str] = []
    edges: list[tuple[str, str, float]] = []
    in_couplings = False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("# coupling list"):
            in_couplings = True
            continue
        if not stripped or stripped.startswith("#"):
            continue
        if not in_couplings and "=" in stripped:
            genes.append(stripped.split("=", 1)[0].strip())
        elif in_couplings:
            target, regulator, weight = stripped.split()
            edges.append((regulator, target, float(weight)))
    return GeneNetwork(tuple(genes), tuple(edges))


def read_edge_list(path: str | Path, genes: Sequence[str]) -> GeneNetwork:
    """A TSV edge list ``source<TAB>target[<TAB>sign]`` over ``genes`` (a header line whose
    first field is ``source`` is skipped).

    Raises:
        FileNotFoundError: no such file.
        ValueError: a malformed line, or an edge naming a gene absent from ``genes``.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"edge list {path} does not exist")
    known = set(genes)
    edges: list[tuple[str, str, float]] = []
    unknown: set[str] = set()
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.rstrip("\n").split("\t")
        if lineno == 1 and fields[0].strip().lower() == "source":
            continue
        if len(fields) not in (2, 3):
            raise ValueError(f"{path}:{lineno}: expected 2 or 3 tab-separated fields")
        src, tgt = fields[0].strip(), fields[1].strip()
        try:
            sign = float(fields[2]) if len(fields) == 3 and fields[2].strip() else 1.0
        except ValueError as exc:
            raise ValueError(f"{path}:{lineno}: sign {fields[2]!r} is not a number") from exc
        unknown.update(g for g in (src, tgt) if g not in known)
        edges.append((src, tgt, sign))
    if unknown:
        raise ValueError(
            f"{path} names genes that are not in the expression data: "
            f"{', '.join(sorted(unknown)[:10])}"
        )
    if not edges:
        raise ValueError(f"{path} holds no edges")
    return GeneNetwork(tuple(genes), tuple(edges))

"""Single-cell expression from a known network with SERGIO (Dibaeinia & Sinha 2020), through
its Rust port ``sergio-rs``.

SERGIO integrates a chemical Langevin equation per gene: a target's production rate is a sum
of Hill functions of its regulators' expression (strength K, coefficient n, half-response h),
master regulators are produced at a cell-type-specific basal rate, and every gene decays.
Technical noise (outliers, library size, dropout) is then added with one of SERGIO's DS
presets. Output is deterministic from the seed and cached on disk.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from icml26.scfm_grn.networks import GeneNetwork

__all__ = ["NOISE_PRESETS", "SimulationSpec", "cache_dir", "simulate"]

#: ``"none"`` = SERGIO's clean steady-state expression; ``DSk`` = SERGIO's technical noise
#: settings (outliers, library size, dropout) as shipped by sergio-rs.
NOISE_PRESETS = ("none", "DS1", "DS2", "DS3", "DS4", "DS5", "DS6", "DS7", "DS8", "DS13", "DS14")


@dataclass(frozen=True)
class SimulationSpec:
    """How to simulate one dataset from a network."""

    n_cell_types: int = 3
    cells_per_type: int = 100
    noise: str = "none"
    hill: int = 2
    decay: float = 0.8
    noise_s: int = 1
    dt: float = 0.01
    safety_iter: int = 150
    scale_iter: int = 10
    seed: int = 0

    def __post_init__(self) -> None:
        if self.noise not in NOISE_PRESETS:
            raise ValueError(f"noise must be one of {', '.join(NOISE_PRESETS)}, got {self.noise!r}")
        if self.n_cell_types < 1 or self.cells_per_type < 1:
            raise ValueError("need n_cell_types >= 1 and cells_per_type >= 1")
        if self.noise_s < 0:
            raise ValueError("noise_s must be >= 0")
        if self.hill < 1 or self.decay <= 0 or self.dt <= 0:
            raise ValueError("hill must be >= 1, decay and dt > 0")


def cache_dir() -> Path:
    """``$ICML26_CACHE/scfm-grn`` or ``$XDG_CACHE_HOME/icml26/scfm-grn`` (``~/.cache``)."""
    root = os.environ.get("ICML26_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "icml26"
    )
    return Path(root) / "scfm-grn"


def _key(network: GeneNetwork, spec: SimulationSpec) -> str:
    blob = json.dumps(
        {"genes": network.genes, "edges": network.edges, "spec": spec.__dict__, "v": 1},
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def simulate(
    network: GeneNetwork, spec: SimulationSpec, *, cache: Path | bool | None = True
) -> NDArray[np.float64]:
    """Simulated expression, shape ``[cells, genes]`` in ``network.genes`` order.

    Args:
        network: the ground truth; must be acyclic (SERGIO's steady-state ordering).
        spec: simulation settings.
        cache: ``True`` = :func:`cache_dir`, a folder, or ``False``/``None`` = no cache.
    """
    folder = cache_dir() if cache is True else (Path(cache) if cache else None)
    path = folder / f"sergio-{_key(network, spec)}.npy" if folder else None
    if path is not None and path.is_file():
        return np.load(path)
    import sergio_rs

    grn = sergio_rs.GRN()
    nodes = {g: sergio_rs.Gene(g, spec.decay) for g in network.genes}
    for src, tgt, weight in network.edges:
        if src == tgt:
            raise ValueError(f"SERGIO needs an acyclic network; {src} regulates itself")
        grn.add_interaction(nodes[src], nodes[tgt], float(weight), None, int(spec.hill))
    grn.set_mrs()
    profile = sergio_rs.MrProfile.from_random(
        grn, spec.n_cell_types, (0.2, 1.0), (1.0, 3.0), spec.seed
    )
    sim = sergio_rs.Sim(
        grn,
        num_cells=spec.cells_per_type,
        safety_iter=spec.safety_iter,
        scale_iter=spec.scale_iter,
        dt=spec.dt,
        noise_s=spec.noise_s,
        seed=spec.seed,
    )
    frame = sim.simulate(profile)
    names = frame.get_column(frame.columns[0]).to_list()
    expr = frame.drop(frame.columns[0]).to_numpy().astype(np.float64)  # [genes, cells]
    row = {g: i for i, g in enumerate(names)}
    missing = [g for g in network.genes if g not in row]
    if missing:  # isolated genes (no edge) are not simulated by SERGIO: they stay at zero
        expr = np.vstack([expr, np.zeros((1, expr.shape[1]))])
        row.update({g: expr.shape[0] - 1 for g in missing})
    expr = expr[[row[g] for g in network.genes]]
    if spec.noise != "none":
        setting = getattr(sergio_rs.NoiseSetting, spec.noise)
        expr = np.asarray(sergio_rs.add_technical_noise(expr, setting, spec.seed), dtype=float)
    out = np.ascontiguousarray(expr.T)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp.npy")
        np.save(tmp, out)
        os.replace(tmp, path)
    return out

"""RO-HNN: reduced-order Hamiltonian neural networks in JAX + Flax NNX.

A symplectic autoencoder (cotangent lift of a biorthogonal embedding, exact by construction,
trained by Riemannian optimisation) maps a high-dimensional phase space to a low-dimensional
symplectic submanifold, on which a geometric Hamiltonian neural network (SPD inverse mass,
optional SPD damping) is integrated by Strang-split Störmer-Verlet.

Heavy modules (jax) are imported lazily: ``import icml26.ro_hnn`` stays light.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from icml26.ro_hnn.config import MODELS, SYSTEM_NAMES, Architecture, BenchConfig, RunConfig

try:
    __version__ = version("icml26-ro-hnn")
except PackageNotFoundError:  # pragma: no cover - source tree
    __version__ = "0+unknown"

_LAZY = {
    "SymplecticAutoencoder": "autoencoder",
    "PSDAutoencoder": "autoencoder",
    "MLPAutoencoder": "autoencoder",
    "psd_basis": "autoencoder",
    "symplecticity_defect": "autoencoder",
    "GeometricHNN": "hamiltonian",
    "PlainHNN": "hamiltonian",
    "NeuralODE": "hamiltonian",
    "stormer_verlet_step": "integrators",
    "strang_step": "integrators",
    "rk4_step": "integrators",
    "rollout": "integrators",
    "ReducedModel": "models",
    "build_model": "models",
    "Trainer": "train",
    "TrainSettings": "train",
    "evaluate_model": "evaluate",
    "FPUTChain": "systems",
    "WaveEquation": "systems",
    "DampedCloth": "systems",
    "make_system": "systems",
    "simulate": "systems",
    "Trajectories": "data",
    "load_trajectories": "data",
    "save_trajectories": "data",
    "make_dataset": "data",
    "dataset_from_trajectories": "data",
}

__all__ = ["MODELS", "SYSTEM_NAMES", "Architecture", "BenchConfig", "RunConfig", *sorted(_LAZY)]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"icml26.ro_hnn.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'icml26.ro_hnn' has no attribute {name!r}")

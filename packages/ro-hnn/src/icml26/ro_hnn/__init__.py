"""RO-HNN: reduced-order Hamiltonian neural networks in JAX + Flax NNX (float64, context-local).

A symplectic autoencoder (cotangent lift of a deep biorthogonal embedding, exact by
construction, trained by Riemannian optimisation) maps a high-dimensional phase space to a
low-dimensional symplectic submanifold, on which a geometric Hamiltonian neural network (SPD
inverse mass, optional SPD damping) is integrated by Strang-split Störmer-Verlet::

    from icml26.ro_hnn import Architecture, Trainer, TrainSettings, build_model, fit_reduction

Names are imported lazily: ``import icml26.ro_hnn`` does not import JAX.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from icml26.shared.exports import lazy_exports

if TYPE_CHECKING:
    from .autoencoder import SymplecticAutoencoder as SymplecticAutoencoder
    from .autoencoder import psd_basis as psd_basis
    from .config import Architecture as Architecture
    from .config import RunConfig as RunConfig
    from .data import Trajectories as Trajectories
    from .data import fit_reduction as fit_reduction
    from .data import load_trajectories as load_trajectories
    from .data import make_dataset as make_dataset
    from .evaluate import evaluate_model as evaluate_model
    from .hamiltonian import GeometricHNN as GeometricHNN
    from .models import ReducedModel as ReducedModel
    from .models import build_model as build_model
    from .systems import make_system as make_system
    from .train import Trainer as Trainer
    from .train import TrainSettings as TrainSettings
    from .train import make_optimizer as make_optimizer

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "SymplecticAutoencoder": ".autoencoder",
        "psd_basis": ".autoencoder",
        "Architecture": ".config",
        "RunConfig": ".config",
        "Trajectories": ".data",
        "fit_reduction": ".data",
        "load_trajectories": ".data",
        "make_dataset": ".data",
        "evaluate_model": ".evaluate",
        "GeometricHNN": ".hamiltonian",
        "ReducedModel": ".models",
        "build_model": ".models",
        "make_system": ".systems",
        "Trainer": ".train",
        "TrainSettings": ".train",
        "make_optimizer": ".train",
    },
    submodules=["autoencoder", "data", "hamiltonian", "integrators", "manifolds", "systems"],
)

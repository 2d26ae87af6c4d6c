"""Test setup: float64 JAX on one CPU thread, quiet logs, and a tiny trained RO-HNN shared by tests."""

from __future__ import annotations

import os

# One CPU thread; LLVM's cheap pipeline (compiles dominate these tests and their runtimes are
# tiny: -32% CPU on the evaluation tests, measured). Runs and users keep XLA's defaults.
os.environ.setdefault(
    "XLA_FLAGS",
    "--xla_cpu_multi_thread_eigen=false --xla_backend_optimization_level=0 "
    "--xla_llvm_disable_expensive_passes=true",
)
os.environ.setdefault("ICML26_QUIET", "1")

import jax
import numpy as np
import pytest

jax.config.update(
    "jax_enable_x64", True
)  # the package never needs it (its functions switch float64 on locally); many tests call helpers directly


def _persistent_compilation_cache() -> None:
    """JAX's persistent compilation cache in the user cache (``ICML26_JAX_CACHE`` overrides;
    ``off`` disables): compiles dominate these tests, and a second session (or a second xdist
    worker compiling the same function) reads them back instead of compiling again."""
    setting = os.environ.get("ICML26_JAX_CACHE", "")
    if setting == "off":
        return
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = setting or os.path.join(base, "icml26", "jax")
    os.makedirs(folder, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", folder)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)


_persistent_compilation_cache()

from icml26.ro_hnn.config import Architecture  # noqa: E402

TINY = Architecture(
    latent_dof=2,
    ae_hidden=(4,),
    hnn_hidden=(8,),
    node_hidden=(8,),
    ae_mlp_hidden=(8,),
    full_hidden=(8,),
    iterations=2,
)


@pytest.fixture(scope="session")
def tiny() -> Architecture:
    """Tiny model sizes for fast tests."""
    return TINY


@pytest.fixture(scope="session")
def fput_data():  # type: ignore[no-untyped-def]
    """A small FPUT dataset (n = 6) and its PSD basis."""
    from icml26.ro_hnn.autoencoder import psd_basis
    from icml26.ro_hnn.data import make_dataset
    from icml26.ro_hnn.systems import FPUTChain

    system = FPUTChain(n=6, modes=2)
    ds = make_dataset(system, n_train=4, n_test=2, horizon=4, seed=0)
    snaps = ds.train.x.reshape(-1, 2 * ds.n)
    basis = psd_basis(snaps[:, : ds.n], snaps[:, ds.n :], TINY.latent_dof, ds.q_ref)
    return system, ds, basis


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)

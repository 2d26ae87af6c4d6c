"""Test setup: JAX on one CPU thread, quiet logs, and shared jitted world functions."""

from __future__ import annotations

import os

os.environ.setdefault(
    "XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
)
os.environ.setdefault("ICML26_QUIET", "1")

from typing import Any

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """JAX's persistent compilation cache (the user cache, as the CLI uses): compiles dominate
    these tests on a CPU, and a warm cache makes a re-run cheap (a cold run compiles all)."""
    from icml26.dicode.training import setup_compilation_cache

    setup_compilation_cache("")


@pytest.fixture(scope="session")
def world_fns() -> dict[str, Any]:
    """``reset``, ``step`` and ``generate_map`` jitted once for the whole session."""
    import jax

    from icml26.dicode import world

    return {
        "reset": jax.jit(world.reset),
        "step": jax.jit(world.step),
        "generate_map": jax.jit(world.generate_map),
    }


@pytest.fixture(scope="session")
def small_ppo() -> Any:
    """PPO with the smoke profile's shapes (8 envs x 16 steps x 2 updates, 16 units), built
    once: its jitted functions are traced per instance, so tests share this one."""
    from icml26.dicode.paper import PROFILES
    from icml26.dicode.ppo import PPO
    from icml26.dicode.training import ppo_settings

    return PPO(ppo_settings(PROFILES["smoke"]))

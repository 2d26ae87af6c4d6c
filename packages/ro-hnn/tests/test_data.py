"""User trajectories (.npz), datasets, and config validation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from icml26.ro_hnn.config import Architecture, BenchConfig, RunConfig
from icml26.ro_hnn.data import (
    Trajectories,
    dataset_from_trajectories,
    load_trajectories,
    save_trajectories,
)


def _write(path: Path, **arrays: np.ndarray) -> Path:
    np.savez(path, **arrays)
    return path


def test_roundtrip_and_split(tmp_path: Path, rng: np.random.Generator) -> None:
    traj = Trajectories(rng.standard_normal((5, 31, 8)), 0.1)
    save_trajectories(tmp_path / "t.npz", traj)
    back = load_trajectories(tmp_path / "t.npz")
    np.testing.assert_array_equal(back.x, traj.x)
    assert back.dt == pytest.approx(0.1)
    ds = dataset_from_trajectories(back, n_test=2)
    assert ds.horizon == 3
    assert ds.train.x.shape == (3, 4, 8)
    assert ds.test.x.shape == (2, 31, 8)


def test_single_trajectory_file_is_accepted(tmp_path: Path) -> None:
    t = np.linspace(0, 1, 11)
    back = load_trajectories(
        _write(tmp_path / "one.npz", q=np.ones((11, 3)), p=np.zeros((11, 3)), t=t)
    )
    assert back.x.shape == (1, 11, 6)


@pytest.mark.parametrize(
    ("arrays", "message"),
    [
        ({"q": np.ones((2, 5, 3)), "p": np.ones((2, 5, 3))}, "lacks the arrays"),
        ({"q": np.ones((2, 5, 3)), "p": np.ones((2, 5, 2)), "t": np.arange(5.0)}, "same shape"),
        (
            {"q": np.ones((2, 5, 3)), "p": np.ones((2, 5, 3)), "t": np.arange(4.0)},
            "t must have shape",
        ),
        (
            {"q": np.ones((2, 5, 3)), "p": np.ones((2, 5, 3)), "t": np.array([0, 1, 2, 4, 5.0])},
            "uniform",
        ),
        ({"q": np.full((2, 5, 3), np.nan), "p": np.ones((2, 5, 3)), "t": np.arange(5.0)}, "NaN"),
    ],
)
def test_bad_files_raise_clear_errors(
    tmp_path: Path, arrays: dict[str, np.ndarray], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        load_trajectories(_write(tmp_path / "bad.npz", **arrays))


def test_missing_file_and_odd_dimension() -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_trajectories("/nonexistent/file.npz")
    with pytest.raises(ValueError, match="even"):
        Trajectories(np.ones((2, 5, 7)), 0.1)
    with pytest.raises(ValueError, match="21 time points"):
        dataset_from_trajectories(Trajectories(np.ones((3, 12, 4)), 0.1), n_test=1)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"systems": ("pendulum",)}, "unknown systems"),
        ({"models": ("rohnn", "lnn")}, "models must be"),
        ({"window": 30, "horizon": 20}, "window"),
        ({"steps": 0}, "steps must be >= 1"),
        ({"lr": -1.0}, "lr must be > 0"),
        ({"data_file": "traj.csv"}, ".npz"),
        ({"systems": (), "data_file": ""}, "nothing to run"),
        ({"fput_amplitude": 0.0}, "fput_amplitude"),
        ({"cloth_velocity": -0.1}, "cloth_velocity"),
        ({"cloth_dt": 0.0}, "cloth_dt"),
        ({"energy_models": ("rohnn_l2",)}, "energy_models"),
        ({"energy_models": ("lnn",)}, "energy_models"),
    ],
)
def test_bad_run_configs(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RunConfig(**kwargs)  # type: ignore[arg-type]


def test_bad_architecture_and_bench_configs() -> None:
    with pytest.raises(ValueError, match="latent_dof"):
        Architecture(latent_dof=0)
    with pytest.raises(ValueError, match="activation_c"):
        Architecture(activation_c=1.0)
    with pytest.raises(ValueError, match="sizes"):
        BenchConfig(sizes=(1,))

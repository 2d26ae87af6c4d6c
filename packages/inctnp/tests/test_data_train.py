from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from icml26.inctnp import (
    GPSource,
    ModelConfig,
    TabularSource,
    TrainConfig,
    build_model,
    load_csv_table,
    train,
)


def _csv(tmp_path: Path, rows: int = 60) -> Path:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(rows, 3))
    y = x[:, 0] - 2 * x[:, 1] + 0.1 * rng.normal(size=rows)
    path = tmp_path / "table.csv"
    lines = ["a,b,c,label,target"] + [
        f"{r[0]},{r[1]},{r[2]},row{i},{t}" for i, (r, t) in enumerate(zip(x, y, strict=True))
    ]
    path.write_text("\n".join(lines))
    return path


def test_csv_tables_and_their_errors(tmp_path: Path) -> None:
    path = _csv(tmp_path)
    x, _y, features = load_csv_table(path, "target")
    assert x.shape == (60, 3)
    assert features == ["a", "b", "c"]
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_csv_table(tmp_path / "nope.csv", "target")
    with pytest.raises(ValueError, match="target column 'y' is not in"):
        load_csv_table(path, "y")
    with pytest.raises(ValueError, match="not numeric"):
        load_csv_table(path, "label")


def test_tabular_tasks_keep_train_and_test_rows_apart(tmp_path: Path) -> None:
    src = TabularSource.from_csv(_csv(tmp_path), "target")
    assert not set(src.rows["train"]) & set(src.rows["test"])
    g = torch.Generator().manual_seed(0)
    tb = src.sample(4, 10, g, "test")
    assert tb.x.shape == (4, 10, 3)
    assert tb.y.shape == (4, 10, 1)
    with pytest.raises(ValueError, match="need at least 30"):
        src.sample(1, 30, g, "test")
    with pytest.raises(ValueError, match="NaN"):
        TabularSource(np.array([[np.nan]] * 10), np.zeros(10))


def test_training_reduces_loss_and_resumes(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = build_model(ModelConfig(width=32, layers=2, heads=4, causal=True))
    cfg = TrainConfig(steps=6, batch_size=4, n_points=16, checkpoint_every=3, warmup=2)
    losses = train(
        model,
        GPSource("rbf"),
        cfg,
        strategy="autoregressive",
        seed=0,
        checkpoint_dir=tmp_path,
        tag="m",
    )
    assert len(losses) == 6
    assert [p.name for p in tmp_path.iterdir()] == ["step_000000006.m.pt"]
    longer = TrainConfig(steps=9, batch_size=4, n_points=16, checkpoint_every=3, warmup=2)
    resumed = train(
        model,
        GPSource("rbf"),
        longer,
        strategy="autoregressive",
        seed=0,
        checkpoint_dir=tmp_path,
        tag="m",
    )
    assert resumed[:6] == losses
    assert len(resumed) == 9
    tnp = build_model(ModelConfig(width=32, layers=2, heads=4, causal=False))
    with pytest.raises(ValueError, match="needs a causal model"):
        train(tnp, GPSource("rbf"), cfg, strategy="autoregressive", seed=0)
    with pytest.raises(ValueError, match="min_ctx"):
        TrainConfig(n_points=8, min_ctx=8)

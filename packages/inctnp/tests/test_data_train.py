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


def _held_out_nll(model: torch.nn.Module, tb: object, n_ctx: int) -> float:
    """Mean Gaussian NLL of the targets of fixed held-out tasks given their first points."""
    from icml26.inctnp.train import gaussian_nll

    model.eval()
    with torch.no_grad():
        mean, std = model(tb.x[:, :n_ctx], tb.y[:, :n_ctx], tb.x[:, n_ctx:])  # type: ignore[attr-defined]
        nll = gaussian_nll(tb.y[:, n_ctx:], mean, std).mean()  # type: ignore[attr-defined]
    model.train()
    return float(nll)


def test_training_reduces_held_out_loss() -> None:
    """Forty steps cut the NLL of fixed held-out GP tasks by a clear margin (0.1 nats per
    point) below that of the freshly initialised model; the seed is the package default."""
    torch.manual_seed(0)
    model = build_model(ModelConfig(width=32, layers=2, heads=4, causal=True))
    held_out = GPSource("rbf").sample(32, 24, torch.Generator().manual_seed(123), "test")
    before = _held_out_nll(model, held_out, 12)
    cfg = TrainConfig(steps=40, batch_size=8, n_points=24, warmup=5, lr=1e-3)
    losses = train(model, GPSource("rbf"), cfg, strategy="autoregressive", seed=0)
    after = _held_out_nll(model, held_out, 12)
    assert np.isfinite(losses).all()
    assert after < before - 0.1, (before, after)


def test_training_resumes_from_its_checkpoint(tmp_path: Path) -> None:
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


def test_make_source_names_the_csv_form(tmp_path: Path) -> None:
    from icml26.inctnp.data import make_source

    path = _csv(tmp_path)
    for bad in (f"csv:{path}", "csv:", f"csv:{path}:"):
        with pytest.raises(ValueError, match="csv:PATH:TARGET"):
            make_source(bad)
    assert make_source(f"csv:{path}:target").rows["train"].size > 0

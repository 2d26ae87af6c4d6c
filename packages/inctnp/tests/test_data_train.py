from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from icml26.inctnp import ModelConfig, TrainConfig, build_model, train
from icml26.inctnp.data import GPSource, TabularSource, load_csv_table
from icml26.inctnp.training import autoregressive_loss, split_loss


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
    from icml26.inctnp.likelihood import gaussian_nll

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
    cfg = TrainConfig(max_steps=40, batch_size=8, n_points=24, warmup=5, lr=1e-3)
    losses = train(model, GPSource("rbf"), cfg, strategy="autoregressive", seed=0).losses
    after = _held_out_nll(model, held_out, 12)
    assert np.isfinite(losses).all()
    assert after < before - 0.1, (before, after)


def test_training_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = build_model(ModelConfig(width=32, layers=2, heads=4, causal=True))
    cfg = TrainConfig(max_steps=6, batch_size=4, n_points=16, checkpoint_every=3, warmup=2)
    losses = train(
        model,
        GPSource("rbf"),
        cfg,
        strategy="autoregressive",
        seed=0,
        checkpoint_dir=tmp_path,
        tag="m",
    ).losses
    assert len(losses) == 6
    assert [p.name for p in tmp_path.iterdir()] == ["step_000000006.m.pt"]
    longer = TrainConfig(max_steps=9, batch_size=4, n_points=16, checkpoint_every=3, warmup=2)
    resumed = train(
        model,
        GPSource("rbf"),
        longer,
        strategy="autoregressive",
        seed=0,
        checkpoint_dir=tmp_path,
        tag="m",
    ).losses
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


class _Recorder(torch.nn.Module):
    """Stands in for a model: records the masks it is called with."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[dict] = []

    def forward(self, xc, yc, xt, **kw):  # type: ignore[no-untyped-def]
        self.calls.append(kw)
        return torch.zeros(*xt.shape[:2], 1), torch.ones(*xt.shape[:2], 1)


def test_split_objective_draws_a_context_size_per_task_and_counts_its_targets() -> None:
    """TNP-D used to draw one context size per batch: every task now has its own (ragged
    contexts, padded and masked), and the targets are the points after each task's context."""
    rec = _Recorder()
    x, y = torch.randn(64, 20, 1), torch.randn(64, 20, 1)
    _, n_targets = split_loss(rec, x, y, torch.Generator().manual_seed(0), 1)
    mask = rec.calls[0]["context_mask"]
    lengths = mask.sum(1)
    assert len(set(lengths.tolist())) > 5  # many context sizes in one batch
    assert int(lengths.min()) >= 1
    assert int(lengths.max()) <= 19
    assert n_targets == int((~mask).sum()) == int((20 - lengths).sum())
    _, n_ar = autoregressive_loss(rec, x, y, torch.Generator().manual_seed(0), 1)
    assert n_ar == 64 * 19  # incTNP: every point after the first is a target


def test_early_stopping_and_the_target_budget_snapshot() -> None:
    """Training stops when the validation NLL has not improved by min_delta over `patience`
    evaluations; the budget snapshot is taken at the first step past the target budget."""
    torch.manual_seed(0)
    model = build_model(ModelConfig(width=16, layers=1, heads=2, causal=True))
    flat = iter([1.0, 0.9, 0.895, 0.899, 0.898] + [0.9] * 50)
    cfg = TrainConfig(
        max_steps=60,
        batch_size=2,
        n_points=8,
        warmup=1,
        eval_every=2,
        patience=3,
        min_delta=0.01,
        target_budget=2 * 7 * 5,
    )
    res = train(
        model, GPSource("rbf"), cfg, strategy="autoregressive", seed=0, val_nll=lambda m: next(flat)
    )
    assert res.converged
    # evaluations at steps 2 (1.0), 4 (0.9), then 6, 8, 10 without a 0.01 gain: stop at 10
    assert res.steps == 10
    assert [c["val_nll"] for c in res.curve] == [1.0, 0.9, 0.895, 0.899, 0.898]
    assert res.budget_reached
    assert res.budget_step == 5  # 14 targets per step: 70 reached at step 5
    assert res.targets_seen == 10 * 14
    with pytest.raises(ValueError, match="val_nll"):
        train(model, GPSource("rbf"), cfg, strategy="autoregressive", seed=0)


def test_evaluations_and_the_cap_run_on_targets_seen() -> None:
    """With ``eval_every_targets`` and ``max_targets`` the two objectives share one clock:
    TNP-D (about half the targets per step) takes more steps to the same cap, and both are
    evaluated after the same numbers of targets (so patience spans the same targets)."""
    curves = {}
    for strategy, causal in (("autoregressive", True), ("split", False)):
        torch.manual_seed(0)
        model = build_model(ModelConfig(width=16, layers=1, heads=2, causal=causal))
        cfg = TrainConfig(
            max_steps=1000,
            max_targets=8 * 15 * 12,
            batch_size=8,
            n_points=16,
            warmup=1,
            eval_every_targets=8 * 15 * 3,
            patience=100,
        )
        res = train(model, GPSource("rbf"), cfg, strategy=strategy, seed=0, val_nll=lambda m: 1.0)
        assert res.targets_seen >= cfg.max_targets
        assert not res.converged
        curves[strategy] = res
    inc, tnp = curves["autoregressive"], curves["split"]
    assert inc.steps == 12
    assert tnp.steps > 18  # about twice the steps for the same targets
    assert len(inc.curve) == 4
    assert abs(len(tnp.curve) - len(inc.curve)) <= 1  # evaluations by targets, not steps
    spacing = np.diff([c["targets"] for c in tnp.curve])
    assert spacing.min() >= 8 * 15 * 3 - 8 * 15  # at most one step's targets late
    with pytest.raises(ValueError, match="at most one of eval_every"):
        TrainConfig(eval_every=5, eval_every_targets=100)
    with pytest.raises(ValueError, match="max_targets"):
        TrainConfig(max_targets=0)

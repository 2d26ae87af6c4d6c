"""The smoke profile end to end through the CLI, resume, the bench, bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from icml26.adaptive_reasoning.methods import METHODS
from icml26.adaptive_reasoning.paper import PAPER
from icml26.adaptive_reasoning.tasks import SPLITS
from icml26.shared.cli import main
from icml26.shared.testing import check_paper


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "smoke"
    assert main(["run", "adaptive-reasoning", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out)
    return out


def test_smoke_run_writes_every_contract_key(smoke_run: Path) -> None:
    metrics = json.loads((smoke_run / "results.json").read_text())["metrics"]
    for method in METHODS:
        for split in SPLITS:
            for kind in ("accuracy", "think_rate", "tokens"):
                assert f"{kind}.{split}.{method}" in metrics
                assert f"{kind}_se.{split}.{method}" in metrics
            assert 0 <= metrics[f"accuracy.{split}.{method}"] <= 1
        for key in ("verbosity_gap", "separation"):
            assert f"{key}.{method}" in metrics
        assert f"gap.reward.{method}.sft_only" in metrics
    # the one-mode baselines are trained in their mode and stay there
    assert metrics["think_rate.simple_concise.always_think"] == 1.0
    assert metrics["think_rate.complex_verbose.never_think"] == 0.0
    assert metrics["gap.reward.sft_only.sft_only"] == 0.0
    assert metrics["data.eval_programs_in_train"] == 0
    assert metrics["data.eval_texts_in_train"] == 0
    assert metrics["seeds"] == 1
    for plot in ("pareto", "think_rate", "grpo_reward"):
        assert (smoke_run / "plots" / f"{plot}.png").read_bytes()[:4] == b"\x89PNG"


def test_killed_run_resumes_to_the_same_results(smoke_run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "resumed"
    shutil.copytree(smoke_run, copy)
    (copy / "results.json").unlink()
    for name in ("s0-evaluate.json", "s0-grpo-ours.pkl"):
        (copy / "stages" / name).unlink()  # ours' stage 2 and the scores are lost
    assert main(["run", "adaptive-reasoning", "--profile", "smoke", "--out", str(copy)]) == 0
    a = json.loads((smoke_run / "results.json").read_text())["metrics"]
    b = json.loads((copy / "results.json").read_text())["metrics"]
    for key in ("accuracy.complex_verbose.ours", "tokens.all.no_augmentation", "reward.all.ours"):
        assert b[key] == pytest.approx(a[key])


@pytest.mark.slow
def test_bench_smoke(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    assert main(["bench", "adaptive-reasoning", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out)
    metrics = json.loads((out / "results.json").read_text())["metrics"]
    assert metrics["grpo_steps_per_s"] > 0
    assert {"tokens_per_solved.always_think", "tokens_per_solved.sft_only"} <= set(metrics)


def test_bad_override_fails_clearly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "adaptive-reasoning", "--profile", "smoke", "--set", "guard=magic"]
    code = main([*argv, "--out", str(tmp_path / "bad")])
    assert code == 2
    assert "unknown guard" in capsys.readouterr().err
    assert not (tmp_path / "bad" / "results.json").exists()

"""The smoke profile end to end through the CLI, its claims checked, resume, bench, bad input."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from icml26.magic.config import DEFENDERS
from icml26.magic.paper import PAPER
from icml26.shared.cli import main
from icml26.shared.testing import check_paper


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "smoke"
    assert main(["run", "magic", "--profile", "smoke", "--out", str(out)]) == 0
    m = json.loads((out / "results.json").read_text())["metrics"]
    paper = PAPER
    if any(
        m[f"defined_seeds.novel_strategy_rate.{a}"] != m["seeds"]
        for a in ("attacker", "attacker_sft")
    ):
        # An attacker with no success on a seed has no novelty rate there: the pooled gap is
        # null and the novelty claim undecided by design; every other claim stays strict.
        assert m["gap.novel_strategy_rate.attacker.attacker_sft"] is None
        paper = replace(
            PAPER, claims=[c for c in PAPER.claims if c.id != "attacker_finds_novel_compositions"]
        )
    check_paper(paper, out)
    return out


def test_smoke_run_writes_the_contract_keys(smoke_run: Path) -> None:
    results = json.loads((smoke_run / "results.json").read_text())
    m = results["metrics"]
    for d in DEFENDERS:
        for e in ("seed_ops", "heldout_combos", "unseen_ops", "adaptive"):
            assert 0.0 <= m[f"asr.{e}.{d}"] <= 1.0
        for e in ("seed_ops", "heldout_combos", "unseen_ops", "plain", "all"):
            assert 0.0 <= m[f"benign_compliance.{e}.{d}"] <= 1.0
    # null when the attacker had no success on some seed (the rate is undefined there)
    defined = m["defined_seeds.novel_strategy_rate.attacker"]
    if defined == m["seeds"]:
        assert 0.0 <= m["novel_strategy_rate.attacker"] <= 1.0
    else:
        assert m["novel_strategy_rate.attacker"] is None
    assert "novel_strategy_rate.attacker_sft" in m
    assert m["defender_steps.frozen_attacker"] == m["defender_steps.magic"] >= 1
    assert m["seeds"] == 2
    # the smoke profile plays the free-text attacker over up to two turns
    assert PAPER.profiles["smoke"].attacker == "free_text"
    assert 1.0 <= m["attack_turns.attacker"] <= 2.0
    assert 0.0 <= m["intent_broken_rate.attacker"] <= 1.0
    # paired gaps over seeds: a defender against itself is 0 with a standard error of 0
    assert m["gap.asr.adaptive.magic.magic"] == 0 == m["se.gap.asr.adaptive.magic.magic"]
    assert m["se.gap.asr.unseen_ops.magic.base"] >= 0
    # the official alternation: the defender trains first
    steps = [
        r
        for r in map(json.loads, (smoke_run / "metrics.jsonl").read_text().splitlines())
        if r.get("method") == "magic" and "train_step" in r and r.get("seed") == 0
    ]
    assert min(steps, key=lambda r: r["train_step"])["role"] == "defender"
    curve = [
        r
        for r in map(json.loads, (smoke_run / "metrics.jsonl").read_text().splitlines())
        if "asr_curve" in r
    ]
    assert curve
    assert all(0 <= r["asr_curve"] <= 1 for r in curve)
    assert {r["role"] for r in curve} <= {"attacker", "defender"}
    for plot in ("rounds", "defenders", "compositions"):
        assert (smoke_run / "plots" / f"{plot}.png").read_bytes()[:4] == b"\x89PNG"
    assert {c["id"] for c in results["claims"]} == {c.id for c in PAPER.claims}


def test_killed_run_resumes_to_the_same_results(smoke_run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "resumed"
    shutil.copytree(smoke_run, copy)
    (copy / "results.json").unlink()
    (copy / "stages" / "base-seed1.json").unlink()  # killed in the last stage: it resumes
    # from the saved warm start (the tiny model rebuilt, its weights loaded)
    assert main(["run", "magic", "--profile", "smoke", "--out", str(copy)]) == 0
    a = json.loads((smoke_run / "results.json").read_text())["metrics"]
    b = json.loads((copy / "results.json").read_text())["metrics"]
    for key in ("asr.seed_ops.magic", "benign_compliance.all.magic", "asr.unseen_ops.base"):
        assert b[key] == pytest.approx(a[key])


def test_bench_smoke(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    assert main(["bench", "magic", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out)
    m = json.loads((out / "results.json").read_text())["metrics"]
    assert m["game_rounds_per_s"] > 0
    assert m["grpo_step_s.attacker"] > 0
    assert m["tokens_per_round.defender"] > 0


def test_bad_override_fails_before_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "run",
            "magic",
            "--profile",
            "smoke",
            "--set",
            "schedule=coin",
            "--out",
            str(tmp_path / "bad"),
        ]
    )
    assert code == 2
    assert "schedule must be" in capsys.readouterr().err
    assert not (tmp_path / "bad" / "results.json").exists()

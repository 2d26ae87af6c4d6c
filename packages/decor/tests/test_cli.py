"""The smoke profile end to end through the CLI: every method's metric keys, claims
decidable, plots, resume; the bench smoke."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from icml26.decor.paper import PAPER
from icml26.decor.study import METHODS
from icml26.shared.cli import main
from icml26.shared.testing import check_paper


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "smoke"
    assert main(["run", "decor", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out)
    return out


def test_smoke_run_writes_every_contract_key(smoke_run: Path) -> None:
    metrics = json.loads((smoke_run / "results.json").read_text())["metrics"]
    for m in METHODS:
        for hop in ("hop1", "hop2", "hop3", "all"):
            if hop == "all" or any(k.startswith(f"em.{hop}.") for k in metrics):
                assert f"em.{hop}.{m}" in metrics
                assert f"f1.{hop}.{m}" in metrics
        for key in ("filter_precision", "filter_recall", "context_tokens", "search_calls"):
            assert f"{key}.{m}" in metrics
    assert metrics["seeds"] == 2
    # the placebo of every claim: each baseline's gap against itself is exactly 0
    for b in ("monolithic_shaped", "outcome_only", "monolithic", "orchestration"):
        assert metrics[f"em_gap.{b}.{b}"] == 0.0
        assert f"em_gap_se.decor.{b}" in metrics
    assert metrics["search_calls.closed_book"] == 0
    assert metrics["search_calls.single_query"] == 1
    for plot in ("em_by_hops", "reward_components", "context_tokens_vs_em"):
        assert (smoke_run / "plots" / f"{plot}.png").read_bytes()[:4] == b"\x89PNG"


def test_killed_run_resumes_to_the_same_results(smoke_run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "resumed"
    shutil.copytree(smoke_run, copy)
    (copy / "results.json").unlink()
    (copy / "stages" / "warm1.pt").unlink()  # the second seed's warm start is lost ...
    (copy / "stages" / "decor-seed1.json").unlink()  # ... and DECOR's RL on it
    assert main(["run", "decor", "--profile", "smoke", "--out", str(copy)]) == 0
    a = json.loads((smoke_run / "results.json").read_text())["metrics"]
    b = json.loads((copy / "results.json").read_text())["metrics"]
    for key in (
        "em.all.decor",
        "context_tokens.decor",
        "context_tokens.monolithic",
        "f1.all.monolithic",
    ):
        assert b[key] == pytest.approx(a[key])


def test_bench_smoke(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    assert main(["bench", "decor", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out)
    metrics = json.loads((out / "results.json").read_text())["metrics"]
    assert metrics["episodes_per_second"] > 0
    assert metrics["tokens_per_episode.planner"] > 0


def test_methods_left_out_leave_their_claims_undecided(tmp_path: Path) -> None:
    out = tmp_path / "two"
    args = ["run", "decor", "--profile", "smoke", "--out", str(out)]
    assert main([*args, "--set", "methods=decor,single_query,monolithic_shaped"]) == 0
    run = json.loads((out / "results.json").read_text())
    assert "em.all.monolithic" not in run["metrics"]
    assert "em_gap.decor.monolithic_shaped" in run["metrics"]
    names = sorted(p.name for p in (out / "stages").iterdir())
    assert names[:2] == ["decor-seed0.json", "decor-seed1.json"]
    entries = {c.id: c.evaluate(run["metrics"]) for c in PAPER.claims}  # as the llm run would
    for cid in ("decor_beats_monolithic", "decor_beats_orchestration", "hybrid_beats_outcome_only"):
        assert entries[cid]["holds"] is None
        assert "missing" in entries[cid]["note"]
    assert entries["decor_beats_monolithic_shaped"]["holds"] is not None
    # the finished folder takes one more method: only its stages run, the rest load
    before = {p.name: p.stat().st_mtime_ns for p in (out / "stages").iterdir()}
    more = "methods=decor,single_query,monolithic_shaped,orchestration"
    assert main([*args, "--set", more]) == 0
    after = {p.name: p.stat().st_mtime_ns for p in (out / "stages").iterdir()}
    assert set(after) - set(before) == {"orchestration-seed0.json", "orchestration-seed1.json"}
    assert all(after[name] == t for name, t in before.items())
    metrics = json.loads((out / "results.json").read_text())["metrics"]
    assert "em_gap.decor.orchestration" in metrics
    assert main([*args, "--set", "methods=single_query,decor"]) != 0  # reordered: refused

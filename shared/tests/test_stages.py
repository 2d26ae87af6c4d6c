"""Staged jobs: stages resume from their files, timings land in metrics.jsonl, streams differ."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from icml26.shared import Paper, RunDir
from icml26.shared.runner import InputError, run_job, threads_for
from icml26.shared.seeding import rng_for, seed_for
from icml26.shared.stages import JSON, NUMPY, PICKLE, TORCH, StageError, Stages


def test_a_killed_run_resumes_at_the_first_unfinished_stage(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "run")
    calls: list[str] = []

    def job(fail_at: str | None) -> dict:
        stages = Stages(run)

        def step(name: str, value: object) -> object:
            calls.append(name)
            if name == fail_at:
                raise KeyboardInterrupt  # a kill between stages
            return value

        data = stages.once("data", lambda: step("data", {"x": [1, 2, 3]}))
        model = stages.once("train", lambda: step("train", np.arange(4.0)), saver=NUMPY)
        score = stages.once("evaluate", lambda: step("evaluate", sum(data["x"]) + model.sum()))
        return {"score": score}

    with pytest.raises(KeyboardInterrupt):
        job(fail_at="evaluate")
    assert calls == ["data", "train", "evaluate"]
    assert not (run.path / "stages" / "evaluate.json").exists()
    calls.clear()
    assert job(fail_at=None) == {"score": 12.0}
    assert calls == ["evaluate"]  # data and train were loaded, not recomputed
    timings = [r for r in run.read_metrics() if "stage" in r]
    assert [r["stage"] for r in timings] == ["data", "train", "evaluate"]
    assert all(r["wall_s"] >= 0 and r["cpu_s"] >= 0 for r in timings)


def test_savers_round_trip(tmp_path: Path) -> None:
    stages = Stages(tmp_path)
    arrays = {"w": np.eye(2), "b": np.zeros(3, dtype=np.float32)}
    stages.once("arrays", lambda: arrays, saver=NUMPY)
    stages.once("array", lambda: np.arange(5), saver=NUMPY)
    stages.once("obj", lambda: {"a": (1, 2)}, saver=PICKLE)
    again = Stages(tmp_path)
    loaded = again.once("arrays", lambda: pytest.fail("recomputed"), saver=NUMPY)
    assert set(loaded) == {"w", "b"}
    assert loaded["b"].dtype == np.float32
    np.testing.assert_array_equal(loaded["w"], np.eye(2))
    np.testing.assert_array_equal(again.once("array", lambda: None, saver=NUMPY), np.arange(5))
    assert again.once("obj", lambda: None, saver=PICKLE) == {"a": (1, 2)}


def test_torch_state_goes_through_safetensors(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("safetensors")
    state = {"weight": torch.randn(3, 2), "bias": torch.zeros(3)}
    Stages(tmp_path).once("model", lambda: state, saver=TORCH)
    path = tmp_path / "stages" / "model.pt"
    assert not path.read_bytes().startswith(b"PK")  # not a torch zip: safetensors
    loaded = Stages(tmp_path).once("model", lambda: None, saver=TORCH)
    assert torch.equal(loaded["weight"], state["weight"])


def test_bad_names_repeats_and_unwritable_values_are_refused(tmp_path: Path) -> None:
    stages = Stages(tmp_path)
    with pytest.raises(StageError, match="stage name"):
        stages.once("a/b", lambda: 1)
    stages.once("a", lambda: 1)
    with pytest.raises(StageError, match="run twice"):
        stages.once("a", lambda: 2)
    with pytest.raises(StageError, match="json saver cannot write it"):
        stages.once("nan", lambda: float("nan"), saver=JSON)
    assert not list((tmp_path / "stages").glob("nan*"))  # nothing half-written


def test_streams_are_distinct_and_reproducible() -> None:
    a = rng_for(0, "demos").integers(0, 2**32, size=8)
    b = rng_for(0, "env").integers(0, 2**32, size=8)
    assert not np.array_equal(a, b)
    np.testing.assert_array_equal(a, rng_for(0, "demos").integers(0, 2**32, size=8))
    assert seed_for(0, "model") != seed_for(1, "model")
    with pytest.raises(ValueError, match="name the stream"):
        rng_for(0)
    with pytest.raises(ValueError, match="non-negative integer"):
        rng_for(-1, "env")


@given(st.integers(0, 2**40), st.text(min_size=1, max_size=8), st.text(min_size=1, max_size=8))
def test_different_names_never_replay(seed: int, first: str, second: str) -> None:
    if first == second:
        return
    x = rng_for(seed, first).random(4)
    y = rng_for(seed, second).random(4)
    assert not np.array_equal(x, y)
    assert 0 <= seed_for(seed, first) < 2**63


@dataclass(frozen=True)
class _Cfg:
    seed: int = 3
    threads: int = 2


def test_runner_keeps_results_until_replaced_and_sets_threads_and_seed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str | None, float]] = []
    fail = [False]

    def run(config: _Cfg, run_dir: RunDir) -> dict:
        seen.append((os.environ.get("OMP_NUM_THREADS"), random.random()))
        if fail[0]:
            raise RuntimeError("interrupted")
        return {"score": 1.0}

    profiles = {p: _Cfg() for p in ("smoke", "quick", "full")}
    paper = Paper(slug="toy", title="toy", profiles=profiles, run=run)
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    out = tmp_path / "out"
    run_job(paper, "0", profile="smoke", out=out)
    first = (out / "results.json").read_text()
    fail[0] = True
    with pytest.raises(RuntimeError, match="interrupted"):
        run_job(paper, "0", profile="smoke", out=out)
    assert (out / "results.json").read_text() == first  # the finished run's results stay
    assert (out / "error.txt").exists()  # and the report sees they are older than the failure
    assert [threads for threads, _ in seen] == ["2", "2"]
    assert seen[0][1] == seen[1][1]  # seeded from config.seed before the job ran


def test_inputs_are_checked_before_the_run_folder_exists(tmp_path: Path) -> None:
    def inputs(config: _Cfg) -> None:
        raise ValueError("data file rows.csv: column 'label' is missing")

    profiles = {p: _Cfg() for p in ("smoke", "quick", "full")}
    paper = Paper(slug="toy", title="toy", profiles=profiles, run=lambda c, r: {}, inputs=inputs)
    with pytest.raises(InputError, match=r"toy: data file rows\.csv: column 'label' is missing"):
        run_job(paper, "0", profile="smoke", out=tmp_path / "never")
    assert not (tmp_path / "never").exists()


def test_threads_come_from_the_config_then_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ICML26_THREADS", "4")
    assert threads_for(_Cfg(threads=3)) == 3
    assert threads_for(_Cfg(threads=0)) == 4
    monkeypatch.delenv("ICML26_THREADS")
    assert threads_for(_Cfg(threads=0)) is None

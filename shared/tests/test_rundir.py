from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from icml26.shared.rundir import Checkpoints, ConfigMismatchError, RunDir


@dataclass(frozen=True)
class Cfg:
    seed: int = 7
    n: int = 1


def test_prepare_writes_config_and_env(tmp_path: Path) -> None:
    rd = RunDir(tmp_path / "run")
    assert rd.prepare(Cfg()) is False
    assert json.loads(rd.config_path.read_text()) == {"seed": 7, "n": 1}
    env = json.loads(rd.env_path.read_text())
    assert env["seed"] == 7
    assert env["device"] == "cpu"
    assert "icml26-shared" in env["packages"]
    assert {"commit", "dirty"} <= set(env["git"])
    rd.update_env(device="cuda:0")
    assert json.loads(rd.env_path.read_text())["device"] == "cuda:0"


def test_same_config_resumes_other_config_is_refused(tmp_path: Path) -> None:
    rd = RunDir(tmp_path / "run")
    rd.prepare(Cfg())
    assert RunDir(tmp_path / "run").prepare(Cfg()) is True
    with pytest.raises(ConfigMismatchError, match="fields differing: n"):
        RunDir(tmp_path / "run").prepare(Cfg(n=2))


@dataclass(frozen=True)
class Study:
    seed: int = 0
    methods: tuple[str, ...] = field(default=("a", "b"), metadata={"resume": "extend"})
    steps: tuple[int, ...] = (1, 2)
    budget_minutes: float = field(default=0.0, metadata={"resume": "per_leg"})


def test_an_extendable_field_may_grow_at_its_end_only(tmp_path: Path) -> None:
    RunDir(tmp_path / "run").prepare(Study())
    assert RunDir(tmp_path / "run").prepare(Study(methods=("a", "b", "c"))) is True
    assert json.loads((tmp_path / "run" / "config.json").read_text())["methods"] == ["a", "b", "c"]
    for methods in (("a", "c"), ("b", "a", "c"), ("a",)):  # reordered, replaced or shrunk
        with pytest.raises(ConfigMismatchError, match="fields differing: methods"):
            RunDir(tmp_path / "run").prepare(Study(methods=methods))
    with pytest.raises(ConfigMismatchError, match="fields differing: steps"):
        RunDir(tmp_path / "run").prepare(Study(methods=("a", "b", "c"), steps=(1, 2, 3)))


def test_a_per_leg_field_may_change_between_legs(tmp_path: Path) -> None:
    RunDir(tmp_path / "run").prepare(Study(budget_minutes=48.0))
    assert RunDir(tmp_path / "run").prepare(Study(budget_minutes=60.0)) is True
    assert json.loads((tmp_path / "run" / "config.json").read_text())["budget_minutes"] == 60.0
    with pytest.raises(ConfigMismatchError, match="fields differing: seed"):
        RunDir(tmp_path / "run").prepare(Study(seed=1, budget_minutes=30.0))


def test_new_folders_are_unique(tmp_path: Path) -> None:
    a = RunDir.new(tmp_path, "slug", kind="run", profile="smoke")
    b = RunDir.new(tmp_path, "slug", kind="run", profile="smoke")
    assert a.path != b.path
    assert a.path.parent == tmp_path / "slug"


def test_run_folder_path_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(NotADirectoryError):
        RunDir(tmp_path / "f")


def test_metrics_jsonl_survives_a_cut_line(tmp_path: Path) -> None:
    rd = RunDir(tmp_path)
    rd.log_metrics(0, loss=np.float32(1.5), note="warmup")
    rd.log_metrics(1, loss=float("nan"))
    with open(rd.metrics_path, "a") as fh:
        fh.write('{"step": 2, "lo')  # a kill mid-write
    assert rd.read_metrics() == [
        {"step": 0, "loss": 1.5, "note": "warmup"},
        {"step": 1, "loss": None},
    ]


def test_checkpoints_resume_latest_and_prune(tmp_path: Path) -> None:
    ck = Checkpoints(tmp_path / "ck", keep=2)
    assert ck.latest() is None
    for step in (10, 20, 30):
        ck.save(step, {"w": np.full(3, step)})
    assert ck.steps() == [20, 30]
    step, state = ck.latest()
    assert step == 30
    np.testing.assert_array_equal(state["w"], np.full(3, 30))
    with pytest.raises(ValueError, match="keep must be at least 1"):
        Checkpoints(tmp_path, keep=0)

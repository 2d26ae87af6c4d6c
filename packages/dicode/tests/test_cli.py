"""The package through the umbrella CLI: a smoke run (no Craftax compile) and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icml26.dicode.config import METHODS
from icml26.dicode.paper import PAPER
from icml26.dicode.tech import ACHIEVEMENTS
from icml26.shared.cli import main
from icml26.shared.results import load_results
from icml26.shared.testing import check_paper


def test_smoke_run_writes_the_issue_keys(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["run", "dicode", "--profile", "smoke", "--out", str(out)]) == 0
    results = load_results(out / "results.json")
    check_paper(PAPER, results)
    m = results["metrics"]
    for method in METHODS:
        assert m[f"return.{method}"] >= 0
        assert f"auc.{method}" in m
        for a in ACHIEVEMENTS:
            assert 0.0 <= m[f"achievement_success.{a}.{method}"] <= 1.0
    assert m["archive_size"] >= 1
    # 32-step rounds: few worlds finish a full slot of episodes in the smoke run
    assert 0 <= m["archive_evaluated"] <= m["archive_size"]
    assert 0 <= m["frontier_fraction"] <= 1
    unit0 = json.loads((out / "units" / "dicode.s0.json").read_text())
    # evaluated: measured over a full slot (one finished episode per env of the slot)
    slot = PAPER.profiles["smoke"].envs_per_slot
    evaluated = [
        e for e in unit0["archive"] if e["success_rate"] is not None and e["episodes"] >= slot
    ]
    assert len(evaluated) == unit0["archive_evaluated"]
    on_frontier = [e for e in evaluated if 0.05 < e["success_rate"] < 0.95]
    assert unit0["frontier_fraction"] == pytest.approx(len(on_frontier) / max(1, len(evaluated)))
    assert 0 <= m["program_valid_rate.offline_mutation"] <= 1
    assert m["steps_per_second"] > 0
    assert m["recompiles_after_warmup"] == 0
    assert not any(k.startswith("craftax") for k in m)  # no Craftax compile in smoke
    for name in ("return_curves", "achievement_success", "lineage_tree", "learnability"):
        assert (out / "plots" / f"{name}.png").stat().st_size > 0
    unit = json.loads((out / "units" / "dicode.s0.json").read_text())
    assert unit["archive"][0]["parent"] is None
    assert unit["dreamer"] == "offline_mutation"
    # a finished run resumes from its unit files without training again
    assert main(["run", "dicode", "--profile", "smoke", "--out", str(out)]) == 0
    assert load_results(out / "results.json")["metrics"]["return.dicode"] == m["return.dicode"]


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("methods=dicode,sac", "methods"),
        ("target_mix=1.5", "target_mix"),
        ("envs_per_slot=3", "envs_per_slot"),
        ("llm_model=smollm2-135m-instruct-q4_1", "dreamer=llm"),
        ("dreamer=gpt", "dreamer"),
        ("total_steps=10", "total_steps"),
        ("llm_format=yaml", "llm_format"),
        ("llm_max_tokens=-1", "llm_max_tokens"),
    ],
)
def test_bad_overrides_are_refused(
    override: str, message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "bad"
    assert main(["run", "dicode", "--profile", "smoke", "--set", override, "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_llm_dreamer_config_needs_a_model_or_endpoint() -> None:
    from icml26.dicode.config import RunConfig

    with pytest.raises(ValueError, match="exactly one"):
        RunConfig(dreamer="llm")
    with pytest.raises(ValueError, match="llm_endpoint_model"):
        RunConfig(dreamer="llm", llm_endpoint="http://localhost:8000/v1")
    with pytest.raises(ValueError, match="http"):
        RunConfig(dreamer="llm", llm_endpoint="localhost:8000", llm_endpoint_model="m")
    with pytest.raises(ValueError, match="does not exist"):
        RunConfig(dreamer="llm", llm_model="/no/such/model.gguf")
    RunConfig(dreamer="llm", llm_endpoint="http://localhost:8000/v1", llm_endpoint_model="m")


def test_one_backend_builder_for_run_and_study() -> None:
    import dataclasses

    from icml26.dicode.config import RunConfig
    from icml26.dicode.dreamer import LLMDreamer, llm_backend
    from icml26.dicode.training import make_dreamer
    from icml26.shared.llm import ChatClient

    config = RunConfig(
        dreamer="llm", llm_endpoint="http://localhost:8000/v1", llm_endpoint_model="m"
    )
    dreamer = make_dreamer(config)
    assert isinstance(dreamer, LLMDreamer)
    assert isinstance(dreamer.backend, ChatClient)
    assert (dreamer.format, dreamer.max_tokens) == ("edit", 64)
    program = make_dreamer(dataclasses.replace(config, llm_format="program"))
    assert isinstance(program, LLMDreamer)
    assert program.max_tokens == 400
    with pytest.raises(ValueError, match="exactly one"):
        llm_backend("", endpoint="")

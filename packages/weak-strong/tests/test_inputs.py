"""Bad input is refused with one clear line naming the problem (review 8)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from icml26.weak_strong import OnlineWeakStrong
from icml26.weak_strong.config import RunConfig
from icml26.weak_strong.inputs import check_inputs
from icml26.weak_strong.policies import DEFER, Step
from icml26.weak_strong.streams import load_stream_file


@pytest.mark.parametrize(
    ("key", "value", "match"),
    [
        ("tau_a", float("nan"), "tau_a must be a finite number"),
        ("tau_r", float("inf"), "tau_r must be a finite number"),
        ("step_size", -1.0, "step_size must be > 0"),
        ("step_size", "0.1", "step_size must be a finite number"),
        ("explore", 0.0, "explore must lie in"),
        ("t", -3, "t \\(steps taken\\)"),
    ],
)
def test_load_state_dict_refuses_values_no_policy_could_hold(key, value, match) -> None:
    p = OnlineWeakStrong(0.1, 0.1, seed=0)
    state = json.loads(json.dumps(p.state_dict()))
    before = p.state_dict()
    state[key] = value
    with pytest.raises(ValueError, match=match):
        p.load_state_dict(state)
    assert p.state_dict() == before  # nothing changed


@pytest.mark.parametrize("prob", [0.0, -0.5, 1.5, float("nan")])
def test_observe_refuses_a_step_without_a_query_probability(prob: float) -> None:
    p = OnlineWeakStrong(0.1, 0.1, seed=0)
    with pytest.raises(ValueError, match=r"step\.prob must be the query probability"):
        p.observe(Step(DEFER, True, prob), 0.5, True)


def test_a_short_csv_row_names_its_line(tmp_path: Path) -> None:
    f = tmp_path / "s.csv"
    f.write_text("score,label\n0.5,1\n0.7\n")
    with pytest.raises(ValueError, match="line 3: fewer columns than the header"):
        load_stream_file(f)


def test_a_math_source_file_is_read_before_any_stage(tmp_path: Path) -> None:
    cfg = RunConfig(streams=("math",))
    bad = tmp_path / "samples.json"
    bad.write_text(json.dumps({"not": "samples"}))
    with pytest.raises(ValueError, match="is not a samples record or a math stream file"):
        check_inputs(replace(cfg, math_source=str(bad)))
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{ not json")
    with pytest.raises(ValueError, match="math_source"):
        check_inputs(replace(cfg, math_source=str(garbage)))
    check_inputs(cfg)  # the shipped stream passes

"""The README's LLM table: figures per iteration with the invalid-reply rate beside them."""

from __future__ import annotations

from icml26.rmft.paper import PAPER
from icml26.rmft.tables import readme_tables

ENV = "bernoulli_k3_t4"


def _results() -> dict:
    m = {
        "eval_instances.llm": 96.0,
        "seconds.llm_base": 100.0,
        "seconds.llm_iter1": 50.0,
        "seconds.llm_random_iter1": 25.0,
        "seconds.numeric_base": 9.0,
        "invalid_rate_by_iteration.0": 0.6,
        "invalid_rate_by_iteration.1": 0.4,
        "invalid_drop_z.1": 2.5,
        "invalid_action_rate.llm_base_greedy": 0.05,
        "invalid_action_rate.llm_rmft_greedy_final": 0.01,
        "invalid_action_rate.llm_random_select_final": 0.55,
        "train.llm_iter1.rollout_invalid": 0.58,
        "train.llm_iter1.selected_invalid": 0.31,
        "train.llm_random_iter1.rollout_invalid": 0.59,
        "train.llm_random_iter1.selected_invalid": 0.57,
        "invalid_lenient_rate.llm_base": 0.2,
        "truncated_rate.llm_base": 0.3,
        "invalid_action_rate.llm_random_select_greedy_final": 0.5,
        "invalid_drop_z_by_control.llm_random_select.llm_rmft": 1.25,
        "power_by_axis.train.llm_base": 0.42,
        "min_detectable_ratio_by_axis.train.llm_base": 0.87,
    }
    for policy, regret in (
        ("llm_base", 1.0),
        ("llm_base_greedy", 0.9),
        ("llm_rmft_iter1", 0.8),
        ("llm_rmft_greedy_final", 0.85),
        ("llm_random_select_final", 0.95),
        ("llm_random_select_greedy_final", 0.93),
    ):
        m[f"regret.{ENV}.{policy}"] = regret
        m[f"regret_se.{ENV}.{policy}"] = 0.05
    config = {
        "llm_env": ENV,
        "llm_iterations": 1,
        "llm_model": "smollm2-135m-instruct-q4_1",
        "llm_temperature": 0.7,
        "llm_parse": "strict",
        "llm_max_tokens": 24,
    }
    return {"kind": "run", "config": config, "metrics": m}


def test_llm_table_puts_the_invalid_rate_beside_each_iteration() -> None:
    text = PAPER.tables_markdown(_results())
    rows = {line.split(" | ")[0]: line for line in text.splitlines() if line.startswith("| ")}
    assert rows["| base (iteration 0)"] == (
        "| base (iteration 0) | 1.000 ± 0.050 | 0.900 ± 0.050 | 0.600 | 0.050 | 0.200 | 0.300 |"
        "  |  |"
    )
    assert rows["| RMFT iteration 1"] == (
        "| RMFT iteration 1 | 0.800 ± 0.050 | 0.850 ± 0.050 | 0.400 (2.50) | 0.010 | n/a | n/a "
        "| 0.580 | 0.310 |"
    )
    assert rows["| random selection (control)"].endswith(
        "| 0.950 ± 0.050 | 0.930 ± 0.050 | 0.550 | 0.500 | n/a | n/a | 0.590 | 0.570 |"
    )
    assert "strict parse" in text
    assert "cut at 24 tokens" in text
    assert "against the random-selection loop: paired z 1.25" in text
    assert "96 evaluation instances" in text
    assert "llm_base 0.42 (detectable ratio 0.870)" in text
    assert "llm_base_greedy n/a" in text  # a missing figure says so
    assert "LLM stages: 175 s wall" in text  # the LLM stages only


def test_no_llm_table_without_the_llm_study() -> None:
    results = _results()
    results["metrics"] = {
        k: v for k, v in results["metrics"].items() if not k.startswith("regret.")
    }
    assert readme_tables(results) == ""
    assert readme_tables({**_results(), "kind": "bench"}) == ""

"""Configs: profiles are valid, bad values fail with a message naming the field."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from icml26.rmft.config import BenchConfig, RunConfig
from icml26.rmft.paper import BENCH_PROFILES, PAPER, PROFILES


def test_profiles_are_valid_and_ordered_by_cost() -> None:
    assert set(PROFILES) == {"smoke", "quick", "full"}
    assert PAPER.slug == "rmft"
    s, q, f = (PROFILES[p] for p in ("smoke", "quick", "full"))
    assert s.eval_instances < q.eval_instances <= f.eval_instances
    assert q.eval_instances >= 256  # the matched controls' paired z (issue 38)
    assert q.nonstationary_env  # the non-stationary bandit as its own training setting
    assert q.rmft_iterations >= 3
    assert f.llm_model == "smollm2-135m-instruct-q4_1"
    assert q.llm_model == ""  # the LLM path is in smoke (runs) and full (decides its claims)
    assert s.llm_model == "tiny-random"
    assert f.llm_eval_instances >= 10  # metrics.Z_MIN_INSTANCES: the LLM z is decided
    for cfg in BENCH_PROFILES.values():
        assert isinstance(cfg, BenchConfig)


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("train_env", "bernoulli_k1_t50", "K >= 2"),
        ("train_env", "bernoulli_k5_t0", "T >= 1"),
        ("train_env", "experts_k5_t50", "train_env must be a bandit"),
        ("eval_envs", ("bernoulli_k5_t100",), "must include train_env"),
        ("eval_envs", ("bernoulli_k5_t50", "experts_k5_t50"), "not a bandit"),
        ("experts_env", "bernoulli_k5_t50", "experts_env"),
        ("nonstationary_env", "bernoulli_k5_t50", "nonstationary_env"),
        ("llm_invalid", "lucky", "llm_invalid"),
        ("llm_engine", "jax", "llm_engine"),
        ("keep_per_instance", 9, "keep_per_instance"),
        ("rmft_iterations", -1, "rmft_iterations"),
        ("eval_instances", 0, "eval_instances"),
        ("d_model", 30, "divisible"),
        ("greedy_fraction", 2.0, "greedy_fraction"),
        ("baselines", ("ucb", "epsilon"), "unknown baselines"),
        ("device", "tpu", "device"),
        ("llm_env", "restaurants_k3_t10", "llm_env"),
        ("llm_endpoint", "http://localhost:1/v1", "together"),
        ("seed", -3, "seed"),
    ],
)
def test_bad_config_values_raise_clearly(field: str, value: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        dataclasses.replace(RunConfig(), **{field: value})


def test_endpoint_and_local_model_are_exclusive() -> None:
    with pytest.raises(ValueError, match="not both"):
        RunConfig(llm_model="x", llm_endpoint="http://h/v1", llm_endpoint_model="m")
    with pytest.raises(ValueError, match="http"):
        RunConfig(llm_endpoint="h/v1", llm_endpoint_model="m")
    assert RunConfig(llm_endpoint="http://h/v1", llm_endpoint_model="m").llm_enabled


def test_paper_module_imports_no_framework() -> None:
    code = (
        "import sys, icml26.rmft, icml26.rmft.paper\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'torch', 'transformers', 'peft', 'matplotlib'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_llm_parse_is_strict_by_default_and_validated() -> None:
    assert RunConfig().llm_parse == "strict"
    with pytest.raises(ValueError, match="llm_parse"):
        RunConfig(llm_parse="loose")

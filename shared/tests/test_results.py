from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from icml26.shared.claims import Claim
from icml26.shared.results import (
    ResultsError,
    build_results,
    flatten_metrics,
    load_results,
    validate_results,
)


def _results(**overrides):
    base = {
        "paper": "p",
        "version": "0.1.0",
        "profile": "smoke",
        "config": {"seed": 0},
        "metrics": {"a.b": 1.0},
        "claims": [Claim("c", "s", "pv", "a.b < 2")],
        "seconds": 1.25,
    }
    base.update(overrides)
    return build_results(**base)


def test_flatten_nested_and_coerce_scalars() -> None:
    flat = flatten_metrics({"a": {"b": np.float32(0.5), "c": {"d": 2}}, "e": True, "f": math.nan})
    assert flat == {"a.b": 0.5, "a.c.d": 2, "e": 1, "f": None}
    assert isinstance(flat["a.b"], float)


@pytest.mark.parametrize(
    "metrics",
    [{"a": "text"}, {"a": [1, 2]}, {"": 1.0}, {"a": {"b": 1.0}, "a.b": 2.0}, {"a.": 1}],
)
def test_flatten_rejects_bad_metrics(metrics: dict) -> None:
    with pytest.raises(ResultsError):
        flatten_metrics(metrics)


def test_build_results_computes_holds_and_validates() -> None:
    results = _results()
    assert results["claims"][0]["holds"] is True
    assert results["claims"][0]["measured"] == {"a.b": 1.0}
    json.dumps(results, allow_nan=False)  # strict JSON
    assert _results(metrics={"a": {"b": 3.0}})["claims"][0]["holds"] is False


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("paper", "", "non-empty"),
        ("metrics", {"a": "x"}, "number or null"),
        ("metrics", {"a": math.inf}, "not finite"),
        ("seconds", -1, "non-negative"),
        ("claims", [{"id": "c"}], "missing"),
        (
            "claims",
            [
                {
                    "id": "c",
                    "statement": "",
                    "paper_value": "",
                    "measured": {},
                    "rule": "a<1",
                    "holds": "yes",
                }
            ],
            "true, false or null",
        ),
    ],
)
def test_validate_names_the_problem(key: str, value, message: str) -> None:
    results = _results()
    results[key] = value
    with pytest.raises(ResultsError, match=message):
        validate_results(results)


def test_validate_missing_keys() -> None:
    with pytest.raises(ResultsError, match="missing keys: claims, seconds"):
        validate_results(
            {"paper": "p", "version": "1", "profile": "q", "config": {}, "metrics": {}}
        )


def test_load_results_reports_corrupt_and_missing_files(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    with pytest.raises(ResultsError, match="no such file"):
        load_results(path)
    path.write_text('{"paper": "p", ')
    with pytest.raises(ResultsError, match="not valid JSON"):
        load_results(path)
    path.write_text('{"paper": "p"}')
    with pytest.raises(ResultsError, match=r"results.json: results are missing keys"):
        load_results(path)
    path.write_text(json.dumps(_results()))
    assert load_results(path)["paper"] == "p"

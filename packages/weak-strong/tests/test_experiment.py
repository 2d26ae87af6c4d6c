"""The CLI end to end on the smoke profile, configs, and the user-stream file path."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from icml26.shared.cli import main
from icml26.shared.results import load_results
from icml26.shared.testing import check_paper
from icml26.weak_strong.config import RunConfig
from icml26.weak_strong.paper import PAPER
from icml26.weak_strong.streams import load_stream_file


def test_smoke_run_through_the_cli(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["run", "weak-strong", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out)
    results = load_results(out / "results.json")
    m = results["metrics"]
    for stream in ("calibrated", "drift", "adversarial", "math", "sudoku"):
        for policy in (
            "online",
            "oracle",
            "fixed_calibrated",
            "weak_only",
            "always_strong",
            "score_blind",
        ):
            if (stream, policy) == ("sudoku", "oracle"):  # n/a: no hindsight law on Sudoku
                assert "incorrect_accept.sudoku.oracle.a0p1" not in m
                continue
            for a in ("a0p05", "a0p1", "a0p2"):
                for metric in (
                    "incorrect_accept",
                    "incorrect_reject",
                    "strong_freq",
                    "final_accuracy",
                ):
                    v = m[f"{metric}.{stream}.{policy}.{a}"]
                    assert 0.0 <= v <= 1.0
        assert f"calibration_ece.{stream}" in m
        assert f"sharpness.{stream}" in m
    assert m["strong_freq.calibrated.always_strong.a0p1"] == 1.0
    # Theorems, so tests rather than claims: the online errors lie within the finite-sample
    # bound on every stream and target, and the two-threshold solution matches the LP.
    margins = [v for k, v in m.items() if k.startswith(("margin_accept.", "margin_reject."))]
    assert margins
    assert min(margins) >= 0
    assert m["population.lp_gap"] <= 1e-6
    # The error-vs-length study on the math stream (the smoke fixture is shorter than the
    # first grid length, so its one length is the whole stream).
    n_math = int(m["n_items.math"])
    for a in ("a0p05", "a0p1", "a0p2"):
        for metric in ("incorrect_accept", "incorrect_reject", "bound_accept", "bound_reject"):
            assert m[f"{metric}.math.online.{a}.len{n_math}"] >= 0.0
        assert m[f"incorrect_reject.math.online.{a}.len{n_math}"] <= 1.0
        assert m[f"control_length.math.online.{a}"] in (-1.0, float(n_math))
        assert m[f"bound_violations.math.online.{a}"] >= 0
    assert (out / "plots" / "math_error_vs_length.png").stat().st_size > 0
    assert {c["id"] for c in results["claims"]} == {c.id for c in PAPER.claims}
    assert all(c["holds"] in (True, False) for c in results["claims"])
    for name in ("running_errors", "strong_calls", "two_threshold_policy", "sharpness_value"):
        assert (out / "plots" / f"{name}.png").stat().st_size > 0


def test_bench_smoke(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    assert main(["bench", "weak-strong", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out)
    m = load_results(out / "results.json")["metrics"]
    assert m["overhead_us.online"] > 0


def test_user_stream_file(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    s = rng.random(500)
    y = rng.random(500) < s
    csv = tmp_path / "stream.csv"
    csv.write_text("score,label\n" + "\n".join(f"{a},{int(b)}" for a, b in zip(s, y, strict=True)))
    js = tmp_path / "stream.json"
    js.write_text(json.dumps({"scores": s.tolist(), "labels": y.astype(int).tolist()}))
    for path in (csv, js):
        st = load_stream_file(str(path))
        np.testing.assert_allclose(st.scores, s)
        np.testing.assert_array_equal(st.labels, y)
    out = tmp_path / "run"
    argv = ["run", "weak-strong", "--profile", "smoke", "--out", str(out)]
    argv += ["--set", f"stream_file={csv}", "--set", "streams=user", "--set", "alphas=0.1"]
    assert main(argv) == 0
    assert "incorrect_accept.user.online.a0p1" in load_results(out / "results.json")["metrics"]


def test_user_stream_file_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no stream file"):
        load_stream_file(str(tmp_path / "nope.csv"))
    bad = tmp_path / "bad.csv"
    for body, message in (
        ("score,label\n0.5,1\n1.7,1\n", "line 3: score must lie in \\[0, 1\\], got 1.7"),
        ("score,label\n0.5,2\n", "line 2: label must be True/False or 0/1, got '2'"),
        ("score,label\n0.5,no\n", "line 2: label must be True/False or 0/1, got 'no'"),
        ("score,label\nnan,1\n", "line 2: score must lie in \\[0, 1\\], got nan"),
        ("score,label\nhigh,1\n", "line 2: score must be a real number"),
        ("score,label\n", "holds no rows"),
    ):
        bad.write_text(body)
        with pytest.raises(ValueError, match=message):
            load_stream_file(str(bad))
    js = tmp_path / "bad.json"
    for obj, message in (
        ({"scores": [0.5, 0.2], "labels": [1, 2]}, "row 1: label"),
        ({"scores": [0.5, True], "labels": [1, 0]}, "row 1: score must be a real number"),
        ({"scores": ["0.5"], "labels": [1]}, "row 0: score must be a real number"),
        ([{"score": 0.3, "label": "no"}], "row 0: label"),
        ({"scores": [0.5], "labels": [1, 0]}, "1 scores but 2 labels"),
    ):
        js.write_text(json.dumps(obj))
        with pytest.raises(ValueError, match=message):
            load_stream_file(str(js))
    bad.write_text("s,l\n0.5,1\n")
    with pytest.raises(ValueError, match="'score' and 'label'"):
        load_stream_file(str(bad))


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("alphas", (1.2,), "every alpha must lie in \\(0, 1\\)"),
        ("streams", ("nope",), "unknown streams"),
        ("streams", ("user",), "needs stream_file"),
        ("policies", ("magic",), "unknown policies"),
        ("n_items", 5, "n_items must be at least 100"),
        ("step_size", 0.0, "step_size must be positive"),
    ],
)
def test_config_validation(field: str, value, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RunConfig(**{field: value})


def test_cli_rejects_bad_override(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "weak-strong", "--set", "alphas=0,0.1"]) == 2
    assert "alpha" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["stream_file=/nonexistent.csv"], "read only by the 'user' stream"),
        (["streams=user", "stream_file=/nonexistent.csv"], "not an existing file"),
        (["streams=math", "math_source=/nonexistent.json"], "not an existing file"),
        (["streams=calibrated", "math_source=/nonexistent.json"], "read only by the 'math'"),
        (["streams=math", "math_source=fixture", "math_cache=/tmp/c"], "math_source=llm"),
        (["streams=math", "math_source=llm", "math_model=/nonexistent/model"], "does not exist"),
        (["streams=math", "math_source=llm", "math_model=http://h:1/v1"], "model-name"),
        (["streams=math", "math_model=/some/model"], "math_source=llm"),
    ],
)
def test_cli_rejects_bad_or_unused_paths_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], overrides: list[str], message: str
) -> None:
    out = tmp_path / "run"
    argv = ["run", "weak-strong", "--profile", "smoke", "--out", str(out)]
    for item in overrides:
        argv += ["--set", item]
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_bad_stream_file_fails_before_any_stage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stream file with bad content is refused by the input check, with one line naming the
    row, and no run folder is left behind."""
    bad = tmp_path / "bad.csv"
    bad.write_text("score,label\n0.5,1\n0.2,0\n1.7,1\n")
    out = tmp_path / "run"
    argv = ["run", "weak-strong", "--profile", "smoke", "--out", str(out)]
    argv += ["--set", f"stream_file={bad}", "--set", "streams=user"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "line 4: score must lie in [0, 1], got 1.7" in err
    assert "Traceback" not in err
    assert not out.exists()


def test_config_rejects_a_folder_as_stream_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not an existing file"):
        RunConfig(streams=("user",), stream_file=str(tmp_path))

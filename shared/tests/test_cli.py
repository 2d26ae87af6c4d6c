"""The umbrella CLI against a fake paper registered by the ``fake_paper`` fixture."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from icml26.shared.cli import main
from icml26.shared.results import load_results


def test_list_and_show(fake_paper: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "fake-paper" in out
    assert "9.9.9" in out
    assert main(["show", fake_paper, "--profile", "smoke"]) == 0
    out = capsys.readouterr().out
    assert "n (int) = 2" in out
    assert "score >= 5" in out


def test_run_writes_a_complete_run_folder(fake_paper: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert (
        main(
            [
                "run",
                fake_paper,
                "--profile",
                "smoke",
                "--out",
                str(out),
                "--set",
                "n=7",
                "--set",
                "mode=b",
            ]
        )
        == 0
    )
    results = load_results(out / "results.json")
    assert results["metrics"] == {"score": 7.0, "nested.x": 1.5, "nested.mode_b": 1}
    assert [c["holds"] for c in results["claims"]] == [True, True]
    assert results["config"]["n"] == 7
    assert results["profile"] == "smoke"
    assert results["cpu_seconds"] >= 0
    assert (out / "plots" / "curve.png").stat().st_size > 0
    assert len((out / "metrics.jsonl").read_text().splitlines()) == 3
    assert json.loads((out / "env.json").read_text())["paper"] == fake_paper


def test_claim_that_fails_is_reported_false(fake_paper: str, tmp_path: Path) -> None:
    assert main(["run", fake_paper, "--profile", "smoke", "--out", str(tmp_path / "o")]) == 0
    claims = load_results(tmp_path / "o" / "results.json")["claims"]
    assert claims[0]["holds"] is False  # score = 2 < 5 in the smoke profile
    assert claims[0]["measured"] == {"score": 2.0}


def test_default_run_folder_and_bench(fake_paper: str, tmp_path: Path) -> None:
    assert main(["bench", fake_paper, "--profile", "smoke", "--set", "scale=0.5"]) == 0
    (folder,) = (tmp_path / "runs" / fake_paper).iterdir()
    results = load_results(folder / "results.json")
    assert results["kind"] == "bench"
    assert results["claims"][0]["holds"] is False  # 2 * 0.5 < 1.5


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "no-such-paper"], "unknown paper 'no-such-paper'; installed papers: "),
        (["run", "fake-paper", "--set", "epochs=3"], "unknown config field 'epochs'"),
        (["run", "fake-paper", "--set", "n=-1"], "n must be >= 0"),
        (["run", "fake-paper", "--set", "mode=c"], "not one of a, b"),
        (["run", "fake-paper", "--profile", "huge"], "no profile 'huge'"),
        (["reproduce", "nope"], "unknown papers: nope"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(
    fake_paper: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    message: str,
) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_rerun_with_other_config_is_refused(
    fake_paper: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "o")
    assert main(["run", fake_paper, "--profile", "smoke", "--out", out]) == 0
    assert main(["run", fake_paper, "--profile", "smoke", "--out", out]) == 0  # same config: resume
    assert main(["run", fake_paper, "--profile", "quick", "--out", out]) == 2
    assert "another config" in capsys.readouterr().err


def test_failed_run_exits_1_and_leaves_error_not_results(
    fake_paper: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o"
    assert (
        main(["run", fake_paper, "--profile", "smoke", "--out", str(out), "--set", "fail=true"])
        == 1
    )
    assert "told to fail" in capsys.readouterr().err
    assert not (out / "results.json").exists()
    assert "RuntimeError" in (out / "error.txt").read_text()


def test_report_on_corrupt_results(
    fake_paper: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o"
    assert main(["run", fake_paper, "--profile", "smoke", "--out", str(out)]) == 0
    assert main(["report", str(out)]) == 0
    (out / "results.json").write_text("{not json")
    assert main(["report", str(out)]) == 1
    assert "not valid JSON" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "missing")]) == 2


def test_console_script_entry_point(fake_paper: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "icml26.shared.cli", "list"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "fake-paper" in proc.stdout

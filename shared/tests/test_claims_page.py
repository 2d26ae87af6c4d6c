"""``icml26 docs``: the claims page from a reproduce run, the same rows as report.md."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from icml26.shared import Claim, atomic_write_json, build_results
from icml26.shared.claims_page import (
    ClaimsPageError,
    claims_page,
    compare_with_report,
    markdown_claim_rows,
    write_claims_page,
)
from icml26.shared.cli import main
from icml26.shared.registry import installed
from icml26.shared.report import claim_rows, collect_entries, write_report

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _run(
    root: Path,
    paper: str,
    metrics: dict,
    claims: list[Claim],
    *,
    seconds: float = 12.5,
    commit: str | None = COMMIT,
    time: str = "2026-12-04T22:15:00+00:00",
) -> Path:
    """A run folder as the runner leaves it: results.json and env.json."""
    folder = root / paper
    folder.mkdir(parents=True)
    results = build_results(
        paper=paper,
        version="1.0",
        profile="smoke",
        config={},
        metrics=metrics,
        claims=claims,
        seconds=seconds,
        cpu_seconds=seconds * 2,
    )
    atomic_write_json(folder / "results.json", results)
    env = {"time": time, "git": {"commit": commit, "dirty": False}}
    atomic_write_json(folder / "env.json", env)
    return folder


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """Two papers that ran (held, failed, undecided claims; one with many values and a
    statement that names an HTML tag) and one whose run failed, in a reproduce order."""
    root = tmp_path / "repro"
    _run(
        root,
        "alpha",
        {"err": {"ours": 0.1, "base": 0.2}, "many": {f"k{i}": i for i in range(6)}},
        [
            Claim("beats", "Ours beats | the base.", "0.1 vs 0.2", "err.ours < err.base"),
            Claim("big", "Stops after </answer> on time.", "> 1", "err.ours > 1"),
            Claim("many", "Many values.", "all >= 0", "min_of('many.*') >= 0"),
        ],
    )
    _run(
        root,
        "beta",
        {"acc": 0.5},
        [
            Claim(
                "later", "Decided only at full scale.", "0.9", "acc_full > 0.8", profiles=("full",)
            )
        ],
        seconds=3.0,
        commit=None,
    )
    failed = root / "gamma"
    failed.mkdir()
    (failed / "error.txt").write_text("Traceback\nValueError: gamma broke | on purpose\n")
    atomic_write_json(
        root / "reproduce.json",
        {
            "profile": "smoke",
            "mode": "sequential",
            "seconds": 40.0,
            "papers": {
                name: {"returncode": int(name == "gamma"), "seconds": s}
                for name, s in (("gamma", 7.0), ("beta", 3.5), ("alpha", 13.0))
            },
        },
    )
    return root


def _table(page: str, heading: str) -> list[str]:
    section = page.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("|")]


def test_page_states_its_run_and_has_a_summary_row_per_paper(run_dir: Path) -> None:
    page = claims_page(run_dir)
    assert re.findall(r"^#+ .*$", page, flags=re.MULTILINE) == [
        "# Claims beside our measurements",
        "## Summary",
        "## gamma",
        "## beta",
        "## alpha",
    ]
    assert f"from the reproduce run `{run_dir}`: profile `smoke`" in page
    assert "run on 2026-12-04, commit `0123456789ab`." in page
    assert "3 papers (1 of them failed to run), 4 claims: 2 held, 1 failed, 1 undecided." in page
    assert "The reproduce took 40.0 s (sequential)." in page
    assert _table(page, "Summary") == [
        "| paper | held | failed | undecided | wall s | profile | date | commit | status |",
        "|---|---|---|---|---|---|---|---|---|",
        "| [gamma](#gamma) | - | - | - | 7.0 | - | - | - | run failed |",
        "| [beta](#beta) | 0 | 0 | 1 | 3.0 | smoke | 2026-12-04 | - | ok |",
        "| [alpha](#alpha) | 2 | 1 | 0 | 12.5 | smoke | 2026-12-04 | `0123456789ab` | ok |",
    ]


def test_each_paper_lists_every_claim_with_figures_and_outcome(run_dir: Path) -> None:
    page = claims_page(run_dir)
    alpha = _table(page, "alpha")
    assert alpha[0] == "| claim | paper's figure | ours | outcome |"
    assert alpha[2] == (
        "| Ours beats \\| the base. `beats` | 0.1 vs 0.2 | err.ours = 0.1; err.base = 0.2 | held |"
    )
    # HTML-like text is escaped for mkdocs; every value is shown (no "more below").
    assert "| Stops after &lt;/answer> on time. `big` | > 1 | err.ours = 0.1 | failed |" in alpha
    assert "many.k5 = 5" in alpha[4]
    assert "more below" not in page
    assert "Profile `smoke`, run 2026-12-04, commit `0123456789ab`, version 1.0: 12.5 s wall" in (
        page
    )
    assert "Claims: 2 held, 1 failed, 0 undecided." in page
    beta = _table(page, "beta")
    assert beta[2] == (
        "| Decided only at full scale. `later` | 0.9 | acc_full = n/a "
        "| undecided (only the full profile(s) produce this claim's figures) |"
    )
    assert "commit not recorded" in page.split("## beta")[1]
    gamma = page.split("## gamma")[1].split("## beta")[0]
    assert "The run failed after 7.0 s wall; no claim was decided." in gamma
    assert "| run failed: ValueError: gamma broke \\| on purpose | - | - | run failed |" in gamma


def test_page_rows_match_report_md(run_dir: Path) -> None:
    md, _, _ = write_report(run_dir)
    page = claims_page(run_dir)
    assert compare_with_report(page, md.read_text()) == []
    rows = markdown_claim_rows(page)
    assert rows == {
        key: value for key, value in rows.items() if key in markdown_claim_rows(md.read_text())
    }
    # Both texts give back every row of the one source, claim_rows.
    expected = {(r.paper, r.claim_id or "run failed") for r in claim_rows(collect_entries(run_dir))}
    assert set(rows) == set(markdown_claim_rows(md.read_text())) == expected
    assert rows["alpha", "many"][1] == tuple(f"many.k{i} = {i}" for i in range(6))


def test_comparison_finds_each_kind_of_drift(run_dir: Path) -> None:
    report = write_report(run_dir)[0].read_text()
    page = claims_page(run_dir)
    drifted = (
        report.replace(
            "err.ours = 0.1; err.base = 0.2 | held |", "err.ours = 0.1; err.base = 0.3 | held |"
        )
        .replace("| > 1 |", "| > 2 |")
        .replace("many.k3 = 3; ... 2 more below | held", "many.k3 = 3; ... 3 more below | held")
    )
    drifted = re.sub(r"\| acc_full = n/a \| undecided[^|]*\|", "| acc_full = n/a | held |", drifted)
    drifted = "\n".join(line for line in drifted.splitlines() if "run failed:" not in line)
    problems = compare_with_report(page, drifted)
    assert problems == [
        "alpha beats: ours 'err.ours = 0.1; err.base = 0.3' in report.md, not the page's",
        "alpha big: paper's figure '> 2' in report.md, '> 1' here",
        "alpha many: ours 'many.k0 = 0; many.k1 = 1; many.k2 = 2; many.k3 = 3; ... 3 more below'"
        " in report.md, not the page's",
        "beta later: 'held' in report.md, \"undecided (only the full profile(s) produce this "
        "claim's figures)\" on the page",
        "gamma run failed: on the page, not in report.md",
    ]


def test_same_run_same_page_written_atomically(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "site" / "docs" / "claims.md"
    assert write_claims_page(run_dir, out) == out
    first = out.read_text()
    write_claims_page(run_dir, out)
    assert out.read_text() == first
    assert [p.name for p in out.parent.iterdir()] == ["claims.md"]  # no temporary file left
    # A run folder that cannot make a page leaves the page as it was.
    (run_dir / "alpha" / "results.json").write_text("{")
    with pytest.raises(ClaimsPageError):
        write_claims_page(run_dir, out)
    assert out.read_text() == first


def test_bad_run_folders_are_refused_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(ClaimsPageError, match="is not a folder"):
        claims_page(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ClaimsPageError, match=r"holds no run folder with a results\.json"):
        claims_page(tmp_path / "empty")
    failed = tmp_path / "failed" / "alpha"
    failed.mkdir(parents=True)
    (failed / "error.txt").write_text("boom\n")
    with pytest.raises(ClaimsPageError, match=r"hold no results.json \(every run failed: alpha\)"):
        claims_page(tmp_path / "failed")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "not valid JSON"),
        (json.dumps({"paper": "alpha"}), "results are missing keys"),
        ("[]", "results must be a JSON object"),
    ],
)
def test_an_unreadable_results_json_is_named(run_dir: Path, text: str, problem: str) -> None:
    bad = run_dir / "beta" / "results.json"
    bad.write_text(text)
    with pytest.raises(ClaimsPageError) as info:
        claims_page(run_dir)
    assert f"{bad}: {problem}" in str(info.value)
    assert "1 results.json under" in str(info.value)


def test_comparison_refuses_text_without_a_claims_table() -> None:
    with pytest.raises(ClaimsPageError, match="no claims table"):
        compare_with_report("# nothing\n", "## Claims\n\nNo run jobs with claims.\n")


def test_cli_writes_the_default_page_under_the_current_folder(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["docs", str(run_dir)]) == 0
    out = tmp_path / "docs" / "claims.md"
    assert capsys.readouterr().out.strip() == str(Path("docs/claims.md"))
    assert out.read_text() == claims_page(run_dir)


def test_cli_check_compares_with_report_md(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "claims.md"
    assert main(["docs", str(run_dir), "--out", str(out), "--check"]) == 2
    assert "report.md is missing" in capsys.readouterr().err
    md = write_report(run_dir)[0]
    assert main(["docs", str(run_dir), "--out", str(out), "--check"]) == 0
    assert out.is_file()
    out.unlink()
    md.write_text(md.read_text().replace("err.base = 0.2 | held |", "err.base = 0.2 | failed |"))
    assert main(["docs", str(run_dir), "--out", str(out), "--check"]) == 1
    err = capsys.readouterr().err
    assert "disagrees with" in err
    assert "alpha beats: 'failed' in report.md, 'held' on the page" in err
    assert not out.exists()


def test_the_command_in_its_own_process(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "claims.md"
    command = [sys.executable, "-m", "icml26.shared.cli", "docs", str(run_dir), "--out", str(out)]
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(out)
    assert out.read_text() == claims_page(run_dir)
    command[4] = str(tmp_path / "nope")
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert proc.stderr.startswith("icml26: error: ")
    assert "nope is not a folder" in proc.stderr


def test_cli_bad_folder_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["docs", str(tmp_path / "nope"), "--out", str(tmp_path / "c.md")]) == 2
    assert "nope is not a folder" in capsys.readouterr().err
    assert not (tmp_path / "c.md").exists()


def test_a_real_run_folder_from_the_runner(
    fake_paper: str, run_dir: Path, capsys: pytest.CaptureFixture
) -> None:
    """A run folder the runner wrote (env.json with the real time and commit, plots) beside
    the synthetic ones: the page and the report still agree row for row."""
    assert main(["run", fake_paper, "--profile", "smoke", "--out", str(run_dir / "fake")]) == 0
    md, page_html, entries = write_report(run_dir)
    assert any(e.paper == "fake-paper" and e.ok and e.date for e in entries)
    page = claims_page(run_dir)
    assert compare_with_report(page, md.read_text()) == []
    assert "| [fake-paper](#fake-paper) | 1 | 1 | 0 |" in page
    html = page_html.read_text()
    assert 'src="fake/plots/curve.png" loading="lazy"' in html
    assert "base64" not in html
    os.remove(run_dir / "fake" / "results.json")
    assert "fake-paper" in claims_page(run_dir)  # a run that did not finish: a failed row


@pytest.mark.slow
def test_a_real_reproduce_of_the_quickest_paper(tmp_path: Path) -> None:
    """``icml26 reproduce blitzrank --profile smoke`` (about 5 s of work), then the page."""
    if "blitzrank" not in installed():
        pytest.skip("icml26-blitzrank is not installed here (the shared package's own session)")
    out = tmp_path / "repro"
    main(["reproduce", "blitzrank", "--profile", "smoke", "--out", str(out), "--jobs", "1"])
    page = claims_page(out)
    assert compare_with_report(page, (out / "report.md").read_text()) == []
    n_claims = len(json.loads((out / "blitzrank" / "results.json").read_text())["claims"])
    assert len(_table(page, "blitzrank")) == 2 + n_claims


def test_cli_run_name_replaces_the_local_path(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "claims.md"
    assert main(["docs", str(run_dir), "--out", str(out), "--run-name", "quick at abc123"]) == 0
    text = out.read_text()
    assert "reproduce run `quick at abc123`" in text
    assert str(run_dir) not in text
    assert text == claims_page(run_dir, shown_as="quick at abc123")
    # Without it the page names the folder as given.
    assert str(run_dir) in claims_page(run_dir)

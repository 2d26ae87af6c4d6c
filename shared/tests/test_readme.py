"""``icml26 readme``: a README's results block and RESULTS.md, generated from run folders."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from icml26.shared import Claim, atomic_write_json, build_results
from icml26.shared.cli import main
from icml26.shared.readme import (
    HISTORY_FILE,
    RESULTS_BEGIN,
    RESULTS_END,
    SUMMARY_PATTERN,
    ReadmeError,
    RunSummary,
    _summary_line,
    readme_text,
    summarize_run,
    update_readme,
)

COMMIT = "0123456789abcdef0123456789abcdef01234567"
README = f"""# fake-paper

Prose a person wrote.

## Results

{RESULTS_BEGIN}
this stale line goes
{RESULTS_END}

More prose, kept as it is.
"""


def _readme(root: Path, slug: str = "fake-paper") -> Path:
    path = root / "packages" / slug / "README.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(README, encoding="utf-8")
    return path


def _run_folder(
    folder: Path,
    *,
    paper: str = "fake-paper",
    profile: str = "quick",
    time: str = "2026-05-01T10:00:00+00:00",
    commit: str | None = COMMIT,
    score: float = 7.25,
) -> Path:
    """A finished run folder written the way the runner writes one."""
    claims = [
        Claim("big_score", "The score is at least 5.", ">= 5", "score >= 5"),
        Claim("x_small", "x stays below 2.", "< 2", "x < 2"),
        Claim("y_known", "y is measured.", "0 | 1", "y > 0"),
        Claim("all_of", "Every seed counts.", "4/4", "min_of('seed.*') > 0"),
    ]
    results = build_results(
        paper=paper,
        version="9.9.9",
        profile=profile,
        config={"n": 1},
        metrics={
            "score": score,
            "x": 3.0,
            "y": float("nan"),
            "seed": {str(i): 0.5 + i for i in range(5)},
        },
        claims=claims,
        seconds=12.345,
        cpu_seconds=20.0,
    )
    folder.mkdir(parents=True)
    atomic_write_json(folder / "results.json", results)
    env = {"time": time, "git": {"commit": commit, "dirty": False}, "paper": paper}
    atomic_write_json(folder / "env.json", env)
    return folder


def test_round_trip_from_a_real_run(fake_paper: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["run", fake_paper, "--profile", "smoke", "--out", str(out), "--set", "n=7"]) == 0
    env = json.loads((out / "env.json").read_text())
    env["git"] = {"commit": COMMIT, "dirty": False}  # tmp_path is not a git checkout
    (out / "env.json").write_text(json.dumps(env))
    readme = _readme(tmp_path)

    assert main(["readme", fake_paper, str(out)]) == 0  # default path, from the workspace root

    text = readme.read_text()
    before, block, after = (
        text.split(RESULTS_BEGIN)[0],
        text.split(RESULTS_BEGIN)[1].split(RESULTS_END)[0],
        text.split(RESULTS_END)[1],
    )
    assert before == README.split(RESULTS_BEGIN)[0]
    assert after == README.split(RESULTS_END)[1]
    assert "stale" not in block
    results = json.loads((out / "results.json").read_text())
    assert f"Profile `smoke`, {env['time'][:10]}, commit `{COMMIT[:12]}`" in block
    assert f"{results['seconds']:.1f} s wall" in block
    assert "| `big_score` | >= 5 | score = 7 | held |" in block
    assert "| `x_small` | < 2 | nested.x = 1.5 | held |" in block
    assert "Claims: 2 held." in block
    history = (readme.parent / HISTORY_FILE).read_text()
    assert history.startswith("# fake-paper: results history\n")
    assert f"## {env['time'][:10]}, profile smoke, commit {COMMIT[:12]}" in history


def test_writing_the_same_run_twice_gives_the_same_files(tmp_path: Path) -> None:
    readme = _readme(tmp_path)
    run = _run_folder(tmp_path / "run")
    update_readme("fake-paper", run, readme)
    first = readme.read_text(), (tmp_path / "packages/fake-paper" / HISTORY_FILE).read_text()
    update_readme("fake-paper", run, readme)
    second = readme.read_text(), (tmp_path / "packages/fake-paper" / HISTORY_FILE).read_text()
    assert first == second
    block = first[0]
    # Compact in the README: a null value, a `|` escaped, the outcome words.
    assert "| `x_small` | < 2 | x = 3 | failed |" in block
    assert "| `y_known` | 0 \\| 1 | y = n/a | undecided (metric 'y' is " in block
    assert "Claims: 2 held, 1 failed, 1 undecided." in block
    # Past three measured values, the README points at RESULTS.md, which lists them all.
    assert "seed.2 = 2.5; +2 more in RESULTS.md | held |" in block
    assert "seed.3 = 3.5; seed.4 = 4.5 | held |" in second[1]
    assert "20.0 s CPU" in block


def test_history_is_newest_first_and_a_run_replaces_its_own_section(tmp_path: Path) -> None:
    readme = _readme(tmp_path)
    history = readme.parent / HISTORY_FILE
    may = _run_folder(tmp_path / "may", time="2026-05-01T10:00:00+00:00")
    june = _run_folder(tmp_path / "june", time="2026-06-02T23:30:00-02:00")  # 06-03 in UTC
    smoke = _run_folder(tmp_path / "smoke", profile="smoke", time="2026-05-01T12:00:00+00:00")
    update_readme("fake-paper", june, readme)
    update_readme("fake-paper", may, readme)  # older: goes below June
    update_readme("fake-paper", smoke, readme)  # same day as May, written later: above it
    headings = [line for line in history.read_text().splitlines() if line.startswith("## ")]
    assert headings == [
        f"## 2026-06-03, profile quick, commit {COMMIT[:12]}",
        f"## 2026-05-01, profile smoke, commit {COMMIT[:12]}",
        f"## 2026-05-01, profile quick, commit {COMMIT[:12]}",
    ]
    # The README shows the run written last.
    assert "Profile `smoke`, 2026-05-01" in readme.read_text()

    # The same (date, profile, commit) again, now with another score: its section is replaced.
    rerun = _run_folder(tmp_path / "may-again", time="2026-05-01T18:00:00+00:00", score=1.5)
    update_readme("fake-paper", rerun, readme)
    text = history.read_text()
    assert [line for line in text.splitlines() if line.startswith("## ")] == headings
    assert "score = 1.5" in text
    assert "score = 7.25" in text  # June's section is untouched
    assert text.count("score = 7.25") == 2  # June and smoke; May's old one is gone


def test_history_of_a_run_without_a_commit(tmp_path: Path) -> None:
    readme = _readme(tmp_path)
    update_readme("fake-paper", _run_folder(tmp_path / "run", commit=None), readme)
    assert "commit unknown" in readme.read_text()
    assert (
        "## 2026-05-01, profile quick, commit unknown" in (readme.parent / HISTORY_FILE).read_text()
    )


@pytest.mark.parametrize(
    ("readme", "message"),
    [
        ("# no markers\n", f"has no {RESULTS_BEGIN} line"),
        (f"{RESULTS_BEGIN}\n", f"has no {RESULTS_END} line"),
        (f"{RESULTS_END}\n{RESULTS_BEGIN}\n", "comes before"),
        (f"{RESULTS_BEGIN}\n{RESULTS_END}\n{RESULTS_BEGIN}\n", "on 2 lines"),
        # Markers shown in a fenced example are not markers.
        (f"```markdown\n{RESULTS_BEGIN}\n{RESULTS_END}\n```\n", f"has no {RESULTS_BEGIN} line"),
    ],
)
def test_markers_missing_or_misplaced(tmp_path: Path, readme: str, message: str) -> None:
    run = summarize_run(_run_folder(tmp_path / "run"), "fake-paper")
    with pytest.raises(ReadmeError, match=message):
        readme_text(readme, run)


def test_a_fenced_example_of_the_markers_is_left_alone(tmp_path: Path) -> None:
    run = summarize_run(_run_folder(tmp_path / "run"), "fake-paper")
    example = f"````markdown\n```python\n```\n{RESULTS_BEGIN}\n{RESULTS_END}\n````\n"
    text = readme_text(example + README, run)
    assert text.startswith(example)
    assert text.count("| `big_score` |") == 1


def test_cli_errors_name_the_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    run = _run_folder(tmp_path / "run")
    other = _run_folder(tmp_path / "other", paper="other-paper")
    failed = tmp_path / "failed"
    failed.mkdir()
    (failed / "error.txt").write_text("RuntimeError: boom\n")

    def error(*argv: str) -> str:
        assert main(["readme", *argv]) == 2
        return capsys.readouterr().err

    assert "packages/fake-paper/README.md: no such README (run from the workspace root" in error(
        "fake-paper", str(run)
    )
    readme = _readme(tmp_path)
    assert "holds 'other-paper''s results, not 'fake-paper''s" in error("fake-paper", str(other))
    assert "has no results.json (it holds error.txt: the run failed)" in error(
        "fake-paper", str(failed)
    )
    assert "is not a folder" in error("fake-paper", str(tmp_path / "nowhere"))
    readme.write_text("# no markers\n")
    assert f"has no {RESULTS_BEGIN} line" in error("fake-paper", str(run))
    assert readme.read_text() == "# no markers\n"  # nothing written on an error
    assert not (readme.parent / HISTORY_FILE).exists()

    elsewhere = tmp_path / "docs" / "README.md"
    elsewhere.parent.mkdir()
    elsewhere.write_text(README)
    assert main(["readme", "fake-paper", str(run), "--readme", str(elsewhere)]) == 0
    assert capsys.readouterr().out.split() == [str(elsewhere), str(elsewhere.parent / HISTORY_FILE)]
    assert (tmp_path / "docs" / HISTORY_FILE).is_file()


def test_a_papers_own_tables_follow_the_claims(tmp_path: Path) -> None:
    from dataclasses import dataclass

    from icml26.shared import Paper

    @dataclass(frozen=True)
    class _Cfg:
        seed: int = 0

    def tables(results: dict) -> str:
        return f"| score |\n|---|\n| {results['metrics']['score']:.2f} |"

    paper = Paper(
        slug="fake-paper",
        title="t",
        profiles={p: _Cfg() for p in ("smoke", "quick", "full")},
        run=lambda c, r: {},
        readme_tables=tables,
    )
    run = summarize_run(_run_folder(tmp_path / "run"), "fake-paper", paper)
    text = readme_text(README, run)
    assert text.index("| `x_small`") < text.index("| 7.25 |")


def test_a_hand_written_history_is_kept_below_the_generated_sections(tmp_path: Path) -> None:
    from icml26.shared.readme import LEGACY_MARK, history_text

    run = summarize_run(_run_folder(tmp_path / "run"), "fake-paper")
    legacy = "# Old results\n\nMeasured by hand on 2026-01-01: 0.91.\n"
    once = history_text(legacy, run)
    assert once.index("## 2026-05-01") < once.index(LEGACY_MARK) < once.index("by hand on")
    assert history_text(once, run) == once
    assert history_text(None, run).count(LEGACY_MARK) == 0


def test_redecide_uses_the_installed_rules_not_the_stored_outcomes(tmp_path: Path) -> None:
    from dataclasses import dataclass

    from icml26.shared import Paper

    @dataclass(frozen=True)
    class _Cfg:
        seed: int = 0

    stricter = Claim("big_score", "The score is at least 8.", ">= 8", "score >= 8")
    paper = Paper(
        slug="fake-paper",
        title="t",
        profiles={p: _Cfg() for p in ("smoke", "quick", "full")},
        run=lambda c, r: {},
        claims=(stricter,),
    )
    folder = _run_folder(tmp_path / "run")
    stored = summarize_run(folder, "fake-paper", paper)
    assert [c["holds"] for c in stored.claims] == [True, False, None, True]
    again = summarize_run(folder, "fake-paper", paper, redecide=True)
    assert [(c["id"], c["holds"]) for c in again.claims] == [("big_score", False)]
    assert "--redecide" in readme_text(README, again)
    assert "--redecide" not in readme_text(README, stored)
    with pytest.raises(ReadmeError, match="not installed"):
        summarize_run(folder, "fake-paper", None, redecide=True)


@pytest.mark.parametrize("kind", ["run", "bench"])
@pytest.mark.parametrize("redecided", [False, True])
@pytest.mark.parametrize("commit", [None, COMMIT])
@pytest.mark.parametrize("dirty", [False, True])
@pytest.mark.parametrize("cpu", [None, 12.5])
@pytest.mark.parametrize("holds", [(), (True,), (True, False, None)])
def test_summary_pattern_reads_every_form_of_the_summary_line(
    kind: str,
    redecided: bool,
    commit: str | None,
    dirty: bool,
    cpu: float | None,
    holds: tuple[bool | None, ...],
) -> None:
    """``SUMMARY_PATTERN`` (read by the docs site's landing page) matches what is written."""
    run = RunSummary(
        paper="fake-paper",
        version="1.2.3",
        profile="quick",
        kind=kind,
        date="2026-12-04",
        commit=commit,
        dirty=dirty,
        seconds=41.25,
        cpu_seconds=cpu,
        claims=tuple({"id": f"c{i}", "holds": h} for i, h in enumerate(holds)),
        redecided=redecided,
    )
    match = re.search(SUMMARY_PATTERN, _summary_line(run))
    assert match is not None, _summary_line(run)
    assert match["profile"] == "quick"
    assert match["date"] == "2026-12-04"
    assert match["job"] == (None if kind == "run" else kind)
    assert bool(match["redecided"]) is redecided
    expected = {(): "no claims", (True,): "1 held", (True, False, None): "1 held, 1 failed"}
    assert match["claims"].startswith(expected[holds])

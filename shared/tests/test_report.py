"""The report: one document model, two renderers; the summary, then claims across papers;
full-width figures loaded lazily from their files."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from icml26.shared import Claim, atomic_write_json, build_results
from icml26.shared.report import (
    Code,
    Strong,
    Table,
    _html_table,
    anchor,
    collect_entries,
    markdown_table,
    render_html,
    render_markdown,
    write_report,
)

PNG_1PX = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


def _run_folder(
    root: Path,
    paper: str,
    metrics: dict,
    claims: list[Claim],
    *,
    kind: str = "run",
    plots: tuple[str, ...] = (),
    seconds: float = 12.5,
    cpu: float = 20.25,
) -> Path:
    folder = root / f"{paper}-{kind}"
    folder.mkdir(parents=True)
    results = build_results(
        paper=paper,
        version="1.0",
        profile="quick",
        config={},
        metrics=metrics,
        claims=claims,
        seconds=seconds,
        kind=kind,
        cpu_seconds=cpu,
    )
    atomic_write_json(folder / "results.json", results)
    if plots:
        (folder / "plots").mkdir()
        for name in plots:
            (folder / "plots" / f"{name}.png").write_bytes(PNG_1PX)
    return folder


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "rep"
    _run_folder(
        root,
        "alpha",
        {"err": {"ours": 0.1, "base": 0.2}, "many": {f"k{i}": i for i in range(6)}},
        [
            Claim(
                "beats", "Ours beats the base | by a margin.", "0.1 vs 0.2", "err.ours < err.base"
            ),
            Claim("big", "Ours is huge.", "> 1", "err.ours > 1"),
            Claim("many", "Many values.", "all >= 0", "min_of('many.*') >= 0"),
        ],
        plots=("wide_pareto", "curve"),
    )
    _run_folder(
        root,
        "alpha",
        {"speedup": 3.0},
        [Claim("fast", "Faster than the base.", "2x", "speedup >= 2")],
        kind="bench",
        seconds=1.0,
        cpu=1.0,
    )
    failed = root / "beta"
    failed.mkdir()
    (failed / "error.txt").write_text("Traceback\nValueError: beta <broke> on purpose\n")
    return root


def test_table_model_checks_its_shape() -> None:
    with pytest.raises(ValueError, match="every row needs 2 cells"):
        Table(("a", "b"), (("1",),), ("",))
    with pytest.raises(ValueError, match="1 rows but 0 row classes"):
        Table(("a",), (("1",),), ())


def test_one_table_renders_to_both_formats() -> None:
    table = Table(
        ("claim", "held"),
        ((("a | b ", Code("id_1")), "yes"), ((Strong("<x>"), "\nz"), "no")),
        ("yes", "no"),
        css_class="by-paper",
    )
    md = markdown_table(table).splitlines()
    assert md[:2] == ["| claim | held |", "|---|---|"]
    assert md[2] == "| a \\| b `id_1` | yes |"
    assert md[3] == "| **<x>** z | no |"
    page = _html_table(table)
    assert page.startswith('<table class="by-paper">')
    assert '<tr class="yes"><td>a | b <code>id_1</code></td><td>yes</td></tr>' in page
    assert '<tr class="no"><td><b>&lt;x&gt;</b>\nz</td><td>no</td></tr>' in page


def test_summary_comes_first_then_claims_then_sections(root: Path) -> None:
    md = render_markdown(collect_entries(root), root)
    headings = re.findall(r"^#+ .*$", md, flags=re.MULTILINE)
    assert headings == [
        "# icml26 reproduction report",
        "## Summary",
        "## Claims",
        "## alpha (bench, profile quick)",
        "## alpha (run, profile quick)",
        "## beta (run, profile ?)",
    ]
    claims = md.split("## Claims")[1].split("## alpha")[0]
    # Every claim of the run job, none of the bench's; the failed paper as one row.
    assert "| alpha | Ours beats the base \\| by a margin. `beats` | 0.1 vs 0.2 |" in claims
    assert "err.ours = 0.1; err.base = 0.2 | held |" in claims
    assert "`big`" in claims
    assert "| failed |" in claims
    assert "`fast`" not in claims
    assert (
        "| beta | run failed: ValueError: beta <broke> on purpose | - | - | run failed |" in claims
    )
    # Six values: the overview shows four and points to the section for the rest.
    assert "many.k3 = 3; ... 2 more below | held |" in claims
    assert "many.k5 = 5" in md.split("## alpha (run")[1]


def test_summary_has_one_row_per_job_with_outcomes_times_and_links(root: Path) -> None:
    atomic_write_json(root / "reproduce.json", {"seconds": 33.0, "mode": "2 papers at a time"})
    md = render_markdown(collect_entries(root), root)
    summary = md.split("## Summary")[1].split("## Claims")[0]
    assert (
        "| paper | job | held | failed | undecided | wall s | CPU s | version | profile | status |"
        in summary
    )
    assert (
        "| [alpha](#alpha-run-profile-quick) | run | 2 | 1 | 0 | 12.5 | 20.2 | 1.0 | quick | ok |"
        in summary
    )
    assert "| [alpha](#alpha-bench-profile-quick) | bench | 1 | 0 | 0 | 1.0 |" in summary
    assert "| [beta](#beta-run-profile-) | run | - | - | - | - | - | ? | ? | FAILED |" in summary
    assert "4 claims: 3 held, 1 failed, 0 undecided" in summary
    assert "13.5 s of job wall time, 21.2 s of CPU" in summary
    assert "The reproduce took 33.0 s (2 papers at a time)." in summary
    assert "Finished in 12.5 s wall, 20.2 s CPU. Folder: `alpha-run`." in md


def test_summary_links_reach_the_section_ids_of_the_html(root: Path) -> None:
    _, html_path, _ = write_report(root)
    page = html_path.read_text()
    targets = re.findall(r'<a href="#([\w-]+)">(?:alpha|beta)</a>', page)
    assert len(targets) == 3
    for target in targets:
        assert f'<h2 id="{target}">' in page


def test_heading_anchor_follows_github_and_mkdocs() -> None:
    assert anchor("alpha (run, profile quick)") == "alpha-run-profile-quick"
    assert anchor("beta (run, profile ?)") == "beta-run-profile-"  # as GitHub: no strip
    assert anchor("lean-slt") == "lean-slt"


def test_html_loads_figures_lazily_from_their_files(root: Path) -> None:
    md_path, html_path, _ = write_report(root)
    page = html_path.read_text()
    # The first table on the page is the summary; the second the cross-paper claims table.
    first_table, claims_table = page.split("<table", 3)[1:3]
    assert "undecided</th>" in first_table
    assert "paper&#x27;s figure" in claims_table
    assert '<tr class="yes">' in claims_table
    assert '<tr class="no">' in claims_table
    assert '<tr class="failed">' in claims_table
    assert page.index('<h2 id="summary">Summary</h2>') < page.index('<h2 id="claims">')
    # Each plot once, linked (not inlined), lazily loaded, full column width, enlargeable.
    assert "base64" not in page
    assert page.count('loading="lazy"') == 2
    for name in ("wide_pareto", "curve"):
        src = f'src="alpha-run/plots/{name}.png" loading="lazy" decoding="async"'
        assert src + ' width="1" height="1">' in page
        assert (root / "alpha-run" / "plots" / f"{name}.png").is_file()
    assert re.search(r"figure\.plot img\{[^}]*width:100%", page)
    for n in (1, 2):
        assert f'<figure class="plot" id="fig{n}"><a href="#fig{n}"' in page
        assert f'<a class="close" href="#fig{n}-at"' in page
    assert "<script" not in page
    assert 'src="http' not in page
    assert "&lt;broke&gt;" in page
    # The Markdown links each figure to itself, relative to the report.
    assert "[![wide_pareto](alpha-run/plots/wide_pareto.png)](alpha-run/plots/wide_pareto.png)" in (
        md_path.read_text()
    )


def test_figure_paths_are_url_quoted(tmp_path: Path) -> None:
    root = tmp_path / "rep"
    _run_folder(root, "gamma", {"x": 1.0}, [], plots=("a b#c",))
    _, html_path, _ = write_report(root)
    page = html_path.read_text()
    assert 'src="gamma-run/plots/a%20b%23c.png"' in page
    assert "(gamma-run/plots/a%20b%23c.png)" in (root / "report.md").read_text()


def test_a_report_of_many_figures_stays_small(tmp_path: Path) -> None:
    root = tmp_path / "rep"
    big = PNG_1PX + b"\0" * 200_000  # a 200 kB figure
    folder = _run_folder(root, "delta", {"x": 1.0}, [], plots=tuple(f"p{i}" for i in range(20)))
    for plot in (folder / "plots").iterdir():
        plot.write_bytes(big)
    _, html_path, _ = write_report(root)
    assert html_path.stat().st_size < 30_000  # 4 MB of figures, none of it in the page


def test_unreadable_results_are_a_failed_entry_that_names_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "rep" / "bad"
    folder.mkdir(parents=True)
    (folder / "results.json").write_text("{not json")
    (entry,) = collect_entries(tmp_path / "rep")
    assert not entry.ok
    assert entry.unreadable
    assert str(folder / "results.json") in entry.unreadable
    assert "not valid JSON" in entry.unreadable


def test_empty_folder_gives_an_empty_report(tmp_path: Path) -> None:
    md = render_markdown([], tmp_path)
    assert "No run jobs with claims." in md
    assert "0 jobs (0 finished, 0 failed)" in md
    assert '<h1 id="icml26-reproduction-report">icml26 reproduction report</h1>' in render_html(
        [], tmp_path
    )


def test_error_after_results_marks_them_stale(root: Path) -> None:
    folder = root / "alpha-run"
    (folder / "error.txt").write_text("icml26: error: the folder holds a run with another config\n")
    entry = next(e for e in collect_entries(root) if e.folder == folder)
    assert not entry.ok
    assert "another config" in (entry.error or "")
    os.utime(folder / "error.txt", (0, 0))  # an old error, then a run that succeeded
    entry = next(e for e in collect_entries(root) if e.folder == folder)
    assert entry.ok

"""The report: one document model, two renderers; claims across papers first; full-width figures."""

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


def test_cross_paper_claims_come_first_then_summary_then_sections(root: Path) -> None:
    md = render_markdown(collect_entries(root), root)
    headings = re.findall(r"^#+ .*$", md, flags=re.MULTILINE)
    assert headings == [
        "# icml26 reproduction report",
        "## Claims",
        "## Summary",
        "## alpha (bench, profile quick)",
        "## alpha (run, profile quick)",
        "## beta (run, profile ?)",
    ]
    claims = md.split("## Claims")[1].split("## Summary")[0]
    # Every claim of the run job, none of the bench's; the failed paper as one row.
    assert "| alpha | Ours beats the base \\| by a margin. `beats` | 0.1 vs 0.2 |" in claims
    assert "err.ours = 0.1; err.base = 0.2 | yes |" in claims
    assert "`big`" in claims
    assert "| no |" in claims
    assert "`fast`" not in claims
    assert "| beta | run failed: ValueError: beta <broke> on purpose | - | - | failed |" in claims
    # Six values: the overview shows four and points to the section for the rest.
    assert "many.k3 = 3; ... 2 more below | yes |" in claims
    assert "many.k5 = 5" in md.split("## alpha (run")[1]


def test_summary_has_wall_and_cpu_seconds(root: Path) -> None:
    atomic_write_json(root / "reproduce.json", {"seconds": 33.0, "mode": "2 papers at a time"})
    md = render_markdown(collect_entries(root), root)
    summary = md.split("## Summary")[1].split("## alpha")[0]
    assert "| paper | job | version | profile | claims held | wall s | CPU s | status |" in summary
    assert "| alpha | run | 1.0 | quick | 2/3 | 12.5 | 20.2 | ok |" in summary
    assert "| beta | run | ? | ? | - | - | - | FAILED |" in summary
    assert "13.5 s of job wall time, 21.2 s of CPU" in summary
    assert "The reproduce took 33.0 s (2 papers at a time)." in summary
    assert "Finished in 12.5 s wall, 20.2 s CPU. Folder: `alpha-run`." in md


def test_html_is_self_contained_coloured_and_full_width(root: Path) -> None:
    md_path, html_path, _ = write_report(root)
    page = html_path.read_text()
    # The first table on the page is the cross-paper claims table.
    first_table = page.split("<table", 2)[1]
    assert "paper&#x27;s figure" in first_table
    assert '<tr class="yes">' in first_table
    assert '<tr class="no">' in first_table
    assert '<tr class="failed">' in first_table
    assert page.index("<h2>Claims</h2>") < page.index("<h2>Summary</h2>")
    # Each plot once, inline, full column width, wrapped in a link that enlarges it.
    assert page.count("data:image/png;base64,") == 2
    assert "max-width:48%" not in page
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


def test_empty_folder_gives_an_empty_report(tmp_path: Path) -> None:
    md = render_markdown([], tmp_path)
    assert "No run jobs with claims." in md
    assert "0 jobs (0 finished, 0 failed)" in md
    assert "<h1>icml26 reproduction report</h1>" in render_html([], tmp_path)


def test_error_after_results_marks_them_stale(root: Path) -> None:
    folder = root / "alpha-run"
    (folder / "error.txt").write_text("icml26: error: the folder holds a run with another config\n")
    entry = next(e for e in collect_entries(root) if e.folder == folder)
    assert not entry.ok
    assert "another config" in (entry.error or "")
    os.utime(folder / "error.txt", (0, 0))  # an old error, then a run that succeeded
    entry = next(e for e in collect_entries(root) if e.folder == folder)
    assert entry.ok

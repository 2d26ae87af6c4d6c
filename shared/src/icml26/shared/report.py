"""Reports over run folders: ``report.md`` and a self-contained ``report.html``.

A report is rebuilt from what the runs wrote (``results.json``, ``error.txt``, ``env.json``,
``plots/``), never from memory, so ``icml26 report DIR`` gives the same report as the
``reproduce`` that made DIR.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import json
import os
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from icml26.shared.atomic import atomic_write_text
from icml26.shared.results import ResultsError, load_results

__all__ = ["ReportEntry", "collect_entries", "render_html", "render_markdown", "write_report"]

_MAX_DEPTH = 3


@dataclass
class ReportEntry:
    """One run folder as the report sees it: results, or the error that stopped it."""

    folder: Path
    paper: str
    kind: str = "run"
    profile: str = "?"
    results: dict[str, Any] | None = None
    error: str | None = None
    plots: list[Path] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.results is not None and self.error is None

    @property
    def seconds(self) -> float | None:
        return float(self.results["seconds"]) if self.results else None

    def held(self) -> tuple[int, int]:
        claims = self.results["claims"] if self.results else []
        return sum(c["holds"] is True for c in claims), len(claims)


def _read_env(folder: Path) -> dict[str, Any]:
    try:
        env = json.loads((folder / "env.json").read_text(encoding="utf-8"))
        return env if isinstance(env, dict) else {}
    except (OSError, json.JSONDecodeError):
        return {}


def _entry(folder: Path) -> ReportEntry:
    env = _read_env(folder)
    paper = str(env.get("paper") or folder.name)
    entry = ReportEntry(
        folder=folder,
        paper=paper,
        kind=str(env.get("kind", "run")),
        profile=str(env.get("profile", "?")),
    )
    results_path = folder / "results.json"
    if results_path.exists():
        try:
            entry.results = load_results(results_path)
            entry.paper = entry.results["paper"]
            entry.profile = entry.results["profile"]
            entry.kind = entry.results.get("kind", entry.kind)
        except ResultsError as exc:
            entry.error = str(exc)
    error_path = folder / "error.txt"
    if entry.results is None and entry.error is None:
        if error_path.exists():
            lines = error_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
            entry.error = "\n".join(lines[-12:]) or "failed (empty error.txt)"
        else:
            entry.error = "no results.json: the run did not finish"
    plots_dir = folder / "plots"
    if plots_dir.is_dir():
        entry.plots = sorted(p for p in plots_dir.iterdir() if p.suffix.lower() in {".png", ".svg"})
    return entry


def _is_run_folder(folder: Path) -> bool:
    return any((folder / name).exists() for name in ("results.json", "error.txt", "config.json"))


def collect_entries(root: str | os.PathLike[str]) -> list[ReportEntry]:
    """Every run folder under ``root`` (``root`` itself included), newest per paper and kind."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"{root} is not a folder")
    folders: list[Path] = []
    frontier = [(root, 0)]
    while frontier:
        folder, depth = frontier.pop()
        if _is_run_folder(folder):
            folders.append(folder)
            continue
        if depth < _MAX_DEPTH:
            frontier.extend(
                (p, depth + 1)
                for p in folder.iterdir()
                if p.is_dir() and not p.name.startswith(".")
            )
    newest: dict[tuple[str, str], ReportEntry] = {}
    for folder in sorted(folders, key=lambda p: p.stat().st_mtime):
        entry = _entry(folder)
        newest[(entry.paper, entry.kind)] = entry
    return [newest[k] for k in sorted(newest)]


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        if value == 0 or 1e-3 <= abs(value) < 1e5:
            return f"{value:.4g}"
        return f"{value:.3e}"
    return str(value)


def _measured(claim: dict[str, Any]) -> str:
    parts = [f"{k} = {_fmt(v)}" for k, v in claim["measured"].items()]
    return "; ".join(parts) or "-"


def _held(claim: dict[str, Any]) -> str:
    return {True: "yes", False: "no", None: "undecided"}[claim["holds"]]


def _title(entries: list[ReportEntry]) -> str:
    ok = sum(e.ok for e in entries)
    held = sum(e.held()[0] for e in entries)
    total = sum(e.held()[1] for e in entries)
    stamp = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    return (
        f"{len(entries)} runs ({ok} finished, {len(entries) - ok} failed); claims held {held}/{total}. "
        f"Built {stamp} on {platform.platform()} ({os.cpu_count()} CPUs)."
    )


def _summary_rows(entries: list[ReportEntry]) -> list[list[str]]:
    rows = []
    for e in entries:
        held, total = e.held()
        rows.append(
            [
                e.paper,
                e.kind,
                e.results["version"] if e.results else "?",
                e.profile,
                f"{held}/{total}" if e.ok else "-",
                _fmt(e.seconds) if e.seconds is not None else "-",
                "ok" if e.ok else "FAILED",
            ]
        )
    return rows


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    def clean(cell: str) -> str:
        return cell.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(clean(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def render_markdown(entries: list[ReportEntry], root: Path) -> str:
    """The report as Markdown (plots linked relative to ``root``)."""
    out = ["# icml26 reproduction report", "", _title(entries), ""]
    out.append(
        _md_table(
            ["paper", "job", "version", "profile", "claims held", "seconds", "status"],
            _summary_rows(entries),
        )
    )
    for e in entries:
        out += ["", f"## {e.paper} ({e.kind}, profile {e.profile})", ""]
        if not e.ok:
            out += ["**Failed.**", "", "```", e.error or "", "```"]
            continue
        assert e.results is not None
        cpu = e.results.get("cpu_seconds")
        cpu_text = f" ({_fmt(cpu)} s of CPU)" if cpu is not None else ""
        out.append(f"Finished in {_fmt(e.seconds)} s{cpu_text}. Folder: `{e.folder}`.")
        out.append("")
        rows = [
            [
                f"{c['statement']} (`{c['id']}`)",
                c["paper_value"],
                _measured(c),
                _held(c) + (f" ({c['note']})" if c.get("note") else ""),
            ]
            for c in e.results["claims"]
        ]
        out.append(
            _md_table(["claim", "paper", "ours", "held"], rows)
            if rows
            else "_No claims for this job._"
        )
        for plot in e.plots:
            rel = os.path.relpath(plot, root)
            out += ["", f"![{plot.stem}]({rel})"]
    return "\n".join(out) + "\n"


_CSS = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:14px}td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top}
th{background:#f3f3f3}.yes{color:#08752a;font-weight:600}.no{color:#b3261e;font-weight:600}.undecided{color:#8a6d00}
.failed{color:#b3261e}pre{background:#f7f7f7;padding:8px;overflow:auto}img{max-width:48%;margin:4px;border:1px solid #eee}
"""


def _html_table(header: list[str], rows: list[list[str]], classes: list[str] | None = None) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        cls = f' class="{classes[i]}"' if classes else ""
        body.append(
            "<tr>"
            + "".join(
                f"<td{cls if j == len(row) - 1 else ''}>{html.escape(c)}</td>"
                for j, c in enumerate(row)
            )
            + "</tr>"
        )
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _embed(plot: Path) -> str:
    mime = "image/svg+xml" if plot.suffix.lower() == ".svg" else "image/png"
    data = base64.b64encode(plot.read_bytes()).decode("ascii")
    return f'<img alt="{html.escape(plot.stem)}" title="{html.escape(plot.stem)}" src="data:{mime};base64,{data}">'


def render_html(entries: list[ReportEntry]) -> str:
    """The report as one self-contained HTML page (plots embedded as data URIs)."""
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>icml26 report</title>",
        f"<style>{_CSS}</style></head><body><h1>icml26 reproduction report</h1>",
        f"<p>{html.escape(_title(entries))}</p>",
        _html_table(
            ["paper", "job", "version", "profile", "claims held", "seconds", "status"],
            _summary_rows(entries),
        ),
    ]
    for e in entries:
        parts.append(
            f"<h2>{html.escape(e.paper)} ({html.escape(e.kind)}, profile {html.escape(e.profile)})</h2>"
        )
        if not e.ok:
            parts.append(
                f"<p class='failed'><b>Failed.</b></p><pre>{html.escape(e.error or '')}</pre>"
            )
            continue
        assert e.results is not None
        parts.append(f"<p>Finished in {_fmt(e.seconds)} s.</p>")
        claims = e.results["claims"]
        rows = [
            [
                f"{c['statement']} ({c['id']})",
                c["paper_value"],
                _measured(c),
                _held(c) + (f" ({c['note']})" if c.get("note") else ""),
            ]
            for c in claims
        ]
        parts.append(
            _html_table(["claim", "paper", "ours", "held"], rows, [_held(c) for c in claims])
            if rows
            else "<p><i>No claims for this job.</i></p>"
        )
        parts.append("<div>" + "".join(_embed(p) for p in e.plots) + "</div>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(root: str | os.PathLike[str]) -> tuple[Path, Path, list[ReportEntry]]:
    """Collect the runs under ``root`` and write ``root/report.md`` and ``root/report.html``."""
    root = Path(root)
    entries = collect_entries(root)
    md = atomic_write_text(root / "report.md", render_markdown(entries, root))
    page = atomic_write_text(root / "report.html", render_html(entries))
    return md, page, entries

"""Reports over run folders: ``report.md`` and a self-contained ``report.html``.

A report is rebuilt from what the runs wrote (``results.json``, ``error.txt``, ``env.json``,
``plots/``, and the ``reproduce.json`` that ``icml26 reproduce`` leaves at the top), never
from memory, so ``icml26 report DIR`` gives the same report as the ``reproduce`` that made DIR.

The report is built once as a small document model (:class:`Heading`, :class:`Paragraph`,
:class:`Table`, :class:`Figures`, :class:`Preformatted`), then rendered to Markdown and to
HTML by two short renderers, so the two files cannot drift apart. Its order is the order a
reader needs:

1. one table of every claim of every ``run`` job, across papers (paper, claim, the paper's
   figure, ours, held), coloured by outcome in the HTML;
2. the summary: one row per job with its wall time and CPU time;
3. one section per job: its claims, then its figures at the full column width (in the HTML,
   a click shows a figure at its own resolution; the page needs no script and no other file).
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import json
import os
import platform
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from icml26.shared.atomic import atomic_write_text
from icml26.shared.results import ResultsError, load_results

__all__ = [
    "REPRODUCE_FILE",
    "Code",
    "Figures",
    "Heading",
    "Paragraph",
    "Preformatted",
    "ReportEntry",
    "Strong",
    "Table",
    "build_document",
    "collect_entries",
    "format_measured",
    "format_value",
    "markdown_table",
    "render_html",
    "render_markdown",
    "write_report",
]

_MAX_DEPTH = 3
#: What ``icml26 reproduce`` records about itself at the top of its folder (how it ran, how long).
REPRODUCE_FILE = "reproduce.json"
#: Measured values shown per claim in the cross-paper table (all of them in the job's section).
_OVERVIEW_VALUES = 4
_PLOT_SUFFIXES = {".png": "image/png", ".svg": "image/svg+xml"}


# --------------------------------------------------------------------------- run folders


@dataclass
class ReportEntry:
    """One run folder as the report sees it: results, or the error that stopped it."""

    folder: Path
    paper: str
    kind: str = "run"
    profile: str = "?"
    version: str = "?"
    results: dict[str, Any] | None = None
    error: str | None = None
    plots: list[Path] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.results is not None and self.error is None

    @property
    def seconds(self) -> float | None:
        """Wall time of the job (``results.json`` ``seconds``)."""
        return float(self.results["seconds"]) if self.results else None

    @property
    def cpu_seconds(self) -> float | None:
        """CPU time of the job's process (``results.json`` ``cpu_seconds``), when recorded."""
        value = self.results.get("cpu_seconds") if self.results else None
        return float(value) if value is not None else None

    @property
    def claims(self) -> list[dict[str, Any]]:
        return list(self.results["claims"]) if self.results else []

    def held(self) -> tuple[int, int]:
        claims = self.claims
        return sum(c["holds"] is True for c in claims), len(claims)


def _read_json_object(path: Path) -> dict[str, Any]:
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
        return obj if isinstance(obj, dict) else {}
    except (OSError, json.JSONDecodeError):
        return {}


def _entry(folder: Path) -> ReportEntry:
    env = _read_json_object(folder / "env.json")
    entry = ReportEntry(
        folder=folder,
        paper=str(env.get("paper") or folder.name),
        kind=str(env.get("kind", "run")),
        profile=str(env.get("profile", "?")),
        version=str(env.get("version", "?")),
    )
    results_path = folder / "results.json"
    error_path = folder / "error.txt"
    # The runner never leaves both: an error written after the results (a rerun that failed
    # before it could start, e.g. on another config) makes those results stale.
    stale = (
        error_path.exists()
        and results_path.exists()
        and error_path.stat().st_mtime >= results_path.stat().st_mtime
    )
    if results_path.exists() and not stale:
        try:
            entry.results = load_results(results_path)
            entry.paper = entry.results["paper"]
            entry.profile = entry.results["profile"]
            entry.kind = entry.results.get("kind", entry.kind)
            entry.version = entry.results["version"]
        except ResultsError as exc:
            entry.error = str(exc)
    if entry.results is None and entry.error is None:
        if error_path.exists():
            lines = error_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
            entry.error = "\n".join(lines[-12:]) or "failed (empty error.txt)"
        else:
            entry.error = "no results.json: the run did not finish"
    plots_dir = folder / "plots"
    if plots_dir.is_dir():
        entry.plots = sorted(p for p in plots_dir.iterdir() if p.suffix.lower() in _PLOT_SUFFIXES)
    return entry


def _is_run_folder(folder: Path) -> bool:
    return any((folder / name).exists() for name in ("results.json", "error.txt", "config.json"))


def collect_entries(root: str | os.PathLike[str]) -> list[ReportEntry]:
    """Every run folder under ``root`` (``root`` itself included), newest per paper and kind.

    In the order ``icml26 reproduce`` was asked for (the papers of ``reproduce.json``), never
    the order the runs finished in; papers it does not name follow, sorted, as do all papers
    of a folder without one.
    """
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
    requested = _read_json_object(root / REPRODUCE_FILE).get("papers")
    rank = {slug: i for i, slug in enumerate(requested if isinstance(requested, Mapping) else ())}
    return [newest[k] for k in sorted(newest, key=lambda k: (rank.get(k[0], len(rank)), k))]


# --------------------------------------------------------------------------- document model


@dataclass(frozen=True)
class Code:
    """Inline monospace text: a claim id, a folder, a metric key."""

    text: str


@dataclass(frozen=True)
class Strong:
    """Inline bold text."""

    text: str


Span = str | Code | Strong
#: A table cell or a paragraph: one span or several in a row.
Inline = Span | tuple[Span, ...]


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Paragraph:
    content: Inline
    css_class: str = ""


@dataclass(frozen=True)
class Preformatted:
    text: str


@dataclass(frozen=True)
class Table:
    """A header, rows of cells, and one CSS class per row (``yes``/``no``/``undecided``/
    ``failed``, or ``""``): the one table model both renderers draw."""

    header: tuple[str, ...]
    rows: tuple[tuple[Inline, ...], ...] = ()
    classes: tuple[str, ...] = ()
    #: The table's own CSS class in the HTML (Markdown has none).
    css_class: str = ""

    def __post_init__(self) -> None:
        if any(len(row) != len(self.header) for row in self.rows):
            raise ValueError(f"every row needs {len(self.header)} cells: {self.header}")
        if len(self.classes) != len(self.rows):
            raise ValueError(f"{len(self.rows)} rows but {len(self.classes)} row classes")


@dataclass(frozen=True)
class Figures:
    """A job's plots, each shown at the full column width."""

    paths: tuple[Path, ...]


Block = Heading | Paragraph | Preformatted | Table | Figures


# --------------------------------------------------------------------------- building


def format_value(value: Any) -> str:
    """A metric for a table: 4 significant digits, scientific notation when tiny or huge."""
    if value is None:
        return "n/a"
    if isinstance(value, float):
        if value == 0 or 1e-3 <= abs(value) < 1e5:
            return f"{value:.4g}"
        return f"{value:.3e}"
    return str(value)


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def format_measured(
    claim: dict[str, Any], limit: int | None = None, more: str = "... {n} more below"
) -> str:
    """``key = value; ...``; past ``limit`` values, ``more`` with the count of the rest (the
    job's own section lists them all)."""
    items = [f"{k} = {format_value(v)}" for k, v in claim["measured"].items()]
    if limit is not None and len(items) > limit:
        items = [*items[:limit], more.format(n=len(items) - limit)]
    return "; ".join(items) or "-"


def _held_class(claim: dict[str, Any]) -> str:
    return {True: "yes", False: "no", None: "undecided"}[claim["holds"]]


def _held_text(claim: dict[str, Any]) -> str:
    return _held_class(claim) + (f" ({claim['note']})" if claim.get("note") else "")


def _claim_cell(claim: dict[str, Any]) -> Inline:
    return (claim["statement"] + " ", Code(claim["id"]))


def _last_line(error: str | None) -> str:
    lines = (error or "failed").strip().splitlines()
    return lines[-1] if lines else "failed"


def claims_table(entries: Sequence[ReportEntry]) -> Table:
    """Every claim of every ``run`` job, across papers; a job that failed is one ``failed`` row."""
    rows: list[tuple[Inline, ...]] = []
    classes: list[str] = []
    for e in entries:
        if e.kind != "run":
            continue
        if not e.ok:
            rows.append((e.paper, ("run failed: ", _last_line(e.error)), "-", "-", "failed"))
            classes.append("failed")
            continue
        for c in e.claims:
            ours = format_measured(c, _OVERVIEW_VALUES)
            rows.append((e.paper, _claim_cell(c), c["paper_value"], ours, _held_text(c)))
            classes.append(_held_class(c))
    header = ("paper", "claim", "paper's figure", "ours", "held")
    return Table(header, tuple(rows), tuple(classes), css_class="by-paper")


def summary_table(
    entries: Sequence[ReportEntry], timings: Mapping[str, Any] | None = None
) -> Table:
    """One row per job: version, profile, claims held, wall and CPU seconds, status.

    A run that failed has no ``results.json`` to time it: its wall time is the one the
    reproduce measured around its child process (``timings``: ``reproduce.json``'s papers).
    """
    rows: list[tuple[Inline, ...]] = []
    for e in entries:
        held, total = e.held()
        wall = e.seconds
        if wall is None and e.kind == "run" and timings:
            measured = timings.get(e.paper, {})
            wall = measured.get("seconds") if isinstance(measured, Mapping) else None
        rows.append(
            (
                e.paper,
                e.kind,
                e.version,
                e.profile,
                f"{held}/{total}" if e.ok else "-",
                _seconds(wall),
                _seconds(e.cpu_seconds),
                "ok" if e.ok else "FAILED",
            )
        )
    header = ("paper", "job", "version", "profile", "claims held", "wall s", "CPU s", "status")
    classes = tuple("" if e.ok else "failed" for e in entries)
    return Table(header, tuple(rows), classes, css_class="by-paper")


def _overview(entries: Sequence[ReportEntry], root: Path) -> str:
    ok = sum(e.ok for e in entries)
    held = sum(e.held()[0] for e in entries)
    total = sum(e.held()[1] for e in entries)
    text = (
        f"{len(entries)} jobs ({ok} finished, {len(entries) - ok} failed); "
        f"claims held {held}/{total}; "
        f"{_seconds(sum(e.seconds or 0.0 for e in entries))} s of job wall time, "
        f"{_seconds(sum(e.cpu_seconds or 0.0 for e in entries))} s of CPU."
    )
    how = _read_json_object(root / REPRODUCE_FILE)
    if isinstance(how.get("seconds"), int | float):
        text += f" The reproduce took {_seconds(float(how['seconds']))} s ({how.get('mode', '?')})."
    stamp = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    return text + f" Built {stamp} on {platform.platform()} ({os.cpu_count()} CPUs)."


def _section(e: ReportEntry, root: Path) -> list[Block]:
    blocks: list[Block] = [Heading(2, f"{e.paper} ({e.kind}, profile {e.profile})")]
    folder = os.path.relpath(e.folder, root)
    if not e.ok:
        blocks.append(Paragraph((Strong("Failed."), " Folder: ", Code(folder)), "failed"))
        blocks.append(Preformatted(e.error or ""))
        return blocks
    blocks.append(
        Paragraph(
            (
                f"Finished in {_seconds(e.seconds)} s wall, {_seconds(e.cpu_seconds)} s CPU. ",
                "Folder: ",
                Code(folder),
                ".",
            )
        )
    )
    claims = e.claims
    if claims:
        rows = tuple(
            (_claim_cell(c), c["paper_value"], format_measured(c), _held_text(c)) for c in claims
        )
        classes = tuple(_held_class(c) for c in claims)
        blocks.append(Table(("claim", "paper", "ours", "held"), rows, classes))
    else:
        blocks.append(Paragraph("No claims for this job."))
    if e.plots:
        blocks.append(Figures(tuple(e.plots)))
    return blocks


def build_document(entries: Sequence[ReportEntry], root: str | os.PathLike[str]) -> list[Block]:
    """The report as blocks: cross-paper claims, summary, then one section per job."""
    root = Path(root)
    blocks: list[Block] = [Heading(1, "icml26 reproduction report")]
    blocks.append(Heading(2, "Claims"))
    table = claims_table(entries)
    blocks.append(table if table.rows else Paragraph("No run jobs with claims."))
    timings = _read_json_object(root / REPRODUCE_FILE).get("papers")
    blocks += [
        Heading(2, "Summary"),
        Paragraph(_overview(entries, root)),
        summary_table(entries, timings if isinstance(timings, Mapping) else None),
    ]
    for e in entries:
        blocks += _section(e, root)
    return blocks


# --------------------------------------------------------------------------- Markdown


def _spans(content: Inline) -> tuple[Span, ...]:
    return content if isinstance(content, tuple) else (content,)


def _md_inline(content: Inline, *, in_table: bool = False) -> str:
    out = []
    for span in _spans(content):
        if isinstance(span, Code):
            out.append(f"`{span.text}`")
        elif isinstance(span, Strong):
            out.append(f"**{span.text}**")
        else:
            out.append(span)
    text = "".join(out)
    return text.replace("|", "\\|").replace("\n", " ") if in_table else text


def markdown_table(table: Table) -> str:
    """``table`` as a GitHub-flavoured Markdown table (``|`` and newlines in cells escaped)."""
    lines = ["| " + " | ".join(table.header) + " |", "|" + "---|" * len(table.header)]
    lines += [
        "| " + " | ".join(_md_inline(c, in_table=True) for c in row) + " |" for row in table.rows
    ]
    return "\n".join(lines)


def _md_block(block: Block, root: Path) -> str:
    if isinstance(block, Heading):
        return "#" * block.level + " " + block.text
    if isinstance(block, Paragraph):
        return _md_inline(block.content)
    if isinstance(block, Preformatted):
        return "```\n" + block.text + "\n```"
    if isinstance(block, Table):
        return markdown_table(block)
    # Figures: each image links to itself, so a click opens it at full size.
    links = []
    for plot in block.paths:
        rel = os.path.relpath(plot, root)
        links.append(f"[![{plot.stem}]({rel})]({rel})")
    return "\n\n".join(links)


def render_markdown(entries: Sequence[ReportEntry], root: str | os.PathLike[str]) -> str:
    """The report as Markdown (plots linked relative to ``root``)."""
    root = Path(root)
    return "\n\n".join(_md_block(b, root) for b in build_document(entries, root)) + "\n"


# --------------------------------------------------------------------------- HTML

_CSS = """
body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:14px;width:100%}
td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top;text-align:left}
th{background:#f3f3f3}table.by-paper td:first-child{white-space:nowrap}code{font-size:12px;color:#555}
tr.yes td{background:#eaf6ed}tr.no td{background:#fbeaea}tr.undecided td{background:#fdf6e0}
tr.failed td{background:#fbeaea;color:#b3261e}
tr.yes td:last-child{color:#08752a;font-weight:600}tr.no td:last-child{color:#b3261e;font-weight:600}
tr.undecided td:last-child{color:#8a6d00;font-weight:600}
p.failed{color:#b3261e}pre{background:#f7f7f7;padding:8px;overflow:auto}
figure.plot{margin:1.5em 0}
figure.plot img{display:block;width:100%;height:auto;max-height:760px;object-fit:contain;
border:1px solid #eee;cursor:zoom-in}
figure.plot figcaption{font-size:13px;color:#555;margin-top:4px}
figure.plot a.close{display:none}
figure.plot:target{position:fixed;inset:0;margin:0;z-index:10;background:rgba(20,20,20,.92);
overflow:auto;display:flex}
figure.plot:target>a:first-of-type{margin:auto}
figure.plot:target img{width:auto;max-width:none;max-height:none;border:0;cursor:zoom-out}
figure.plot:target figcaption{display:none}
figure.plot:target a.close{display:block;position:fixed;inset:0;z-index:11;cursor:zoom-out}
figure.plot:target a.close::after{content:"\\00d7  close";position:fixed;top:10px;right:18px;
color:#fff;font-size:18px;background:rgba(0,0,0,.6);padding:2px 10px;border-radius:4px}
"""


def _html_inline(content: Inline) -> str:
    out = []
    for span in _spans(content):
        if isinstance(span, Code):
            out.append(f"<code>{html.escape(span.text)}</code>")
        elif isinstance(span, Strong):
            out.append(f"<b>{html.escape(span.text)}</b>")
        else:
            out.append(html.escape(span))
    return "".join(out)


def _html_table(table: Table) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in table.header)
    body = []
    for row, cls in zip(table.rows, table.classes, strict=True):
        attr = f' class="{cls}"' if cls else ""
        body.append(f"<tr{attr}>" + "".join(f"<td>{_html_inline(c)}</td>" for c in row) + "</tr>")
    attr = f' class="{table.css_class}"' if table.css_class else ""
    return f"<table{attr}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _html_figure(plot: Path, anchor: str) -> str:
    """A figure at the column width; a click targets it and the CSS shows it at its own size
    over the page (a second click, or "close", returns to the same place)."""
    mime = _PLOT_SUFFIXES[plot.suffix.lower()]
    data = base64.b64encode(plot.read_bytes()).decode("ascii")
    name = html.escape(plot.stem)
    return (
        f'<span id="{anchor}-at"></span><figure class="plot" id="{anchor}">'
        f'<a href="#{anchor}" title="click to enlarge">'
        f'<img alt="{name}" src="data:{mime};base64,{data}"></a>'
        f'<a class="close" href="#{anchor}-at" title="close"></a>'
        f"<figcaption>{name} (click to enlarge)</figcaption></figure>"
    )


def render_html(entries: Sequence[ReportEntry], root: str | os.PathLike[str] | None = None) -> str:
    """The report as one self-contained HTML page (plots embedded as data URIs, no script)."""
    if root is None:
        root = os.path.commonpath([str(e.folder) for e in entries]) if entries else "."
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>icml26 report</title><style>{_CSS}</style></head><body>",
    ]
    n_figures = 0
    for block in build_document(entries, root):
        if isinstance(block, Heading):
            parts.append(f"<h{block.level}>{html.escape(block.text)}</h{block.level}>")
        elif isinstance(block, Paragraph):
            attr = f' class="{block.css_class}"' if block.css_class else ""
            parts.append(f"<p{attr}>{_html_inline(block.content)}</p>")
        elif isinstance(block, Preformatted):
            parts.append(f"<pre>{html.escape(block.text)}</pre>")
        elif isinstance(block, Table):
            parts.append(_html_table(block))
        else:
            for plot in block.paths:
                n_figures += 1
                parts.append(_html_figure(plot, f"fig{n_figures}"))
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(root: str | os.PathLike[str]) -> tuple[Path, Path, list[ReportEntry]]:
    """Collect the runs under ``root`` and write ``root/report.md`` and ``root/report.html``."""
    root = Path(root)
    entries = collect_entries(root)
    md = atomic_write_text(root / "report.md", render_markdown(entries, root))
    page = atomic_write_text(root / "report.html", render_html(entries, root))
    return md, page, entries

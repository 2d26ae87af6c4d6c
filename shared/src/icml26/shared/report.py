"""Reports over run folders: ``report.md`` and ``report.html``.

A report is rebuilt from what the runs wrote (``results.json``, ``error.txt``, ``env.json``,
``plots/``, and the ``reproduce.json`` that ``icml26 reproduce`` leaves at the top), never
from memory, so ``icml26 report DIR`` gives the same report as the ``reproduce`` that made DIR.

The report is built once as a small document model (:class:`Heading`, :class:`Paragraph`,
:class:`Table`, :class:`Figures`, :class:`Preformatted`), then rendered to Markdown and to
HTML by two short renderers, so the two files cannot drift apart. Its order is the order a
reader needs:

1. the summary: one row per job (a reproduce runs one per paper) with its claims held /
   failed / undecided, its wall and CPU time, and a link to its section;
2. one table of every claim of every ``run`` job, across papers (paper, claim, the paper's
   figure, ours, outcome), coloured by outcome in the HTML; its rows come from
   :func:`claim_rows`, which the docs' claims page (:mod:`icml26.shared.claims_page`) uses too;
3. one section per job: its claims, then its figures at the full column width. The HTML
   loads each figure lazily from the run folder (``<img loading="lazy">``, the file beside
   the report, never inlined), so the page opens at once however many figures it has; a
   click shows a figure at its own resolution (no script).
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import os
import platform
import re
import struct
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from icml26.shared.atomic import atomic_write_text
from icml26.shared.results import ResultsError, load_results

__all__ = [
    "OUTCOMES",
    "REPRODUCE_FILE",
    "RUN_FAILED",
    "ClaimRow",
    "Code",
    "Figures",
    "Heading",
    "Link",
    "Paragraph",
    "Preformatted",
    "ReportEntry",
    "Strong",
    "Table",
    "anchor",
    "build_document",
    "claim_row_table",
    "claim_rows",
    "claims_table",
    "collect_entries",
    "format_measured",
    "format_value",
    "job_wall_seconds",
    "markdown_table",
    "outcome_text",
    "read_json_object",
    "render_html",
    "render_markdown",
    "run_date",
    "section_title",
    "summary_table",
    "write_report",
]

_MAX_DEPTH = 3
#: What ``icml26 reproduce`` records about itself at the top of its folder (how it ran, how long).
REPRODUCE_FILE = "reproduce.json"
#: Measured values shown per claim in the cross-paper table (all of them in the job's section).
_OVERVIEW_VALUES = 4
_PLOT_SUFFIXES = {".png": "image/png", ".svg": "image/svg+xml"}


# --------------------------------------------------------------------------- run folders


#: The outcome of a claim whose ``holds`` is true, false, null: the words every page uses.
OUTCOMES: dict[bool | None, str] = {True: "held", False: "failed", None: "undecided"}
#: A ``run`` job that left no results: its one row in a claims table.
RUN_FAILED = "run failed"


@dataclass
class ReportEntry:
    """One run folder as the report sees it: results, or the error that stopped it.

    Attributes:
        folder: the run folder.
        paper: the paper's slug (from ``results.json``, else ``env.json``, else the folder).
        kind: ``run`` or ``bench``.
        profile: the profile the job ran (``?`` when nothing records it).
        version: the package version that ran it.
        results: the validated ``results.json``, or None.
        error: why there are no results (the tail of ``error.txt``, or the schema problem).
        plots: the job's figures (``plots/*.png`` / ``*.svg``).
        date: the UTC date the job started (``env.json``), else when results.json was written.
        commit: the git commit it ran from (``env.json``), when recorded.
        dirty: the work tree had uncommitted changes then.
        unreadable: set when ``results.json`` exists but cannot be read or breaks the schema:
            the :class:`~icml26.shared.results.ResultsError` message, which names the file.
    """

    folder: Path
    paper: str
    kind: str = "run"
    profile: str = "?"
    version: str = "?"
    results: dict[str, Any] | None = None
    error: str | None = None
    plots: list[Path] = field(default_factory=list)
    date: str | None = None
    commit: str | None = None
    dirty: bool = False
    unreadable: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the job left valid results and no later error."""
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
        """The evaluated claims of ``results.json`` (none when the job failed)."""
        return list(self.results["claims"]) if self.results else []

    @property
    def short_commit(self) -> str | None:
        """The commit's first 12 hex digits, ``-dirty`` appended for uncommitted changes."""
        if not self.commit:
            return None
        return self.commit[:12] + ("-dirty" if self.dirty else "")

    def held(self) -> tuple[int, int]:
        """Count the claims that held.

        Returns:
            ``(claims held, claims)``.
        """
        claims = self.claims
        return sum(c["holds"] is True for c in claims), len(claims)

    def outcomes(self) -> dict[str, int]:
        """Count the claims per outcome.

        Returns:
            ``{"held": n, "failed": n, "undecided": n}``.
        """
        counts = dict.fromkeys(OUTCOMES.values(), 0)
        for claim in self.claims:
            counts[OUTCOMES[claim["holds"]]] += 1
        return counts


def read_json_object(path: Path) -> dict[str, Any]:
    """A JSON object from a file that may be missing or broken (``env.json``,
    ``reproduce.json``: what they add to a report is optional).

    Args:
        path: the file.

    Returns:
        Its object, or ``{}`` when the file is missing, unreadable or not a JSON object.
    """
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
        return obj if isinstance(obj, dict) else {}
    except (OSError, json.JSONDecodeError):
        return {}


def run_date(env: Mapping[str, Any], results_path: Path | None = None) -> str | None:
    """The UTC date a run started.

    Args:
        env: the run's ``env.json`` (its ``time``, an ISO timestamp).
        results_path: its ``results.json``, whose modification time is the fallback.

    Returns:
        ``YYYY-MM-DD``, or None when neither says.
    """
    stamp = env.get("time")
    if isinstance(stamp, str):
        try:
            when = _dt.datetime.fromisoformat(stamp)
        except ValueError:
            when = None
        if when is not None:
            return (when.astimezone(_dt.UTC) if when.tzinfo else when).date().isoformat()
    if results_path is None or not results_path.exists():
        return None
    mtime = results_path.stat().st_mtime
    return _dt.datetime.fromtimestamp(mtime, _dt.UTC).date().isoformat()


def _entry(folder: Path) -> ReportEntry:
    env = read_json_object(folder / "env.json")
    git = env.get("git") if isinstance(env.get("git"), dict) else {}
    entry = ReportEntry(
        folder=folder,
        paper=str(env.get("paper") or folder.name),
        kind=str(env.get("kind", "run")),
        profile=str(env.get("profile", "?")),
        version=str(env.get("version", "?")),
        commit=str(git["commit"]) if git.get("commit") else None,
        dirty=bool(git.get("dirty")),
    )
    results_path = folder / "results.json"
    error_path = folder / "error.txt"
    entry.date = run_date(env, results_path)
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
            entry.error = entry.unreadable = str(exc)
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

    Args:
        root: the folder to search (three levels deep at most).

    Returns:
        One :class:`ReportEntry` per (paper, kind).

    Raises:
        FileNotFoundError: ``root`` is not a folder.
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
    requested = read_json_object(root / REPRODUCE_FILE).get("papers")
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


@dataclass(frozen=True)
class Link:
    """Inline text linking to a heading of the same page (``#`` + :func:`anchor` of it)."""

    text: str
    target: str


Span = str | Code | Strong | Link
#: A table cell or a paragraph: one span or several in a row.
Inline = Span | tuple[Span, ...]


def anchor(text: str) -> str:
    """The id GitHub gives a heading: lower case, punctuation but ``-`` and ``_`` dropped,
    each space a hyphen. For headings without punctuation next to a space (a paper's slug,
    ``Summary``) mkdocs (Python-Markdown's ``toc``) gives the same id.

    Args:
        text: the heading's text (plain: no Markdown markup).

    Returns:
        The anchor, without ``#``: ``"alpha (run, profile quick)"`` gives
        ``"alpha-run-profile-quick"``.
    """
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


@dataclass(frozen=True)
class Heading:
    """A heading; in the HTML its id is :func:`anchor` of its text, as GitHub and mkdocs do."""

    level: int
    text: str

    @property
    def anchor(self) -> str:
        """The heading's id (see :func:`anchor`)."""
        return anchor(self.text)


@dataclass(frozen=True)
class Paragraph:
    """A paragraph of inline spans; ``css_class`` styles it in the HTML."""

    content: Inline
    css_class: str = ""


@dataclass(frozen=True)
class Preformatted:
    """Text shown as it is (an error's traceback)."""

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
    """A metric for a table: 4 significant digits, scientific notation when tiny or huge.

    Args:
        value: a metric value (a number, None, or anything else, shown as ``str``).

    Returns:
        The text: ``n/a`` for None.
    """
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
    """A claim's measured values in one cell.

    Args:
        claim: an evaluated claim (its ``measured``: metric key to value).
        limit: values shown at most (None: all).
        more: what stands for the values past ``limit``, ``{n}`` their count (the job's own
            section lists them all).

    Returns:
        ``key = value; ...``, or ``-`` when nothing was measured.
    """
    items = [f"{k} = {format_value(v)}" for k, v in claim["measured"].items()]
    if limit is not None and len(items) > limit:
        items = [*items[:limit], more.format(n=len(items) - limit)]
    return "; ".join(items) or "-"


def outcome_text(claim: Mapping[str, Any]) -> str:
    """A claim's outcome as every page writes it.

    Args:
        claim: an evaluated claim of ``results.json``.

    Returns:
        ``held``, ``failed`` or ``undecided``, with the claim's ``note`` in parentheses.
    """
    return OUTCOMES[claim["holds"]] + (f" ({claim['note']})" if claim.get("note") else "")


#: The CSS class of a claim table row by outcome (and of a run that failed).
_ROW_CLASS = {"held": "yes", "failed": "no", "undecided": "undecided", RUN_FAILED: "failed"}


def _last_line(error: str | None) -> str:
    lines = (error or "failed").strip().splitlines()
    return lines[-1] if lines else "failed"


@dataclass(frozen=True)
class ClaimRow:
    """One row of a claims table: a claim of a ``run`` job, or a ``run`` job that failed.

    Attributes:
        paper: the paper's slug.
        claim_id: the claim's id, or None for a run that failed (one row stands for it).
        statement: the claim as stated; for a failed run, the last line of its error.
        paper_value: the paper's figure (``-`` for a failed run).
        measured: our values, metric key to value.
        outcome: ``held``, ``failed``, ``undecided`` or :data:`RUN_FAILED`.
        note: the claim's note (why it is undecided at this profile, ...), or "".
    """

    paper: str
    claim_id: str | None
    statement: str
    paper_value: str
    measured: Mapping[str, Any]
    outcome: str
    note: str = ""

    def claim_cell(self) -> Inline:
        """The claim column.

        Returns:
            The statement then the id in code; for a failed run ``run failed: <error>``.
        """
        if self.claim_id is None:
            return (f"{RUN_FAILED}: ", self.statement)
        return (self.statement + " ", Code(self.claim_id))

    def ours(self, limit: int | None = None, more: str = "... {n} more below") -> str:
        """Our values, as :func:`format_measured` writes them.

        Args:
            limit: values shown at most (None: all).
            more: what stands for the rest, ``{n}`` their count.

        Returns:
            ``key = value; ...``, or ``-``.
        """
        if self.claim_id is None:
            return "-"
        return format_measured({"measured": self.measured}, limit, more)

    def outcome_cell(self) -> str:
        """The outcome column.

        Returns:
            The outcome, then the claim's note in parentheses when it has one.
        """
        return self.outcome + (f" ({self.note})" if self.note else "")

    @property
    def css_class(self) -> str:
        """The HTML row class (``yes`` / ``no`` / ``undecided`` / ``failed``)."""
        return _ROW_CLASS[self.outcome]


def claim_rows(entries: Sequence[ReportEntry]) -> list[ClaimRow]:
    """Every claim of every ``run`` job, in the entries' order; a failed job is one row.

    The one source of the claims tables of ``report.md``, ``report.html`` and the docs'
    claims page (:mod:`icml26.shared.claims_page`), so the three cannot disagree.

    Args:
        entries: the run folders (:func:`collect_entries`); ``bench`` jobs are left out.

    Returns:
        One :class:`ClaimRow` per claim, and one per ``run`` job without results.
    """
    return [row for e in entries if e.kind == "run" for row in _entry_rows(e)]


def _entry_rows(e: ReportEntry) -> list[ClaimRow]:
    if not e.ok:
        return [ClaimRow(e.paper, None, _last_line(e.error), "-", {}, RUN_FAILED)]
    return [
        ClaimRow(
            e.paper,
            str(c["id"]),
            str(c["statement"]),
            str(c["paper_value"]),
            dict(c["measured"]),
            OUTCOMES[c["holds"]],
            str(c.get("note") or ""),
        )
        for c in e.claims
    ]


def claim_row_table(
    rows: Sequence[ClaimRow],
    *,
    with_paper: bool = True,
    limit: int | None = None,
    more: str = "... {n} more below",
) -> Table:
    """Claim rows as a :class:`Table`.

    Args:
        rows: from :func:`claim_rows`.
        with_paper: start each row with the paper's slug (a table across papers).
        limit: our values shown per claim at most (None: all).
        more: what stands for the values past ``limit``.

    Returns:
        The table: (paper,) claim, paper's figure, ours, outcome; a row class per outcome.
    """
    header = ("claim", "paper's figure", "ours", "outcome")
    cells = [(r.claim_cell(), r.paper_value, r.ours(limit, more), r.outcome_cell()) for r in rows]
    if with_paper:
        header = ("paper", *header)
        cells = [(r.paper, *row) for r, row in zip(rows, cells, strict=True)]
    return Table(
        header,
        tuple(cells),
        tuple(r.css_class for r in rows),
        css_class="by-paper" if with_paper else "",
    )


def claims_table(entries: Sequence[ReportEntry]) -> Table:
    """Every claim of every ``run`` job, across papers; a job that failed is one row.

    Args:
        entries: the run folders.

    Returns:
        The report's cross-paper claims table (at most four of our values per claim; the
        job's section lists them all).
    """
    return claim_row_table(claim_rows(entries), limit=_OVERVIEW_VALUES)


def section_title(entry: ReportEntry) -> str:
    """The heading of a job's section in the report.

    Args:
        entry: the job.

    Returns:
        ``"<paper> (<kind>, profile <profile>)"``; its :func:`anchor` is the section's id.
    """
    return f"{entry.paper} ({entry.kind}, profile {entry.profile})"


def job_wall_seconds(entry: ReportEntry, timings: Mapping[str, Any] | None = None) -> float | None:
    """A job's wall time: its ``results.json``'s, else (a ``run`` that failed) the one the
    reproduce measured around its child process.

    Args:
        entry: the job.
        timings: ``reproduce.json``'s ``papers`` (slug to ``{"seconds": ...}``), or None.

    Returns:
        Seconds, or None when neither records it.
    """
    if entry.seconds is not None:
        return entry.seconds
    measured = timings.get(entry.paper) if timings and entry.kind == "run" else None
    seconds = measured.get("seconds") if isinstance(measured, Mapping) else None
    return float(seconds) if isinstance(seconds, int | float) else None


def summary_table(
    entries: Sequence[ReportEntry], timings: Mapping[str, Any] | None = None
) -> Table:
    """One row per job: a link to its section, claims held / failed / undecided, wall and
    CPU seconds, version, profile, status.

    A run that failed has no ``results.json`` to time it: its wall time is the one the
    reproduce measured around its child process (``timings``: ``reproduce.json``'s papers).

    Args:
        entries: the jobs.
        timings: ``reproduce.json``'s ``papers`` (slug to ``{"seconds": ...}``), or None.

    Returns:
        The table, a ``failed`` row class for a job without results.
    """
    rows: list[tuple[Inline, ...]] = []
    for e in entries:
        wall = job_wall_seconds(e, timings)
        counts = e.outcomes()
        rows.append(
            (
                Link(e.paper, anchor(section_title(e))),
                e.kind,
                *((str(counts[word]) if e.ok else "-") for word in OUTCOMES.values()),
                _seconds(wall),
                _seconds(e.cpu_seconds),
                e.version,
                e.profile,
                "ok" if e.ok else "FAILED",
            )
        )
    header = (
        "paper",
        "job",
        *OUTCOMES.values(),
        "wall s",
        "CPU s",
        "version",
        "profile",
        "status",
    )
    classes = tuple("" if e.ok else "failed" for e in entries)
    return Table(header, tuple(rows), classes, css_class="by-paper")


def _overview(entries: Sequence[ReportEntry], root: Path) -> str:
    ok = sum(e.ok for e in entries)
    counts = {word: sum(e.outcomes()[word] for e in entries) for word in OUTCOMES.values()}
    total = sum(counts.values())
    text = (
        f"{len(entries)} jobs ({ok} finished, {len(entries) - ok} failed); "
        f"{total} claims: " + ", ".join(f"{n} {word}" for word, n in counts.items()) + "; "
        f"{_seconds(sum(e.seconds or 0.0 for e in entries))} s of job wall time, "
        f"{_seconds(sum(e.cpu_seconds or 0.0 for e in entries))} s of CPU."
    )
    how = read_json_object(root / REPRODUCE_FILE)
    if isinstance(how.get("seconds"), int | float):
        text += f" The reproduce took {_seconds(float(how['seconds']))} s ({how.get('mode', '?')})."
    stamp = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    return text + f" Built {stamp} on {platform.platform()} ({os.cpu_count()} CPUs)."


def _section(e: ReportEntry, root: Path) -> list[Block]:
    blocks: list[Block] = [Heading(2, section_title(e))]
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
    if e.claims:
        blocks.append(claim_row_table(_entry_rows(e), with_paper=False))
    else:
        blocks.append(Paragraph("No claims for this job."))
    if e.plots:
        blocks.append(Figures(tuple(e.plots)))
    return blocks


def build_document(entries: Sequence[ReportEntry], root: str | os.PathLike[str]) -> list[Block]:
    """The report as blocks: the summary, the claims across papers, one section per job.

    Args:
        entries: the jobs (:func:`collect_entries`).
        root: the folder the report is written to (folders and figures are relative to it).

    Returns:
        The blocks, in the order both renderers write them.
    """
    root = Path(root)
    timings = read_json_object(root / REPRODUCE_FILE).get("papers")
    blocks: list[Block] = [
        Heading(1, "icml26 reproduction report"),
        Heading(2, "Summary"),
        Paragraph(_overview(entries, root)),
        summary_table(entries, timings if isinstance(timings, Mapping) else None),
        Heading(2, "Claims"),
    ]
    table = claims_table(entries)
    blocks.append(table if table.rows else Paragraph("No run jobs with claims."))
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
        elif isinstance(span, Link):
            out.append(f"[{span.text}](#{span.target})")
        else:
            out.append(span)
    text = "".join(out)
    return text.replace("|", "\\|").replace("\n", " ") if in_table else text


def markdown_table(table: Table) -> str:
    """A table in Markdown.

    Args:
        table: the table.

    Returns:
        ``table`` as a GitHub-flavoured Markdown table (``|`` and newlines in cells escaped),
        without a final newline.
    """
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
        rel = urllib.parse.quote(Path(os.path.relpath(plot, root)).as_posix())
        links.append(f"[![{plot.stem}]({rel})]({rel})")
    return "\n\n".join(links)


def render_markdown(entries: Sequence[ReportEntry], root: str | os.PathLike[str]) -> str:
    """The report as Markdown.

    Args:
        entries: the jobs (:func:`collect_entries`).
        root: the folder the report is written to (plots are linked relative to it).

    Returns:
        The Markdown text, ending with a newline.
    """
    root = Path(root)
    return "\n\n".join(_md_block(b, root) for b in build_document(entries, root)) + "\n"


# --------------------------------------------------------------------------- HTML

_CSS = """
body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:14px;width:100%}
td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top;text-align:left;
overflow-wrap:anywhere}
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
        elif isinstance(span, Link):
            out.append(f'<a href="#{html.escape(span.target)}">{html.escape(span.text)}</a>')
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


def _png_size(path: Path) -> tuple[int, int] | None:
    """A PNG's width and height from its header (so the page keeps their place while the
    figures load), or None for another format or a short file."""
    with open(path, "rb") as fh:
        head = fh.read(24)
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def _html_figure(plot: Path, anchor: str, root: Path) -> str:
    """A figure at the column width, loaded lazily from its file (relative to the report);
    a click targets it and the CSS shows it at its own size over the page (a second click,
    or "close", returns to the same place)."""
    src = html.escape(urllib.parse.quote(Path(os.path.relpath(plot, root)).as_posix()))
    size = _png_size(plot)
    dims = f' width="{size[0]}" height="{size[1]}"' if size else ""
    name = html.escape(plot.stem)
    return (
        f'<span id="{anchor}-at"></span><figure class="plot" id="{anchor}">'
        f'<a href="#{anchor}" title="click to enlarge">'
        f'<img alt="{name}" src="{src}" loading="lazy" decoding="async"{dims}></a>'
        f'<a class="close" href="#{anchor}-at" title="close"></a>'
        f'<figcaption>{name} (click to enlarge; <a href="{src}">the file</a>)</figcaption>'
        "</figure>"
    )


def render_html(entries: Sequence[ReportEntry], root: str | os.PathLike[str] | None = None) -> str:
    """The report as one HTML page, no script; figures load lazily from their files.

    Args:
        entries: the jobs (:func:`collect_entries`).
        root: the folder the page is written to: figures are linked relative to it
            (default: the folders' common parent).

    Returns:
        The page. It links each figure (``<img loading="lazy">``) rather than inlining it,
        so it stays small and opens at once; it needs the run folders beside it.
    """
    if root is None:
        root = os.path.commonpath([str(e.folder) for e in entries]) if entries else "."
    root = Path(root)
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>icml26 report</title><style>{_CSS}</style></head><body>",
    ]
    n_figures = 0
    for block in build_document(entries, root):
        if isinstance(block, Heading):
            h = f"h{block.level}"
            parts.append(f'<{h} id="{block.anchor}">{html.escape(block.text)}</{h}>')
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
                parts.append(_html_figure(plot, f"fig{n_figures}", root))
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(root: str | os.PathLike[str]) -> tuple[Path, Path, list[ReportEntry]]:
    """Collect the runs under ``root`` and write ``root/report.md`` and ``root/report.html``.

    Args:
        root: the reproduce folder (or any folder holding run folders).

    Returns:
        The paths of ``report.md`` and ``report.html``, and the jobs they show.

    Raises:
        FileNotFoundError: ``root`` is not a folder.
    """
    root = Path(root)
    entries = collect_entries(root)
    md = atomic_write_text(root / "report.md", render_markdown(entries, root))
    page = atomic_write_text(root / "report.html", render_html(entries, root))
    return md, page, entries

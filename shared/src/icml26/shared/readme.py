"""A package README's results, generated from a run folder (``icml26 readme``).

No figure in a README is typed by hand: ``icml26 readme <slug> RUN_DIR`` rewrites the lines
between the two marker lines of ``packages/<slug>/README.md``

::

    <!-- results:begin -->
    (generated: profile, date, commit, wall time, one row per claim)
    <!-- results:end -->

from ``RUN_DIR/results.json`` (and ``env.json``: the run's date and git commit), and keeps the
dated history in a generated ``RESULTS.md`` beside the README: newest first, one section per
run, keyed by (date, profile, job, commit); a run written again replaces its own section. Both
files are written atomically, and writing the same run twice gives the same files.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from icml26.shared.atomic import atomic_write_text
from icml26.shared.paper import Paper
from icml26.shared.registry import find
from icml26.shared.report import (
    OUTCOMES,
    Table,
    format_measured,
    markdown_table,
    outcome_text,
    run_date,
)
from icml26.shared.results import load_results

__all__ = [
    "HISTORY_FILE",
    "RESULTS_BEGIN",
    "RESULTS_END",
    "ReadmeError",
    "RunSummary",
    "history_text",
    "prose_lines",
    "readme_text",
    "results_block",
    "summarize_run",
    "update_readme",
]

#: The marker lines, each alone on its line, around a README's generated results block.
RESULTS_BEGIN = "<!-- results:begin -->"
RESULTS_END = "<!-- results:end -->"
#: The generated history beside the README.
HISTORY_FILE = "RESULTS.md"
#: Measured values shown per claim in the README (RESULTS.md shows them all).
README_VALUES = 3
#: Past this many claims the README lists them by outcome on one line each (the table with
#: every figure is in RESULTS.md), so the README stays short.
README_CLAIM_ROWS = 12

_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_SECTION = re.compile(r"^<!-- run: (?P<key>\S+ \S+ \S+ \S+) -->$", re.MULTILINE)
_OUTCOME = OUTCOMES
#: The summary line ``_summary_line`` writes, as a regular expression (groups ``profile``,
#: ``job``, ``date``, ``redecided``, ``claims``). The docs site's landing page
#: (``tools/docs/hooks.py``) reads this constant from this file's syntax tree, so the writer
#: and its one reader share one format; ``tests/test_readme.py`` checks every form matches.
SUMMARY_PATTERN = (
    r"Profile `(?P<profile>[^`]+)`(?: \((?P<job>[a-z]+) job\))?, (?P<date>\d{4}-\d{2}-\d{2}), "
    r".*?Claims(?P<redecided> \(decided again [^)]*\))?: (?P<claims>[^.]*)\."
)


class ReadmeError(ValueError):
    """A README, run folder or results file that ``icml26 readme`` cannot use; says which."""


@dataclass(frozen=True)
class RunSummary:
    """What the README says about one run, read from its folder."""

    paper: str
    version: str
    profile: str
    kind: str
    date: str  # YYYY-MM-DD (UTC) the run started
    commit: str | None  # the git commit the run was made from, when recorded
    dirty: bool  # the work tree had uncommitted changes
    seconds: float
    cpu_seconds: float | None
    claims: tuple[dict[str, Any], ...]
    tables: str = ""  # the paper's own Markdown tables (Paper.readme_tables), or ""
    redecided: bool = False  # claims decided again from the metrics with the installed rules

    @property
    def key(self) -> str:
        """The run's RESULTS.md section: one per (date, profile, job, commit)."""
        return f"{self.date} {self.profile} {self.kind} {self.short_commit}"

    @property
    def short_commit(self) -> str:
        if not self.commit:
            return "unknown"
        return self.commit[:12] + ("-dirty" if self.dirty else "")


def prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(index, line)`` for each line of Markdown ``text`` outside fenced code blocks (indexes
    as in ``text.splitlines()``): a marker shown in a README's own example is not a marker."""
    fence: str | None = None
    for i, line in enumerate(text.splitlines()):
        match = _FENCE.match(line)
        if fence is None:
            if match:
                fence = match.group("fence")
            else:
                yield i, line
        elif (
            match
            and match.group("fence")[0] == fence[0]
            and len(match.group("fence")) >= len(fence)
            and not match.group("info").strip()
        ):
            fence = None


def _read_env(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "env.json"
    if not path.is_file():
        return {}
    try:
        env = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ReadmeError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from exc
    return env if isinstance(env, dict) else {}


def summarize_run(
    run_dir: str | os.PathLike[str],
    slug: str,
    paper: Paper | None = None,
    *,
    redecide: bool = False,
) -> RunSummary:
    """Read ``run_dir``'s results and env; refuse a folder without results or another paper's.

    Args:
        run_dir: the run folder.
        slug: the paper the README belongs to.
        paper: the installed paper, whose ``readme_tables`` (if any) render its own tables.
        redecide: decide the claims again from the run's stored metrics with ``paper``'s
            current claims (after a rule changed) instead of copying the stored outcomes.

    Returns:
        The run as the README and RESULTS.md describe it.

    Raises:
        ReadmeError: no folder, no results.json, or another paper's results.
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise ReadmeError(f"{run_dir} is not a folder (give the run folder of `icml26 run`)")
    results_path = run_dir / "results.json"
    if not results_path.is_file():
        hint = " (it holds error.txt: the run failed)" if (run_dir / "error.txt").exists() else ""
        raise ReadmeError(f"{run_dir} has no results.json{hint}: nothing to write")
    results = load_results(results_path)
    if results["paper"] != slug:
        raise ReadmeError(
            f"{results_path} holds {results['paper']!r}'s results, not {slug!r}'s: "
            f"give a run folder of {slug} (or `icml26 readme {results['paper']} {run_dir}`)"
        )
    claims = tuple(results["claims"])
    if redecide:
        if paper is None:
            raise ReadmeError(f"{slug} is not installed here: its claims cannot be decided again")
        profile = str(results["profile"])
        kind = str(results.get("kind", "run"))
        claims = tuple(c.evaluate(results["metrics"], profile) for c in paper.claims_for(kind))
    env = _read_env(run_dir)
    git = env.get("git")
    if not isinstance(git, dict):
        git = {}
    cpu = results.get("cpu_seconds")
    return RunSummary(
        paper=results["paper"],
        version=results["version"],
        profile=results["profile"],
        kind=str(results.get("kind", "run")),
        date=run_date(env, results_path) or "?",
        commit=git.get("commit") or None,
        dirty=bool(git.get("dirty")),
        seconds=float(results["seconds"]),
        cpu_seconds=float(cpu) if cpu is not None else None,
        claims=claims,
        tables=paper.tables_markdown(results) if paper is not None else "",
        redecided=redecide,
    )


def _summary_line(run: RunSummary) -> str:
    commit = f"commit `{run.commit[:12]}`" if run.commit else "commit unknown"
    if run.commit and run.dirty:
        commit += " (with uncommitted changes)"
    cpu = f", {run.cpu_seconds:.1f} s CPU" if run.cpu_seconds is not None else ""
    counts = {
        word: sum(_OUTCOME[c["holds"]] == word for c in run.claims) for word in _OUTCOME.values()
    }
    tally = ", ".join(f"{n} {word}" for word, n in counts.items() if n) or "no claims"
    job = "" if run.kind == "run" else f" ({run.kind} job)"
    again = (
        " (decided again from the run's metrics with the current rules: `--redecide`)"
        if run.redecided
        else ""
    )
    return (
        f"Profile `{run.profile}`{job}, {run.date}, {commit}, version {run.version}: "
        f"{run.seconds:.1f} s wall{cpu}. Claims{again}: {tally}."
    )


def _claims_table(run: RunSummary, limit: int | None, more: str) -> str:
    rows = tuple(
        (f"`{c['id']}`", str(c["paper_value"]), format_measured(c, limit, more), outcome_text(c))
        for c in run.claims
    )
    table = Table(("claim", "paper", "ours", "outcome"), rows, ("",) * len(rows))
    return markdown_table(table)


def results_block(run: RunSummary) -> str:
    """The lines between the README's markers (markers excluded), ending with a newline."""
    parts = [
        f"<!-- Generated by `icml26 readme {run.paper} RUN_DIR` from the run's results.json; "
        "edits here are overwritten. -->",
        _summary_line(run) + f" History: [{HISTORY_FILE}]({HISTORY_FILE}).",
    ]
    if len(run.claims) > README_CLAIM_ROWS:
        for word in _OUTCOME.values():
            ids = [f"`{c['id']}`" for c in run.claims if _OUTCOME[c["holds"]] == word]
            if ids:
                parts.append(f"Claims {word} ({len(ids)}): " + ", ".join(ids) + ".")
        parts.append(f"Each claim's figures, rule and placebo: [{HISTORY_FILE}]({HISTORY_FILE}).")
    elif run.claims:
        parts.append(_claims_table(run, README_VALUES, f"+{{n}} more in {HISTORY_FILE}"))
    if run.tables:
        parts.append(run.tables)
    return "\n\n".join(parts) + "\n"


def _marker_line(lines: list[str], marker: str, readme: Path) -> int:
    found = [i for i, line in prose_lines("".join(lines)) if line.strip() == marker]
    if not found:
        raise ReadmeError(
            f"{readme} has no {marker} line: put the two lines {RESULTS_BEGIN} and "
            f"{RESULTS_END}, each on its own line, where the results go"
        )
    if len(found) > 1:
        raise ReadmeError(f"{readme} has {marker} on {len(found)} lines; keep one")
    return found[0]


def readme_text(text: str, run: RunSummary, readme: Path = Path("README.md")) -> str:
    """``text`` (a README) with the lines between its markers replaced by the run's block
    (marker lines inside fenced code blocks do not count)."""
    lines = text.splitlines(keepends=True)
    begin = _marker_line(lines, RESULTS_BEGIN, readme)
    end = _marker_line(lines, RESULTS_END, readme)
    if end < begin:
        raise ReadmeError(f"{readme}: {RESULTS_END} comes before {RESULTS_BEGIN}")
    head = lines[: begin + 1]
    if not head[-1].endswith("\n"):
        head[-1] += "\n"
    return "".join([*head, "\n", results_block(run), "\n", *lines[end:]])


def _history_section(run: RunSummary) -> str:
    job = "" if run.kind == "run" else f", {run.kind} job"
    return (
        f"<!-- run: {run.key} -->\n"
        f"## {run.date}, profile {run.profile}{job}, commit {run.short_commit}\n\n"
        f"{_summary_line(run)}\n\n"
        + (_claims_table(run, None, "") + "\n\n" if run.claims else "")
        + (run.tables + "\n\n" if run.tables else "")
    )


LEGACY_MARK = "<!-- earlier history, written by hand: kept as it was -->"


def history_text(text: str | None, run: RunSummary) -> str:
    """RESULTS.md with ``run``'s section added (or its earlier version replaced), newest first.

    Text that ``icml26 readme`` did not write (a hand-written history from before the
    generator, or anything before its first section) is kept, after the generated sections,
    below :data:`LEGACY_MARK`.
    """
    sections: list[tuple[str, str]] = []  # (key, text)
    legacy = ""
    if text:
        text, _, legacy = text.partition(LEGACY_MARK)
        marks = list(_SECTION.finditer(text))
        first = marks[0].start() if marks else len(text)
        prefix = text[:first].strip()
        if prefix and not prefix.startswith(f"# {run.paper}: results history"):
            legacy = prefix + "\n\n" + legacy.strip()
        for i, mark in enumerate(marks):
            stop = marks[i + 1].start() if i + 1 < len(marks) else len(text)
            sections.append((mark.group("key"), text[mark.start() : stop].rstrip("\n") + "\n\n"))
    new = (run.key, _history_section(run))
    keys = [key for key, _ in sections]
    if run.key in keys:
        sections[keys.index(run.key)] = new
    else:
        sections.insert(0, new)
    sections.sort(key=lambda s: s[0].split(" ", 1)[0], reverse=True)  # by date; stable
    header = (
        f"# {run.paper}: results history\n\n"
        f"<!-- Generated by `icml26 readme`: one section per run (date, profile, job, commit), "
        "newest first; do not edit by hand. -->\n\n"
    )
    tail = f"{LEGACY_MARK}\n\n{legacy.strip()}\n" if legacy.strip() else ""
    return (
        (header + "".join(body for _, body in sections)).rstrip("\n")
        + "\n"
        + ("\n" + tail if tail else "")
    )


def _installed_paper(slug: str) -> Paper | None:
    try:
        return find(slug).load()
    except LookupError:  # not installed here: the claims table alone
        return None


def update_readme(
    slug: str,
    run_dir: str | os.PathLike[str],
    readme: str | os.PathLike[str] | None = None,
    *,
    redecide: bool = False,
) -> tuple[Path, Path]:
    """Rewrite ``readme``'s results block and ``RESULTS.md`` beside it from ``run_dir``.

    Args:
        slug: the paper whose README it is (``run_dir`` must hold that paper's results).
        run_dir: a run folder with ``results.json`` (and ``env.json``).
        readme: the README (default ``packages/<slug>/README.md`` under the current folder).
        redecide: decide the claims again from the run's metrics with the installed
            paper's current rules (said in the summary line) instead of the stored outcomes.

    Returns:
        The README's path and RESULTS.md's.

    Raises:
        ReadmeError: no README or no markers in it, no results.json, another paper's results.
        icml26.shared.results.ResultsError: a results.json that breaks the schema.
    """
    path = Path(readme) if readme is not None else Path("packages") / slug / "README.md"
    if not path.is_file():
        where = "" if readme is not None else " (run from the workspace root, or pass --readme)"
        raise ReadmeError(f"{path}: no such README{where}")
    run = summarize_run(run_dir, slug, _installed_paper(slug), redecide=redecide)
    text = path.read_text(encoding="utf-8")
    new_readme = readme_text(text, run, path)
    history = path.parent / HISTORY_FILE
    old_history = history.read_text(encoding="utf-8") if history.is_file() else None
    new_history = history_text(old_history, run)
    if new_readme != text:
        atomic_write_text(path, new_readme)
    if new_history != old_history:
        atomic_write_text(history, new_history)
    return path, history

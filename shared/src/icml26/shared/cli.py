"""The umbrella ``icml26`` command.

::

    icml26 list
    icml26 show <slug> [--profile P] [--bench]
    icml26 run <slug> [--profile smoke|quick|full] [--out DIR] [--set field=value ...]
    icml26 bench <slug> [same options]
    icml26 reproduce [slugs ...] [--profile quick] [--out DIR] [--jobs N | --ray ADDRESS]
    icml26 report DIR
    icml26 readme <slug> RUN_DIR [--readme PATH]
    icml26 docs RUN_DIR [--out docs/claims.md] [--run-name NAME] [--check]

Exit codes: 0 success, 1 a job or report failed, 2 bad usage (unknown paper, bad override).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from icml26.shared.atomic import atomic_write_text
from icml26.shared.claims_page import (
    DEFAULT_OUT,
    ClaimsPageError,
    claims_page,
    compare_with_report,
)
from icml26.shared.configs import OverrideError, config_fields
from icml26.shared.paper import Paper
from icml26.shared.progress import log
from icml26.shared.readme import ReadmeError, update_readme
from icml26.shared.registry import InstalledPaper, UnknownPaperError, find, installed
from icml26.shared.report import write_report
from icml26.shared.results import ResultsError
from icml26.shared.rundir import ConfigMismatchError
from icml26.shared.runner import InputError, ProfileError, run_job

__all__ = ["main"]


class UsageError(Exception):
    """Bad input from the user: printed without a traceback, exit code 2."""


def _load(slug: str) -> tuple[InstalledPaper, object]:
    try:
        entry = find(slug)
    except UnknownPaperError as exc:
        raise UsageError(str(exc)) from exc
    return entry, entry.load()


def cmd_list(args: argparse.Namespace) -> int:
    papers = installed()
    if not papers:
        print("no icml26 papers installed (install e.g. icml26-ro-hnn)")
        return 0
    width = max(len(s) for s in papers)
    for slug, entry in papers.items():
        try:
            paper = entry.load()
            line = f"{paper.framework or '-':6}  {paper.summary or paper.title}"
        except Exception as exc:  # a broken package must not hide the others
            line = f"(fails to load: {type(exc).__name__}: {exc})"
        print(f"{slug:{width}}  {entry.version:10}  {line}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    entry, paper = _load(args.slug)
    kind = "bench" if args.bench else "run"
    try:
        profiles = paper.profiles_for(kind)  # type: ignore[attr-defined]
    except LookupError as exc:
        raise UsageError(str(exc)) from exc
    if args.profile not in profiles:
        raise UsageError(
            f"{args.slug} has no profile {args.profile!r}; profiles: {', '.join(profiles)}"
        )
    print(f"{paper.slug} {entry.version}: {paper.title}")  # type: ignore[attr-defined]
    print(f"\n{kind} config, profile {args.profile} (override with --set field=value):")
    for name, tp, value in config_fields(profiles[args.profile]):
        print(f"  {name} ({tp}) = {value!r}")
    claims = paper.claims_for(kind)  # type: ignore[attr-defined]
    if claims:
        print("\nclaims:")
        for c in claims:
            print(f"  [{c.id}] {c.statement}\n      paper: {c.paper_value}\n      rule:  {c.rule}")
    return 0


def cmd_job(args: argparse.Namespace) -> int:
    entry, paper = _load(args.slug)
    try:
        run_dir = run_job(
            paper,  # type: ignore[arg-type]
            entry.version,
            kind=args.command,
            profile=args.profile,
            overrides=args.set,
            out=args.out,
            runs_root=args.runs_root,
        )
    except (OverrideError, ProfileError, ConfigMismatchError, InputError, LookupError) as exc:
        raise UsageError(str(exc)) from exc
    print(run_dir.results_path)
    return 0


def _load_or_none(entry: InstalledPaper) -> Paper | None:
    """The paper, or None when its module fails to load (its run then fails and is reported)."""
    try:
        return entry.load()
    except Exception as exc:
        log(f"reproduce: {entry.slug} fails to load ({type(exc).__name__}: {exc})")
        return None


def cmd_reproduce(args: argparse.Namespace) -> int:
    from icml26.shared.reproduce import ReproduceError, reproduce

    papers = installed()
    slugs = list(dict.fromkeys(args.slugs)) or list(papers)
    unknown = [s for s in slugs if s not in papers]
    if unknown:
        raise UsageError(
            f"unknown papers: {', '.join(unknown)}; installed: {', '.join(papers) or 'none'}"
        )
    if not slugs:
        raise UsageError("no icml26 papers installed")
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    root = (
        Path(args.out) if args.out else Path(args.runs_root) / f"reproduce-{stamp}-{args.profile}"
    )
    try:
        outcomes, _entries, md, page = reproduce(
            {slug: _load_or_none(papers[slug]) for slug in slugs},
            args.profile,
            root,
            jobs=args.jobs,
            ray_address=args.ray,
        )
    except ReproduceError as exc:
        raise UsageError(str(exc)) from exc
    print(md)
    print(page)
    failed = [o.slug for o in outcomes if not o.ok]
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    try:
        md, page, entries = write_report(args.dir)
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from exc
    print(md)
    print(page)
    bad = [e for e in entries if not e.ok]
    for e in bad:
        print(f"{e.folder}: {e.error.splitlines()[-1] if e.error else 'failed'}", file=sys.stderr)
    if not entries:
        print(f"no run folders under {args.dir}", file=sys.stderr)
        return 1
    return 1 if bad else 0


def cmd_readme(args: argparse.Namespace) -> int:
    try:
        readme, history = update_readme(
            args.slug, args.run_dir, args.readme, redecide=args.redecide
        )
    except ReadmeError as exc:
        raise UsageError(str(exc)) from exc
    print(readme)
    print(history)
    return 0


def cmd_docs(args: argparse.Namespace) -> int:
    try:
        page = claims_page(args.run_dir, shown_as=args.run_name)
        problems: list[str] = []
        if args.check:
            report = args.run_dir / "report.md"
            if not report.is_file():
                raise UsageError(
                    f"--check: {report} is missing (run `icml26 report {args.run_dir}`)"
                )
            problems = compare_with_report(page, report.read_text(encoding="utf-8"))
    except ClaimsPageError as exc:
        raise UsageError(str(exc)) from exc
    if problems:
        print(
            f"icml26: error: the claims page disagrees with {args.run_dir / 'report.md'} "
            f"(rebuild it with `icml26 report {args.run_dir}`); nothing written:",
            file=sys.stderr,
        )
        for line in problems:
            print(f"  {line}", file=sys.stderr)
        return 1
    print(atomic_write_text(args.out, page))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="icml26", description="Run, benchmark and report the icml26 paper packages."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("list", help="installed papers, one line each").set_defaults(func=cmd_list)

    show = sub.add_parser("show", help="a paper's config fields and claims")
    show.add_argument("slug")
    show.add_argument("--profile", default="quick")
    show.add_argument("--bench", action="store_true", help="show the bench config instead")
    show.set_defaults(func=cmd_show)

    for kind, text in (("run", "run a paper's main job"), ("bench", "run a paper's benchmarks")):
        job = sub.add_parser(kind, help=text)
        job.add_argument("slug")
        job.add_argument("--profile", default="quick", help="smoke, quick or full (default: quick)")
        job.add_argument(
            "--out", type=Path, help="the run folder (default: a new folder under runs/<slug>/)"
        )
        job.add_argument(
            "--set",
            action="append",
            default=[],
            metavar="FIELD=VALUE",
            help="override a config field (repeatable; dotted for nested fields)",
        )
        job.add_argument(
            "--runs-root",
            type=Path,
            default=Path(os.environ.get("ICML26_RUNS", "runs")),
            help=argparse.SUPPRESS,
        )
        job.set_defaults(func=cmd_job)

    rep = sub.add_parser(
        "reproduce", help="run papers (all by default) and write report.md / report.html"
    )
    rep.add_argument("slugs", nargs="*")
    rep.add_argument("--profile", default="quick")
    rep.add_argument("--out", type=Path, help="folder for the runs and the report")
    rep.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="papers at once, in parallel child processes with the CPU threads split "
        "between them (default: one per core; 1: one after another). A paper starts only "
        "when its declared peak memory fits beside the running ones; a paper whose claims "
        "are timings runs alone, after the others",
    )
    rep.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="run each paper as a Ray task with its CPU/GPU request: 'local' (a new local "
        "instance), 'auto' (this machine's cluster, else a local instance) or a cluster "
        "address; needs icml26-shared[ray]",
    )
    rep.add_argument(
        "--runs-root",
        type=Path,
        default=Path(os.environ.get("ICML26_RUNS", "runs")),
        help=argparse.SUPPRESS,
    )
    rep.set_defaults(func=cmd_reproduce)

    report = sub.add_parser("report", help="rebuild report.md / report.html from run folders")
    report.add_argument("dir", type=Path)
    report.set_defaults(func=cmd_report)

    readme = sub.add_parser(
        "readme",
        help="write a run's results into a package README (between <!-- results:begin --> "
        "and <!-- results:end -->) and its dated RESULTS.md",
    )
    readme.add_argument("slug")
    readme.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    readme.add_argument(
        "--readme", type=Path, help="the README (default: packages/<slug>/README.md)"
    )
    readme.add_argument(
        "--redecide",
        action="store_true",
        help="decide the claims again from the run's metrics with the installed rules "
        "(after a rule changed) instead of copying the outcomes stored in results.json",
    )
    readme.set_defaults(func=cmd_readme)

    docs = sub.add_parser(
        "docs",
        help="write the docs' claims page (every claim, the paper's figure, ours, the outcome, "
        "per paper) from a reproduce run's results.json files",
    )
    docs.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="the reproduce's --out folder")
    docs.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help=f"the page to write (default: {DEFAULT_OUT}, relative to the current folder)",
    )
    docs.add_argument(
        "--run-name",
        metavar="NAME",
        help="how the page names the run (e.g. 'quick reproduce at 8640a4a') instead of "
        "RUN_DIR's path, so a published page shows no local folder",
    )
    docs.add_argument(
        "--check",
        action="store_true",
        help="first check that the page's claims match RUN_DIR/report.md's claims table; "
        "write nothing and exit 1 if they differ",
    )
    docs.set_defaults(func=cmd_docs)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except UsageError as exc:
        print(f"icml26: error: {exc}", file=sys.stderr)
        return 2
    except ResultsError as exc:
        print(f"icml26: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("icml26: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        import traceback

        traceback.print_exc()
        print(
            f"icml26: error: {getattr(args, 'slug', '')} {args.command} failed: {type(exc).__name__}: {exc}",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())

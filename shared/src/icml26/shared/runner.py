"""Run a paper's job into a run folder and write its ``results.json``."""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Sequence
from typing import Any

from icml26.shared.atomic import atomic_write_json, atomic_write_text
from icml26.shared.configs import apply_overrides, config_to_dict
from icml26.shared.paper import Paper
from icml26.shared.progress import log
from icml26.shared.results import build_results
from icml26.shared.rundir import RunDir

__all__ = ["ERROR_FILE", "ProfileError", "resolve_config", "run_job"]

ERROR_FILE = "error.txt"


class ProfileError(LookupError):
    """A profile name the paper does not define."""


def resolve_config(paper: Paper, kind: str, profile: str, overrides: Sequence[str] = ()) -> Any:
    """The config for ``kind``/``profile`` with ``overrides`` (``field=value``) applied."""
    profiles = paper.profiles_for(kind)
    if profile not in profiles:
        raise ProfileError(
            f"{paper.slug} has no profile {profile!r}; profiles: {', '.join(profiles)}"
        )
    return apply_overrides(profiles[profile], overrides)


def run_job(
    paper: Paper,
    version: str,
    *,
    kind: str = "run",
    profile: str = "quick",
    overrides: Sequence[str] = (),
    out: str | os.PathLike[str] | None = None,
    runs_root: str | os.PathLike[str] = "runs",
) -> RunDir:
    """Resolve the config, run ``paper``'s ``kind`` job and write ``results.json``.

    The config is resolved before any folder is made, so a bad override leaves nothing behind.
    On failure the traceback goes to ``<run>/error.txt`` (read by ``icml26 report``) and the
    exception propagates; an earlier ``results.json`` in the folder is removed so it cannot be
    mistaken for this run's.
    """
    config = resolve_config(paper, kind, profile, overrides)
    fn = paper.job(kind)
    run_dir = (
        RunDir(out)
        if out is not None
        else RunDir.new(runs_root, paper.slug, kind=kind, profile=profile)
    )
    resuming = run_dir.prepare(config)
    (run_dir.path / ERROR_FILE).unlink(missing_ok=True)
    run_dir.results_path.unlink(missing_ok=True)
    run_dir.update_env(paper=paper.slug, kind=kind, profile=profile, version=version)
    log(f"{paper.slug} {kind} ({profile}) -> {run_dir.path}{' (resuming)' if resuming else ''}")
    start, cpu_start = time.perf_counter(), time.process_time()
    try:
        metrics = fn(config, run_dir)
        if metrics is None:
            raise TypeError(f"{paper.slug}'s {kind} returned no metrics")
        results = build_results(
            paper=paper.slug,
            version=version,
            profile=profile,
            config=config_to_dict(config),
            metrics=metrics,
            claims=paper.claims_for(kind),
            seconds=time.perf_counter() - start,
            kind=kind,
            cpu_seconds=time.process_time() - cpu_start,
        )
    except BaseException:
        atomic_write_text(run_dir.path / ERROR_FILE, traceback.format_exc())
        raise
    atomic_write_json(run_dir.results_path, results)
    held = sum(c["holds"] is True for c in results["claims"])
    log(
        f"{paper.slug} {kind} done in {results['seconds']:.1f}s; claims held {held}/{len(results['claims'])}"
    )
    return run_dir

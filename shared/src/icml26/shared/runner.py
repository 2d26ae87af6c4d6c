"""Run a paper's job into a run folder and write its ``results.json``."""

from __future__ import annotations

import os
import sys
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
from icml26.shared.seeding import seed_everything

__all__ = [
    "ERROR_FILE",
    "ProfileError",
    "apply_runtime",
    "resolve_config",
    "run_job",
    "threads_for",
]

#: Thread variables the runner sets from a config's ``threads`` (read by OpenMP, MKL, OpenBLAS
#: and by packages that size their own pools).
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "ICML26_THREADS")

ERROR_FILE = "error.txt"


class ProfileError(LookupError):
    """A profile name the paper does not define."""


class InputError(ValueError):
    """An input (a user's file, a checkpoint folder) that the paper's ``inputs`` check refused."""


def resolve_config(paper: Paper, kind: str, profile: str, overrides: Sequence[str] = ()) -> Any:
    """The config for ``kind``/``profile`` with ``overrides`` (``field=value``) applied."""
    profiles = paper.profiles_for(kind)
    if profile not in profiles:
        raise ProfileError(
            f"{paper.slug} has no profile {profile!r}; profiles: {', '.join(profiles)}"
        )
    return apply_overrides(profiles[profile], overrides)


def threads_for(config: Any) -> int | None:
    """The CPU threads a job should use: the config's ``threads`` field when positive, else
    ``ICML26_THREADS`` from the environment (set by ``icml26 reproduce`` for each child), else
    ``None`` (the frameworks' defaults)."""
    threads = getattr(config, "threads", None)
    if isinstance(threads, int) and not isinstance(threads, bool) and threads > 0:
        return threads
    text = os.environ.get("ICML26_THREADS", "")
    return int(text) if text.isdigit() and int(text) > 0 else None


def apply_runtime(config: Any, *, before_import: bool) -> int | None:
    """Set threads and seed from ``config`` so no package writes that preamble again.

    Called twice by :func:`run_job`: before the job's module is imported
    (``before_import=True``: the thread variables, which OpenMP reads when it starts) and
    after it (torch's intra-op threads when torch is loaded, and
    :func:`~icml26.shared.seed_everything` with the config's ``seed``). A config's ``device``
    is validated by the config itself and recorded in ``env.json``; JAX jobs derive their
    keys from the seed explicitly.

    Args:
        config: the resolved config (fields ``threads``, ``seed`` are optional).
        before_import: which of the two calls this is.

    Returns:
        The thread count applied, or ``None`` when the frameworks keep their defaults.
    """
    threads = threads_for(config)
    if before_import:
        if threads is not None:
            os.environ.update({name: str(threads) for name in _THREAD_VARIABLES})
        return threads
    if threads is not None and "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    seed = getattr(config, "seed", None)
    if seed is not None:
        seed_everything(seed)
    return threads


_LOADER = "icml26.shared.llm.loader"


def _clear_model_records() -> None:
    """Forget models loaded before this job (the loader is looked up, never imported)."""
    loader = sys.modules.get(_LOADER)
    if loader is not None:
        loader.clear_loaded_weights()


def _record_models(run_dir: RunDir) -> None:
    """``env.json["weights"]``: every model the job loaded through
    :func:`icml26.shared.llm.load_causal_lm`, with the SHA-256 of its weight files."""
    loader = sys.modules.get(_LOADER)
    weights = loader.loaded_weights() if loader is not None else []
    if weights:
        run_dir.update_env(weights=weights)


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

    The config is resolved (and the paper's ``check_inputs`` run on it) before any folder is
    made, so a bad override or a bad input file leaves nothing behind. Threads and the seed
    come from the config (:func:`apply_runtime`). On failure the traceback goes to
    ``<run>/error.txt`` (read by ``icml26 report``, which then treats an older
    ``results.json`` as stale) and the exception propagates. A finished run folder keeps its
    ``results.json`` until the new one replaces it atomically: the folder's config is the same
    (a different one is refused), so an interrupted rerun never leaves the folder without
    results.

    Args:
        paper: the paper.
        version: its installed version (recorded in ``env.json`` and ``results.json``).
        kind: ``"run"`` (the main job) or ``"bench"``.
        profile: the profile whose config is the starting point.
        overrides: ``"field=value"`` overrides of that config.
        out: the run folder (resumed when it holds the same config); default a new folder
            under ``runs_root``.
        runs_root: where new run folders go (``<runs_root>/<slug>/<stamp>-<kind>-<profile>``).

    Returns:
        The run folder, holding ``results.json``.

    Raises:
        InputError: the paper's input check refused the config's input files.
        OverrideError: a bad override.
        ConfigMismatchError: ``out`` holds a run with a different config.
        TypeError: the job returned no metrics.
    """
    config = resolve_config(paper, kind, profile, overrides)
    try:
        paper.check_inputs(config)
    except (ValueError, OSError) as exc:
        raise InputError(f"{paper.slug}: {exc}") from exc
    apply_runtime(config, before_import=True)
    fn = paper.job(kind)
    apply_runtime(config, before_import=False)
    run_dir = (
        RunDir(out)
        if out is not None
        else RunDir.new(runs_root, paper.slug, kind=kind, profile=profile)
    )
    resuming = run_dir.prepare(config)
    (run_dir.path / ERROR_FILE).unlink(missing_ok=True)
    run_dir.update_env(paper=paper.slug, kind=kind, profile=profile, version=version)
    log(f"{paper.slug} {kind} ({profile}) -> {run_dir.path}{' (resuming)' if resuming else ''}")
    start, cpu_start = time.perf_counter(), time.process_time()
    _clear_model_records()
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
        _record_models(run_dir)
        atomic_write_text(run_dir.path / ERROR_FILE, traceback.format_exc())
        raise
    _record_models(run_dir)
    atomic_write_json(run_dir.results_path, results)
    held = sum(c["holds"] is True for c in results["claims"])
    log(
        f"{paper.slug} {kind} done in {results['seconds']:.1f}s; claims held {held}/{len(results['claims'])}"
    )
    return run_dir

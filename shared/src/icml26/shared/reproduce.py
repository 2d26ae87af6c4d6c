"""``icml26 reproduce``: run papers into one folder, then write its report.

Each paper runs in its own child process (``icml26 run <slug> --out <root>/<slug>``), so a
crash, a leak or a framework's global state stays there. Three ways to schedule them:

* one after another (the default);
* ``jobs=N``: up to N child processes at once, the machine's CPU threads split between
  them: each child gets ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``
  and ``ICML26_THREADS`` = ``max(1, cpu_count // N)`` (torch and numpy's BLAS read the first
  three; a package that sizes its own pools reads ``ICML26_THREADS``);
* ``ray_address=...``: each paper is a Ray task with the paper's resource request
  (:func:`resources_for`), on a cluster or a local instance. The task runs the same child
  process in a scratch folder on its node and sends the whole run folder back, so the
  results land in the same ``<root>/<slug>`` folders (no shared file system needed) and the
  same report is written. Ray is optional (``pip install icml26-shared[ray]``) and imported
  only here, only when asked for.

A paper's request comes from ``Paper.extra["resources"]``, e.g.
``extra={"resources": {"num_cpus": 2, "num_gpus": 1}}``; the default is 1 CPU and no GPU.
"""

from __future__ import annotations

import io
import math
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

from icml26.shared.atomic import atomic_write_json
from icml26.shared.paper import Paper
from icml26.shared.progress import log
from icml26.shared.report import REPRODUCE_FILE, ReportEntry, write_report

__all__ = [
    "THREAD_VARIABLES",
    "Outcome",
    "PaperJob",
    "ReproduceError",
    "Resources",
    "reproduce",
    "resources_for",
    "thread_environment",
]

#: Set for each child to its share of the CPU threads.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "ICML26_THREADS")
_LOG_FILE = "log.txt"
_ERROR_FILE = "error.txt"


class ReproduceError(ValueError):
    """A bad request (resources, jobs, Ray address): raised before any paper runs."""


@dataclass(frozen=True)
class Resources:
    """What one paper's job asks of a Ray node (Ray's ``num_cpus`` / ``num_gpus``)."""

    num_cpus: float = 1.0
    num_gpus: float = 0.0

    def __post_init__(self) -> None:
        for name in ("num_cpus", "num_gpus"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ReproduceError(f"resources {name} must be a number, got {value!r}")
            if not math.isfinite(value) or value < 0:
                raise ReproduceError(f"resources {name} must be finite and >= 0, got {value}")
        if self.num_cpus == 0 and self.num_gpus == 0:
            raise ReproduceError("resources must ask for at least some CPU or GPU")

    @property
    def threads(self) -> int:
        """CPU threads for a child that holds this request."""
        return max(1, math.ceil(self.num_cpus))


def resources_for(paper: Paper) -> Resources:
    """The paper's Ray request from ``Paper.extra["resources"]`` (default 1 CPU, 0 GPU)."""
    spec = paper.extra.get("resources", {})
    if not isinstance(spec, Mapping):
        raise ReproduceError(
            f"{paper.slug}: extra['resources'] must be a mapping like "
            f"{{'num_cpus': 1, 'num_gpus': 0}}, got {spec!r}"
        )
    unknown = set(spec) - {"num_cpus", "num_gpus"}
    if unknown:
        raise ReproduceError(
            f"{paper.slug}: extra['resources'] has unknown keys {sorted(unknown)}; "
            "use num_cpus and num_gpus"
        )
    try:
        return Resources(**spec)
    except ReproduceError as exc:
        raise ReproduceError(f"{paper.slug}: {exc}") from exc


def thread_environment(threads: int, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default ``os.environ``) with every :data:`THREAD_VARIABLES` set to ``threads``."""
    env = dict(os.environ if base is None else base)
    env.update({name: str(threads) for name in THREAD_VARIABLES})
    return env


@dataclass(frozen=True)
class PaperJob:
    """One paper's main job in a reproduce: which profile, which run folder, what it needs."""

    slug: str
    profile: str
    folder: Path
    resources: Resources = Resources()

    def command(self, folder: Path | None = None) -> list[str]:
        return [
            sys.executable,
            "-m",
            "icml26.shared.cli",
            "run",
            self.slug,
            "--profile",
            self.profile,
            "--out",
            str(folder or self.folder),
        ]


@dataclass(frozen=True)
class Outcome:
    """How a paper's child process ended, as the parent saw it."""

    slug: str
    returncode: int
    seconds: float

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def _run_child(job: PaperJob, folder: Path, threads: int | None) -> tuple[int, float]:
    """Run ``job`` into ``folder`` in a child process, its output in ``log.txt``; on a failure
    that left no ``error.txt`` (a crash before the runner could write one), the log's tail."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / _ERROR_FILE).unlink(missing_ok=True)  # an earlier try's error is not this one's
    env = thread_environment(threads) if threads is not None else None
    start = time.perf_counter()
    with open(folder / _LOG_FILE, "w", encoding="utf-8") as log_file:
        code = subprocess.run(
            job.command(folder), stdout=log_file, stderr=subprocess.STDOUT, env=env, check=False
        ).returncode
    seconds = time.perf_counter() - start
    if code != 0 and not (folder / _ERROR_FILE).exists():
        text = (folder / _LOG_FILE).read_text(encoding="utf-8", errors="replace")
        tail = text.splitlines()[-20:] or [f"exit code {code} and no output"]
        (folder / _ERROR_FILE).write_text("\n".join(tail) + "\n", encoding="utf-8")
    return code, seconds


# --------------------------------------------------------------------------- local schedulers


def _announce(job: PaperJob, outcome: Outcome) -> Outcome:
    if outcome.ok:
        log(f"reproduce: {job.slug} done in {outcome.seconds:.1f} s")
    else:
        log(
            f"reproduce: {job.slug} FAILED (exit {outcome.returncode}) after "
            f"{outcome.seconds:.1f} s; see {job.folder / _LOG_FILE}"
        )
    return outcome


def _run_local(job: PaperJob, threads: int | None) -> Outcome:
    log(f"reproduce: {job.slug} ({job.profile}) started")
    code, seconds = _run_child(job, job.folder, threads)
    return _announce(job, Outcome(job.slug, code, seconds))


def run_sequential(jobs: Sequence[PaperJob]) -> list[Outcome]:
    """One paper after another, each with the whole machine (the environment left as it is)."""
    return [_run_local(job, None) for job in jobs]


def run_parallel(jobs: Sequence[PaperJob], n: int) -> list[Outcome]:
    """Up to ``n`` papers at once, each child with ``max(1, cpu_count // n)`` threads."""
    threads = max(1, (os.cpu_count() or 1) // n)
    log(f"reproduce: {len(jobs)} papers, {n} at a time, {threads} thread(s) each")
    # The pool's threads only wait on child processes: the work is in the children.
    with ThreadPoolExecutor(max_workers=n, thread_name_prefix="reproduce") as pool:
        return list(pool.map(lambda job: _run_local(job, threads), jobs))


# --------------------------------------------------------------------------- Ray


def _pack(folder: Path) -> bytes:
    """The run folder as an uncompressed tar (plots are already compressed)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        if folder.is_dir():
            for path in sorted(folder.iterdir()):
                tar.add(path, arcname=path.name)
    return buffer.getvalue()


def _unpack(data: bytes, folder: Path) -> None:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
        if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4: no links out, no odd files
            tar.extractall(folder, filter="data")
        else:  # pragma: no cover - early 3.11 releases
            for member in tar.getmembers():
                if member.name.startswith(("/", "..")) or not (member.isfile() or member.isdir()):
                    raise ReproduceError(f"refusing to unpack {member.name!r}")
            tar.extractall(folder)  # members checked above


def _replace_folder(folder: Path, data: bytes) -> None:
    """Make ``folder`` hold exactly the packed run folder (unpacked beside it, then swapped)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        _unpack(data, staging)
        if folder.exists():
            shutil.rmtree(folder)
        staging.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def ray_task(job: PaperJob, packed: bytes) -> tuple[int, float, bytes]:
    """The body of a paper's Ray task: unpack the run folder as it stands (so a run resumes),
    run the child process in a scratch copy on this node, and return the folder packed."""
    with tempfile.TemporaryDirectory(prefix=f"icml26-{job.slug}-") as scratch:
        folder = Path(scratch) / job.slug
        folder.mkdir()
        _unpack(packed, folder)
        code, seconds = _run_child(job, folder, job.resources.threads)
        return code, seconds, _pack(folder)


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ReproduceError(
            "--ray needs Ray: pip install 'icml26-shared[ray]' (or pip install ray)"
        ) from exc
    return ray


def _init_ray(ray: Any, address: str) -> None:
    """``local``: a new Ray instance on this machine; ``auto``: the cluster this machine is
    part of if there is one (``RAY_ADDRESS``, ``ray start``), else a new local instance;
    anything else: that cluster's address (``host:6379``, ``ray://host:10001``)."""
    quiet = {"include_dashboard": False, "log_to_driver": False}
    if address == "local":
        ray.init(address="local", **quiet)
    elif address == "auto":
        ray.init(**quiet)
    else:
        ray.init(address=address, log_to_driver=False)


def _check_feasible(
    jobs: Sequence[PaperJob], available: Mapping[str, float], *, strict: bool = True
) -> None:
    """A request that the cluster as it stands cannot meet would wait forever on a fixed
    cluster (a local instance): refuse it up front. On a cluster that may scale up, warn."""
    cpus, gpus = float(available.get("CPU", 0)), float(available.get("GPU", 0))
    for job in jobs:
        r = job.resources
        if r.num_cpus > cpus or r.num_gpus > gpus:
            message = (
                f"{job.slug} asks for {r.num_cpus:g} CPU / {r.num_gpus:g} GPU but the Ray "
                f"cluster has {cpus:g} CPU / {gpus:g} GPU in all"
            )
            if strict:
                raise ReproduceError(message)
            log(f"reproduce: warning: {message}; it waits until the cluster grows")


def run_on_ray(jobs: Sequence[PaperJob], address: str) -> list[Outcome]:
    """Each paper a Ray task with its own request; results gathered into the run folders."""
    ray = _import_ray()
    _init_ray(ray, address)
    try:
        _check_feasible(jobs, ray.cluster_resources(), strict=address == "local")
        remote = ray.remote(ray_task)
        pending = {}
        for job in jobs:
            task = remote.options(
                num_cpus=job.resources.num_cpus,
                num_gpus=job.resources.num_gpus,
                name=f"icml26-{job.slug}",
            )
            pending[task.remote(job, _pack(job.folder))] = job
            log(
                f"reproduce: {job.slug} ({job.profile}) submitted to Ray "
                f"({job.resources.num_cpus:g} CPU, {job.resources.num_gpus:g} GPU)"
            )
        outcomes: dict[str, Outcome] = {}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            job = pending.pop(done[0])
            try:
                code, seconds, packed = ray.get(done[0])
            except Exception as exc:  # the task itself died (node lost, worker killed)
                code, seconds = 1, 0.0
                job.folder.mkdir(parents=True, exist_ok=True)
                (job.folder / _ERROR_FILE).write_text(
                    f"the Ray task failed: {type(exc).__name__}: {exc}\n", encoding="utf-8"
                )
            else:
                _replace_folder(job.folder, packed)
            outcomes[job.slug] = _announce(job, Outcome(job.slug, code, seconds))
        return [outcomes[job.slug] for job in jobs]
    finally:
        ray.shutdown()


# --------------------------------------------------------------------------- entry point


def plan(papers: Mapping[str, Paper | None], profile: str, root: Path) -> list[PaperJob]:
    """One :class:`PaperJob` per paper, in the given order, its folder ``root/<slug>``.

    A paper given as ``None`` (its module failed to load here) gets the default request: its
    child process will fail to load it too, and the report shows why.
    """
    return [
        PaperJob(slug, profile, root / slug, resources_for(paper) if paper else Resources())
        for slug, paper in papers.items()
    ]


def _mode(jobs: int, ray_address: str | None) -> str:
    if ray_address is not None:
        return f"Ray tasks at {ray_address}"
    return "sequential" if jobs == 1 else f"{jobs} papers at a time"


def reproduce(
    papers: Mapping[str, Paper | None],
    profile: str,
    root: str | os.PathLike[str],
    *,
    jobs: int = 1,
    ray_address: str | None = None,
) -> tuple[list[Outcome], list[ReportEntry], Path, Path]:
    """Run every paper's ``profile`` job into ``root/<slug>`` and write ``root/report.*``.

    Returns the outcomes (in the order of ``papers``), the report's entries and the paths of
    ``report.md`` and ``report.html``. Bad requests raise :class:`ReproduceError` before
    anything runs; a paper that fails is reported and the others still run.
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ReproduceError(f"jobs must be a positive integer, got {jobs!r}")
    if ray_address is not None and jobs != 1:
        raise ReproduceError(
            "--jobs and --ray do not mix: under Ray each paper's resource request decides "
            "how many run at once"
        )
    if ray_address is not None and not ray_address.strip():
        raise ReproduceError("--ray needs an address: local, auto, host:port or ray://host:port")
    root = Path(root)
    planned = plan(papers, profile, root)
    runner: Callable[[], list[Outcome]]
    if ray_address is not None:
        _import_ray()  # fail before any folder is made
        runner = partial(run_on_ray, planned, ray_address)
    elif jobs == 1:
        runner = partial(run_sequential, planned)
    else:
        runner = partial(run_parallel, planned, jobs)
    start = time.perf_counter()
    outcomes = runner()  # makes root/<slug> as each paper starts (not before Ray is up)
    root.mkdir(parents=True, exist_ok=True)
    record = {
        "profile": profile,
        "mode": _mode(jobs, ray_address),
        "jobs": jobs,
        "ray": ray_address,
        "seconds": time.perf_counter() - start,
        "papers": {o.slug: {k: v for k, v in asdict(o).items() if k != "slug"} for o in outcomes},
    }
    atomic_write_json(root / REPRODUCE_FILE, record)
    md, page, entries = write_report(root)
    return outcomes, entries, md, page

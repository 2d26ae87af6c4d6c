"""``icml26 reproduce``: run papers into one folder, then write its report.

Each paper runs in its own child process (``icml26 run <slug> --out <root>/<slug>``), so a
crash, a leak or a framework's global state stays there. Two ways to schedule them:

* on this machine (the default), up to ``jobs`` papers at once, by default one per core
  (:func:`available_cores`: the CPUs in this process's affinity mask where the system has
  one, else ``os.cpu_count()``), started in the requested order. The cores' threads are
  split between the children: each gets ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``,
  ``OPENBLAS_NUM_THREADS`` and ``ICML26_THREADS`` = ``max(1, cores // jobs)`` (torch and
  numpy's BLAS read the first three; a package that sizes its own pools reads
  ``ICML26_THREADS``). ``jobs=1`` runs one paper after another with the environment as it
  is. Two rules can hold a paper back:

  - memory: a paper declares its peak memory (:attr:`Resources.memory_gb`, default
    :data:`DEFAULT_MEMORY_GB`); it starts only when the declared memory of the papers
    running plus its own fits in the memory available when the reproduce started
    (:func:`available_memory_gb`, ``MemAvailable``), else it waits, and the log says so. A
    paper that declares more than is available runs with nothing beside it;
  - timings: a paper whose claims are timings (:attr:`Paper.timing_claims
    <icml26.shared.paper.Paper.timing_claims>`) runs alone, after the others, with every
    core's threads, so that no other paper's load is in its measurements.

* ``ray_address=...``: each paper is a Ray task with the paper's resource request
  (:func:`resources_for`: CPUs and GPUs; the memory and timing rules above are the local
  scheduler's), on a cluster or a local instance. The task runs the same child
  process in a scratch folder on its node and sends the whole run folder back, so the
  results land in the same ``<root>/<slug>`` folders (no shared file system needed) and the
  same report is written. Ray is optional (``pip install icml26-shared[ray]``) and imported
  only here, only when asked for.

A paper's request comes from ``Paper.extra["resources"]``, e.g.
``extra={"resources": {"num_cpus": 2, "num_gpus": 1, "memory_gb": 6}}``; the default is 1
CPU, no GPU and 2.5 GB. Whichever way the papers run and in whatever order they finish, the
outcomes, ``reproduce.json`` and the report list them in the requested order.
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
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

from icml26.shared.atomic import atomic_write_json
from icml26.shared.paper import Paper
from icml26.shared.progress import log
from icml26.shared.report import REPRODUCE_FILE, ReportEntry, write_report

__all__ = [
    "DEFAULT_MEMORY_GB",
    "THREAD_VARIABLES",
    "Outcome",
    "PaperJob",
    "ReproduceError",
    "Resources",
    "available_cores",
    "available_memory_gb",
    "reproduce",
    "resources_for",
    "run_local",
    "thread_environment",
]

#: Set for each child to its share of the CPU threads.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "ICML26_THREADS")
#: A paper's peak memory when it declares none: the largest measured peak RSS of a paper's
#: ``quick`` run (2.5 GB, 2026-12-02), so that an undeclared paper is never under-counted.
DEFAULT_MEMORY_GB = 2.5
_GB = 1e9
_LOG_FILE = "log.txt"
_ERROR_FILE = "error.txt"


class ReproduceError(ValueError):
    """A bad request (resources, jobs, Ray address): raised before any paper runs."""


@dataclass(frozen=True)
class Resources:
    """What one paper's job asks for.

    Attributes:
        num_cpus: CPUs, for a Ray node (Ray's ``num_cpus``; the child's thread count there).
        num_gpus: GPUs, for a Ray node (Ray's ``num_gpus``).
        memory_gb: the job's peak memory in GB (10^9 bytes), for the local scheduler: a paper
            starts only when it fits beside the running ones (default
            :data:`DEFAULT_MEMORY_GB`).
    """

    num_cpus: float = 1.0
    num_gpus: float = 0.0
    memory_gb: float = DEFAULT_MEMORY_GB

    def __post_init__(self) -> None:
        for name in ("num_cpus", "num_gpus", "memory_gb"):
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
    """The paper's request from ``Paper.extra["resources"]`` (default 1 CPU, 0 GPU, 2.5 GB)."""
    spec = paper.extra.get("resources", {})
    if not isinstance(spec, Mapping):
        raise ReproduceError(
            f"{paper.slug}: extra['resources'] must be a mapping like "
            f"{{'num_cpus': 1, 'num_gpus': 0, 'memory_gb': 2.5}}, got {spec!r}"
        )
    unknown = set(spec) - {"num_cpus", "num_gpus", "memory_gb"}
    if unknown:
        raise ReproduceError(
            f"{paper.slug}: extra['resources'] has unknown keys {sorted(unknown)}; "
            "use num_cpus, num_gpus and memory_gb"
        )
    try:
        return Resources(**spec)
    except ReproduceError as exc:
        raise ReproduceError(f"{paper.slug}: {exc}") from exc


def available_cores() -> int:
    """CPUs this process may run on: its affinity mask where the system has one (Linux; a
    container or ``taskset`` narrows it), else ``os.cpu_count()``."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)  # pragma: no cover - macOS, Windows


def available_memory_gb(meminfo: str | os.PathLike[str] = "/proc/meminfo") -> float:
    """Memory available to new processes now, in GB: ``MemAvailable`` from ``meminfo`` where
    the system has it (Linux), else the free physical pages (``os.sysconf``), else infinity
    (no memory rule)."""
    try:
        with open(meminfo, encoding="ascii") as lines:
            for line in lines:
                name, _, value = line.partition(":")
                if name == "MemAvailable":
                    return int(value.split()[0]) * 1024 / _GB  # given in kB (KiB)
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / _GB
    except (AttributeError, OSError, ValueError):  # pragma: no cover - no sysconf names
        return math.inf


def thread_environment(threads: int, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default ``os.environ``) with every :data:`THREAD_VARIABLES` set to ``threads``."""
    env = dict(os.environ if base is None else base)
    env.update({name: str(threads) for name in THREAD_VARIABLES})
    return env


@dataclass(frozen=True)
class PaperJob:
    """One paper's main job in a reproduce: which profile, which run folder, what it needs,
    and whether it runs ``alone`` (its claims are timings: after the others, nothing beside)."""

    slug: str
    profile: str
    folder: Path
    resources: Resources = Resources()
    alone: bool = False

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


#: How one paper's job runs: ``(job, folder, threads) -> (exit code, wall seconds)``.
ChildRunner = Callable[[PaperJob, Path, int | None], tuple[int, float]]


def _run_local(job: PaperJob, threads: int | None, run_child: ChildRunner) -> Outcome:
    log(f"reproduce: {job.slug} ({job.profile}) started")
    code, seconds = run_child(job, job.folder, threads)
    return _announce(job, Outcome(job.slug, code, seconds))


def run_local(
    jobs: Sequence[PaperJob],
    n: int,
    *,
    cores: int,
    memory_gb: float,
    run_child: ChildRunner = _run_child,
) -> list[Outcome]:
    """Run ``jobs`` on this machine: up to ``n`` at once within ``memory_gb``, then the
    ``alone`` jobs one by one; the outcomes in the order of ``jobs``.

    A job starts, in the order of ``jobs``, when fewer than ``n`` run and the declared memory
    of those running plus its own fits in ``memory_gb``; one that does not fit yet waits while
    the jobs after it may start. Children get ``max(1, cores // n)`` threads each, an
    ``alone`` job all ``cores``; with ``n == 1`` the environment is left as it is.
    """
    shared = [job for job in jobs if not job.alone]
    alone = [job for job in jobs if job.alone]
    share = None if n == 1 else max(1, cores // n)
    log(
        f"reproduce: {len(jobs)} papers, {n} at a time within {memory_gb:.1f} GB, "
        f"{share or 'all'} thread(s) each"
        + (f"; then alone, with every core: {', '.join(j.slug for j in alone)}" if alone else "")
    )
    outcomes: dict[str, Outcome] = {}
    pending = list(shared)
    running: dict[Future[Outcome], PaperJob] = {}
    held: set[str] = set()
    # The pool's threads only wait on child processes: the work is in the children.
    with ThreadPoolExecutor(max_workers=n, thread_name_prefix="reproduce") as pool:
        while pending or running:
            for job in list(pending):
                if len(running) >= n:
                    break
                in_use = sum(j.resources.memory_gb for j in running.values())
                need = job.resources.memory_gb
                if running and in_use + need > memory_gb:
                    if job.slug not in held:
                        held.add(job.slug)
                        log(
                            f"reproduce: holding {job.slug} back: it declares {need:g} GB, "
                            f"{in_use:g} GB of {memory_gb:.1f} GB is held by running papers"
                        )
                    continue
                if need > memory_gb:
                    log(
                        f"reproduce: warning: {job.slug} declares {need:g} GB but "
                        f"{memory_gb:.1f} GB is available: it runs with nothing beside it"
                    )
                pending.remove(job)
                running[pool.submit(_run_local, job, share, run_child)] = job
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                outcomes[running.pop(future).slug] = future.result()
    for job in alone:
        log(f"reproduce: {job.slug} runs alone (its claims are timings)")
        outcomes[job.slug] = _run_local(job, None if n == 1 else cores, run_child)
    return [outcomes[job.slug] for job in jobs]


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
        PaperJob(
            slug,
            profile,
            root / slug,
            resources_for(paper) if paper else Resources(),
            alone=bool(paper and paper.timing_claims),
        )
        for slug, paper in papers.items()
    ]


def _mode(jobs: int, ray_address: str | None, alone: Sequence[str]) -> str:
    if ray_address is not None:
        return f"Ray tasks at {ray_address}"
    mode = "sequential" if jobs == 1 else f"{jobs} papers at a time"
    return mode + (f", then {', '.join(alone)} alone" if alone and jobs > 1 else "")


def reproduce(
    papers: Mapping[str, Paper | None],
    profile: str,
    root: str | os.PathLike[str],
    *,
    jobs: int | None = None,
    ray_address: str | None = None,
    memory_gb: float | None = None,
    run_child: ChildRunner = _run_child,
) -> tuple[list[Outcome], list[ReportEntry], Path, Path]:
    """Run every paper's ``profile`` job into ``root/<slug>`` and write ``root/report.*``.

    Args:
        papers: the papers by slug, in the order the report lists them.
        profile: the profile every paper runs.
        root: the folder for the run folders, ``reproduce.json`` and the report.
        jobs: papers at once on this machine (default: :func:`available_cores`; 1: one after
            another, the environment as it is). Not with ``ray_address``.
        ray_address: run each paper as a Ray task there instead (see :func:`run_on_ray`).
        memory_gb: the memory the papers' declared peaks must fit in (default:
            :func:`available_memory_gb` when the reproduce starts).
        run_child: how one paper runs locally (default: a child process ``icml26 run``);
            tests pass a fake.

    Returns the outcomes (in the order of ``papers``), the report's entries and the paths of
    ``report.md`` and ``report.html``. Bad requests raise :class:`ReproduceError` before
    anything runs; a paper that fails is reported and the others still run.
    """
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ReproduceError(f"jobs must be a positive integer, got {jobs!r}")
    if ray_address is not None and jobs not in (None, 1):
        raise ReproduceError(
            "--jobs and --ray do not mix: under Ray each paper's resource request decides "
            "how many run at once"
        )
    if ray_address is not None and not ray_address.strip():
        raise ReproduceError("--ray needs an address: local, auto, host:port or ray://host:port")
    if memory_gb is not None and not memory_gb > 0:
        raise ReproduceError(f"memory_gb must be > 0, got {memory_gb!r}")
    root = Path(root)
    planned = plan(papers, profile, root)
    cores = available_cores()
    n = jobs or cores
    alone = [job.slug for job in planned if job.alone]
    record: dict[str, Any] = {"profile": profile, "ray": ray_address}
    runner: Callable[[], list[Outcome]]
    if ray_address is not None:
        _import_ray()  # fail before any folder is made
        runner = partial(run_on_ray, planned, ray_address)
        record |= {"mode": _mode(1, ray_address, ()), "jobs": 1}
    else:
        budget = available_memory_gb() if memory_gb is None else memory_gb
        runner = partial(run_local, planned, n, cores=cores, memory_gb=budget, run_child=run_child)
        record |= {
            "mode": _mode(n, None, alone),
            "jobs": n,
            "cores": cores,
            "memory_gb": round(budget, 2) if math.isfinite(budget) else None,
            "alone": alone,
        }
    start = time.perf_counter()
    outcomes = runner()  # makes root/<slug> as each paper starts (not before Ray is up)
    root.mkdir(parents=True, exist_ok=True)
    record["seconds"] = time.perf_counter() - start
    record["papers"] = {
        o.slug: {k: v for k, v in asdict(o).items() if k != "slug"} for o in outcomes
    }
    atomic_write_json(root / REPRODUCE_FILE, record)
    md, page, entries = write_report(root)
    return outcomes, entries, md, page

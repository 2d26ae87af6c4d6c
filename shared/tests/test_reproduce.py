"""``icml26 reproduce``: sequential, ``--jobs N`` and ``--ray`` give the same report; the
local scheduler's rules (one job per core, memory, timing papers alone) on fake children."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
import threading
import time
from pathlib import Path

import pytest

from icml26.shared.cli import main
from icml26.shared.paper import Paper
from icml26.shared.reproduce import (
    DEFAULT_MEMORY_GB,
    THREAD_VARIABLES,
    PaperJob,
    ReproduceError,
    Resources,
    _check_feasible,
    _pack,
    _replace_folder,
    available_cores,
    available_memory_gb,
    ray_task,
    reproduce,
    resources_for,
    thread_environment,
)
from icml26.shared.runner import run_job

# Always fails, after writing down the thread variables its process was given; asks Ray for
# 2 CPUs. With fake-paper (which succeeds and plots), one reproduce covers both outcomes.
BROKEN_PAPER = (
    "import json, os\n"
    "from icml26_fake_paper import PROFILES\n"
    "from icml26.shared import Paper\n"
    "VARS = ('OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'ICML26_THREADS')\n"
    "def run(config, run_dir):\n"
    "    run_dir.write_json('threads.json', {v: int(os.environ.get(v, '0')) for v in VARS})\n"
    "    raise ValueError('broken on purpose')\n"
    "PAPER = Paper(slug='broken-paper', title='t', profiles=PROFILES, run=run,\n"
    "              extra={'resources': {'num_cpus': 2}})\n"
)


@pytest.fixture
def papers(fake_paper: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """fake-paper and broken-paper, visible here and to child processes."""
    module_dir = Path(sys.path[0])
    (module_dir / "icml26_broken_paper.py").write_text(BROKEN_PAPER)
    monkeypatch.setenv("ICML26_EXTRA_PAPERS", "icml26_fake_paper:PAPER,icml26_broken_paper:PAPER")
    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    yield ["fake-paper", "broken-paper"]
    sys.modules.pop("icml26_broken_paper", None)


def _threads(folder: Path) -> dict[str, int]:
    return json.loads((folder / "broken-paper" / "threads.json").read_text())


def _timeless(md: str) -> str:
    """The report without what differs between two runs of the same jobs: times, the build
    stamp and the line saying how the reproduce was scheduled."""
    md = re.sub(r" Built .*?\(\d+ CPUs\)\.", "", md)
    md = re.sub(r" The reproduce took [\d.]+ s \([^)]*\)\.", "", md)
    md = re.sub(r"\d+\.\d s", "<t> s", md)
    lines = []
    for line in md.splitlines():
        cells = re.split(r"(?<!\\)\|", line)
        if len(cells) == 12 and cells[-2].strip() in ("ok", "FAILED"):  # a summary row
            cells[6:8] = [" <t> ", " <t> "]
        lines.append("|".join(cells))
    return "\n".join(lines)


def _reproduce(out: Path, slugs: list[str], *extra: str) -> tuple[int, str]:
    code = main(["reproduce", *slugs, "--profile", "smoke", "--out", str(out), *extra])
    return code, (out / "report.md").read_text()


def test_default_jobs_1_and_2_give_the_same_report(papers: list[str], tmp_path: Path) -> None:
    code_seq, seq = _reproduce(tmp_path / "seq", papers, "--jobs", "1")
    code_def, default = _reproduce(tmp_path / "default", papers)
    code_par, par = _reproduce(tmp_path / "par", papers, "--jobs", "2")
    assert code_seq == code_def == code_par == 1  # broken-paper fails, fake-paper still runs
    assert _timeless(par) == _timeless(seq) == _timeless(default)
    assert "| [fake-paper](#fake-paper-run-profile-smoke) | run | 1 | 1 | 0 |" in par
    # A failed paper's wall time is the one the reproduce measured around its child.
    assert re.search(
        r"\| \[broken-paper\]\(#broken-paper-run-profile-smoke\) \| run \| - \| - \| - \| "
        r"\d+\.\d \| - \| 0\+local \| smoke \| FAILED \|",
        par,
    )
    assert "broken on purpose" in par
    assert "The score is at least 5." in par
    # The sections in the requested order (not sorted, not by finish).
    assert par.index("## fake-paper (run") < par.index("## broken-paper (run")
    cores = available_cores()
    assert "(sequential)" in seq
    assert "(2 papers at a time)" in par
    how = json.loads((tmp_path / "default" / "reproduce.json").read_text())
    assert how["jobs"] == cores
    assert how["mode"] == ("sequential" if cores == 1 else f"{cores} papers at a time")
    how = json.loads((tmp_path / "par" / "reproduce.json").read_text())
    assert how["mode"] == "2 papers at a time"
    assert list(how["papers"]) == papers
    assert how["papers"]["broken-paper"]["returncode"] == 1
    # Each child got its share of the CPU threads; sequential children the environment as is.
    assert _threads(tmp_path / "par") == dict.fromkeys(THREAD_VARIABLES, max(1, cores // 2))
    if cores > 1:
        assert _threads(tmp_path / "default") == dict.fromkeys(THREAD_VARIABLES, 1)
    assert _threads(tmp_path / "seq") == dict.fromkeys(THREAD_VARIABLES, 0)
    # `icml26 report` rebuilds the same report from the folders.
    (tmp_path / "par" / "report.md").unlink()
    assert main(["report", str(tmp_path / "par")]) == 1
    assert _timeless((tmp_path / "par" / "report.md").read_text()) == _timeless(par)
    page = (tmp_path / "par" / "report.html").read_text()
    assert 'loading="lazy"' in page
    assert "base64" not in page


# --------------------------------------------------------------------------- fake children


class FakeChildren:
    """Stands in for the child processes: each "runs" its paper for ``seconds[slug]`` (the
    paper's job in this process when given, else nothing) and records when and with how
    many threads."""

    def __init__(self, seconds: dict[str, float], papers: dict[str, Paper] | None = None):
        self.seconds, self.papers = seconds, papers or {}
        self.spans: dict[str, tuple[float, float]] = {}
        self.threads: dict[str, int | None] = {}
        self._lock = threading.Lock()

    def __call__(self, job: PaperJob, folder: Path, threads: int | None) -> tuple[int, float]:
        start = time.monotonic()
        time.sleep(self.seconds[job.slug])
        if job.slug in self.papers:
            run_job(self.papers[job.slug], "1.0", profile=job.profile, out=folder)
        end = time.monotonic()
        with self._lock:
            self.spans[job.slug], self.threads[job.slug] = (start, end), threads
        return 0, end - start

    def at_once(self, weight: dict[str, float] | None = None) -> float:
        """The most children that ran at the same time (the largest sum of their ``weight``)."""
        weight = weight or dict.fromkeys(self.spans, 1.0)
        edges = sorted(
            (t, w)
            for slug, (s, e) in self.spans.items()
            for t, w in ((s, weight[slug]), (e, -weight[slug]))
        )
        most = now = 0.0
        for _, step in edges:
            now += step
            most = max(most, now)
        return most

    def overlaps(self, slug: str) -> list[str]:
        start, end = self.spans[slug]
        return [o for o, (s, e) in self.spans.items() if o != slug and s < end and e > start]


def _papers(fake: Paper, *specs: tuple[str, dict[str, object]]) -> dict[str, Paper]:
    """Copies of fake-paper under other slugs, each with its own fields (``timing_claims``,
    ``extra``), its job returning fixed metrics without plotting."""

    def run(config: object, run_dir: object) -> dict[str, object]:
        return {"score": 7.0, "nested": {"x": 1.0}}

    return {slug: dataclasses.replace(fake, slug=slug, run=run, **fields) for slug, fields in specs}


def test_default_jobs_is_one_per_core(
    fake_paper: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from icml26_fake_paper import PAPER as fake

    if hasattr(os, "sched_getaffinity"):
        assert available_cores() == len(os.sched_getaffinity(0))
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2})  # taskset -c 0-2
    else:  # pragma: no cover - macOS, Windows
        monkeypatch.setattr(os, "cpu_count", lambda: 3)
    assert available_cores() == 3
    papers = _papers(fake, *((f"p{i}", {}) for i in range(5)))
    children = FakeChildren(dict.fromkeys(papers, 0.5))
    reproduce(papers, "smoke", tmp_path, memory_gb=100.0, run_child=children)
    assert children.at_once() == 3
    assert set(children.threads.values()) == {1}  # 3 cores // 3 jobs
    how = json.loads((tmp_path / "reproduce.json").read_text())
    assert (how["jobs"], how["cores"], how["mode"]) == (3, 3, "3 papers at a time")


def test_memory_holds_a_paper_back(
    fake_paper: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from icml26_fake_paper import PAPER as fake

    monkeypatch.delenv("ICML26_QUIET")  # read the log
    big = {"extra": {"resources": {"memory_gb": 3}}}
    papers = _papers(fake, ("a", big), ("b", big), ("c", {}), ("d", {}))
    children = FakeChildren({"a": 0.8, "b": 0.1, "c": 0.3, "d": 0.1})
    # 3 + 3 + 2.5 + 2.5 GB declared, 6 GB available, 4 jobs allowed.
    outcomes, *_ = reproduce(papers, "smoke", tmp_path, jobs=4, memory_gb=6.0, run_child=children)
    assert [o.slug for o in outcomes] == ["a", "b", "c", "d"]
    assert children.at_once({"a": 3, "b": 3, "c": 2.5, "d": 2.5}) <= 6.0
    assert children.at_once() == 2
    assert children.spans["c"][0] >= children.spans["b"][1]  # c waited for b (3 + 2.5 fit)
    # d waited for c or a, whichever finished first.
    assert children.spans["d"][0] >= min(children.spans["c"][1], children.spans["a"][1])
    err = capsys.readouterr().err
    assert "holding c back: it declares 2.5 GB, 6 GB of 6.0 GB is held by running papers" in err
    assert err.count("holding c back") == 1  # once, however long it waits
    assert "holding d back" in err
    # One paper bigger than all the memory runs with nothing beside it, after a warning.
    huge = _papers(fake, ("h", {"extra": {"resources": {"memory_gb": 9}}}), ("s", {}))
    children = FakeChildren({"h": 0.2, "s": 0.2})
    reproduce(huge, "smoke", tmp_path / "huge", jobs=2, memory_gb=6.0, run_child=children)
    assert children.overlaps("h") == []
    assert "h declares 9 GB but 6.0 GB is available" in capsys.readouterr().err


def test_timing_paper_runs_after_the_others_alone_with_every_core(
    fake_paper: str, tmp_path: Path
) -> None:
    from icml26_fake_paper import PAPER as fake

    timed = {"timing_claims": True}
    papers = _papers(fake, ("t1", timed), ("a", {}), ("t2", timed), ("b", {}), ("c", {}))
    children = FakeChildren(dict.fromkeys(papers, 0.2))
    outcomes, *_ = reproduce(papers, "smoke", tmp_path, jobs=2, memory_gb=100.0, run_child=children)
    assert [o.slug for o in outcomes] == list(papers)  # the requested order
    others_end = max(children.spans[s][1] for s in ("a", "b", "c"))
    assert others_end <= children.spans["t1"][0] < children.spans["t1"][1]
    assert children.spans["t1"][1] <= children.spans["t2"][0]  # in the requested order
    assert children.overlaps("t1") == children.overlaps("t2") == []
    cores = available_cores()
    assert children.threads == {"t1": cores, "t2": cores, "a": max(1, cores // 2)} | {
        "b": max(1, cores // 2),
        "c": max(1, cores // 2),
    }
    how = json.loads((tmp_path / "reproduce.json").read_text())
    assert how["alone"] == ["t1", "t2"]
    assert how["mode"] == "2 papers at a time, then t1, t2 alone"
    # One at a time: the same order, the environment left as it is.
    children = FakeChildren(dict.fromkeys(papers, 0.01))
    reproduce(papers, "smoke", tmp_path / "seq", jobs=1, memory_gb=100.0, run_child=children)
    assert sorted(children.spans, key=lambda s: children.spans[s][0]) == ["a", "b", "c", "t1", "t2"]
    assert set(children.threads.values()) == {None}
    with pytest.raises(TypeError, match="timing_claims must be True or False"):
        dataclasses.replace(fake, timing_claims="yes")


def test_report_order_is_the_requested_order_not_the_finish_order(
    fake_paper: str, tmp_path: Path
) -> None:
    from icml26_fake_paper import PAPER as fake

    papers = _papers(fake, ("zeta", {}), ("alpha", {}), ("mid", {}))
    reports, finishes = [], []
    for name, seconds in (("first-last", [0.6, 0.3, 0.0]), ("first-first", [0.0, 0.3, 0.6])):
        children = FakeChildren(dict(zip(papers, seconds, strict=True)), papers)
        outcomes, entries, md, _ = reproduce(
            papers, "smoke", tmp_path / name, jobs=3, memory_gb=100.0, run_child=children
        )
        assert [o.slug for o in outcomes] == [e.paper for e in entries] == list(papers)
        headings = [line for line in md.read_text().splitlines() if line.startswith("## ")]
        assert headings[2:] == [f"## {slug} (run, profile smoke)" for slug in papers]
        reports.append(_timeless(md.read_text()))
        finishes.append(sorted(children.spans, key=lambda s: children.spans[s][1]))
    assert finishes == [["mid", "alpha", "zeta"], ["zeta", "alpha", "mid"]]
    assert reports[0] == reports[1]
    # `icml26 report` keeps that order; without reproduce.json, papers are sorted.
    assert main(["report", str(tmp_path / "first-last")]) == 0
    assert _timeless((tmp_path / "first-last" / "report.md").read_text()) == reports[0]
    (tmp_path / "first-last" / "reproduce.json").unlink()
    main(["report", str(tmp_path / "first-last")])
    md = (tmp_path / "first-last" / "report.md").read_text()
    assert md.index("## alpha (run") < md.index("## mid (run") < md.index("## zeta (run")


def test_available_memory_reads_memavailable(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24683664 kB\nMemAvailable:    5000000 kB\n")
    assert available_memory_gb(meminfo) == pytest.approx(5000000 * 1024 / 1e9)
    fallback = available_memory_gb(tmp_path / "absent")  # os.sysconf's free pages
    assert fallback > 0


def test_thread_environment_sets_every_variable() -> None:
    env = thread_environment(3, {"PATH": "/bin", "OMP_NUM_THREADS": "8"})
    assert env == {"PATH": "/bin", **{name: "3" for name in THREAD_VARIABLES}}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--jobs", "0"], "jobs must be a positive integer"),
        (["--jobs", "2", "--ray", "local"], "--jobs and --ray do not mix"),
        (["--ray", " "], "--ray needs an address"),
    ],
)
def test_bad_scheduling_exits_2_and_runs_nothing(
    papers: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    message: str,
) -> None:
    assert main(["reproduce", "fake-paper", "--out", str(tmp_path / "o"), *argv]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_ray_missing_is_a_clear_error(
    papers: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    assert main(["reproduce", "fake-paper", "--out", str(tmp_path / "o"), "--ray", "local"]) == 2
    assert "pip install 'icml26-shared[ray]'" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_resources_come_from_paper_extra(papers: list[str]) -> None:
    from icml26_broken_paper import PAPER as broken_paper
    from icml26_fake_paper import PAPER as fake

    assert resources_for(fake) == Resources(num_cpus=1, num_gpus=0, memory_gb=DEFAULT_MEMORY_GB)
    assert resources_for(broken_paper) == Resources(num_cpus=2, num_gpus=0)
    sized = dataclasses.replace(fake, extra={"resources": {"memory_gb": 6}})
    assert resources_for(sized) == Resources(memory_gb=6)
    assert Resources(num_cpus=0.5).threads == 1
    assert Resources(num_cpus=2.5, num_gpus=1).threads == 3
    for bad, message in [
        ({"num_cpus": -1}, "num_cpus must be finite and >= 0"),
        ({"num_gpus": "one"}, "num_gpus must be a number"),
        ({"memory_gb": float("inf")}, "memory_gb must be finite and >= 0"),
        ({"cpus": 2}, "unknown keys \\['cpus'\\]"),
        ({"num_cpus": 0}, "at least some CPU or GPU"),
        ([1, 0], "must be a mapping"),
    ]:
        broken = dataclasses.replace(fake, extra={"resources": bad})
        with pytest.raises(ReproduceError, match=message):
            resources_for(broken)


def test_infeasible_ray_request_is_refused(tmp_path: Path) -> None:
    job = PaperJob("p", "smoke", tmp_path, Resources(num_cpus=1, num_gpus=1))
    _check_feasible([job], {"CPU": 4.0, "GPU": 1.0})
    with pytest.raises(ReproduceError, match="asks for 1 CPU / 1 GPU but the Ray cluster has 4"):
        _check_feasible([job], {"CPU": 4.0})
    _check_feasible([job], {"CPU": 4.0}, strict=False)  # a cluster that may scale: a warning


def test_ray_task_body_runs_the_job_and_ships_the_folder_back(
    papers: list[str], tmp_path: Path
) -> None:
    """What a Ray worker does, run here without Ray: unpack, run the child, pack."""
    folder = tmp_path / "root" / "broken-paper"
    folder.mkdir(parents=True)
    (folder / "stale.txt").write_text("from an earlier try")
    job = PaperJob("broken-paper", "smoke", folder, Resources(num_cpus=2))
    code, seconds, packed = ray_task(job, _pack(folder))
    assert code == 1
    assert seconds > 0
    assert not (folder / "error.txt").exists()  # the worker's scratch copy, not this folder
    _replace_folder(folder, packed)
    assert "broken on purpose" in (folder / "error.txt").read_text()
    assert _threads(folder.parent) == dict.fromkeys(THREAD_VARIABLES, 2)  # the request's CPUs
    assert (folder / "stale.txt").read_text() == "from an earlier try"  # sent there and back
    assert (folder / "log.txt").exists()
    assert sorted(p.name for p in folder.parent.iterdir()) == ["broken-paper"]  # no staging left


@pytest.mark.slow
def test_ray_local_gives_the_same_report_as_sequential(papers: list[str], tmp_path: Path) -> None:
    pytest.importorskip("ray")
    code_seq, seq = _reproduce(tmp_path / "seq", papers, "--jobs", "1")
    code_ray, on_ray = _reproduce(tmp_path / "ray", papers, "--ray", "local")
    assert code_seq == code_ray == 1
    assert _timeless(on_ray) == _timeless(seq)
    assert "(Ray tasks at local)" in on_ray
    assert (tmp_path / "ray" / "fake-paper" / "plots" / "curve.png").stat().st_size > 0
    # broken-paper asked for 2 CPUs: its child had 2 threads (unset when run sequentially).
    assert _threads(tmp_path / "ray") == dict.fromkeys(THREAD_VARIABLES, 2)
    assert _threads(tmp_path / "seq") == dict.fromkeys(THREAD_VARIABLES, 0)

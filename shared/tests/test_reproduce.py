"""``icml26 reproduce``: sequential, ``--jobs N`` and ``--ray`` give the same report."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
from pathlib import Path

import pytest

from icml26.shared.cli import main
from icml26.shared.reproduce import (
    THREAD_VARIABLES,
    PaperJob,
    ReproduceError,
    Resources,
    _check_feasible,
    _pack,
    _replace_folder,
    ray_task,
    resources_for,
    thread_environment,
)

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
        if len(cells) == 10 and cells[-2].strip() in ("ok", "FAILED"):  # a summary row
            cells[6:8] = [" <t> ", " <t> "]
        lines.append("|".join(cells))
    return "\n".join(lines)


def _reproduce(out: Path, slugs: list[str], *extra: str) -> tuple[int, str]:
    code = main(["reproduce", *slugs, "--profile", "smoke", "--out", str(out), *extra])
    return code, (out / "report.md").read_text()


def test_jobs_2_gives_the_same_report_as_sequential(papers: list[str], tmp_path: Path) -> None:
    code_seq, seq = _reproduce(tmp_path / "seq", papers)
    code_par, par = _reproduce(tmp_path / "par", papers, "--jobs", "2")
    assert code_seq == code_par == 1  # broken-paper fails in both, fake-paper still runs
    assert _timeless(par) == _timeless(seq)
    assert "| fake-paper | run | 9.9.9 | smoke | 1/2 |" in par
    # A failed paper's wall time is the one the reproduce measured around its child.
    assert re.search(
        r"\| broken-paper \| run \| 0\+local \| smoke \| - \| \d+\.\d \| - \| FAILED \|", par
    )
    assert "broken on purpose" in par
    assert "The score is at least 5." in par
    assert "(sequential)" in seq
    assert "(2 papers at a time)" in par
    how = json.loads((tmp_path / "par" / "reproduce.json").read_text())
    assert how["mode"] == "2 papers at a time"
    assert set(how["papers"]) == set(papers)
    assert how["papers"]["broken-paper"]["returncode"] == 1
    # Each child got its share of the CPU threads; sequential children the environment as is.
    share = max(1, (os.cpu_count() or 1) // 2)
    assert _threads(tmp_path / "par") == dict.fromkeys(THREAD_VARIABLES, share)
    assert _threads(tmp_path / "seq") == dict.fromkeys(THREAD_VARIABLES, 0)
    # `icml26 report` rebuilds the same report from the folders.
    (tmp_path / "par" / "report.md").unlink()
    assert main(["report", str(tmp_path / "par")]) == 1
    assert _timeless((tmp_path / "par" / "report.md").read_text()) == _timeless(par)
    assert "data:image/png;base64," in (tmp_path / "par" / "report.html").read_text()


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

    assert resources_for(fake) == Resources(num_cpus=1, num_gpus=0)
    assert resources_for(broken_paper) == Resources(num_cpus=2, num_gpus=0)
    assert Resources(num_cpus=0.5).threads == 1
    assert Resources(num_cpus=2.5, num_gpus=1).threads == 3
    for bad, message in [
        ({"num_cpus": -1}, "num_cpus must be finite and >= 0"),
        ({"num_gpus": "one"}, "num_gpus must be a number"),
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
    code_seq, seq = _reproduce(tmp_path / "seq", papers)
    code_ray, on_ray = _reproduce(tmp_path / "ray", papers, "--ray", "local")
    assert code_seq == code_ray == 1
    assert _timeless(on_ray) == _timeless(seq)
    assert "(Ray tasks at local)" in on_ray
    assert (tmp_path / "ray" / "fake-paper" / "plots" / "curve.png").stat().st_size > 0
    # broken-paper asked for 2 CPUs: its child had 2 threads (unset when run sequentially).
    assert _threads(tmp_path / "ray") == dict.fromkeys(THREAD_VARIABLES, 2)
    assert _threads(tmp_path / "seq") == dict.fromkeys(THREAD_VARIABLES, 0)

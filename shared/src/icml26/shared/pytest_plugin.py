"""pytest plugin (entry point ``pytest11``) that every package's test session gets.

Three workspace rules, kept here once instead of in nineteen conftests:

* **Reproducible property tests under CI.** When the ``CI`` environment variable is set,
  hypothesis runs the ``icml26-ci`` profile: ``derandomize=True`` (the examples follow from
  the test itself, so a fresh clone draws what the last green run drew), no deadline (a loaded
  CI machine is not a slow function). Local runs keep hypothesis's random exploration. A
  ``HYPOTHESIS_PROFILE`` variable picks a profile explicitly.
* **A time budget for the default session.** With ``ICML26_TEST_BUDGET_S`` set (the nox
  ``tests-<slug>`` sessions set it), a session whose tests pass but take longer fails, with
  the total and the slowest tests named, so slow tests move to the ``slow`` marker instead of
  creeping into the default run.

* **README examples.** A member's ``README.md`` (a ``README.md`` beside a ``pyproject.toml``)
  that carries the line ``<!-- icml26: run-examples -->`` has its ```python blocks run, in
  order and in one namespace, one test item per block (:mod:`icml26.shared.readme_examples`,
  on sybil). ``<!-- skip: next "needs a CUDA GPU" -->`` skips the next block with that reason.
  sybil comes with the ``icml26-shared[test]`` extra, which such a member puts in its own
  ``test`` group; without sybil an opted-in README is a collection error saying so, and
  READMEs without the line are never collected.

A fixture for code that talks to chat endpoints: ``openai_server``, a factory starting a local
OpenAI-compatible server (:class:`icml26.shared.llm.testserver.OpenAICompatibleServer`, standard
library only) whose replies come from a function, stopped after the test.

And two fixtures for device-consistency tests (mark them ``@pytest.mark.gpu``; ``nox -s gpu``
runs exactly those on a GPU machine): ``cuda_device`` (a ``torch.device("cuda")``) and
``jax_gpu`` (a JAX GPU device); each skips the test, with the reason, where there is none.
"""

from __future__ import annotations

import importlib.util
import os
import time
from pathlib import Path
from typing import Any

import pytest

from icml26.shared.readme import prose_lines

CI_PROFILE = "icml26-ci"
BUDGET_ENV = "ICML26_TEST_BUDGET_S"
#: The line (alone on its line) by which a member's README.md opts in to running its examples.
README_OPT_IN = "<!-- icml26: run-examples -->"


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() not in ("", "0", "false", "no", "off")


def register_hypothesis_profiles() -> str | None:
    """Register the CI profile and load the one this environment asks for; returns its name."""
    try:
        from hypothesis import settings
    except ImportError:  # a package without property tests
        return None
    settings.register_profile(CI_PROFILE, derandomize=True, deadline=None, print_blob=True)
    chosen = os.environ.get("HYPOTHESIS_PROFILE") or (
        CI_PROFILE if _truthy(os.environ.get("CI")) else None
    )
    if chosen:
        settings.load_profile(chosen)
    return chosen


@pytest.fixture
def openai_server() -> Any:
    """A factory ``start(respond) -> OpenAICompatibleServer`` (see
    :mod:`icml26.shared.llm.testserver`); every server it started is stopped after the test."""
    from icml26.shared.llm.testserver import OpenAICompatibleServer

    servers: list[OpenAICompatibleServer] = []

    def start(respond: Any) -> OpenAICompatibleServer:
        servers.append(OpenAICompatibleServer(respond))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def cuda_device() -> Any:
    """``torch.device("cuda")``, or skip: no torch, or no CUDA device visible to it."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device visible to torch")
    return torch.device("cuda")


@pytest.fixture
def jax_gpu() -> Any:
    """The first JAX GPU device, or skip: no jax, or no GPU backend (``jax[cuda12]``)."""
    jax = pytest.importorskip("jax")
    try:
        devices = jax.devices("gpu")
    except RuntimeError:
        devices = []
    if not devices:
        pytest.skip("no GPU device visible to jax (install jax[cuda12] on a GPU machine)")
    return devices[0]


class _SessionTimer:
    """Per-session state (a pytester run inside a session gets its own)."""

    def __init__(self, profile: str | None) -> None:
        self.profile = profile
        self.start = time.perf_counter()
        self.total: float | None = None
        self.over = False
        self.durations: list[tuple[float, str]] = []

    def pytest_report_header(self, config: pytest.Config) -> str:
        budget = os.environ.get(BUDGET_ENV)
        return f"icml26: hypothesis profile {self.profile or 'default'}; time budget {budget or 'none'} s"

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.durations.append((report.duration, report.nodeid))

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.total = time.perf_counter() - self.start
        budget = _budget()
        self.over = budget is not None and self.total > budget and exitstatus == 0
        if self.over:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int) -> None:
        if self.total is None:
            return
        budget = _budget()
        line = f"icml26: test session took {self.total:.1f} s"
        if budget is not None:
            line += f" (budget {budget:g} s)"
        terminalreporter.write_line(line)
        if self.over:
            terminalreporter.write_line(
                f"icml26: FAILED: the default test session is over its {budget:g} s budget; "
                "mark the slowest tests `slow` or make them cheaper:",
                red=True,
            )
            for seconds, nodeid in sorted(self.durations, reverse=True)[:5]:
                terminalreporter.write_line(f"  {seconds:7.1f} s  {nodeid}")


def _budget() -> float | None:
    raw = os.environ.get(BUDGET_ENV)
    if not raw:
        return None
    try:
        budget = float(raw)
    except ValueError as exc:
        raise pytest.UsageError(f"{BUDGET_ENV}={raw!r} is not a number of seconds") from exc
    if budget <= 0:
        raise pytest.UsageError(f"{BUDGET_ENV} must be positive, got {raw!r}")
    return budget


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "gpu: needs a CUDA device (skipped without one); `nox -s gpu` runs them"
    )
    _budget()  # a bad value stops the session before any test runs
    config.pluginmanager.register(_SessionTimer(register_hypothesis_profiles()))


def readme_opts_in(path: Path) -> bool:
    """Whether ``path`` is a member's ``README.md`` (beside a ``pyproject.toml``) that carries
    :data:`README_OPT_IN` on a line of its own, outside fenced code blocks."""
    if path.name != "README.md" or not (path.parent / "pyproject.toml").is_file():
        return False
    text = path.read_text(encoding="utf-8", errors="replace")
    return any(line.strip() == README_OPT_IN for _, line in prose_lines(text))


class _MissingSybil(pytest.File):
    """An opted-in README where sybil is not installed: one collection error that says so."""

    def collect(self) -> list[pytest.Item]:
        raise self.CollectError(
            f"{self.path} opts in to running its examples ({README_OPT_IN}) but sybil is "
            'not installed: add "icml26-shared[test]" to this member\'s `test` dependency '
            "group (or pip install 'icml26-shared[test]')"
        )


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Collect an opted-in member README's ```python blocks (see the module docstring)."""
    if not readme_opts_in(file_path):
        return None
    if importlib.util.find_spec("sybil") is None:
        return _MissingSybil.from_parent(parent, path=file_path)
    from icml26.shared.readme_examples import collect_readme  # imports sybil

    return collect_readme(file_path, parent)

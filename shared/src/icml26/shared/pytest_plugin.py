"""pytest plugin (entry point ``pytest11``) that every package's test session gets.

Two workspace rules, kept here once instead of in nine conftests:

* **Reproducible property tests under CI.** When the ``CI`` environment variable is set,
  hypothesis runs the ``icml26-ci`` profile: ``derandomize=True`` (the examples follow from
  the test itself, so a fresh clone draws what the last green run drew), no deadline (a loaded
  CI machine is not a slow function). Local runs keep hypothesis's random exploration. A
  ``HYPOTHESIS_PROFILE`` variable picks a profile explicitly.
* **A time budget for the default session.** With ``ICML26_TEST_BUDGET_S`` set (the nox
  ``tests-<slug>`` sessions set it), a session whose tests pass but take longer fails, with
  the total and the slowest tests named, so slow tests move to the ``slow`` marker instead of
  creeping into the default run.
"""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

CI_PROFILE = "icml26-ci"
BUDGET_ENV = "ICML26_TEST_BUDGET_S"

_state: dict[str, Any] = {}


def _truthy(value: str | None) -> bool:
    return bool(value) and value.strip().lower() not in ("0", "false", "no", "off")


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


def pytest_configure(config: pytest.Config) -> None:
    _state["profile"] = register_hypothesis_profiles()
    _state["start"] = time.perf_counter()
    _state["durations"] = []


def pytest_report_header(config: pytest.Config) -> str:
    budget = os.environ.get(BUDGET_ENV)
    profile = _state.get("profile") or "default"
    return f"icml26: hypothesis profile {profile}; time budget {budget or 'none'} s"


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _state.setdefault("durations", []).append((report.duration, report.nodeid))


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


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    total = time.perf_counter() - _state.get("start", time.perf_counter())
    _state["total"] = total
    budget = _budget()
    _state["over"] = budget is not None and total > budget and exitstatus == 0
    if _state["over"]:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    total = _state.get("total")
    if total is None:
        return
    budget = _budget()
    line = f"icml26: test session took {total:.1f} s"
    if budget is not None:
        line += f" (budget {budget:g} s)"
    terminalreporter.write_line(line)
    if _state.get("over"):
        slowest = sorted(_state.get("durations", []), reverse=True)[:5]
        terminalreporter.write_line(
            f"icml26: FAILED: the default test session is over its {budget:g} s budget; "
            "mark the slowest tests `slow` or make them cheaper:",
            red=True,
        )
        for seconds, nodeid in slowest:
            terminalreporter.write_line(f"  {seconds:7.1f} s  {nodeid}")

"""The pytest plugin runs an opted-in member README's ```python blocks (pytester sessions)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from icml26.shared.pytest_plugin import README_OPT_IN, readme_opts_in

pytest.importorskip("sybil")


def _member(pytester: pytest.Pytester, readme: str, *, opt_in: bool = True) -> None:
    """A member folder: a pyproject.toml and a README.md (with the opt-in line first)."""
    pytester.makefile(".toml", pyproject='[project]\nname = "icml26-demo"\nversion = "0"\n')
    text = (README_OPT_IN + "\n\n" if opt_in else "") + textwrap.dedent(readme)
    (pytester.path / "README.md").write_text(text, encoding="utf-8")


PASSING = """\
    # demo

    ```python
    from pathlib import Path

    total = 1 + 1
    Path("written.txt").write_text("a run folder would go here")
    ```

    Prose between the blocks.

    ```python
    assert total == 2  # the namespace carries over
    assert __name__ == "__main__"
    ```

    ```bash
    icml26 run demo --profile smoke  # not python: never run
    ```
    """


def test_blocks_run_in_order_in_one_namespace(pytester: pytest.Pytester) -> None:
    _member(pytester, PASSING)
    # As the nox session runs it: no path, from the member folder, slow tests deselected.
    result = pytester.runpytest("-m", "not slow", "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["README.md::line:5,column:1 PASSED*", "README.md::line:14,*"])
    # The blocks ran in a temporary working folder, not in the package.
    assert not (pytester.path / "written.txt").exists()


def test_a_failing_block_fails_the_session_at_its_readme_line(
    pytester: pytest.Pytester,
) -> None:
    _member(
        pytester,
        """\
        ```python
        answer = 41
        ```

        ```python
        assert answer == 42, "the README's example is out of date"
        ```
        """,
    )
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*README.md:8: in <module>",
            "*AssertionError: the README's example is out of date",
            "FAILED README.md::line:7,column:1 - AssertionError*",
        ]
    )


def test_skipped_blocks_show_their_reason(pytester: pytest.Pytester) -> None:
    _member(
        pytester,
        """\
        ```python
        HAS_GPU = False
        ```

        <!-- skip: next "needs a CUDA GPU" -->
        ```python
        raise RuntimeError("not run")
        ```

        <!-- skip: next if(not HAS_GPU, reason="needs a real checkpoint on a GPU") -->
        ```python
        raise RuntimeError("not run")
        ```

        <!-- skip: next if(HAS_GPU, reason="CPU only") -->
        ```python
        ran_on_cpu = True
        ```

        ```python
        assert ran_on_cpu
        ```
        """,
    )
    result = pytester.runpytest("-rs")
    # The three skip directives are items of their own (they pass).
    result.assert_outcomes(passed=6, skipped=2)
    result.stdout.re_match_lines(
        [
            r"SKIPPED \[1\] README.md:9: needs a CUDA GPU$",
            r"SKIPPED \[1\] README.md:14: needs a real checkpoint on a GPU$",
        ]
    )


def test_a_skip_without_a_reason_is_a_collection_error(pytester: pytest.Pytester) -> None:
    _member(pytester, '<!-- skip: next -->\n```python\nraise RuntimeError("not run")\n```\n')
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*README.md: line 3: `skip: next` without a reason; give*"])
    result.stdout.no_fnmatch_line("*Traceback*")


def test_readmes_without_the_opt_in_are_not_collected(pytester: pytest.Pytester) -> None:
    _member(pytester, '```python\nraise RuntimeError("a lab notebook")\n```\n', opt_in=False)
    # Opted in, but not a member's README (no pyproject.toml beside it).
    pytester.mkdir("docs")
    (pytester.path / "docs" / "README.md").write_text(
        README_OPT_IN + '\n```python\nraise RuntimeError("not a member")\n```\n'
    )
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)


def test_the_opt_in_line_shown_in_a_code_block_does_not_count(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    readme = tmp_path / "README.md"
    readme.write_text(f"Opt in with:\n\n  ````markdown\n  {README_OPT_IN}\n  ````\n")
    assert not readme_opts_in(readme)
    readme.write_text(f"{readme.read_text()}\n{README_OPT_IN}\n")
    assert readme_opts_in(readme)
    # shared's own README documents the line without opting in.
    assert not readme_opts_in(Path(__file__).parents[1] / "README.md")


def test_an_opted_in_readme_without_sybil_fails_clearly(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _member(pytester, "```python\nx = 1\n```\n")
    monkeypatch.setitem(sys.modules, "sybil", None)  # importlib finds no sybil
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.re_match_lines(
        [
            r".*README.md opts in to running its examples .* sybil is not installed: add "
            r'"icml26-shared\[test\]" to this member\'s `test` dependency group'
        ]
    )

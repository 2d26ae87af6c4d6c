"""The theorem map: every row complete, every named function exists."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest

import icml26.lean_slt as pkg
from icml26.lean_slt.theorems import (
    LEAN_TOOLCHAIN,
    THEOREM_MAP,
    UPSTREAM_COMMIT,
    markdown_table,
    theorem_for,
    verify_theorem_map,
)


def test_rows_complete_and_functions_exist() -> None:
    for row in THEOREM_MAP:
        assert row.statement
        assert row.hypotheses
        assert row.check
        assert bool(row.lean_name) == bool(row.lean_file)
        if row.lean_file:
            assert row.lean_file.startswith("SLT/")
            assert row.lean_file.endswith(".lean")
        for ref in row.function.split(","):
            name = ref.strip().split(" ")[0].rstrip(".*")
            module, _, attr = name.rpartition(".")
            if not module:
                module, attr = attr, ""
            mod = importlib.import_module(f"icml26.lean_slt.{module}")
            assert attr == "" or hasattr(mod, attr), name


def test_core_theorems_present() -> None:
    names = {r.lean_name for r in THEOREM_MAP}
    for t in (
        "dudley",
        "gaussian_lipschitz_concentration",
        "master_error_bound",
        "coveringNumber_l1Ball_le",
        "coveringNumber_euclideanBall_le",
        "linear_minimax_rate_rank",
    ):
        assert t in names
    assert theorem_for("entropy.dudley_bound")[0].lean_name == "dudley"
    table = markdown_table()
    assert table.count("\n") == len(THEOREM_MAP) + 1
    assert "dudley_bound" in pkg.__all__


def _fake_clone(root: Path, declare: dict[str, list[str]]) -> Path:
    (root / "lean-toolchain").write_text(LEAN_TOOLCHAIN + "\n")
    for file, names in declare.items():
        path = root / file
        path.parent.mkdir(parents=True, exist_ok=True)
        body = "\n".join(f"theorem {n} (h : True) : True := by\n  trivial" for n in names)
        path.write_text("import Mathlib\n\n" + body + "\n")
    return root


def test_verify_theorem_map_passes_on_matching_sources(tmp_path: Path) -> None:
    files: dict[str, list[str]] = {}
    for row in THEOREM_MAP:
        if row.lean_name:
            files.setdefault(row.lean_file, []).append(row.lean_name.removesuffix(" (definition)"))
    assert verify_theorem_map(_fake_clone(tmp_path, files)) == []


def test_verify_theorem_map_finds_a_renamed_theorem(tmp_path: Path) -> None:
    files: dict[str, list[str]] = {}
    for row in THEOREM_MAP:
        if row.lean_name:
            name = row.lean_name.removesuffix(" (definition)")
            files.setdefault(row.lean_file, []).append("dudley_v2" if name == "dudley" else name)
    problems = verify_theorem_map(_fake_clone(tmp_path, files))
    assert problems == ["dudley: not declared in SLT/Dudley.lean"]
    with pytest.raises(FileNotFoundError, match="lean-toolchain"):
        verify_theorem_map(tmp_path / "SLT")


@pytest.mark.skipif(
    not os.environ.get("ICML26_LEAN_SLT_SOURCES"),
    reason="set ICML26_LEAN_SLT_SOURCES to a clone of the formalisation at UPSTREAM_COMMIT",
)
def test_theorem_map_against_the_real_sources() -> None:
    root = Path(os.environ["ICML26_LEAN_SLT_SOURCES"])
    assert (root / "lean-toolchain").read_text().strip() == LEAN_TOOLCHAIN
    assert verify_theorem_map(root) == []


def test_upstream_commit_is_a_full_sha() -> None:
    assert len(UPSTREAM_COMMIT) == 40
    assert int(UPSTREAM_COMMIT, 16) >= 0

"""The theorem map: every row complete, every named function exists."""

from __future__ import annotations

import importlib

import icml26.lean_slt as pkg
from icml26.lean_slt.theorems import THEOREM_MAP, markdown_table, theorem_for


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

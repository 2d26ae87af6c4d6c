"""The claims' rules decide both ways, and the modules import without a cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import icml26.inctnp as inctnp
from icml26.inctnp.paper import PAPER

CLAIMS = {c.id: c for c in PAPER.claims}
BENCH = {c.id: c for c in PAPER.bench_claims}


def test_linear_cache_fails_for_a_quadratic_update_peak() -> None:
    claim = BENCH["linear_cache"]
    assert claim.evaluate({"update_peak_scaling_exponent.inctnp": 1.02})["holds"] is True
    assert claim.evaluate({"update_peak_scaling_exponent.inctnp": 1.9})["holds"] is False
    assert claim.evaluate({"update_peak_scaling_exponent.inctnp": 0.5})["holds"] is False


def test_implicit_bayes_compares_the_kl_to_the_permutation_mixture() -> None:
    claim = CLAIMS["implicit_bayes"]
    close = {
        "exchangeability_kl.gp_rbf.tnp": 1.0,
        "exchangeability_kl.gp_rbf.inctnp": 1.4,
        "exchangeability_kl.gp_rbf.gp_oracle": 0.1,
    }
    assert claim.evaluate(close)["holds"] is True
    far = dict(close, **{"exchangeability_kl.gp_rbf.inctnp": 1.6})
    assert claim.evaluate(far)["holds"] is False


def test_training_and_evaluation_do_not_import_the_experiment() -> None:
    """No cycle: experiment uses train/evaluation/data/config, never the other way round
    (read from the sources, function-level imports included)."""
    package = Path(inctnp.__file__).parent
    for module in ("train", "evaluation", "data", "config", "paper", "model", "likelihood"):
        tree = ast.parse((package / f"{module}.py").read_text())
        imported = {
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module is not None
        }
        assert "icml26.inctnp.experiment" not in imported, module

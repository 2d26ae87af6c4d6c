"""The claims' rules decide both ways and fail under their placebos; the modules import
without a cycle, and importing the package imports no torch."""

from __future__ import annotations

import ast
import math
import subprocess
import sys
import types
from pathlib import Path

import pytest

import icml26.inctnp as inctnp
from icml26.inctnp.paper import PAPER

CLAIMS = {c.id: c for c in PAPER.claims}
BENCH = {c.id: c for c in PAPER.bench_claims}


def _gaps(regime: str, inc: float, se: float) -> dict[str, float]:
    return {
        f"gap.nll.{regime}.inctnp": inc,
        f"gap_se.nll.{regime}.inctnp": se,
        f"gap.nll.{regime}.tnp": 0.0,
        f"gap_se.nll.{regime}.tnp": 0.0,
        f"gap.nll.{regime}.gp_prior": 0.9,  # the context-free predictor: far worse
        f"gap_se.nll.{regime}.gp_prior": 0.01,
    }


@pytest.mark.parametrize("regime", ["targets", "converged"])
def test_matches_needs_the_upper_bound_within_the_margin(regime: str) -> None:
    claim = CLAIMS[f"matches_tnp_{regime}"]
    assert claim.evaluate(_gaps(regime, -0.2, 0.05))["holds"] is True  # better
    assert claim.evaluate(_gaps(regime, 0.01, 0.01))["holds"] is True  # within 0.05
    assert claim.evaluate(_gaps(regime, 0.01, 0.03))["holds"] is False  # too noisy to tell
    assert claim.evaluate(_gaps(regime, 0.2, 0.01))["holds"] is False
    assert claim.evaluate(_gaps(regime, 0.0, math.nan))["holds"] is None
    # the placebo: a predictor that ignores its context in incTNP's place
    assert claim.under_placebo(_gaps(regime, -0.2, 0.05))[0] is False


def _bayes(spread_gap: float, spread_se: float, nll_gap: float, **over: float) -> dict[str, float]:
    values = {
        "implicit_bayes_gap.all.tnp": 0.1,
        "gap.implicit_bayes_gap.all.inctnp": spread_gap,
        "gap_se.implicit_bayes_gap.all.inctnp": spread_se,
        "gap.nll.converged.inctnp": nll_gap,
        "gap_se.nll.converged.inctnp": 0.01,
        # the GP prior ignores its context: spread 0, far worse NLL
        "gap.implicit_bayes_gap.all.gp_prior": -0.1,
        "gap_se.implicit_bayes_gap.all.gp_prior": 0.01,
        "gap.nll.converged.gp_prior": 0.4,
        "gap_se.nll.converged.gp_prior": 0.01,
    }
    return values | over


def test_implicit_bayes_gap_is_judged_with_the_nll_and_the_exact_gp_passes() -> None:
    claim = CLAIMS["implicit_bayes_gap"]
    assert claim.evaluate(_bayes(0.01, 0.01, 0.0))["holds"] is True
    assert claim.evaluate(_bayes(0.04, 0.01, 0.0))["holds"] is False  # 0.06 > 0.5 x 0.1
    assert claim.evaluate(_bayes(0.01, 0.01, 0.2))["holds"] is False  # predicts worse
    # the exact GP in incTNP's place: spread 0 (gap -0.1) and a far better NLL: it passes
    assert claim.evaluate(_bayes(-0.1, 0.01, -1.0))["holds"] is True
    # the context-free predictor is order-free too, but fails on the NLL: the placebo
    assert claim.under_placebo(_bayes(0.01, 0.01, 0.0))[0] is False


def _latency(tnp: tuple[float, float], inc: tuple[float, float]) -> dict[str, float]:
    return {
        "update_ms_q25.tnp.n1024": tnp[0],
        "update_ms_q75.tnp.n1024": tnp[1],
        "update_ms_q25.inctnp.n1024": inc[0],
        "update_ms_q75.inctnp.n1024": inc[1],
    }


def test_speedup_uses_the_quartiles_so_the_margin_is_above_the_spread() -> None:
    claim = CLAIMS["sequential_speedup"]
    assert claim.evaluate(_latency((20.0, 22.0), (1.0, 1.2)))["holds"] is True
    # a 10.5x median ratio whose spread overlaps the bar does not pass
    assert claim.evaluate(_latency((9.0, 12.0), (1.0, 1.1)))["holds"] is False
    assert claim.under_placebo(_latency((20.0, 22.0), (1.0, 1.2)))[0] is False


def _slopes(tnp: float, tnp_se: float, inc: float, inc_se: float) -> dict[str, float]:
    return {
        "scaling_exponent.tnp": tnp,
        "scaling_exponent_se.tnp": tnp_se,
        "scaling_exponent.inctnp": inc,
        "scaling_exponent_se.inctnp": inc_se,
    }


def test_scaling_claims_use_the_slopes_standard_errors() -> None:
    run, bench = CLAIMS["linear_updates"], BENCH["quadratic_to_linear"]
    assert run.evaluate(_slopes(1.6, 0.05, 0.9, 0.05))["holds"] is True
    assert run.evaluate(_slopes(1.6, 0.05, 1.1, 0.1))["holds"] is False  # 1.1 + 0.2 > 1.2
    assert run.evaluate(_slopes(1.0, 0.05, 0.9, 0.05))["holds"] is False  # no gap beyond 2 SE
    assert run.under_placebo(_slopes(1.6, 0.05, 0.9, 0.05))[0] is False
    assert bench.evaluate(_slopes(1.8, 0.1, 0.9, 0.05))["holds"] is True
    assert bench.evaluate(_slopes(1.6, 0.1, 0.9, 0.05))["holds"] is False
    assert bench.under_placebo(_slopes(1.8, 0.1, 0.9, 0.05))[0] is False


def test_every_comparative_claim_has_a_placebo() -> None:
    for claim in [*PAPER.claims, *PAPER.bench_claims]:
        assert claim.placebo, claim.id
    assert "linear_cache" not in BENCH  # linear by construction: a test, not a claim


def test_no_module_imports_the_experiment_or_the_bench() -> None:
    package = Path(inctnp.__file__).parent
    for path in package.glob("*.py"):
        if path.stem in ("experiment", "bench"):
            continue
        tree = ast.parse(path.read_text())
        imported = {
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module is not None
        }
        assert "icml26.inctnp.experiment" not in imported, path.name
        assert "icml26.inctnp.bench" not in imported, path.name


def test_importing_the_package_and_its_paper_imports_no_torch() -> None:
    code = (
        "import sys, icml26.inctnp, icml26.inctnp.paper; "
        "assert 'torch' not in sys.modules, 'torch imported'; print(icml26.inctnp.__version__)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for name in inctnp.__all__:
        obj = getattr(inctnp, name)
        assert obj.__doc__, name
        assert not isinstance(obj, types.ModuleType) or name == "data", name

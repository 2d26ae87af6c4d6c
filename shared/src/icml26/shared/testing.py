"""Test helpers for paper packages: hold every claim's rule to the keys a run really writes.

A misspelt key in a rule does not fail a run: the claim is reported undecided and nobody
notices. :func:`check_paper` turns that into a failing test. Every package's CLI smoke test
calls it with the smoke run's results::

    from icml26.shared.testing import check_paper

    def test_smoke(tmp_path):
        main(["run", "ro-hnn", "--profile", "smoke", "--out", str(tmp_path)])
        check_paper(PAPER, tmp_path / "results.json")

Importing this module imports neither pytest nor any framework.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from icml26.shared.claims import Claim, RuleError, rule_keys
from icml26.shared.paper import Paper
from icml26.shared.results import load_results

__all__ = ["ClaimCheckError", "check_claims", "check_paper"]


class ClaimCheckError(AssertionError):
    """One or more claims whose rules do not fit the metrics a run produced."""


def _claim_problems(claim: Claim, metrics: Mapping[str, Any], profile: str) -> list[str]:
    try:
        names = rule_keys(claim.rule)
    except RuleError as exc:
        return [f"{claim.id}: {exc}"]
    unknown = sorted(set(claim.profiles) - {profile} - {"smoke", "quick", "full"})
    problems = [f"{claim.id}: declares unknown profile(s) {unknown}"] if unknown else []
    if not claim.applies_to(profile):
        return problems  # keys produced only by other profiles: nothing more to ask of this run
    absent = sorted(k for k in names.keys if k not in metrics)
    unmatched = sorted(
        p for p in names.patterns if not any(fnmatch.fnmatchcase(k, p) for k in metrics)
    )
    if absent or unmatched:
        missing = ", ".join([*absent, *(f"pattern {p!r}" for p in unmatched)])
        problems.append(
            f"{claim.id}: the {profile} run produced no metric {missing} (misspelt key, or "
            f"declare the profiles that produce it: Claim(..., profiles=('quick', 'full')))"
        )
        return problems
    null = sorted(k for k in names.keys if metrics[k] is None)
    if null:
        problems.append(f"{claim.id}: metric(s) {null} are null (NaN or infinite) in the run")
        return problems
    entry = claim.evaluate(metrics, profile)
    if entry["holds"] is None:
        problems.append(f"{claim.id}: undecided on the {profile} run: {entry.get('note', '')}")
    return problems


def check_claims(
    claims: list[Claim] | tuple[Claim, ...], metrics: Mapping[str, Any], profile: str
) -> list[str]:
    """The problems of ``claims`` against one run's flat ``metrics`` (empty when all fit)."""
    return [p for claim in claims for p in _claim_problems(claim, metrics, profile)]


def check_paper(
    paper: Paper,
    results: Mapping[str, Any] | str | os.PathLike[str],
    *,
    kind: str | None = None,
) -> None:
    """Assert that ``paper``'s claims fit the metrics of one of its runs.

    For each claim of the run's kind: its rule parses; every key it names is among the run's
    metrics and every aggregate pattern matches one (unless the claim declares, through
    :attr:`Claim.profiles`, that only other profiles produce them); and where all its keys are
    present the rule decides (``True`` or ``False``, never undecided).

    Args:
        paper: the package's ``PAPER``.
        results: a results object, a ``results.json`` path, or the run folder holding it.
        kind: ``"run"`` or ``"bench"``; by default the results' own ``kind``.

    Raises:
        ClaimCheckError: listing every problem found, one per line.
    """
    if not isinstance(results, Mapping):
        path = Path(results)
        results = load_results(path / "results.json" if path.is_dir() else path)
    kind = kind or str(results.get("kind", "run"))
    if results.get("paper") not in (None, paper.slug):
        raise ClaimCheckError(f"results are {results['paper']!r}'s, not {paper.slug!r}'s")
    problems = check_claims(
        list(paper.claims_for(kind)), results["metrics"], str(results["profile"])
    )
    if problems:
        raise ClaimCheckError(
            f"{paper.slug} {kind} claims do not fit the run's metrics:\n  " + "\n  ".join(problems)
        )

"""Test helpers for paper packages: hold every claim's rule to the keys a run really writes.

A misspelt key in a rule does not fail a run: the claim is reported undecided and nobody
notices. :func:`check_paper` turns that into a failing test. Every package's CLI smoke test
calls it with the smoke run's results::

    from icml26.shared.testing import check_paper

    def test_smoke(tmp_path):
        main(["run", "ro-hnn", "--profile", "smoke", "--out", str(tmp_path)])
        check_paper(PAPER, tmp_path / "results.json")

It also holds every claim to its placebo (see :mod:`icml26.shared.claims`): a comparative
claim must declare one and must *not* hold under it; an absolute claim must state its floor.
A claim whose rule survives the baseline's figures in the method's place measures nothing.
For a package still on :data:`icml26.shared.migration.UNMIGRATED` these placebo problems are
warnings (:class:`PlaceboWarning`), for every other package errors. A claim whose placebo is
a data-level null (``placebo="null_world"``) is checked on that null run's metrics, which the
package's test passes as ``check_paper(PAPER, run, nulls={"null_world": null_run})``.

Importing this module imports neither pytest nor any framework.
"""

from __future__ import annotations

import fnmatch
import os
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from icml26.shared.claims import Claim, RuleError, evaluate_rule, rule_keys
from icml26.shared.migration import UNMIGRATED
from icml26.shared.paper import PROFILES, Paper
from icml26.shared.results import load_results

__all__ = ["ClaimCheckError", "PlaceboWarning", "check_claims", "check_paper", "placebo_problems"]

Results = Mapping[str, Any] | str | os.PathLike[str]


class ClaimCheckError(AssertionError):
    """One or more claims whose rules do not fit the metrics a run produced."""


class PlaceboWarning(UserWarning):
    """A placebo problem in a package not yet migrated (an error once it is)."""


def _metrics_of(results: Results) -> Mapping[str, Any]:
    if isinstance(results, Mapping):
        inner = results.get("metrics")
        return inner if isinstance(inner, Mapping) else results
    path = Path(results)
    return load_results(path / "results.json" if path.is_dir() else path)["metrics"]


def placebo_problems(
    claim: Claim,
    metrics: Mapping[str, Any],
    profile: str,
    nulls: Mapping[str, Results] | None = None,
) -> list[str]:
    """What is wrong with ``claim``'s placebo or floor, judged on one run.

    Args:
        claim: the claim.
        metrics: the run's flat metrics.
        profile: the run's profile (a claim whose figures this profile does not produce is
            checked for its declaration only).
        nulls: metrics (or results, or a run folder) of data-level null runs, by name.

    Returns:
        One line per problem: an absolute claim without a floor, a comparative claim without a
        placebo, a rule that still holds under its placebo or on its null run, or a placebo
        that cannot be evaluated.
    """
    if claim.kind == "absolute":
        if not claim.floor.strip():
            return [f"{claim.id}: an absolute claim must state its floor and why it is not forced"]
        return []
    if claim.placebo is None:
        return [
            f"{claim.id}: a comparative claim must declare its placebo (placebo={{'method': "
            "'baseline'}, or the name of a null run), or be kind='absolute' with a floor"
        ]
    if not claim.applies_to(profile):
        return []
    if isinstance(claim.placebo, str):
        if nulls is None or claim.placebo not in nulls:
            return [
                f"{claim.id}: its placebo is the null run {claim.placebo!r}; pass its metrics: "
                f"check_paper(..., nulls={{{claim.placebo!r}: null_results}})"
            ]
        holds, _, note = evaluate_rule(claim.rule, _metrics_of(nulls[claim.placebo]))
        where = f"on the null run {claim.placebo!r}"
    else:
        holds, note = claim.under_placebo(metrics)
        where = f"under its placebo {claim.placebo}"
    if holds is None:
        return [f"{claim.id}: cannot be evaluated {where}: {note}"]
    if holds:
        return [f"{claim.id}: still holds {where}: the rule is forced or vacuous"]
    return []


def _claim_problems(
    claim: Claim, metrics: Mapping[str, Any], profile: str, known_profiles: frozenset[str]
) -> list[str]:
    try:
        names = rule_keys(claim.rule)
    except RuleError as exc:
        return [f"{claim.id}: {exc}"]
    unknown = sorted(set(claim.profiles) - {profile} - known_profiles)
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
    if claim.decidable_when:
        try:
            guard = rule_keys(claim.decidable_when)
        except RuleError as exc:
            return [*problems, f"{claim.id}: decidable_when: {exc}"]
        absent = sorted(k for k in guard.keys if k not in metrics)
        if absent:
            problems.append(
                f"{claim.id}: the {profile} run produced no metric {', '.join(absent)} "
                "named by decidable_when"
            )
            return problems
    entry = claim.evaluate(metrics, profile)
    declared = claim.decidable_when and evaluate_rule(claim.decidable_when, metrics)[0] is False
    # undecided because the placebo meets the rule too: placebo_problems reports it (a
    # warning under strict=False), so it is not a second, unconditional problem here
    by_placebo = entry.get("placebo_holds") is True
    if entry["holds"] is None and not declared and not by_placebo:
        problems.append(f"{claim.id}: undecided on the {profile} run: {entry.get('note', '')}")
    return problems


def check_claims(
    claims: list[Claim] | tuple[Claim, ...],
    metrics: Mapping[str, Any],
    profile: str,
    known_profiles: Iterable[str] = PROFILES,
) -> list[str]:
    """The problems of ``claims`` against one run's flat ``metrics`` (empty when all fit).

    Args:
        claims: the claims.
        metrics: the run's flat metrics.
        profile: the run's profile.
        known_profiles: the profile names a claim may declare (``check_paper`` passes the
            paper's own, e.g. an ``llm`` profile beside smoke / quick / full).

    Returns:
        One line per problem with a rule's keys (placebos are :func:`placebo_problems`).
    """
    known = frozenset(known_profiles) | frozenset(PROFILES)
    return [p for claim in claims for p in _claim_problems(claim, metrics, profile, known)]


def check_paper(
    paper: Paper,
    results: Results,
    *,
    kind: str | None = None,
    nulls: Mapping[str, Results] | None = None,
    strict: bool | None = None,
) -> None:
    """Assert that ``paper``'s claims fit the metrics of one of its runs.

    For each claim of the run's kind: its rule parses; every key it names is among the run's
    metrics and every aggregate pattern matches one (unless the claim declares, through
    :attr:`Claim.profiles`, that only other profiles produce them); and where all its keys are
    present the rule decides (``True`` or ``False``, never undecided). Then each claim's
    placebo or floor (:func:`placebo_problems`).

    Args:
        paper: the package's ``PAPER``.
        results: a results object, a ``results.json`` path, or the run folder holding it.
        kind: ``"run"`` or ``"bench"``; by default the results' own ``kind``.
        nulls: metrics of the data-level null runs that claims name as placebos.
        strict: placebo problems are errors (``True``) or warnings (``False``); by default
            errors unless the paper is on :data:`~icml26.shared.migration.UNMIGRATED`.

    Raises:
        ClaimCheckError: listing every problem found, one per line.
    """
    if not isinstance(results, Mapping):
        path = Path(results)
        results = load_results(path / "results.json" if path.is_dir() else path)
    kind = kind or str(results.get("kind", "run"))
    if results.get("paper") not in (None, paper.slug):
        raise ClaimCheckError(f"results are {results['paper']!r}'s, not {paper.slug!r}'s")
    claims = list(paper.claims_for(kind))
    metrics, profile = results["metrics"], str(results["profile"])
    known = set(paper.profiles) | set(paper.bench_profiles or {})
    problems = check_claims(claims, metrics, profile, known)
    placebo = [p for c in claims for p in placebo_problems(c, metrics, profile, nulls)]
    if strict is None:
        strict = paper.slug not in UNMIGRATED
    if strict:
        problems += placebo
    elif placebo:
        warnings.warn(
            f"{paper.slug} {kind} placebo problems (errors once the package is migrated):\n  "
            + "\n  ".join(placebo),
            PlaceboWarning,
            stacklevel=2,
        )
    if problems:
        raise ClaimCheckError(
            f"{paper.slug} {kind} claims do not fit the run's metrics:\n  " + "\n  ".join(problems)
        )

"""``icml26.shared.testing.check_paper``: rules held to the keys a run really writes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from icml26.shared import Claim, Paper, build_results, rule_keys
from icml26.shared.claims import RuleError
from icml26.shared.testing import ClaimCheckError, check_paper


@dataclass(frozen=True)
class _Cfg:
    seed: int = 0


def _paper(*claims: Claim) -> Paper:
    profiles = {p: _Cfg() for p in ("smoke", "quick", "full")}
    return Paper(slug="toy", title="toy", profiles=profiles, run=lambda c, r: {}, claims=claims)


def _results(metrics: dict, profile: str = "smoke") -> dict:
    paper = "toy"
    return build_results(
        paper=paper, version="0", profile=profile, config={}, metrics=metrics, claims=(), seconds=1
    )


METRICS = {"err": {"ours": 0.1, "base": 0.2}, "speed": {"n8": 3.0, "n16": 4.0}}


def test_rule_keys_sees_every_branch_and_aggregate() -> None:
    names = rule_keys('a.b < c or (abs(m("d-e")) > 1 and max_of("f.*") < x.y.z)')
    assert names.keys == {"a.b", "c", "d-e", "x.y.z"}
    assert names.patterns == {"f.*"}


def test_fitting_claims_pass() -> None:
    paper = _paper(
        Claim("better", "ours beats base", "-", "err.ours < err.base", placebo={"ours": "base"}),
        Claim(
            "fast", "fast", "-", 'min_of("speed.*") > 2', kind="absolute", floor="1: no speed-up"
        ),
        Claim(
            "big",
            "only quick",
            "-",
            "err.quick_only < 1",
            profiles=("quick", "full"),
            placebo="null",
        ),
    )
    check_paper(paper, _results(METRICS))


def test_a_misspelt_key_fails() -> None:
    """The deliberate typo of the issue: ``err.ourz`` is no metric of the run."""
    paper = _paper(Claim("better", "ours beats base", "-", "err.ourz < err.base"))
    with pytest.raises(
        ClaimCheckError, match=r"better: the smoke run produced no metric err\.ourz"
    ):
        check_paper(paper, _results(METRICS))


def test_a_misspelt_key_in_an_unreached_branch_still_fails() -> None:
    paper = _paper(Claim("either", "-", "-", "err.ours < 1 or err.bsae < 1"))
    with pytest.raises(ClaimCheckError, match=r"err\.bsae"):
        check_paper(paper, _results(METRICS))


def test_a_pattern_matching_nothing_fails() -> None:
    paper = _paper(Claim("fast", "-", "-", 'min_of("sped.*") > 2'))
    with pytest.raises(ClaimCheckError, match=r"pattern 'sped\.\*'"):
        check_paper(paper, _results(METRICS))


def test_profile_only_keys_are_asked_of_their_profile() -> None:
    claim = Claim("big", "-", "-", "err.quick_only < 1", profiles=("quick",), placebo={"q": "b"})
    check_paper(_paper(claim), _results(METRICS, "smoke"))
    with pytest.raises(ClaimCheckError, match=r"quick run produced no metric err\.quick_only"):
        check_paper(_paper(claim), _results(METRICS, "quick"))


def test_a_claim_may_name_the_papers_own_extra_profile() -> None:
    claim = Claim("llm_only", "-", "-", "err.llm < 1", profiles=("llm",), placebo={"q": "b"})
    profiles = {p: _Cfg() for p in ("smoke", "quick", "full", "llm")}
    with_llm = Paper(
        slug="toy", title="toy", profiles=profiles, run=lambda c, r: {}, claims=(claim,)
    )
    check_paper(with_llm, _results(METRICS, "quick"))
    with pytest.raises(ClaimCheckError, match=r"unknown profile\(s\) \['llm'\]"):
        check_paper(_paper(claim), _results(METRICS, "quick"))


def test_null_and_undecided_fail() -> None:
    paper = _paper(Claim("nan", "-", "-", "err.ours < 1"))
    with pytest.raises(ClaimCheckError, match="null"):
        check_paper(paper, _results({"err": {"ours": float("nan")}}))
    paper = _paper(Claim("div", "-", "-", "err.ours / zero < 1"))
    with pytest.raises(ClaimCheckError, match="undecided"):
        check_paper(paper, _results({"err": {"ours": 1.0}, "zero": 0.0}))


def test_reads_a_run_folder_and_names_every_problem(tmp_path: Path) -> None:
    import json

    (tmp_path / "results.json").write_text(json.dumps(_results(METRICS)))
    paper = _paper(Claim("a", "-", "-", "nope < 1"), Claim("b", "-", "-", "nada < 1"))
    with pytest.raises(ClaimCheckError) as info:
        check_paper(paper, tmp_path)
    assert "a: " in str(info.value)
    assert "b: " in str(info.value)


def test_claim_profiles_validated_and_noted() -> None:
    with pytest.raises(ValueError, match="profiles"):
        Claim("x", "-", "-", "a < 1", profiles="quick")  # type: ignore[arg-type]
    entry = Claim("x", "-", "-", "a < 1", profiles=("full",)).evaluate({}, "smoke")
    assert entry["holds"] is None
    assert "full" in entry["note"]


PLUGIN_TEST = textwrap.dedent(
    """
    import time
    from hypothesis import given, settings, strategies as st

    SEEN = []

    @given(st.integers())
    @settings(max_examples=5, database=None)
    def test_record(x):
        SEEN.append(x)

    def test_print():
        print("SEEN", SEEN)

    def test_sleep():
        time.sleep(float(__import__("os").environ.get("SLEEP", "0")))
    """
)


def _pytest(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_x.py").write_text(PLUGIN_TEST)
    # Its own config: the nox tmp folder lies inside the repo, whose pytest settings must not
    # apply here (importlib mode trips on the dotted `.nox` folder in pytest 8.0).
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    full_env = {k: v for k, v in os.environ.items() if k not in ("CI", "HYPOTHESIS_PROFILE")}
    full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-s", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=tmp_path,
        check=False,
    )


def test_plugin_derandomises_hypothesis_under_ci(tmp_path: Path) -> None:
    runs = [_pytest(tmp_path, CI="true") for _ in range(2)]
    assert all(r.returncode == 0 for r in runs), runs[0].stdout + runs[0].stderr
    seen = [next(ln for ln in r.stdout.splitlines() if "SEEN" in ln) for r in runs]
    assert seen[0] == seen[1]
    assert "hypothesis profile icml26-ci" in runs[0].stdout


def test_plugin_fails_a_session_over_its_budget(tmp_path: Path) -> None:
    over = _pytest(tmp_path, ICML26_TEST_BUDGET_S="0.5", SLEEP="1")
    assert over.returncode == 1, over.stdout
    assert "over its 0.5 s budget" in over.stdout
    assert "test_sleep" in over.stdout
    within = _pytest(tmp_path, ICML26_TEST_BUDGET_S="60")
    assert within.returncode == 0, within.stdout
    assert "test session took" in within.stdout


def test_device_fixtures_skip_without_a_gpu(pytester: pytest.Pytester) -> None:
    """Without a GPU both fixtures skip with their reason; on a GPU machine the tests run.
    In-process, so torch (already imported by this session, if installed) is not loaded again."""
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(
        test_dev="""
        import pytest

        @pytest.mark.gpu
        def test_cuda(cuda_device):
            assert cuda_device.type == "cuda"

        @pytest.mark.gpu
        def test_jax(jax_gpu):
            assert jax_gpu.platform == "gpu"
        """
    )
    result = pytester.runpytest_inprocess("-rs")
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0
    assert outcomes.get("passed", 0) + outcomes.get("skipped", 0) == 2
    if outcomes.get("skipped"):
        result.stdout.fnmatch_lines(["*SKIPPED*"])


def test_decidable_when_makes_an_underpowered_run_undecided_not_failed() -> None:
    claim = Claim(
        "gain",
        "-",
        "-",
        "err.ours < err.base",
        placebo={"ours": "base"},
        decidable_when="power > 0.5",
    )
    low = claim.evaluate({"err.ours": 0.1, "err.base": 0.2, "power": 0.3}, "quick")
    assert low["holds"] is None
    assert "power > 0.5 is false" in low["note"]
    assert low["measured"]["power"] == 0.3
    high = claim.evaluate({"err.ours": 0.3, "err.base": 0.2, "power": 0.9}, "quick")
    assert high["holds"] is False
    check_paper(_paper(claim), _results({**METRICS, "power": 0.3}, "quick"))
    check_paper(_paper(claim), _results({**METRICS, "power": 0.9}, "quick"))
    with pytest.raises(ClaimCheckError, match="no metric power named by decidable_when"):
        check_paper(_paper(claim), _results(METRICS, "quick"))
    with pytest.raises(RuleError):
        Claim("bad", "-", "-", "a < 1", placebo={"a": "b"}, decidable_when="power >")

"""The CLI end to end on the smoke profile, user files, configs, and the Ray engine."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from icml26.disempowerment.config import BENCH_PROFILES, PROFILES, BenchConfig, RunConfig
from icml26.disempowerment.conversations import write_jsonl
from icml26.disempowerment.datasets import (
    LabelledConversations,
    read_labelled_jsonl,
    synthetic_data,
    synthetic_labelled,
)
from icml26.disempowerment.paper import PAPER
from icml26.disempowerment.synthetic import NULL_WORLDS, generate_labelled, generate_log
from icml26.disempowerment.taxonomy import AMPLIFIERS, DIMENSIONS, DOMAINS, SEVERITIES
from icml26.shared.cli import main
from icml26.shared.results import load_results
from icml26.shared.testing import check_paper


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("smoke") / "run"
    assert main(["run", "disempowerment", "--profile", "smoke", "--out", str(out)]) == 0
    return out


def _null_metrics(metrics: dict, world: str) -> dict:
    prefix = f"null.{world}."
    return {k[len(prefix) :]: v for k, v in metrics.items() if k.startswith(prefix)}


def test_smoke_run_through_the_cli(smoke_run: Path) -> None:
    results = load_results(smoke_run / "results.json")
    m = results["metrics"]
    nulls = {w: _null_metrics(m, w) for w in NULL_WORLDS}
    check_paper(PAPER, results, nulls=nulls, strict=True)
    for claim in results["claims"]:
        if claim["id"] in ("intervals_cover",):
            assert claim["placebo_holds"] is False
    assert all(m[f"null.{w}.holds.severe_rare_measured"] in (0.0, 1.0) for w in NULL_WORLDS)
    # a null run makes no coverage or scrubber figures: those claims get no (vacuous) rate
    assert not any(k.startswith("null.") and k.endswith(".holds.scrubber_recall") for k in m)
    assert {
        f"null_fpr.{c}"
        for c in (
            "severe_rare_measured",
            "personal_domains_higher",
            "rising_trend",
            "approval_higher",
        )
    } <= set(m)
    for v in (*DIMENSIONS, "any"):
        for s in SEVERITIES:
            # percentile intervals of clipped, DP-noised draws at n = 2,000: the point
            # estimate may sit a hair outside
            lo, hi = m[f"rate.{v}.{s}.lo"], m[f"rate.{v}.{s}.hi"]
            assert lo - 2e-3 <= m[f"rate.{v}.{s}"] <= hi + 2e-3
            assert f"planted.{v}.{s}" in m
            assert f"abs_error.{v}.{s}" in m
        assert f"trend_slope.{v}.lo" in m
    assert 0 <= m["classifier.tfidf.macro_f1"] <= 1
    assert m["scrub.recall.all"] >= 0.9
    assert 0 < m["scrub.precision"] <= 1
    assert m["privacy.pii_leaks"] == 0
    assert m["privacy.dp_epsilon_spent"] == pytest.approx(PROFILES["smoke"].dp_epsilon)
    assert m["throughput.local"] > 0
    assert 0 <= m["coverage.rate_intervals"] <= 1
    assert m["coverage.rate_intervals.lo"] <= m["coverage.rate_intervals"]
    assert m["coverage.rate_intervals"] <= m["coverage.rate_intervals.hi"]
    clusters = json.loads((smoke_run / "clusters.json").read_text())
    assert all(c["n_users"] >= clusters["k"] for c in clusters["clusters"])
    release = json.loads((smoke_run / "release.json").read_text())
    assert set(release["metrics"]) >= set(m)  # every released metric has its guarantee
    assert release["metrics"]["rate.any.severe"] == "dp"  # smoke runs with epsilon = 50
    assert release["metrics"]["clusters.released"] == "k_anonymous_not_dp"
    assert (smoke_run / "tables.md").read_text().count("|") > 100
    for name in ("rates", "domains", "trend"):
        assert (smoke_run / "plots" / f"{name}.png").stat().st_size > 0


def test_no_planted_pii_in_any_output(smoke_run: Path) -> None:
    cfg = PROFILES["smoke"]
    data = synthetic_data(
        cfg.n_conversations,
        200,
        200,
        seed=cfg.seed,
        positive_share=0.3,
        calibration_positive_share=0.3,
    )
    blob = "".join(p.read_text(errors="ignore") for p in smoke_run.rglob("*") if p.is_file())
    long = [p.text for p in data.pii if len(p.text) >= 8]
    assert len(long) > 100
    assert [t for t in long if t in blob] == []


def _labelled_lines(n: int, seed: int) -> list[str]:
    lab = generate_labelled(n, seed=seed, positive_share=0.3).log
    lines = []
    for i, c in enumerate(lab.conversations):
        obj = c.to_json()
        obj["labels"] = {
            **{d: SEVERITIES[int(lab.severity[i, k])] for k, d in enumerate(DIMENSIONS)},
            "amplifiers": [a for a, on in zip(AMPLIFIERS, lab.amplifiers[i], strict=True) if on],
            "domain": DOMAINS[int(lab.domain[i])],
        }
        lines.append(json.dumps(obj))
    return lines


@pytest.mark.slow
def test_user_log_and_labelled_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log_path = write_jsonl(tmp_path / "log.jsonl", generate_log(1500, seed=3).conversations)
    with open(log_path, "a") as fh:
        fh.write("{broken\n")
    lab = tmp_path / "labelled.jsonl"
    lab.write_text("\n".join(_labelled_lines(1100, seed=4)) + "\n")
    out = tmp_path / "run"
    argv = ["run", "disempowerment", "--profile", "smoke", "--out", str(out)]
    argv += ["--set", f"log_path={log_path}", "--set", f"labelled_path={lab}"]
    argv += [
        "--set",
        "coverage_repeats=0",
        "--set",
        "coverage_n=15000",  # back to the default: no coverage study on a user's log
    ]
    argv += ["--set", "coverage_calibration_n=5000"]
    assert main(argv) != 0  # the smoke profile is DP: a user's log needs a public window
    assert "public month window" in capsys.readouterr().err
    argv += ["--set", "first_month=2025-01", "--set", "months=12"]
    assert main(argv) == 0
    m = load_results(out / "results.json")["metrics"]
    assert m["input.malformed_lines"] == 1
    assert "rate.any.severe" in m
    assert "planted.any.severe" not in m


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"reality": "apocalyptic"}, "unknown severity"),
        ({"value": "high"}, "unknown severity"),
        ({"action": 2}, "severities must be names"),
        ({"amplifiers": ["dependency", "dependency"]}, "distinct names"),
        ({"amplifiers": ["loneliness"]}, "distinct names"),
        ({"domain": "finance"}, "unknown domain"),
        ({"confidence": 0.9}, "unknown fields"),
        ({"amplifiers": None}, "list of names"),
    ],
)
def test_bad_labelled_line(tmp_path: Path, change: dict, message: str) -> None:
    bad = tmp_path / "lab.jsonl"
    line = json.loads(_labelled_lines(1, seed=0)[0])
    line["labels"].update(change)
    bad.write_text(json.dumps(line) + "\n")
    with pytest.raises(ValueError, match=f"line 1: .*{message}"):
        read_labelled_jsonl(bad)


def test_labelled_line_missing_a_field_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "lab.jsonl"
    line = json.loads(_labelled_lines(1, seed=0)[0])
    del line["labels"]["amplifiers"]  # not "no amplifier": a person did not say
    bad.write_text(json.dumps(line) + "\n")
    with pytest.raises(ValueError, match=r"line 1: labels: missing fields \['amplifiers'\]"):
        read_labelled_jsonl(bad)


def test_labelled_set_lengths_must_agree() -> None:
    data = synthetic_labelled(20, seed=0, share=0.3)
    with pytest.raises(ValueError, match="20 conversations but 19 labels"):
        LabelledConversations(data.conversations, data.labels.subset(np.arange(19)))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"engine": "spark"}, "engine must be one of"),
        ({"log_path": "/no/such/log.jsonl"}, "log_path: no file"),
        ({"k_anonymity": 1}, "k_anonymity"),
        ({"dp_epsilon": 0.0}, "dp_epsilon"),
        ({"dp_cap": 3}, "dp_cap is only used with dp_epsilon"),
        ({"ray_address": "ray://x:10001"}, "only used with engine=ray"),
        ({"judge_log_n": 5}, "only used with a judge"),
        ({"judge_calibration": "content_free"}, "only used with a judge"),
        ({"judge": "x", "judge_calibration": "platt"}, "judge_calibration must be"),
        ({"classifier": "bert"}, "classifier must be one of"),
        ({"minilm_eval_n": 300}, "only used with classifier=staged"),
        ({"judge": "http://localhost:1/v1"}, "model-name"),
        ({"flag_threshold": 1.5}, "flag_threshold"),
    ],
)
def test_config_validation(changes: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        replace(RunConfig(), **changes)


def test_bench_config_validation() -> None:
    with pytest.raises(ValueError, match="unknown engines"):
        BenchConfig(engines=("dask",))


def _profile_judges() -> list[tuple[str, str]]:
    runs = [(f"run.{name}", cfg.judge) for name, cfg in PROFILES.items()]
    benches = [(f"bench.{name}", cfg.judge) for name, cfg in BENCH_PROFILES.items()]
    return [(where, spec) for where, spec in runs + benches if spec != "none"]


def test_profile_judges_name_registered_models() -> None:
    from icml26.shared.llm import BUILTIN_MODELS, resolve_spec

    judges = dict(_profile_judges())
    assert judges["run.llm"] == judges["bench.full"] == "smollm2-135m-instruct-q4_1"
    for where, spec in judges.items():
        if spec.startswith(("http://", "https://")):
            continue
        resolved = resolve_spec(spec)  # a retired or unknown name raises here
        assert resolved.kind == "builtin", where
        assert resolved.spec in BUILTIN_MODELS, where


def test_cli_rejects_bad_override(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "disempowerment", "--set", "engine=spark"]) == 2
    assert "engine" in capsys.readouterr().err


def test_unreachable_judge_endpoint_is_a_clear_error(tmp_path: Path) -> None:
    from icml26.disempowerment.pipeline import make_judge
    from icml26.shared.llm import EndpointUnreachableError

    backend = make_judge("http://127.0.0.1:9/v1|nope").backend
    backend.max_retries = 0
    backend._client = backend._client.with_options(max_retries=0, timeout=2.0)
    with pytest.raises(EndpointUnreachableError, match="cannot reach"):
        backend.complete([[{"role": "user", "content": "x"}]], max_tokens=4)


@pytest.mark.slow
def test_ray_path_equals_local_path() -> None:
    pytest.importorskip("ray")
    import ray

    from icml26.disempowerment.engine import process_log
    from icml26.disempowerment.pipeline import fit_models

    cfg = replace(PROFILES["smoke"], n_train=600, classifier="staged")
    data = synthetic_data(800, 600, 300, seed=0, positive_share=0.3, calibration_positive_share=0.3)
    models = fit_models(cfg, data)
    local = process_log(data.log, models.classifier, engine="local", batch_size=200)
    try:
        remote = process_log(data.log, models.classifier, engine="ray", batch_size=200, workers=2)
    finally:
        ray.shutdown()
    np.testing.assert_array_equal(local.labels.severity, remote.labels.severity)
    np.testing.assert_array_equal(local.labels.domain, remote.labels.domain)
    np.testing.assert_array_equal(local.flagged, remote.flagged)
    np.testing.assert_allclose(local.embeddings, remote.embeddings, atol=1e-4)
    assert local.scrub_counts == remote.scrub_counts


@pytest.mark.slow
def test_smoke_bench_through_the_cli(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    assert main(["bench", "disempowerment", "--profile", "smoke", "--out", str(out)]) == 0
    results = load_results(out / "results.json")
    check_paper(PAPER, results, strict=True)
    m = results["metrics"]
    # costs are timed single-threaded: a MiniLM call costs little beyond its texts
    assert m["cost_cpu_s.minilm_call"] < 0.2
    assert 0 <= m["stage2.share_flagged"] <= 1
    assert m["cost_cpu_s_per_1k.tfidf"] < m["cost_cpu_s_per_1k.staged"]

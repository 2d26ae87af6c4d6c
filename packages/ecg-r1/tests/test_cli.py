"""The smoke profile end to end through the CLI, resume, bench, bad overrides."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icml26.ecg_r1.paper import PAPER
from icml26.ecg_r1.tables import METHODS
from icml26.shared.cli import main
from icml26.shared.testing import check_paper


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "smoke"
    assert main(["run", "ecg-r1", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out)
    return out


def test_smoke_run_writes_the_contract_keys_and_plots(smoke_run: Path) -> None:
    m = json.loads((smoke_run / "results.json").read_text())["metrics"]
    for meth in (x for x in METHODS if not x.endswith("_llm")):  # SmolLM2: full only
        for cond in ("both", "signal_only"):
            assert f"diagnosis_jaccard.{cond}.{meth}" in m
            assert f"macro_f1.{cond}.{meth}" in m
        assert 0 <= m[f"evidence_accuracy.{meth}"] <= 1
        assert 0 <= m[f"hallucination_rate.{meth}"] <= 1
    for meth in ("ecg_r1", "no_dropout", "sft_only", "free_text", "no_readout"):
        assert f"diagnosis_jaccard.image_only.{meth}" in m
        assert f"cross_modal_consistency.{meth}" in m
    for meth in ("ecg_r1", "no_dropout", "free_text", "no_readout"):
        assert m[f"answer_tokens_p95.{meth}"] > 24
        assert m[f"generation_cap.{meth}"] == 24  # smoke lowers the measured cap
    assert m["hallucination_gap_se.sft_only_minus_ecg_r1"] >= 0
    for key in ("evidence_accuracy", "truncation_rate", "diagnosis_jaccard.both"):
        assert f"{key}.sft_only_seed0" in m  # the seed-0 side of the seed-0 ablations
    assert "hallucination_rate_se.ecg_r1" in m
    for k in range(2):  # no_dropout on every seed, paired with ecg_r1 by seed
        assert (smoke_run / "stages" / f"no_dropout_seed{k}.json").is_file()
    assert "gap_diff_seed_se.signal_only.no_dropout_minus_ecg_r1" in m
    assert "consistency_diff_seed_se.ecg_r1_minus_no_dropout" in m
    assert (smoke_run / "model_ecg_r1_seed0" / "config.json").is_file()
    assert (smoke_run / "model_ecg_r1_seed0.pt").is_file()
    for f in ("hr", "qrs", "pr", "qt", "axis"):
        assert f"feature_error.{f}.sim" in m
    assert "feature_error.hr.real" in m
    assert "feature_error.hr.neurokit" in m
    for plot in ("ecg_interpretation", "jaccard_by_condition", "hallucination_rate"):
        assert (smoke_run / "plots" / f"{plot}.png").read_bytes()[:4] == b"\x89PNG"


def test_resumed_run_reuses_finished_stages(smoke_run: Path) -> None:
    (smoke_run / "results.json").unlink()
    (smoke_run / "stages" / "free_text.json").unlink()
    a = json.loads((smoke_run / "stages" / "seed0.json").read_text())
    assert main(["run", "ecg-r1", "--profile", "smoke", "--out", str(smoke_run)]) == 0
    assert json.loads((smoke_run / "stages" / "seed0.json").read_text()) == a
    assert (smoke_run / "stages" / "free_text.json").exists()


def test_bench_smoke(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    assert main(["bench", "ecg-r1", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out)
    m = json.loads((out / "results.json").read_text())["metrics"]
    assert m["throughput.simulate_records_per_s"] > 0
    assert m["grpo_step_s"] > 0


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("p_drop=1.5", "p_drop"),
        ("records=/nonexistent.csv", "no CSV"),
        ("records_fs=250", "records_fs"),
    ],
)
def test_bad_override_fails_clearly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], override: str, message: str
) -> None:
    code = main(
        ["run", "ecg-r1", "--profile", "smoke", "--set", override, "--out", str(tmp_path / "bad")]
    )
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "bad" / "results.json").exists()

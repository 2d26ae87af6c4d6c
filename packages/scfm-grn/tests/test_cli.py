"""A smoke run of ``icml26 run scfm-grn`` and bad config values."""

from __future__ import annotations

from pathlib import Path

import pytest

from icml26.scfm_grn.paper import METHODS, PAPER, SPLITS
from icml26.shared.cli import main
from icml26.shared.results import load_results
from icml26.shared.testing import check_paper


def test_smoke_run_writes_the_contract_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ICML26_QUIET", "1")
    out = tmp_path / "run"
    assert main(["run", "scfm-grn", "--profile", "smoke", "--out", str(out)]) == 0
    results = load_results(out / "results.json")
    check_paper(PAPER, results)
    m = results["metrics"]
    for metric in ("auprc_ratio", "epr", "balanced_auprc", "auroc"):
        for split in SPLITS:
            for method in METHODS:
                value = m[f"{metric}.{split}.{method}"]
                assert value == value, f"{metric}.{split}.{method} is NaN"
    for split in SPLITS:
        assert 0.0 <= m[f"auroc.{split}.ensemble"] <= 1.0
    for plot in ("pr_curves", "trajectories", "network_krumsiek11", "pretrain_loss"):
        assert (out / "plots" / f"{plot}.png").is_file()
    assert (out / "scfm.safetensors").is_file()
    # rerunning into the same folder resumes from the saved scFM (no pretraining again)
    assert main(["run", "scfm-grn", "--profile", "smoke", "--out", str(out)]) == 0
    again = load_results(out / "results.json")["metrics"]
    assert again["balanced_auprc.krumsiek11.ensemble"] == pytest.approx(
        m["balanced_auprc.krumsiek11.ensemble"]
    )


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("train_noise=DS99", "train_noise must be one of"),
        ("universe_genes=100", "universe_genes must be >= 500"),
        ("gt_mode=fd", "gt_mode"),
        ("user_edges=/nonexistent.tsv", "user_edges is only read with user_h5ad"),
        ("user_h5ad=/nonexistent.h5ad", "does not exist"),
        ("scfm_checkpoint=/nonexistent.safetensors", "does not exist"),
    ],
)
def test_bad_config_is_refused(
    override: str, message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "o"
    assert (
        main(["run", "scfm-grn", "--profile", "smoke", "--out", str(out), "--set", override]) == 2
    )
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_bench_smoke(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ICML26_QUIET", "1")
    out = tmp_path / "bench"
    assert main(["bench", "scfm-grn", "--profile", "smoke", "--out", str(out)]) == 0
    results = load_results(out / "results.json")
    check_paper(PAPER, results)
    m = results["metrics"]
    assert m["us_per_pair.vvp.g16"] > 0
    assert "exponent.per_pair.genie3" in m

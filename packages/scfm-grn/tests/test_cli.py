"""A smoke run of ``icml26 run scfm-grn`` and bad config values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from icml26.scfm_grn.config import METHODS, SPLITS
from icml26.scfm_grn.paper import PAPER
from icml26.scfm_grn.tables import readme_tables
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
    for metric in (
        "auprc_ratio",
        "auprc_ratio_beeline",
        "epr",
        "epr_beeline",
        "balanced_auprc",
        "auroc",
    ):
        for split in SPLITS:
            for method in METHODS:
                value = m[f"{metric}.{split}.{method}"]
                assert value == value, f"{metric}.{split}.{method} is NaN"
    for split in SPLITS:
        assert 0.0 <= m[f"auroc.{split}.ensemble"] <= 1.0
        # chance levels are computed: a random ranking's balanced AUPRC is not exactly 0.5
        assert 0.4 < m[f"chance.balanced_auprc.{split}"] < 0.7
        assert m[f"null_sd.balanced_auprc.{split}"] > 0
        assert f"z.auprc_ratio.{split}.random" in m
    assert m["replicates"] == 2
    # the unseen-dataset placebo: the corpus prior against the best other baseline
    assert "gain_z.balanced_auprc.unseen_dataset.corpus_correlation" in m
    assert "pretrain.variance_explained" in m
    # the checkpoint is chosen on the validation datasets, which are neither pretrained on
    # nor scored; the in-dataset linear reference is reported beside each held-out figure
    assert m["pretrain.best_step"] in (5, 10)
    assert "pretrain.variance_explained_validation" in m
    assert "pretrain.variance_explained_in_dataset_linear.krumsiek11" in m
    assert "pretrain.variance_explained_corpus_linear" in m
    text = readme_tables(results)
    assert "masked variance explained" in text
    assert f"krumsiek11 {m['pretrain.variance_explained.krumsiek11']:.2f} / " in text
    for plot in ("pr_curves", "trajectories", "network_krumsiek11", "pretrain_loss"):
        assert (out / "plots" / f"{plot}.png").is_file()
    assert (out / "scfm.safetensors").is_file()
    # rerunning into the same folder resumes from the stages (no pretraining again)
    stamps = {p.name: p.stat().st_mtime_ns for p in (out / "stages").iterdir()}
    assert main(["run", "scfm-grn", "--profile", "smoke", "--out", str(out)]) == 0
    assert {p.name: p.stat().st_mtime_ns for p in (out / "stages").iterdir()} == stamps
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
        ("replicates=1", "replicates must be >= 2"),
        ("user_beeline=/nonexistent", "is not a folder"),
        ("n_top_genes=50", "apply to user data"),
        ("n_val_datasets=0", "n_val_datasets must be >= 1"),
        ("pretrain_cells_per_type=0", "pretrain_cells_per_type must be >= 1"),
        ("intrinsic_noise=2", "intrinsic_noise must be 0 or 1"),
        ("n_cell_types=10", "a dataset needs >= 20 cells"),
        ("embedding_init=gene2vec", "embedding_init must be"),
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


@pytest.mark.slow  # imports, simulations and a 2,000-gene memory probe: `nox -s slow-scfm-grn`
def test_bench_smoke(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ICML26_QUIET", "1")
    out = tmp_path / "bench"
    assert main(["bench", "scfm-grn", "--profile", "smoke", "--out", str(out)]) == 0
    results = load_results(out / "results.json")
    check_paper(PAPER, results, kind="bench")
    m = results["metrics"]
    assert m["us_per_pair.vvp.g16"] > 0
    assert m["memory.genes"] == 2000
    assert m["memory.features_mib"] < 1024 * m["memory.dense_features_gib"]
    assert "exponent.per_pair.genie3" in m
    assert "Memory at 2,000 genes" in readme_tables(results)


@pytest.mark.slow  # a second smoke run (~40 CPU-s): `nox -s slow-scfm-grn`
def test_a_beeline_dataset_with_tfs_is_scored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user's BEELINE folder, its TF list and a variable-gene selection flow through the run
    as the ``user`` split, scored on TF -> gene candidates only."""
    monkeypatch.setenv("ICML26_QUIET", "1")
    rng = np.random.default_rng(0)
    genes = [f"U{i}" for i in range(14)]
    x = rng.lognormal(size=(14, 60))
    x[3] = 2 * x[0] + 0.1 * rng.random(60)  # U0 -> U3
    folder = tmp_path / "beeline"
    folder.mkdir()
    rows = [",".join(["", *(f"c{k}" for k in range(60))])]
    rows += [",".join([g, *(f"{v:.5f}" for v in row)]) for g, row in zip(genes, x, strict=True)]
    (folder / "ExpressionData.csv").write_text("\n".join(rows) + "\n")
    edges = ["Gene1,Gene2", "U0,U3", "U0,U5", "U1,U6", "U1,U7", "U2,U8", "U0,U9"]
    (folder / "refNetwork.csv").write_text("\n".join(edges) + "\n")
    (tmp_path / "tfs.txt").write_text("U0\nU1\nU2\n")
    out = tmp_path / "run"
    args = ["run", "scfm-grn", "--profile", "smoke", "--out", str(out)]
    sets = [f"user_beeline={folder}", f"user_tfs={tmp_path / 'tfs.txt'}", "n_top_genes=12"]
    assert main([*args, *(a for s in sets for a in ("--set", s))]) == 0
    m = load_results(out / "results.json")["metrics"]
    # 3 TF sources x the other selected genes (the 12 most variable, TFs kept)
    assert m["n_pairs.user"] % 3 == 0
    assert 3 * 11 <= m["n_pairs.user"] <= 3 * 13
    assert "z.balanced_auprc.user.ensemble" in m


def test_bench_tables_read_the_memory_and_cost_keys() -> None:
    m = {
        "memory.genes": 20000.0,
        "memory.selected_genes": 330.0,
        "memory.tfs": 30.0,
        "memory.candidate_pairs": 9870.0,
        "memory.vvp_cpu_seconds": 2.5,
        "memory.features_mib": 0.3,
        "memory.dense_features_gib": 11.9,
        "memory.peak_rss_mib": 866.0,
        "us_per_pair.vvp.g16": 56.0,
        "us_per_pair.vvp.g128": 181.0,
        "us_per_pair.genie3.g16": 5721.0,
    }
    text = readme_tables({"metrics": m})
    assert "Memory at 20,000 genes" in text
    assert "| 16 | 56 | - | - | 5,721 |" in text
    assert "| 128 | 181 | - | - | - |" in text

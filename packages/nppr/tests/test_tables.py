"""The summary over replicates against NumPy, and the README tables."""

from __future__ import annotations

import numpy as np
import pytest

from icml26.nppr.tables import readme_tables, replicate_summary


def _replicates() -> list[dict[str, float]]:
    rng = np.random.default_rng(0)
    out = []
    for _ in range(4):
        r = {}
        for tag in ("cnn_std", "cnn_at"):
            for key in ("nppr.best", "pr.min", "clean_acc", "cc.nppr.best", "uap.best"):
                r[f"{key}.{tag}"] = float(rng.uniform())
        out.append(r)
    return out


def test_means_standard_errors_and_paired_gains() -> None:
    reps = _replicates()
    s = replicate_summary(reps, ["cnn_std", "cnn_at"])
    v = np.array([r["nppr.best.cnn_at"] for r in reps])
    assert s["mean.nppr_best.cnn_at"] == pytest.approx(v.mean())
    assert s["se.nppr_best.cnn_at"] == pytest.approx(v.std(ddof=1) / 2)
    cc = np.array([r["cc.nppr.best.cnn_std"] for r in reps])
    assert s["cc_mean.nppr_best.cnn_std"] == pytest.approx(cc.mean())
    gain = v - np.array([r["nppr.best.cnn_std"] for r in reps])
    assert s["mean.at_gain.nppr_best.cnn"] == pytest.approx(gain.mean())
    assert s["se.at_gain.nppr_best.cnn"] == pytest.approx(gain.std(ddof=1) / 2)
    assert s["replicates"] == 4
    assert "mean.ar_min.cnn_std" not in s  # missing figures are skipped, not invented
    # the AT gain over the universal perturbation's, paired within replicates
    uap = np.array([r["uap.best.cnn_at"] - r["uap.best.cnn_std"] for r in reps])
    diff = gain - uap
    assert s["mean.at_gain_over_uap.nppr_best.cnn"] == pytest.approx(diff.mean())
    assert s["se.at_gain_over_uap.nppr_best.cnn"] == pytest.approx(diff.std(ddof=1) / 2)
    assert s["mean.at_gain_over_uap.uap_best.cnn"] == pytest.approx(0.0)


def test_gaps_are_paired_within_replicates() -> None:
    reps = _replicates()
    s = replicate_summary(reps, ["cnn_std", "cnn_at"])
    d = np.array([r["pr.min.cnn_std"] - r["nppr.best.cnn_std"] for r in reps])
    assert s["mean.gap.pr_min.nppr_best.cnn_std"] == pytest.approx(d.mean())
    assert s["se.gap.pr_min.nppr_best.cnn_std"] == pytest.approx(d.std(ddof=1) / 2)
    assert s["mean.gap.nppr_best.nppr_best.cnn_at"] == 0.0  # what a placebo swap reads
    assert s["se.gap.nppr_best.nppr_best.cnn_at"] == 0.0


def test_subset_figures_are_summarised_under_their_own_keys() -> None:
    reps = _replicates()
    for i, r in enumerate(reps):
        r["nppr.best.cnn_std.sub"] = 0.1 * i
    s = replicate_summary(reps, ["cnn_std", "cnn_at"])
    assert s["mean.nppr_best.cnn_std.sub"] == pytest.approx(0.15)
    assert s["mean.nppr_best.cnn_std"] != s["mean.nppr_best.cnn_std.sub"]


def test_readme_tables_show_mean_and_se() -> None:
    s = replicate_summary(_replicates(), ["cnn_std", "cnn_at"])
    text = readme_tables({"metrics": s})
    assert "over 4 replicates" in text
    assert f"{s['mean.nppr_best.cnn_at']:.3f} ± {s['se.nppr_best.cnn_at']:.3f}" in text
    assert readme_tables({"metrics": {}}) == ""

"""The run's metrics from its stages.

Per method (``<m>``: ``ecg_r1``, ``sft_only``, ``no_dropout``, ``free_text``, ``no_readout``,
``signal_cnn``, ``rules``; ``ecg_r1``, ``sft_only`` and ``no_dropout`` averaged over the seeds,
the hallucination rate pooled over them; the others on the first seed): ``diagnosis_jaccard.<cond>.<m>``, ``macro_f1.<cond>.<m>``,
``evidence_accuracy.<m>``, ``hallucination_rate.<m>`` (pooled: contradicting statements /
statements), ``format_rate.<m>``, ``truncation_rate.<m>`` (outputs that do not stop
right after ``</answer>`` within the cap; ``ecg_r1_llm`` too when the SmolLM2 stage ran, and
``sft_llm``: that stage's model before GRPO),
``cross_modal_consistency.<m>``.

Hallucination, one statistic: ``hallucination_rate.<m>`` pooled; its seed spread
``hallucination_rate_se.<m>``; ``hallucination_gap.sft_only_minus_ecg_r1`` (pooled over seeds
and records) with ``hallucination_gap_se.sft_only_minus_ecg_r1`` (paired record bootstrap of
that pooled difference) and ``z.hallucination_sft_only_minus_ecg_r1``; the seed-level
``hallucination_gap_seed_se.sft_only_minus_ecg_r1`` (SE of the per-seed pooled gaps).

The dropout claims pair ``ecg_r1`` and ``no_dropout`` by seed (same initial weights), SE over
seeds (:func:`seed_paired_dropout`): ``gap_diff.<single>.no_dropout_minus_ecg_r1`` (the
both-minus-``<single>`` Jaccard gap without dropout minus with it), its
``gap_diff_seed_se.<single>...`` and ``z.gap_<single>_no_dropout_minus_ecg_r1``;
``consistency_diff.ecg_r1_minus_no_dropout``, ``consistency_diff_seed_se...`` and
``z.consistency_ecg_r1_minus_no_dropout``. One seed gives SE and z ``nan``.
``readout_ablation.jaccard_drop``: ``sft_only`` (first seed) minus ``no_readout`` diagnosis
Jaccard with both modalities. The first seed's ``sft_only`` alone, the side the seed-0
ablations (``free_text``, ``no_readout``) are compared with:
``evidence_accuracy.sft_only_seed0``, ``truncation_rate.sft_only_seed0``,
``diagnosis_jaccard.both.sft_only_seed0``; ``z.evidence_sft_only_minus_free_text`` pairs that
seed's records with ``free_text``'s. ``answer_tokens_p95.<m>`` and ``generation_cap.<m>``: the
95th percentile of the SFT answers' token lengths and the generation cap used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from icml26.ecg_r1.baselines import rules_interpretations, signal_cnn_interpretations
from icml26.ecg_r1.data import ECGDataset
from icml26.ecg_r1.delineate import real_ecg_check
from icml26.ecg_r1.evaluate import MethodScores, paired_z, pooled_hallucination_test, score_method
from icml26.ecg_r1.labels import FEATURE_NAMES
from icml26.ecg_r1.nk_validation import validate_neurokit
from icml26.shared import rng_for
from icml26.shared.stats import mean_se, paired_difference

__all__ = ["delineation_metrics", "seed_paired_dropout", "summarise"]


def delineation_metrics(cfg: Any, test: ECGDataset) -> dict[str, Any]:
    """The ``rules`` baseline's texts and the delineation's feature errors."""
    texts, feats = rules_interpretations(test.raw, test.fs)
    metrics: dict[str, float] = {}
    for k in FEATURE_NAMES:
        errs = [
            abs(float(getattr(m, k)) - float(getattr(t, k)))
            for m, t in zip(feats, test.features, strict=True)
            if m is not None
        ]
        if k == "axis":
            errs = [min(e, 360 - e) for e in errs]
        metrics[f"feature_error.{k}.sim"] = float(np.median(errs)) if errs else float("nan")
    metrics["delineation_failures.sim"] = float(sum(m is None for m in feats))
    if cfg.n_neurokit:
        nk = validate_neurokit(cfg.n_neurokit, rng_for(cfg.seed, "neurokit"))
        for k, v in nk.items():
            metrics[f"feature_error.{k}.neurokit"] = float(np.median(np.abs(v)))
    real = real_ecg_check()
    metrics["feature_error.hr.real"] = real.hr_error
    metrics["feature_error.rr_cv.real"] = real.rr_cv_error
    metrics["real_beats_matched_frac"] = real.matched_frac
    return {"texts": texts, "metrics": metrics}


def _seed_mean(scores: list[MethodScores], name: str) -> dict[str, float]:
    per = [s.metrics(name) for s in scores]
    out = {k: float(np.mean([p[k] for p in per])) for k in per[0]}
    bad = sum(float(s.halluc_bad.sum()) for s in scores)
    out[f"hallucination_rate.{name}"] = bad / max(
        sum(float(s.halluc_total.sum()) for s in scores), 1.0
    )
    if len(per) > 1:
        out[f"hallucination_rate_se.{name}"] = mean_se(
            [p[f"hallucination_rate.{name}"] for p in per]
        ).se
    return out


def _seed_paired(
    out: dict[str, float], name: str, z_key: str, a: list[float], b: list[float]
) -> None:
    """``a - b`` paired by seed: mean, seed SE and z (``nan`` for one seed; +-inf capped at
    +-1e6 to keep results finite)."""
    d = paired_difference(a, b)
    diff, se_key = name.split(".", 1)
    out[name] = d.mean
    out[f"{diff}_seed_se.{se_key}"] = d.se
    out[z_key] = float(np.clip(d.z, -1e6, 1e6)) if d.n > 1 else float("nan")


def seed_paired_dropout(
    r1: Sequence[Mapping[str, float]], nd: Sequence[Mapping[str, float]]
) -> dict[str, float]:
    """The dropout claims' figures, ``ecg_r1`` and ``no_dropout`` paired by seed.

    Args:
        r1: per seed, ``ecg_r1``'s metrics (:meth:`MethodScores.metrics` ``("ecg_r1")``):
            ``diagnosis_jaccard.<cond>.ecg_r1`` and ``cross_modal_consistency.ecg_r1``.
        nd: per seed (same order, same initial weights), ``no_dropout``'s.

    Returns:
        ``gap_diff.<single>.no_dropout_minus_ecg_r1``, ``gap_diff_seed_se.<single>...``,
        ``z.gap_<single>_no_dropout_minus_ecg_r1`` for ``signal_only`` and ``image_only``;
        ``consistency_diff.ecg_r1_minus_no_dropout``, its seed SE and
        ``z.consistency_ecg_r1_minus_no_dropout`` (module docstring).

    Raises:
        ValueError: ``r1`` and ``nd`` hold different numbers of seeds, or none.
    """
    if len(r1) != len(nd) or not r1:
        raise ValueError(f"need the same seeds for ecg_r1 and no_dropout, got {len(r1)}, {len(nd)}")
    out: dict[str, float] = {}
    for single in ("signal_only", "image_only"):

        def gap(m: Mapping[str, float], name: str, single: str = single) -> float:
            return m[f"diagnosis_jaccard.both.{name}"] - m[f"diagnosis_jaccard.{single}.{name}"]

        _seed_paired(
            out,
            f"gap_diff.{single}.no_dropout_minus_ecg_r1",
            f"z.gap_{single}_no_dropout_minus_ecg_r1",
            [gap(m, "no_dropout") for m in nd],
            [gap(m, "ecg_r1") for m in r1],
        )
    _seed_paired(
        out,
        "consistency_diff.ecg_r1_minus_no_dropout",
        "z.consistency_ecg_r1_minus_no_dropout",
        [m["cross_modal_consistency.ecg_r1"] for m in r1],
        [m["cross_modal_consistency.no_dropout"] for m in nd],
    )
    return out


def summarise(
    test: ECGDataset,
    deline: dict[str, Any],
    seeds: list[dict[str, Any]],
    no_dropout: list[dict[str, Any]],
    ablations: dict[str, dict[str, Any]],
    llm: dict[str, Any] | None,
    signal_encoder: Any,
    cfg: Any,
) -> dict[str, Any]:
    """All metrics (module docstring)."""
    feats = test.features
    r1 = [score_method(s["texts"], feats) for s in seeds]
    so = [score_method(s["texts_sft"], feats) for s in seeds]
    nd = [score_method(s["texts"], feats) for s in no_dropout]
    abl = {name: score_method(a["texts"], feats) for name, a in ablations.items()}
    cnn = signal_cnn_interpretations(signal_encoder.cpu(), test.signals)
    metrics: dict[str, Any] = dict(deline["metrics"])
    metrics |= _seed_mean(r1, "ecg_r1") | _seed_mean(so, "sft_only") | _seed_mean(nd, "no_dropout")
    for name, sc in abl.items():
        metrics |= sc.metrics(name)
    metrics |= score_method({"both": cnn, "signal_only": cnn}, feats).metrics("signal_cnn")
    metrics |= score_method(
        {"both": deline["texts"], "signal_only": deline["texts"]}, feats
    ).metrics("rules")
    gap, se, z = pooled_hallucination_test(so, r1, seed=cfg.seed)
    metrics["hallucination_gap.sft_only_minus_ecg_r1"] = gap
    metrics["hallucination_gap_se.sft_only_minus_ecg_r1"] = se
    metrics["z.hallucination_sft_only_minus_ecg_r1"] = z
    per_seed = [
        a.metrics("x")["hallucination_rate.x"] - b.metrics("x")["hallucination_rate.x"]
        for a, b in zip(so, r1, strict=True)
    ]
    metrics["hallucination_gap_seed_se.sft_only_minus_ecg_r1"] = (
        mean_se(per_seed).se if len(per_seed) > 1 else float("nan")
    )
    metrics |= seed_paired_dropout(
        [s.metrics("ecg_r1") for s in r1], [s.metrics("no_dropout") for s in nd]
    )
    # The first seed's sft_only: free_text and no_readout run on that seed only, so their
    # claims compare it with them (``*.sft_only`` stays the mean over seeds).
    first = so[0].metrics("sft_only_seed0")
    metrics |= {
        k: first[k]
        for k in (
            "evidence_accuracy.sft_only_seed0",
            "truncation_rate.sft_only_seed0",
            "diagnosis_jaccard.both.sft_only_seed0",
        )
    }
    metrics["z.evidence_sft_only_minus_free_text"] = paired_z(
        so[0].evidence, abl["free_text"].evidence
    )
    metrics["readout_ablation.jaccard_drop"] = float(
        so[0].jaccard["both"].mean() - abl["no_readout"].jaccard["both"].mean()
    )
    for name, entry in [("ecg_r1", seeds[0]), ("no_dropout", no_dropout[0]), *ablations.items()]:
        metrics[f"answer_tokens_p95.{name}"] = entry["answer_tokens_p95"]
        metrics[f"generation_cap.{name}"] = float(entry["generation_cap"])
    for name, entry in [("ecg_r1", seeds[0]), ("no_dropout", no_dropout[0])]:
        g = entry.get("grpo")
        if g:
            metrics[f"grpo_reward_first.{name}"] = float(np.mean(g["reward"][:2]))
            metrics[f"grpo_reward_last.{name}"] = float(np.mean(g["reward"][-2:]))
            metrics[f"grpo_kl_last.{name}"] = float(g["kl"][-1] or 0.0)
    if llm is not None:
        metrics |= score_method(llm["texts"], feats[: cfg.llm_test]).metrics("ecg_r1_llm")
        if "texts_sft" in llm:  # the same SmolLM2 model before GRPO
            metrics |= score_method(llm["texts_sft"], feats[: cfg.llm_test]).metrics("sft_llm")
        metrics |= {
            f"{k}.ecg_r1_llm": float(llm[k])
            for k in ("answer_tokens_p95", "generation_cap", "sft_loss_last")
            if k in llm
        }
    return metrics

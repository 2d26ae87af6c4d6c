"""The run's metric tree across replicates, and the README's tables from a results object.

:func:`replicate_summary` turns the per-replicate figures of each model into
``mean.<family>.<model>`` and ``se.<family>.<model>`` (the standard error over replicates,
:func:`icml26.shared.stats.mean_se`), the same for the clean-correct convention
(``cc_mean.*``, ``cc_se.*``), and the paired gain of adversarial training over replicates
(``mean.at_gain.<family>.<arch>``, ``se.at_gain.<family>.<arch>``; replicate ``r`` of
``<arch>_at`` pairs replicate ``r`` of ``<arch>_std``). A family is a figure's key with its
parts joined by ``_`` (``nppr.best`` -> ``nppr_best``), so a claim's placebo swaps one part.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

from icml26.shared.keys import parse_number_part
from icml26.shared.stats import mean_se, paired_difference

__all__ = ["FAMILIES", "readme_tables", "replicate_summary", "sweep_table"]

#: Figures summarised over replicates: family name -> key prefix.
FAMILIES = {
    "clean_acc": "clean_acc",
    "ar_pgd": "ar.pgd",
    "ar_apgd_square": "ar.apgd_square",
    "ar_min": "ar.min",
    "pr_uniform": "pr.uniform",
    "pr_gaussian": "pr.gaussian",
    "pr_laplace": "pr.laplace",
    "pr_uniform_official": "pr.uniform_official",
    "pr_gaussian_official": "pr.gaussian_official",
    "pr_min": "pr.min",
    "pr_min_ours": "pr.min_ours",
    "pr_tuned": "pr.tuned",
    "uap_universal": "uap.universal",
    "uap_per_class": "uap.per_class",
    "uap_best": "uap.best",
    "nppr_none": "nppr.none",
    "nppr_x": "nppr.x",
    "nppr_y": "nppr.y",
    "nppr_xy": "nppr.xy",
    "nppr_best": "nppr.best",
    "neff_best": "neff.best",
    "neff_excess_best": "neff_excess.best",
    "spread_best": "spread.best",
    "spread_within_best": "spread_within.best",
    "saturation_best": "saturation.best",
    "nppr_nofloor": "nppr.nofloor",
    "neff_nofloor": "neff.nofloor",
    "spread_nofloor": "spread.nofloor",
    "spread_within_nofloor": "spread_within.nofloor",
    "saturation_nofloor": "saturation.nofloor",
    "nppr_over_pr": "nppr_over_pr",
}
#: Families whose clean-correct twin (``cc.<key>``) is summarised too.
_CC = ("ar_min", "pr_min", "pr_tuned", "uap_best", "nppr_best", "ar_pgd", "pr_min_ours")
_AT_GAIN = ("nppr_best", "pr_min", "pr_tuned", "ar_min", "uap_best", "clean_acc")
#: Families also summarised on AR's subset (``<key>.sub`` -> ``mean.<family>.<tag>.sub``).
_SUB = ("ar_min", "uap_best", "nppr_best")
#: Families compared in pairs within each replicate (``mean.gap.<a>.<b>.<tag>``: a - b).
_GAP = ("ar_min", "pr_min", "pr_tuned", "uap_best", "nppr_best")


def _se(values: Sequence[float]) -> float:
    return mean_se(values).se if len(values) > 1 else math.nan


def replicate_summary(
    replicates: Sequence[Mapping[str, float]], tags: Sequence[str]
) -> dict[str, float]:
    """Means and standard errors over replicates (see the module docstring).

    Args:
        replicates: one flat metrics mapping per replicate, each holding every tag's figures.
        tags: the models summarised.

    Returns:
        ``mean.*``, ``se.*``, ``cc_mean.*``, ``cc_se.*``, ``mean.at_gain.*``, ``se.at_gain.*``
        and ``replicates`` (their number). A figure missing from a replicate is skipped.
    """
    out: dict[str, float] = {"replicates": float(len(replicates))}
    for tag in tags:
        for family, prefix in FAMILIES.items():
            variants = [("", f"{prefix}.{tag}", "")]
            variants += [("cc_", f"cc.{prefix}.{tag}", "")] if family in _CC else []
            variants += [("", f"{prefix}.{tag}.sub", ".sub")] if family in _SUB else []
            for conv, key, sub in variants:
                values = [r[key] for r in replicates if key in r]
                if len(values) == len(replicates) and values:
                    out[f"{conv}mean.{family}.{tag}{sub}"] = float(sum(values) / len(values))
                    out[f"{conv}se.{family}.{tag}{sub}"] = _se(values)
    for tag in tags:
        out.update(_gaps(replicates, tag))
    for tag in tags:
        arch, _, training = tag.rpartition("_")
        if training != "at" or f"{arch}_std" not in tags:
            continue
        for family in _AT_GAIN:
            key_at, key_std = f"{FAMILIES[family]}.{tag}", f"{FAMILIES[family]}.{arch}_std"
            if all(key_at in r and key_std in r for r in replicates):
                at = [r[key_at] for r in replicates]
                std = [r[key_std] for r in replicates]
                gap = paired_difference(at, std)
                out[f"mean.at_gain.{family}.{arch}"] = gap.mean
                out[f"se.at_gain.{family}.{arch}"] = gap.se if len(at) > 1 else math.nan
        out.update(_gain_over_uap(replicates, arch, tag))
    return out


def _gaps(replicates: Sequence[Mapping[str, float]], tag: str) -> dict[str, float]:
    """``mean.gap.<a>.<b>.<tag>`` (and ``.sub`` on AR's subset): ``a - b`` within each
    replicate (same classifier, same images), its mean and SE over replicates; every ordered
    pair of :data:`_GAP`, so a placebo that swaps a family finds its counterpart."""
    out: dict[str, float] = {}
    for a, b in itertools.product(_GAP, _GAP):
        for sub in ("", ".sub"):
            if sub and (a not in _SUB or b not in _SUB):
                continue
            ka, kb = f"{FAMILIES[a]}.{tag}{sub}", f"{FAMILIES[b]}.{tag}{sub}"
            if not all(ka in r and kb in r for r in replicates):
                continue
            diffs = [r[ka] - r[kb] for r in replicates]
            out[f"mean.gap.{a}.{b}.{tag}{sub}"] = float(sum(diffs) / len(diffs))
            out[f"se.gap.{a}.{b}.{tag}{sub}"] = _se(diffs)
    return out


def _gain_over_uap(
    replicates: Sequence[Mapping[str, float]], arch: str, tag_at: str
) -> dict[str, float]:
    """``mean.at_gain_over_uap.<family>.<arch>``: the gain of adversarial training in
    ``family`` minus its gain in the best universal perturbation, paired within each replicate
    (one difference per replicate, its mean and SE)."""
    out: dict[str, float] = {}
    tag_std = f"{arch}_std"

    def gain(r: Mapping[str, float], family: str) -> float:
        prefix = FAMILIES[family]
        return r[f"{prefix}.{tag_at}"] - r[f"{prefix}.{tag_std}"]

    for family in _AT_GAIN:
        keys = [f"{FAMILIES[f]}.{t}" for f in (family, "uap_best") for t in (tag_at, tag_std)]
        if not all(k in r for r in replicates for k in keys):
            continue
        diffs = [gain(r, family) - gain(r, "uap_best") for r in replicates]
        out[f"mean.at_gain_over_uap.{family}.{arch}"] = float(sum(diffs) / len(diffs))
        out[f"se.at_gain_over_uap.{family}.{arch}"] = _se(diffs)
    return out


def _fmt(metrics: Mapping[str, Any], key: str, se_key: str | None = None) -> str:
    value = metrics.get(key)
    if not isinstance(value, int | float) or (isinstance(value, float) and math.isnan(value)):
        return "-"
    se = metrics.get(se_key) if se_key else None
    if isinstance(se, int | float) and not math.isnan(se):
        return f"{value:.3f} ± {se:.3f}"
    return f"{value:.3f}"


#: README rows: a label and the families shown in it (one: mean ± SE with its clean-correct
#: twin; several: their means joined by " / "), and ``.sub`` for AR's subset.
_ROWS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("clean accuracy", ("clean_acc",), ""),
    ("AR, PGD", ("ar_pgd",), ""),
    ("AR, `apgd_square` ensemble (subset)", ("ar_apgd_square",), ""),
    ("AR, robust to both (subset)", ("ar_min",), ""),
    ("PR, ours: uniform / Gaussian / Laplace", ("pr_uniform", "pr_gaussian", "pr_laplace"), ""),
    (
        "PR, official: U(-1, 1) / randn, clipped",
        ("pr_uniform_official", "pr_gaussian_official"),
        "",
    ),
    ("PR, lowest of the five", ("pr_min",), ""),
    ("PR, tuned fixed noise", ("pr_tuned",), ""),
    ("universal / per-class perturbation", ("uap_universal", "uap_per_class"), ""),
    ("best universal / per-class perturbation", ("uap_best",), ""),
    ("NPPR: `none` / `x` / `y` / `xy` forms", ("nppr_none", "nppr_x", "nppr_y", "nppr_xy"), ""),
    ("NPPR, best form (chosen on selection inputs)", ("nppr_best",), ""),
    ("best point minus NPPR, paired within replicates", ("gap.uap_best.nppr_best",), ""),
    ("on AR's subset: AR / NPPR best / best point", ("ar_min", "nppr_best", "uap_best"), ".sub"),
    (
        "effective components exp H(π) / over the floor's minimum",
        ("neff_best", "neff_excess_best"),
        "",
    ),
    (
        "spread / eps: draws / one component / share at ±eps",
        ("spread_best", "spread_within_best", "saturation_best"),
        "",
    ),
    (
        "no floor: NPPR / exp H(π) / spread in one component",
        ("nppr_nofloor", "neff_nofloor", "spread_within_nofloor"),
        "",
    ),
)


def _models(metrics: Mapping[str, Any]) -> list[str]:
    return sorted({k.split(".")[2] for k in metrics if k.startswith("mean.nppr_best.")})


def _cell(m: Mapping[str, Any], families: tuple[str, ...], tag: str, sub: str) -> str:
    if len(families) > 1:
        values = [_fmt(m, f"mean.{f}.{tag}{sub}") for f in families]
        return "-" if all(v == "-" for v in values) else " / ".join(values)
    fam = families[0]
    cell = _fmt(m, f"mean.{fam}.{tag}{sub}", f"se.{fam}.{tag}{sub}")
    cc = m.get(f"cc_mean.{fam}.{tag}")
    return f"{cell} (cc {cc:.3f})" if isinstance(cc, float) and cell != "-" and not sub else cell


def readme_tables(results: Mapping[str, Any]) -> str:
    """The README's table from a results object: every figure as mean ± SE over replicates
    per model (with the clean-correct convention for the headline families; rows of several
    figures give their means). The budget sweep is :func:`sweep_table` (RESULTS.md, plots).

    Args:
        results: a results object (``results.json``) of ``icml26 run nppr``.

    Returns:
        Markdown.
    """
    m = results.get("metrics", results)
    models = _models(m)
    if not models:
        return ""
    n = int(m.get("replicates", 0))
    lines = [
        f"Mean ± SE over {n} replicates (classifier, its images, fitting, selection and test "
        "images and draws re-drawn), over all test inputs; `cc`: over the clean-correct ones "
        "only (the official code's convention):",
        "",
        "| figure | " + " | ".join(f"`{t}`" for t in models) + " |",
        "|---|" + "---|" * len(models),
    ]
    for label, families, sub in _ROWS:
        cells = [_cell(m, families, t, sub) for t in models]
        if any(c != "-" for c in cells):
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def sweep_table(results: Mapping[str, Any]) -> str:
    """The budget sweep (first replicate) as Markdown, for a report or a notebook.

    Args:
        results: a results object of ``icml26 run nppr``.

    Returns:
        Markdown (empty without a sweep).
    """
    m = results.get("metrics", results)
    return "\n".join(_sweep_table(m, _models(m)))


def _sweep_table(m: Mapping[str, Any], models: Sequence[str]) -> list[str]:
    eps_parts = sorted(
        {
            k.rsplit(".", 1)[1]
            for k in m
            if k.startswith("nppr.none.") and ".eps" in k and not k.endswith((".lo", ".hi"))
        },
        key=lambda p: parse_number_part(p[3:]),
    )
    if not eps_parts:
        return []
    lines = [
        "Budget sweep, first replicate (AR by PGD / NPPR `none` / PR uniform / PR randn official):",
        "",
        "| model | " + " | ".join(f"eps {parse_number_part(p[3:]):g}" for p in eps_parts) + " |",
        "|---|" + "---|" * len(eps_parts),
    ]
    for tag in models:
        cells = []
        for p in eps_parts:
            keys = (
                f"ar.pgd.{tag}.{p}",
                f"nppr.none.{tag}.{p}",
                f"pr.uniform.{tag}.{p}",
                f"pr.gaussian_official.{tag}.{p}",
            )
            cells.append(" / ".join(f"{m[k]:.2f}" if k in m else "-" for k in keys))
        lines.append(f"| `{tag}` | " + " | ".join(cells) + " |")
    return lines

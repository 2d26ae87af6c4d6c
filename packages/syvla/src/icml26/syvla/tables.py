"""The run's metrics (means, standard errors and per-seed figures; paired gaps between
methods over seeds) and the README's tables.

Every seed evaluates every method on the same rooms from the same demonstrations, so the
comparisons are paired by seed: ``gap.<metric>.<a>.<b>`` is the mean over seeds of
``a - b``, ``gap_se.*`` its standard error and ``gap_margin.*`` ``t(0.975, seeds - 1)``
times it (the claims' noise bar; NaN with one seed). ``gap.<metric>.<b>.<b>`` pairs the
baseline's seed ``i`` with its seed ``i + 1`` (mean 0 by construction; SE and margin its own
seed-to-seed noise): the figure a claim reads under its placebo ``{a: b}``. Per-seed figures
are ``<metric>.<method>.seed<k>``.

``python -m icml26.syvla.tables runs/syvla/<run>/results.json`` prints the tables.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import t as student_t

from icml26.shared.stats import mean_se, paired_difference
from icml26.syvla.config import METHODS, SPLIT_NAMES, RunConfig
from icml26.syvla.data import Demos

__all__ = [
    "PAIRS",
    "level_key",
    "markdown_tables",
    "put_gaps",
    "summarise",
    "summarise_levels",
    "summarise_pretrain",
    "t_margin",
]

OOD_SPLITS = tuple(s for s in SPLIT_NAMES if s.startswith("ood_"))


#: the paired comparisons the claims read: (metric, method, baseline)
PAIRS: tuple[tuple[str, str, str], ...] = (
    ("success.train", "syvla", "bc_ppo"),
    ("success_ood", "syvla", "bc_ppo"),
    ("vqa_accuracy", "syvla", "no_decoupling"),
    ("vqa_accuracy", "syvla", "no_cotrain"),
    ("log10_update_kl", "syvla", "no_similar"),
    ("babyai.mean", "syvla", "bc_ppo"),
    ("babyai.mean", "syvla", "no_decoupling"),
    ("babyai.mean", "syvla", "no_cotrain"),
)


def _put(metrics: dict[str, float], name: str, method: str, values: list[float]) -> None:
    """``<name>.<method>`` (mean over seeds), ``<name>_se.<method>`` (its SE; 0 for one
    seed) and ``<name>.<method>.seed<k>`` (each seed's figure). A dotted ``name`` puts
    ``_se`` on its first part (``success_se.train.syvla``)."""
    head, _, rest = name.partition(".")
    if len(values) > 1:
        est = mean_se(values)
        mean, se = est.mean, est.se
    else:
        mean, se = float(values[0]), 0.0
    metrics[f"{name}.{method}"] = float(mean)
    metrics[".".join(p for p in (f"{head}_se", rest, method) if p)] = float(se)
    for k, v in enumerate(values):
        metrics[f"{name}.{method}.seed{k}"] = float(v)


def t_margin(se: float, n: int) -> float:
    """``t_{0.975, n - 1} * se``: what a paired gap over ``n`` seeds must exceed (4.30 SE
    with 3 seeds, 2.78 with 5); NaN with fewer than two seeds.

    Args:
        se: the standard error of the mean paired difference.
        n: the number of pairs (seeds).

    Returns:
        The margin.
    """
    if n < 2 or not np.isfinite(se):
        return float("nan")
    return float(student_t.ppf(0.975, n - 1) * se)


def _put_gap(
    m: dict[str, float], name: str, a: str, b: str, x: list[float], y: list[float]
) -> None:
    """``gap``, ``gap_se`` and ``gap_margin`` of ``<name>.<a>.<b>`` (paired by seed)."""
    key = f"{name}.{a}.{b}"
    if len(x) < 2:  # one seed: a gap with no noise bar decides nothing
        m[f"gap.{key}"] = float(np.mean(np.asarray(x) - np.asarray(y)))
        m[f"gap_se.{key}"] = m[f"gap_margin.{key}"] = float("nan")
        return
    d = paired_difference(x, y)
    m[f"gap.{key}"], m[f"gap_se.{key}"] = d.mean, d.se
    m[f"gap_margin.{key}"] = t_margin(d.se, d.n)


def put_gaps(m: dict[str, float]) -> None:
    """The paired gaps of :data:`PAIRS` whose per-seed figures ``m`` holds (see the module
    docstring), each with the baseline's own seed-shifted gap for the placebo."""
    for name, a, b in PAIRS:
        n = sum(1 for k in m if k.startswith(f"{name}.{a}.seed"))
        if n == 0 or f"{name}.{b}.seed0" not in m:
            continue
        x = [m[f"{name}.{a}.seed{k}"] for k in range(n)]
        y = [m[f"{name}.{b}.seed{k}"] for k in range(n)]
        _put_gap(m, name, a, b, x, y)
        _put_gap(m, name, b, b, y, [*y[1:], *y[:1]])


def _pretrain_metrics(pretrain: list[dict[str, Any]]) -> dict[str, float]:
    """Held-out VQA accuracy of the pretrained backbone (``vqa_pretrained``), per question
    family (``vqa_pretrained.<family>``), the validation accuracy of the kept check
    (``vqa_pretrain_val`` and ``vqa_pretrain_val.<family>``), the steps taken, the share
    ended by the validation plateau rather than the step bound (``vqa_pretrain_plateau``), and
    ``pretrain.from_cache`` / ``pretrain.from_shipped``: the fraction of pretrainings loaded
    from the user cache / the backbone shipped in the wheel (0 or 1 for one; then the run's
    times exclude that pretraining, and ``vqa_pretrained`` is still measured by the run)."""
    m = {
        "pretrain.from_cache": float(np.mean([bool(p.get("from_cache")) for p in pretrain])),
        "pretrain.from_shipped": float(np.mean([bool(p.get("from_shipped")) for p in pretrain])),
        "vqa_pretrained": float(np.mean([p["heldout_accuracy"] for p in pretrain])),
        "vqa_pretrain_val": float(np.mean([p["best_val"] for p in pretrain])),
        "vqa_pretrain_steps": float(np.mean([p["steps"] for p in pretrain])),
        # the share of pretrainings ended by the validation plateau (not the step bound)
        "vqa_pretrain_plateau": float(np.mean([p.get("stopped") == "plateau" for p in pretrain])),
    }
    for src, name in (
        ("heldout_by_family", "vqa_pretrained"),
        ("val_by_family", "vqa_pretrain_val"),
    ):
        for family in pretrain[0].get(src, {}):
            m[f"{name}.{family}"] = float(np.mean([p[src][family] for p in pretrain]))
    return m


def _from_cache(m: dict[str, float]) -> str:
    """``; loaded from the user cache, not timed here`` (or from the shipped backbone) when
    the run loaded its pretraining."""
    parts = []
    for key, where in (
        (
            "pretrain.from_shipped",
            "the backbone shipped in the wheel (held-out accuracy re-measured by the run)",
        ),
        ("pretrain.from_cache", "the user cache"),
    ):
        share = m.get(key, 0.0)
        if share > 0:
            parts.append(f"{'loaded' if share >= 1 else f'{share:.0%} loaded'} from {where}")
    return f"; {' and '.join(parts)}, so the run's times exclude it" if parts else ""


def summarise_pretrain(info: dict[str, Any]) -> dict[str, float]:
    """The ``pretrain`` profile's metrics: :func:`_pretrain_metrics` of its one pretraining
    and its CPU seconds (``vqa_pretrain_cpu_s``; NaN when loaded rather than trained)."""
    m = _pretrain_metrics([info])
    m["vqa_pretrain_cpu_s"] = float(info.get("cpu_seconds") or float("nan"))
    return m


def summarise(
    cfg: RunConfig,
    evals: dict[str, list[dict[str, float]]],
    rl: dict[str, list[dict[str, Any]]],
    pretrain: list[dict[str, Any]],
    bc: list[dict[bool, tuple[Any, dict[str, Any]]]],
    demos: list[Demos],
) -> dict[str, float]:
    """The flat metrics of a run (every figure a claim or a table reads).

    ``demos``: each repetition's demonstrations (``demo_steps`` and ``demo_episodes`` are
    their means). ``bc``: per repetition, ``{decouple: (model, info)}`` from
    :func:`~icml26.syvla.steps.behaviour_clone`; ``vqa_after_bc.{decoupled,joint}`` is the
    held-out VQA accuracy right after BC (before any RL).
    """
    m: dict[str, float] = {}
    for method, runs in evals.items():
        for split in SPLIT_NAMES:
            _put(m, f"success.{split}", method, [r[f"success.{split}"] for r in runs])
        ood = [float(np.mean([r[f"success.{s}"] for s in OOD_SPLITS])) for r in runs]
        _put(m, "success_ood", method, ood)
        _put(m, "vqa_accuracy", method, [r["vqa_accuracy"] for r in runs])
    for method, infos in rl.items():
        _put(m, "update_kl", method, [float(np.mean(i["kl"])) for i in infos])
        # the guidance claim's paired figure: log10 of each seed's mean update KL
        _put(m, "log10_update_kl", method, [float(np.log10(np.mean(i["kl"]))) for i in infos])
        _put(
            m,
            "update_kl_sd",
            method,
            [float(np.std(i["kl"], ddof=1)) if len(i["kl"]) > 1 else 0.0 for i in infos],
        )
        _put(
            m,
            "retrieved_fraction",
            method,
            [float(np.mean(i["retrieved_fraction"])) for i in infos],
        )
        _put(m, "final_return", method, [float(i["returns"][-1]) for i in infos])
    m.update(_pretrain_metrics(pretrain))
    m["bc_final_loss"] = float(np.mean([b[True][1]["final_loss"] for b in bc]))
    for decouple, tag in ((True, "decoupled"), (False, "joint")):
        accs = [b[decouple][1]["vqa_accuracy"] for b in bc if "vqa_accuracy" in b[decouple][1]]
        if accs:
            _put(m, "vqa_after_bc", tag, accs)
    m["demo_steps"] = float(np.mean([len(d) for d in demos]))
    m["demo_episodes"] = float(np.mean([d.solved for d in demos]))
    m["rl_frames_per_seed"] = float(cfg.rl_updates * cfg.n_envs * cfg.n_steps)
    put_gaps(m)
    return m


def level_key(level: str) -> str:
    """The metric-key part of a Gymnasium id: ``BabyAI-GoToLocal-v0`` -> ``gotolocal``."""
    return level.removeprefix("BabyAI-").rsplit("-v", 1)[0].lower().replace("-", "_")


def summarise_levels(
    cfg: RunConfig,
    success: dict[str, dict[str, dict[str, list[float]]]],
    budget: dict[str, list[dict[str, float]]],
    pretrain: dict[str, Any],
    rgb: dict[str, Any] | None = None,
    vqa: dict[str, dict[str, list[float]]] | None = None,
) -> dict[str, float]:
    """The flat metrics of the registry-level experiment: ``babyai.<level>.<method>`` (mean
    success over seeds) and ``babyai_se.<level>.<method>``; ``babyai.mean.<method>`` and its
    SE average the levels within each seed first (paired over levels); the budget per level
    (``budget[level]``: one record per seed; ``babyai_demo_steps.<level>`` and
    ``babyai_demo_episodes.<level>`` are the means over seeds of the expert steps and the
    solved bot episodes each seed's BC learns from) and the RL frames per method, seed and
    level. ``success[view][level][method]``: per seed; view ``""`` the symbolic partial view
    (``babyai.*``), ``"rgb"`` minigrid's RGB view through the tile encoder (``babyai_rgb.*``,
    with the encoder's held-out ``rgb_tile_accuracy.cell`` / ``.frame`` from ``rgb``).
    ``vqa[level][method]``: per seed, the held-out VQA accuracy of the final model
    (``vqa_accuracy.<method>``: each seed's mean over the levels, then over seeds). Paired
    gaps as :func:`put_gaps`."""
    m: dict[str, float] = {}
    for view, per_level in success.items():
        name = "babyai_rgb" if view else "babyai"
        for level, per_method in per_level.items():
            for method, values in per_method.items():
                _put(m, f"{name}.{level_key(level)}", method, values)
        for method in next(iter(per_level.values())):
            per_seed = np.mean([per_level[lv][method] for lv in per_level], axis=0)
            _put(m, f"{name}.mean", method, [float(v) for v in per_seed])
    for level in budget:
        for field in ("demo_steps", "demo_episodes"):
            m[f"babyai_{field}.{level_key(level)}"] = float(
                np.mean([b[field] for b in budget[level]])
            )
    if rgb is not None:
        m["rgb_tile_accuracy.cell"] = float(rgb["cell"])
        m["rgb_tile_accuracy.frame"] = float(rgb["frame"])
    for method in next(iter(vqa.values())) if vqa else ():
        per_seed = np.mean([vqa[lv][method] for lv in vqa], axis=0)
        _put(m, "vqa_accuracy", method, [float(v) for v in per_seed])
    m.update(_pretrain_metrics([pretrain]))
    m["rl_frames_per_seed"] = float(cfg.rl_updates * cfg.n_envs * cfg.n_steps)
    m["eval_episodes"] = float(cfg.eval_episodes)
    put_gaps(m)
    return m


def _levels_table(m: dict[str, float]) -> str:
    levels = sorted({k.split(".")[1] for k in m if k.startswith("babyai_demo_steps.")})
    methods = [k for k in METHODS if f"babyai.mean.{k}" in m]
    lines = [
        "| method | " + " | ".join(levels) + " | mean | VQA acc. |",
        "|---" * (len(levels) + 3) + "|",
    ]
    for view, suffix in (("babyai", ""), ("babyai_rgb", ", RGB")):
        for k in methods:
            if f"{view}.mean.{k}" not in m:
                continue
            cells = [
                _cell(m, f"{view}.{lv}.{k}", f"{view}_se.{lv}.{k}") for lv in [*levels, "mean"]
            ]
            cells.append(
                _cell(m, f"vqa_accuracy.{k}", "vqa_accuracy_se." + k) if not suffix else "-"
            )
            lines.append(f"| `{k}`{suffix} | " + " | ".join(cells) + " |")
    demos = ", ".join(f"{lv} {m[f'babyai_demo_steps.{lv}']:.0f}" for lv in levels)
    return "\n".join(
        [
            "Success on minigrid's registry levels (± SE over seeds), minigrid's 7x7 partial "
            f"symbolic view{_rgb_rows(m)}:",
            "",
            *lines,
            "",
            f"{_floor_note(m, levels, methods)}Budget per level and seed (each seed its own demonstrations and BC): expert steps "
            f"{demos} (from {m[f'babyai_demo_episodes.{levels[0]}']:.0f} solved bot episodes "
            f"each); "
            f"{m['rl_frames_per_seed']:.0f} RL frames per method and seed; "
            f"{m['eval_episodes']:.0f} evaluation episodes per method, seed and level; "
            f"VQA-pretrained backbone {m['vqa_pretrained']:.3f} held-out{_families(m)}"
            f"{_pretrain_note(m)}{_rgb_note(m)}.",
            "",
            _gaps_note(m),
        ]
    )


def _pretrain_note(m: dict[str, float]) -> str:
    """How the VQA pretraining ended: steps, the validation figure kept, plateau or bound."""
    if "vqa_pretrain_steps" not in m:
        return ""
    how = "a validation plateau" if m.get("vqa_pretrain_plateau", 0) >= 1 else "the step bound"
    return (
        f" after {m['vqa_pretrain_steps']:.0f} steps (stopped by {how}; best validation "
        f"{m.get('vqa_pretrain_val', float('nan')):.3f}{_from_cache(m)})"
    )


def _gaps_note(m: dict[str, float]) -> str:
    """The paired gaps of :data:`PAIRS` in ``m``: mean over seeds and the t-margin."""
    parts = [
        f"{name} {a} - {b} {m[f'gap.{name}.{a}.{b}']:+.3f} (margin "
        f"{m[f'gap_margin.{name}.{a}.{b}']:.3f})"
        for name, a, b in PAIRS
        if f"gap.{name}.{a}.{b}" in m
    ]
    if not parts:
        return ""
    return (
        "Paired gaps (mean over seeds of the per-seed difference; margin t(0.975, seeds - 1) "
        "SEs): " + "; ".join(parts) + "."
    )


def _rgb_rows(m: dict[str, float]) -> str:
    """What the RGB rows are: when the tile encoder (trained on the symbolic codes) reads
    every held-out cell exactly, they repeat the symbolic rows by construction, up to frames
    the held-out set did not cover; the sentence names the levels where they differ."""
    rgb = {k.removeprefix("babyai_rgb."): v for k, v in m.items() if k.startswith("babyai_rgb.")}
    if not rgb:
        return ""
    text = (
        "; RGB rows: the same models and rooms read from minigrid's partial RGB view by the "
        "per-tile encoder"
    )
    if m.get("rgb_tile_accuracy.cell", 0.0) >= 1.0:
        differ = sorted(
            k.split(".")[0]
            for k, v in rgb.items()
            if k.count(".") == 1 and not k.startswith("mean") and v != m.get(f"babyai.{k}")
        )
        text += (
            ", which is trained on the symbolic codes and reads every held-out cell exactly, "
            "so the RGB rows repeat the symbolic rows by construction"
        )
        if differ:
            text += (
                f" except on {', '.join(differ)} (some rollout frame read differently from "
                "its codes, which the held-out frames did not show)"
            )
        text += ": a wiring check of the pixel path, not evidence about pixel input"
    return text


def _floor_note(m: dict[str, float], levels: list[str], methods: list[str]) -> str:
    """A sentence naming the levels where every method stays below 0.05 success (at the floor),
    which still count in the mean."""
    notes = []
    for lv in levels:
        values = [m[f"babyai.{lv}.{k}"] for k in methods if f"babyai.{lv}.{k}" in m]
        if values and max(values) < 0.05:
            notes.append(f"{lv} ({min(values):.3f}-{max(values):.3f})")
    if not notes:
        return ""
    listed = ", ".join(notes)
    return f"At the floor for every method (below 0.05), and counted in the mean: {listed}. "


def _rgb_note(m: dict[str, float]) -> str:
    if "rgb_tile_accuracy.cell" not in m:
        return ""
    return (
        f"; RGB tile encoder {m['rgb_tile_accuracy.cell']:.4f} of held-out cells and "
        f"{m['rgb_tile_accuracy.frame']:.3f} of held-out frames read exactly"
    )


def _families(m: dict[str, float]) -> str:
    parts = [
        f"{f} {m[f'vqa_pretrained.{f}']:.2f}"
        for f in ("colour", "object", "exists", "where")
        if f"vqa_pretrained.{f}" in m
    ]
    return f" ({', '.join(parts)})" if parts else ""


def _cell(m: dict[str, float], key: str, se: str | None = None) -> str:
    if key not in m:
        return "-"
    return f"{m[key]:.3f}" + (f" ± {m[se]:.3f}" if se is not None and se in m else "")


def markdown_tables(results: dict[str, Any]) -> str:
    """Success per split and method, VQA accuracy, update statistics and the budget
    (``Paper.readme_tables``).

    Args:
        results: a run's ``results.json`` content.

    Returns:
        Markdown text.
    """
    m = results["metrics"]
    if any(k.startswith("babyai.mean.") for k in m):
        return _levels_table(m)
    methods = [k for k in METHODS if f"success.train.{k}" in m]
    head = "| method | " + " | ".join(SPLIT_NAMES) + " | VQA acc. | update KL | retrieved |"
    lines = [head, "|---" * (len(SPLIT_NAMES) + 4) + "|"]
    for k in methods:
        cells = [_cell(m, f"success.{s}.{k}", f"success_se.{s}.{k}") for s in SPLIT_NAMES]
        cells += [
            _cell(m, f"vqa_accuracy.{k}", f"vqa_accuracy_se.{k}"),
            _cell(m, f"update_kl.{k}", f"update_kl_se.{k}"),
            _cell(m, f"retrieved_fraction.{k}"),
        ]
        lines.append(f"| `{k}` | " + " | ".join(cells) + " |")
    budget = (
        f"Budget: {m.get('demo_episodes', 0):.0f} solved expert episodes "
        f"({m.get('demo_steps', 0):.0f} steps), {m.get('rl_frames_per_seed', 0):.0f} RL frames "
        f"per method and seed; VQA pretraining{_pretrain_note(m)}, held-out accuracy "
        f"{m.get('vqa_pretrained', float('nan')):.3f}{_families(m)}; after BC "
        f"{m.get('vqa_after_bc.decoupled', float('nan')):.3f} decoupled, "
        f"{m.get('vqa_after_bc.joint', float('nan')):.3f} joint."
    )
    return "\n".join(
        [
            "Success (± SE over seeds) per split, held-out VQA, mean update KL:",
            "",
            *lines,
            "",
            budget,
            "",
            _gaps_note(m),
        ]
    )


if __name__ == "__main__":  # pragma: no cover
    print(markdown_tables(json.loads(Path(sys.argv[1]).read_text())))

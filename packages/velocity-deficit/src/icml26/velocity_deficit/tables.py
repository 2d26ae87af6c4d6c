"""Markdown tables of a finished run, for the README: ``python -m icml26.velocity_deficit.tables RUN``.

Everything is read from the run's ``results.json`` and ``config.json`` (seed means, their
standard errors and the claims), so the README's figures are the run's own, never retyped.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

__all__ = ["render"]

_TIMES = ("t00", "t05", "t10", "t25", "t50", "t75", "t95")


def _f(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{x:.{digits}g}"


def _pm(m: dict[str, Any], key: str, se_key: str, pct: bool = False) -> str:
    v, se = m.get(key), m.get(se_key)
    if v is None or not math.isfinite(v):
        return "-"
    if pct:
        s = f"{100 * v:+.1f}"
        return s + (f" ± {100 * se:.1f}" if se is not None and math.isfinite(se) else "") + " %"
    return _f(v) + (f" ± {_f(se, 2)}" if se is not None and math.isfinite(se) else "")


def _datasets(m: dict[str, Any]) -> list[str]:
    return sorted(
        {k.split(".")[1] for k in m if k.startswith("fd.") and k.endswith(".real")},
        key=lambda n: (not n.startswith("gmm"), int(n[3:]) if n[3:].isdigit() else 0, n),
    )


def _variants(m: dict[str, Any], name: str, k: int) -> list[str]:
    return [v for v in ("baseline", "ssc", "mafm", "mafm_ssc") if f"fd.{name}.{v}.nfe{k}" in m]


def render(run: Path) -> str:
    """The README tables of run folder ``run`` (module docstring)."""
    res = json.loads((run / "results.json").read_text())
    cfg = json.loads((run / "config.json").read_text())
    cfg = cfg.get("config", cfg)
    m: dict[str, Any] = res["metrics"]
    nfe = sorted(cfg["nfe"])
    k_sel = cfg["ssc_select_nfe"]
    names = _datasets(m)
    out: list[str] = []
    # fit check
    out += [
        "### Fit check: is the deficit the objective's or the network's?",
        "",
        "FM loss `|v - (x1 - x0)|^2 / d` of the baseline on training / test pairs; on mixtures the "
        "exact field's loss on the same training pairs (the floor) and the relative excess; "
        "`R(0)` learned vs the exact field (mixtures) or the training set's own empirical field "
        "(images); the largest `|R - R_exact|` over `t <= 0.15`, where SSC injects (later the "
        "training set's field memorises in 784-d and its `R` tends to 1).",
        "",
        "| data | loss train | loss test | exact-field floor | excess over floor | R(0) learned |"
        " R(0) exact | max abs(R - R_exact), t <= 0.15 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n in names:
        ref = (
            "velocity_ratio_oracle"
            if f"velocity_ratio_oracle.{n}.t00" in m
            else "velocity_ratio_empirical"
        )
        gaps = [
            abs(m[f"velocity_ratio.{n}.{t}"] - m[f"{ref}.{n}.{t}"])
            for t in (f"t{5 * i:02d}" for i in range(4))
            if f"velocity_ratio.{n}.{t}" in m and f"{ref}.{n}.{t}" in m
        ]
        out.append(
            f"| {n} | {_f(m.get(f'fm_loss.{n}.baseline'))} | {_f(m.get(f'fm_loss_test.{n}.baseline'))} "
            f"| {_f(m.get(f'fm_loss_oracle.{n}'))} "
            f"| {_pm(m, f'fm_excess_loss.{n}.baseline', f'fm_excess_loss_se.{n}.baseline', pct=True)} "
            f"| {_f(m.get(f'velocity_ratio.{n}.t00'))} | {_f(m.get(f'{ref}.{n}.t00'))} "
            f"| {_f(max(gaps)) if gaps else '-'} |"
        )
    # velocity ratio
    times = [t for t in _TIMES if f"velocity_ratio.{names[0]}.{t}" in m]
    out += [
        "",
        "### Velocity Deficit: `R(t) = E|v(x_t,t)| / E|x1 - x0|` (baseline, seed mean)",
        "",
        "| data | " + " | ".join(times) + " | mean R | exact-field mean R |",
        "|---|" + "---|" * (len(times) + 2),
    ]
    for n in names:
        allt = sorted(k for k in m if k.startswith(f"velocity_ratio.{n}.t"))
        mean_r = sum(m[k] for k in allt) / len(allt)
        oracle = sorted(k for k in m if k.startswith(f"velocity_ratio_oracle.{n}.t"))
        mean_o = _f(sum(m[k] for k in oracle) / len(oracle)) if oracle else "-"
        out.append(
            f"| {n} | "
            + " | ".join(_f(m.get(f"velocity_ratio.{n}.{t}")) for t in times)
            + f" | {_f(mean_r)} | {mean_o} |"
        )
    out += [
        "",
        f"velocity_ratio_slope_vs_dim = {_f(m.get('velocity_ratio_slope_vs_dim'))}, exact-field "
        f"slope = {_f(m.get('velocity_ratio_oracle_slope_vs_dim'))}",
    ]
    # SSC strength and FD change
    out += [
        "",
        "### SSC: strength from the measured `R(0)` and FD change (mean ± SE over seeds)",
        "",
        "`gamma(0) = 1 / R(0)`; `beta` chosen on validation. FD change = `(FD_base - FD) / FD_base`"
        " at the same NFE (> 0: better); last column: at "
        f"{k_sel} NFE against the baseline at 250 NFE.",
        "",
        "| data | variant | gamma(0) | beta (seed mean) | "
        + " | ".join(f"@{k}" for k in nfe)
        + " | vs base@250 |",
        "|---|---|---|---|" + "---|" * (len(nfe) + 1),
    ]
    for n in names:
        for v in _variants(m, n, nfe[0])[1:]:
            model = "baseline" if v == "ssc" else "mafm"
            alpha = m.get(f"ssc_alpha.{n}.{model}")
            g0 = "-" if v == "mafm" or alpha is None else _f(1 + alpha)
            beta = "-" if v == "mafm" else _f(m.get(f"ssc_beta.{n}.{model}"))
            cells = [
                _pm(m, f"fd_improvement.{n}.{v}.nfe{k}", f"fd_improvement_se.{n}.{v}.nfe{k}", True)
                for k in nfe
            ]
            vs = _pm(
                m,
                f"fd_improvement_vs_baseline_250.{n}.{v}.nfe{k_sel}",
                f"fd_improvement_vs_baseline_250_se.{n}.{v}.nfe{k_sel}",
                True,
            )
            out.append(f"| {n} | {v} | {g0} | {beta} | " + " | ".join(cells) + f" | {vs} |")
    # FD tables
    out += [
        "",
        "### FD by NFE (classifier features, lower is better; mean ± SE over seeds)",
        "",
        "| data | method | "
        + " | ".join(f"FD@{k}" for k in nfe)
        + f" | lag@{k_sel} | real-vs-real floor |",
        "|---|---|" + "---|" * (len(nfe) + 2),
    ]
    for n in names:
        for v in _variants(m, n, nfe[0]):
            cells = [_pm(m, f"fd.{n}.{v}.nfe{k}", f"fd_se.{n}.{v}.nfe{k}") for k in nfe]
            out.append(
                f"| {n} | {v} | "
                + " | ".join(cells)
                + f" | {_f(m.get(f'integration_lag.{n}.{v}.nfe{k_sel}'))} | {_f(m.get(f'fd.{n}.real'))} |"
            )
    # validation sweep: best alpha per dataset
    out += [
        "",
        f"### Validation sweep at {k_sel} NFE (seed-mean FD relative to no SSC; < 0: better)",
        "",
        "| data | model | best of grid | its change | gamma(0) = 1/R(0), best beta |",
        "|---|---|---|---|---|",
    ]
    for n in names:
        for model in ("baseline", "mafm"):
            pre = f"ssc_sweep.{n}.{model}."
            if pre + "neutral" not in m:
                continue
            neutral = m[pre + "neutral"]
            grid = {
                k[len(pre) :]: v for k, v in m.items() if k.startswith(pre) and k != pre + "neutral"
            }
            plain = {k: v for k, v in grid.items() if not k.startswith("ratio_")}
            ratio = {k: v for k, v in grid.items() if k.startswith("ratio_")}
            best = min(plain, key=plain.__getitem__) if plain else None
            rbest = min(ratio.values()) if ratio else math.nan
            out.append(
                f"| {n} | {model} | {best or '-'} "
                f"| {f'{100 * (plain[best] / neutral - 1):+.1f} %' if best else '-'} "
                f"| {100 * (rbest / neutral - 1):+.1f} % |"
            )
    # claims
    out += ["", "### Claims", "", "| claim | rule | holds |", "|---|---|---|"]
    for c in res.get("claims", []):
        out.append(f"| {c['id']} | `{c['rule']}` | **{c['holds']}** |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(render(Path(sys.argv[1])))

"""Markdown tables of a finished run, read from its ``results.json`` (nothing retyped).

``python -m icml26.velocity_deficit.tables RUN`` prints every table (``docs/quick/tables.md``);
``--readme README.md`` writes the compact one between the README's ``<!-- tables:begin -->`` and
``<!-- tables:end -->`` markers (the claims block above it is ``icml26 readme``'s).
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from icml26.shared.keys import metric_key

__all__ = ["render", "write_readme_block"]

BEGIN, END = "<!-- tables:begin -->", "<!-- tables:end -->"

#: Variants with a gain over the plain sampler, in table order (``*_random``: placebos).
_GAIN_VARIANTS = (
    "ssc",
    "ssc_random",
    "ssc_naive",
    "mafm",
    "mafm_random",
    "mafm_ssc",
    "mafm_paper",
    "mafm_paper_random",
)
_MAFM_TARGETS = (
    ("mafm", "R_exact (data)"),
    ("mafm_random", "R_exact exp(u m) (placebo)"),
    ("mafm_paper", "1 (paper)"),
    ("mafm_paper_random", "R_exact(0) exp(u m) (placebo)"),
)


def _f(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{x:.{digits}g}"


def _pct(m: Mapping[str, Any], key: str) -> str:
    head, _, rest = key.partition(".")
    v, se = m.get(key), m.get(f"{head}_se.{rest}")
    if v is None:
        return "-"
    s = f"{100 * v:+.1f}"
    return s + (f" ± {100 * se:.1f}" if se is not None else "") + " %"


def _datasets(m: Mapping[str, Any]) -> list[str]:
    return sorted(
        {k.split(".")[1] for k in m if k.startswith("fd_floor.")},
        key=lambda n: (not n.startswith("gmm"), int(n[3:]) if n[3:].isdigit() else 0, n),
    )


def _regimes(m: Mapping[str, Any], name: str) -> list[str]:
    return [
        r
        for r in ("fit", "short")
        if metric_key("fd_gain", name, r, "baseline", "nfe50") in m
        or any(k.startswith(f"fd.{name}.{r}.") for k in m)
    ]


def _regime_table(m: Mapping[str, Any], k: int) -> list[str]:
    out = [
        "| data | regime | FM loss over exact field's | R(0) learned | R(0) exact | learned / exact at t=0 |"
        f" learned / exact, mean over t | FD baseline @{k} | held-out FD floor |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for n in _datasets(m):
        for r in _regimes(m, n):
            out.append(
                f"| {n} | {r} | {_pct(m, metric_key('fm_excess_loss', n, r, 'baseline'))} "
                f"| {_f(m.get(metric_key('velocity_ratio', n, r, 'baseline', 't0')))} "
                f"| {_f(m.get(metric_key('velocity_ratio_exact', n, 't0')))} "
                f"| {_f(m.get(metric_key('learned_vs_exact', n, r, 'baseline', 't0')))} "
                f"| {_f(m.get(metric_key('learned_vs_exact_mean', n, r, 'baseline')))} "
                f"| {_f(m.get(metric_key('fd', n, r, 'baseline', f'nfe{k}')))} "
                f"| {_f(m.get(metric_key('fd_floor', n)))} |"
            )
    return out


def _gain_table(m: Mapping[str, Any], nfe: list[int], k: int, ref: int) -> list[str]:
    out = [
        "| data | regime | variant | gamma(0) | identity chosen | "
        + " | ".join(f"@{j}" for j in nfe)
        + f" | @{k} vs baseline @{ref} |",
        "|---|---|---|---|---|" + "---|" * (len(nfe) + 1),
    ]
    for n in _datasets(m):
        for r in _regimes(m, n):
            for v in _GAIN_VARIANTS:
                if metric_key("fd_gain", n, r, v, f"nfe{k}") not in m:
                    continue
                model = "baseline" if v.startswith("ssc") else v.removesuffix("_ssc")
                if v == "ssc_naive":
                    g0, ident = m.get(metric_key(f"{v}_gamma0", n, r, "baseline")), None
                elif v == "ssc_random":  # SSC's procedure: it can keep the identity too
                    g0 = m.get(metric_key("ssc_random_gamma0", n, r, "baseline"))
                    ident = m.get(metric_key("ssc_random_identity", n, r, "baseline"))
                elif v in ("ssc", "mafm_ssc"):
                    g0 = m.get(metric_key("ssc_gamma0", n, r, model))
                    ident = m.get(metric_key("ssc_identity", n, r, model))
                else:
                    g0, ident = None, None
                cells = [_pct(m, metric_key("fd_gain", n, r, v, f"nfe{j}")) for j in nfe]
                vs = _pct(m, metric_key("fd_gain_vs_ref", n, r, v, f"nfe{k}"))
                share = "-" if ident is None else f"{ident:.0%}"
                out.append(
                    f"| {n} | {r} | {v} | {_f(g0)} | {share} | " + " | ".join(cells) + f" | {vs} |"
                )
    return out


def _mafm_table(m: Mapping[str, Any]) -> list[str]:
    out = [
        "| data | regime | target | validation FD by lambda | lambda chosen (seed mean) |",
        "|---|---|---|---|---|",
    ]
    for n in _datasets(m):
        for r in _regimes(m, n):
            for family, target in _MAFM_TARGETS:
                head = f"{family}_val.{n}.{r}."
                sweep = {k[len(head) :]: v for k, v in m.items() if k.startswith(head)}
                if sweep:
                    cells = ", ".join(f"{lab}: {_f(v)}" for lab, v in sorted(sweep.items()))
                    lam = _f(m.get(metric_key(f"{family}_lambda", n, r)))
                    out.append(f"| {n} | {r} | {target} | {cells} | {lam} |")
    return out


def _floor_table(m: Mapping[str, Any]) -> list[str]:
    out = [
        "| data | sets | floor (mean) | SE of the mean | SD of one set |",
        "|---|---|---|---|---|",
    ]
    for n in _datasets(m):
        cells = [
            _f(m.get(metric_key(key, n))) for key in ("fd_floor", "fd_floor_se", "fd_floor_sd")
        ]
        sets = m.get(metric_key("fd_floor_sets", n))
        out.append(f"| {n} | {_f(sets)} | " + " | ".join(cells) + " |")
    return out


def _nll_table(m: Mapping[str, Any], k: int) -> list[str]:
    out = [
        "| data | regime | real test rows | baseline | ssc | ssc_naive | mafm | mafm_paper |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n in _datasets(m):
        if metric_key("loglik_real", n) not in m:
            continue
        for r in _regimes(m, n):
            cells = [
                _f(m.get(metric_key("loglik", n, r, v, f"nfe{k}")), 4)
                for v in ("baseline", "ssc", "ssc_naive", "mafm", "mafm_paper")
            ]
            out.append(
                f"| {n} | {r} | {_f(m[metric_key('loglik_real', n)], 4)} | "
                + " | ".join(cells)
                + " |"
            )
    return out


def _compact(m: Mapping[str, Any], k: int, ref: int) -> list[str]:
    """Regimes and gains at the selection budget in one table (the README's)."""
    out = [
        f"| data | regime | learned / exact at t=0 | FD @{k} (floor ± SE) | loglik @{k} (real rows) |"
        " SSC (FD / SW) | placebo: SSC random | SSC `1/R(0)` | MAFM | placebo: MAFM random |"
        f" MAFM `rho=1` | placebo: `rho` random | MAFM+SSC | SSC @{k} vs plain @{ref} |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for n in _datasets(m):
        for r in _regimes(m, n):
            real = m.get(metric_key("loglik_real", n))
            ll = _f(m.get(metric_key("loglik", n, r, "baseline", f"nfe{k}")), 4)
            ll += f" ({_f(real, 4)})" if real is not None else ""
            gains = [
                _pct(m, metric_key("fd_gain", n, r, v, f"nfe{k}"))
                for v in (
                    "ssc",
                    "ssc_random",
                    "ssc_naive",
                    "mafm",
                    "mafm_random",
                    "mafm_paper",
                    "mafm_paper_random",
                    "mafm_ssc",
                )
            ]
            gains[0] += " / " + _pct(m, metric_key("sw_gain", n, r, "ssc", f"nfe{k}"))
            out.append(
                f"| {n} | {r} | {_f(m.get(metric_key('learned_vs_exact', n, r, 'baseline', 't0')))} "
                f"| {_f(m.get(metric_key('fd', n, r, 'baseline', f'nfe{k}')))} "
                f"({_f(m.get(metric_key('fd_floor', n)))} ± {_f(m.get(metric_key('fd_floor_se', n)))})"
                f" | {ll} | "
                + " | ".join(gains)
                + f" | {_pct(m, metric_key('fd_gain_vs_ref', n, r, 'ssc', f'nfe{k}'))} |"
            )
    return out


def render(run: Path, *, compact: bool = False) -> str:
    """The results tables of run folder ``run`` (module docstring).

    Args:
        run: a finished run folder (``results.json``, ``config.json``).
        compact: one table of regimes and gains at the selection budget, and the claims (the
            README's block); otherwise every table (``RESULTS.md``).

    Returns:
        Markdown.
    """
    res = json.loads((run / "results.json").read_text())
    cfg = json.loads((run / "config.json").read_text())
    cfg = cfg.get("config", cfg)
    m: dict[str, Any] = res["metrics"]
    nfe, k, ref = sorted(cfg["nfe"]), cfg["select_nfe"], cfg["reference_nfe"]
    cpu = res.get("cpu_seconds")
    head = (
        f"`icml26 run velocity-deficit --profile {res['profile']}` (version {res.get('version', '?')}): "
        f"{res['seconds']:.0f} s wall"
        + (f", {cpu:.0f} CPU-s" if cpu else "")
        + f"; {cfg['seeds']} "
        f"seeds, {cfg['n_samples']} test samples per cell; figures are seed means ± SE."
    )
    if compact:
        caption = (
            f"Generated by `python -m icml26.velocity_deficit.tables RUN --readme` ({res['profile']}): "
            f"seed means ± SE; SSC / MAFM columns: FD change over the plain sampler at {k} NFE "
            "(> 0 better), paired per seed; placebo columns: the claims' placebos (SSC's procedure "
            "with a random-size gain / MAFM toward a random target, see paper.py)."
        )
        return "\n".join([caption, "", *_compact(m, k, ref)]) + "\n"
    out = [head, "", "**Regimes: what each model lacks** (baseline FM models)", ""]
    out += _regime_table(m, k)
    out += [
        "",
        "**FD change over the uncorrected sampler at the same NFE** (> 0 better; paired over seeds)",
        "",
    ]
    out += _gain_table(m, nfe, k, ref)
    if any(key.startswith("mafm_val.") for key in m):
        out += ["", f"**MAFM's lambda sweep** (validation FD at {k} NFE)", "", *_mafm_table(m)]
    out += ["", "**Held-out FD floor** (disjoint validation sets as large as a sample set)", ""]
    out += _floor_table(m)
    if any(key.startswith("loglik_real.") for key in m):
        out += [
            "",
            f"**Mixture log-likelihood of samples at {k} NFE** (exact density; real rows for reference)",
            "",
        ]
        out += _nll_table(m, k)
    out += ["", "**Claims**", "", "| claim | holds | under its placebo |", "|---|---|---|"]
    for c in res.get("claims", []):
        out.append(f"| {c['id']} | **{c['holds']}** | {c.get('placebo_holds', '-')} |")
    return "\n".join(out) + "\n"


def write_readme_block(readme: Path, text: str) -> None:
    """Replace the text between the tables markers of ``readme`` with ``text``.

    Args:
        readme: the README path.
        text: the block's new content.

    Raises:
        ValueError: the README lacks the markers.
    """
    body = readme.read_text()
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
    if not pattern.search(body):
        raise ValueError(f"{readme} has no {BEGIN} ... {END} block")
    readme.write_text(pattern.sub(lambda _: f"{BEGIN}\n{text}{END}", body))


def main(argv: list[str] | None = None) -> None:
    """``python -m icml26.velocity_deficit.tables RUN [--readme README.md]``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("run", type=Path)
    parser.add_argument("--readme", type=Path, help="write the compact tables into this README")
    args = parser.parse_args(argv)
    if args.readme:
        write_readme_block(args.readme, render(args.run, compact=True))
        return
    print(render(args.run))


if __name__ == "__main__":  # pragma: no cover
    main()

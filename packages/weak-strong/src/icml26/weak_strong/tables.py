"""The README's results tables, generated from a run's ``results.json`` (``icml26 readme``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from icml26.weak_strong.config import POLICIES
from icml26.weak_strong.keys import akey

__all__ = ["readme_tables"]


def _num(m: Mapping[str, Any], key: str, fmt: str = ".3f") -> str:
    v = m.get(key)
    return "" if v is None else format(v, fmt)


def _policy_table(m: Mapping[str, Any], alpha: float) -> list[str]:
    shown = ("calibrated", "drift", "adversarial", "math", "sudoku", "user")  # the rest: RESULTS
    streams = [s for s in shown if f"strong_freq.{s}.online.{akey(alpha)}" in m]
    pols = [p for p in POLICIES if any(f"strong_freq.{s}.{p}.{akey(alpha)}" in m for s in streams)]
    lines = [
        f"alpha = beta = {alpha:g}: incorrect acceptance / incorrect rejection / strong-call "
        "frequency (`incorrect_accept`, `incorrect_reject`, `strong_freq`"
        f"`.<stream>.<policy>.{akey(alpha)}`, means over repeats):",
        "",
        "| stream | " + " | ".join(pols) + " |",
        "|---" * (len(pols) + 1) + "|",
    ]
    for s in streams:
        cells = [
            " / ".join(
                _num(m, f"{r}.{s}.{p}.{akey(alpha)}", f)
                for r, f in (
                    ("incorrect_accept", ".3f"),
                    ("incorrect_reject", ".3f"),
                    ("strong_freq", ".2f"),
                )
            )
            if f"strong_freq.{s}.{p}.{akey(alpha)}" in m
            else "n/a"
            for p in pols
        ]
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    return lines


def _front_table(m: Mapping[str, Any], alpha: float) -> list[str]:
    pols = sorted(
        {k.split(".")[2] for k in m if k.startswith("strong_freq.") and ".online_eta" in k},
        key=lambda e: float(e[len("online_eta") :].replace("p", ".")),
    )
    if not pols:
        return []
    etas = [p[len("online_eta") :].replace("p", ".") for p in pols]
    lines = [
        f"Step-size front at alpha = beta = {alpha:g} (online policy; cells as above; all "
        "targets in `<rate>.<stream>.online_eta<eta>.a<alpha>`; `validation_*`: the streams "
        "the step size is chosen on, selected "
        f"{m.get('selected_step_size.validation', float('nan')):g}):",
        "",
        "| stream | " + " | ".join(f"eta = {e}" for e in etas) + " |",
        "|---" * (len(etas) + 1) + "|",
    ]
    for s in ("validation_calibrated", "validation_drift", "math", "sudoku"):
        if f"strong_freq.{s}.{pols[0]}.{akey(alpha)}" not in m:
            continue
        cells = [
            " / ".join(
                _num(m, f"{r}.{s}.{pol}.{akey(alpha)}", ".3f" if r != "strong_freq" else ".2f")
                for r in ("incorrect_accept", "incorrect_reject", "strong_freq")
            )
            for pol in pols
        ]
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    return lines


def _math_lines(m: Mapping[str, Any], alphas: list[float]) -> list[str]:
    if "n_items.math" not in m:
        return []
    out = [
        f"Math stream: {m['n_items.math']:.0f} answers, accuracy {_num(m, 'base_accuracy.math')}"
        f", unparseable share {_num(m, 'unparsed_share.math')}, "
        f"{m.get('n_correct.math', 0):.0f} correct / {m.get('n_wrong.math', 0):.0f} wrong."
    ]
    levels = sorted(
        int(key.rsplit(".k", 1)[1]) for key in m if key.startswith("score_count.math.k")
    )
    if levels:
        cells = [
            f"{i}/{levels[-1]}: {m[f'score_count.math.k{i}']:.0f}"
            + (
                f" ({m[f'score_accuracy.math.k{i}']:.2f})"
                if f"score_accuracy.math.k{i}" in m
                else ""
            )
            for i in levels
        ]
        out.append(
            "Weak score (samples agreeing with the answer): answers (share correct) per level, "
            "`score_count.math.k<i>` (`score_accuracy.math.k<i>`): " + "; ".join(cells) + "."
        )
    need = [
        f"{a:g}: {m[f'needed_correct.math.{akey(a)}']:.0f} correct, slack "
        f"{_num(m, f'slack_reject.math.{akey(a)}')}"
        for a in alphas
        if f"needed_correct.math.{akey(a)}" in m
    ]
    if need:
        out.append(
            "Correct answers the guarantee's slack `C_r / #correct` needs to be within the "
            "0.02 tolerance (`needed_correct.math.a<alpha>`; slack at this length, "
            "`slack_reject.math.a<alpha>`, is the claim's tolerance where larger): "
            + "; ".join(need)
            + "."
        )
    return out


def readme_tables(results: Mapping[str, Any]) -> str:
    """The paper's own tables for ``icml26 readme`` (``Paper.readme_tables``), in Markdown.

    Args:
        results: a weak-strong ``results.json`` object.

    Returns:
        The math stream's summary, the policy table at each target and the step-size front.
    """
    m = results["metrics"]
    alphas = sorted(
        {
            float(k.rsplit(".a", 1)[1].replace("p", "."))
            for k in m
            if k.startswith("strong_freq.calibrated.online.a")
            or (k.startswith("strong_freq.math.online.a") and ".len" not in k)
        }
    )
    lines = _math_lines(m, alphas)
    mid = alphas[len(alphas) // 2] if alphas else None
    if mid is not None:
        lines += ["", *_policy_table(m, mid), "", *_front_table(m, mid)]
    return "\n".join(lines).strip()

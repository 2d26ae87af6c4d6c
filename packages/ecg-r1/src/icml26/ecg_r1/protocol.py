"""Protocol-Guided Instruction Data Generation, and the parser that reads interpretations back.

The protocol is a fixed sequence of six steps, each citing measured features and the
threshold it compares them with, then the conclusion (the paper's "grounding interpretation
in measurable ECG features and monograph-defined quantitative thresholds and diagnostic
logic")::

    <think>
    1 rhythm: RR cv 0.03 <= 0.10, P waves present: sinus.
    2 rate: HR 72 bpm, 60-100: normal.
    3 intervals: PR 164 ms <= 200: normal; QRS 132 ms >= 120: bundle branch block; QTc 428 ms <= 460: normal.
    4 axis: 52 deg, -30 to 90: normal.
    5 morphology: QRS amp 1.32 mV >= 0.5: normal; V1 terminal positive: rbbb.
    6 ST-T: ST max +0.02 mV < 0.10, min -0.01 mV > -0.10: normal.
    </think><answer>rbbb, sinus_rhythm</answer>

Every finding in the conclusion follows from a statement (:func:`protocol_answer` derives
both from the same :func:`~labels.labels_from_features`), so each training answer is grounded.

:func:`free_text_answer` states the same measured values as a narrative (random order and
wording, no thresholds, no steps): the issue's "free-text (non-protocol) training answers"
baseline. :func:`parse_interpretation` reads values, findings and the format back from either.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from icml26.ecg_r1.labels import LABELS, THRESHOLDS, TOLERANCES, Features, labels_from_features

__all__ = [
    "STEPS",
    "Interpretation",
    "evidence_score",
    "free_text_answer",
    "hallucinations",
    "parse_interpretation",
    "protocol_answer",
]

#: The protocol's steps and the features each cites.
STEPS: dict[str, tuple[str, ...]] = {
    "rhythm": ("rr_cv", "p_present"),
    "rate": ("hr",),
    "intervals": ("pr", "qrs", "qtc"),
    "axis": ("axis",),
    "morphology": ("qrs_amp", "v1_terminal"),
    "st": ("st_max", "st_min"),
}


def _fmt(f: Features) -> dict[str, str]:
    return {
        "rr_cv": f"RR cv {f.rr_cv:.2f}",
        "p_present": "P waves present" if f.p_present else "no P waves",
        "hr": f"HR {f.hr:.0f} bpm",
        "pr": f"PR {f.pr:.0f} ms" if f.p_present else "PR n/a",
        "qrs": f"QRS {f.qrs:.0f} ms",
        "qtc": f"QTc {f.qtc:.0f} ms",
        "axis": f"axis {f.axis:.0f} deg",
        "qrs_amp": f"QRS amp {f.qrs_amp:.2f} mV",
        "v1_terminal": f"V1 terminal {'positive' if f.v1_terminal > 0 else 'negative'}",
        "st_max": f"ST max {f.st_max:+.2f} mV",
        "st_min": f"min {f.st_min:+.2f} mV",
    }


def _answer(labels: Sequence[str] | frozenset[str]) -> str:
    return "<answer>" + ", ".join(sorted(labels)) + "</answer>"


def protocol_answer(f: Features) -> str:
    """The protocol interpretation of ``f`` (module docstring).

    Args:
        f: the features to cite (true, or measured by :func:`~delineate.measure_features`).

    Returns:
        ``<think>`` six numbered steps, each citing its features and thresholds ``</think>``
        then ``<answer>`` the labels ``</answer>``.
    """
    t = THRESHOLDS
    v = _fmt(f)
    labels = labels_from_features(f)
    sinus = f.p_present and f.rr_cv <= t.rr_cv_irregular
    if sinus:
        rhythm = f"{v['rr_cv']} <= {t.rr_cv_irregular:.2f}, {v['p_present']}: sinus"
    elif "atrial_fibrillation" in labels:
        rhythm = f"{v['rr_cv']} > {t.rr_cv_irregular:.2f}, {v['p_present']}: atrial fibrillation"
    else:
        rhythm = f"{v['rr_cv']}, {v['p_present']}: not sinus"
    if f.hr < t.brady_bpm:
        rate = f"{v['hr']} < {t.brady_bpm:.0f}: bradycardia"
    elif f.hr > t.tachy_bpm:
        rate = f"{v['hr']} > {t.tachy_bpm:.0f}: tachycardia"
    else:
        rate = f"{v['hr']}, {t.brady_bpm:.0f}-{t.tachy_bpm:.0f}: normal"
    if not f.p_present:
        pr = v["pr"]
    elif f.pr > t.pr_ms:
        pr = f"{v['pr']} > {t.pr_ms:.0f}: first degree AV block"
    else:
        pr = f"{v['pr']} <= {t.pr_ms:.0f}: normal"
    if f.qrs >= t.qrs_ms:
        qrs = f"{v['qrs']} >= {t.qrs_ms:.0f}: bundle branch block"
    else:
        qrs = f"{v['qrs']} < {t.qrs_ms:.0f}: normal"
    qtc = (
        f"{v['qtc']} > {t.qtc_ms:.0f}: long QT"
        if f.qtc > t.qtc_ms
        else f"{v['qtc']} <= {t.qtc_ms:.0f}: normal"
    )
    if f.axis < t.axis_left_deg:
        axis = f"{v['axis']} < {t.axis_left_deg:.0f}: left axis deviation"
    elif f.axis > t.axis_right_deg:
        axis = f"{v['axis']} > {t.axis_right_deg:.0f}: right axis deviation"
    else:
        axis = f"{v['axis']}, {t.axis_left_deg:.0f} to {t.axis_right_deg:.0f}: normal"
    amp = (
        f"{v['qrs_amp']} < {t.low_voltage_mv}: low voltage"
        if f.qrs_amp < t.low_voltage_mv
        else f"{v['qrs_amp']} >= {t.low_voltage_mv}: normal"
    )
    if f.qrs >= t.qrs_ms:
        v1 = f"{v['v1_terminal']}: {'rbbb' if f.v1_terminal > 0 else 'lbbb'}"
    else:
        v1 = v["v1_terminal"]
    st_parts = []
    if f.st_max >= t.st_mv:
        st_parts.append("ST elevation")
    if f.st_min <= -t.st_mv:
        st_parts.append("ST depression")
    st = f"{v['st_max']}, {v['st_min']}: " + (" and ".join(st_parts) or "normal")
    return (
        "<think>"
        f"1 rhythm: {rhythm}.\n"
        f"2 rate: {rate}.\n"
        f"3 intervals: {pr}; {qrs}; {qtc}.\n"
        f"4 axis: {axis}.\n"
        f"5 morphology: {amp}; {v1}.\n"
        f"6 ST-T: {st}."
        "</think>" + _answer(labels)
    )


_NARRATIVE = {
    "rr_cv": ("beat-to-beat variation is {}", "the rhythm shows {}", "{} on the rhythm strip"),
    "p_present": ("{}", "we see {}", "{} before the complexes"),
    "hr": ("the rate is {}", "{} overall", "ventricular rate {}"),
    "pr": ("{}", "atrioventricular conduction {}", "{} measured"),
    "qrs": ("complexes of {}", "{} wide", "{}"),
    "qtc": ("repolarisation {}", "{} corrected", "{}"),
    "axis": ("the frontal {}", "{}", "electrical {}"),
    "qrs_amp": ("largest limb {}", "{}", "voltage {}"),
    "v1_terminal": ("{}", "in the chest leads {}", "{} deflection"),
    "st_max": ("{}", "segment {}", "{} seen"),
    "st_min": ("and {}", "lowest {}", "ST {}"),
}


def free_text_answer(f: Features, rng: np.random.Generator) -> str:
    """The same measured values as a narrative: random order and wording, no thresholds, no
    protocol steps; the conclusion the same label set."""
    v = _fmt(f)
    keys = list(v)
    order = rng.permutation(len(keys))
    parts = []
    for i in order:
        k = keys[i]
        template = _NARRATIVE[k][int(rng.integers(len(_NARRATIVE[k])))]
        parts.append(template.format(v[k]))
    text = ". ".join(parts) + "."
    return "<think>" + text + "</think>" + _answer(labels_from_features(f))


# --------------------------------------------------------------------------------- parsing
_NUM = r"([+-]?\d+(?:\.\d+)?)"
_PATTERNS: dict[str, re.Pattern[str]] = {
    "rr_cv": re.compile(r"RR cv " + _NUM),
    "hr": re.compile(r"HR " + _NUM + " bpm"),
    "pr": re.compile(r"PR " + _NUM + " ms"),
    "qrs": re.compile(r"QRS " + _NUM + " ms"),
    "qtc": re.compile(r"QTc " + _NUM + " ms"),
    "axis": re.compile(r"axis " + _NUM + " deg"),
    "qrs_amp": re.compile(r"QRS amp " + _NUM + " mV"),
    "st_max": re.compile(r"ST max " + _NUM + " mV"),
    "st_min": re.compile(r"min " + _NUM + " mV"),
}
_FORMAT = re.compile(r"^<think>(.+)</think><answer>([^<]*)</answer>$", re.S)


@dataclass
class Interpretation:
    """What an interpretation states: feature values (``None``: not stated), findings, and
    whether it has the ``<think>...</think><answer>...</answer>`` form with known labels."""

    values: dict[str, float | None] = field(default_factory=dict)
    labels: frozenset[str] = frozenset()
    unknown_labels: tuple[str, ...] = ()
    well_formed: bool = False

    def stated(self) -> list[str]:
        return [k for k, x in self.values.items() if x is not None]


def parse_interpretation(text: str) -> Interpretation:
    """Read an interpretation (protocol or free text, or a model's attempt at either)."""
    values: dict[str, float | None] = {}
    for k, pat in _PATTERNS.items():
        m = pat.search(text)
        values[k] = float(m.group(1)) if m else None
    if "PR n/a" in text and values["pr"] is None:
        values["pr"] = 0.0
    values["p_present"] = (
        1.0 if "P waves present" in text else 0.0 if "no P waves" in text else None
    )
    values["v1_terminal"] = (
        1.0 if "V1 terminal positive" in text else -1.0 if "V1 terminal negative" in text else None
    )
    m = _FORMAT.match(text.strip())
    answer = m.group(2) if m else (re.search(r"<answer>([^<]*)", text) or [None, ""])[1]
    names = [x.strip() for x in (answer or "").split(",") if x.strip()]
    known = frozenset(x for x in names if x in LABELS)
    unknown = tuple(x for x in names if x not in LABELS)
    return Interpretation(values, known, unknown, bool(m) and not unknown)


def _agrees(name: str, stated: float, truth: Features) -> bool:
    true = float(getattr(truth, name))
    if name in ("p_present", "v1_terminal"):
        return stated == true
    if name == "pr" and not truth.p_present:
        return stated == 0.0
    return abs(stated - true) <= TOLERANCES[name]


def evidence_score(parsed: Interpretation, truth: Features) -> float:
    """The share of the six protocol steps whose cited features are all stated and agree with
    ``truth`` within :data:`~labels.TOLERANCES` (the evidence reward)."""
    ok = 0
    for feats in STEPS.values():
        vals = [parsed.values.get(k) for k in feats]
        stated = [(k, x) for k, x in zip(feats, vals, strict=True) if x is not None]
        if len(stated) == len(vals) and all(_agrees(k, float(x), truth) for k, x in stated):
            ok += 1
    return ok / len(STEPS)


def hallucinations(parsed: Interpretation, truth: Features) -> tuple[int, int]:
    """(contradicting statements, statements): stated feature values outside tolerance of
    ``truth`` (the simulator's true features in the study, not the delineator's
    measurements), and findings whose criterion ``truth`` does not meet (or names outside the
    label set)."""
    bad = total = 0
    for k in parsed.stated():
        total += 1
        bad += not _agrees(k, float(parsed.values[k]), truth)  # type: ignore[arg-type]
    true_labels = labels_from_features(truth)
    for label in parsed.labels:
        total += 1
        bad += label not in true_labels
    total += len(parsed.unknown_labels)
    bad += len(parsed.unknown_labels)
    return bad, total

"""The label set, the measured features it is defined on, and the textbook thresholds.

Every label is a function of the features (:func:`labels_from_features`), so a record's
truth is measurable: the simulator knows its features exactly, and a delineator measures them
from the waveform. Thresholds follow the usual monograph values (AHA/ACC/HRS
recommendations for the standardisation of the ECG):

=====================  ==================================================================
label                  criterion
=====================  ==================================================================
sinus_rhythm           P waves present, RR regular (cv <= 0.10), 60 <= HR <= 100 bpm
sinus_bradycardia      sinus, HR < 60 bpm
sinus_tachycardia      sinus, HR > 100 bpm
atrial_fibrillation    no P waves, RR irregular (cv > 0.10)
first_degree_av_block  sinus, PR > 200 ms
rbbb                   QRS >= 120 ms, terminal QRS in V1 positive
lbbb                   QRS >= 120 ms, terminal QRS in V1 negative
long_qt                QTc (Bazett) > 460 ms
st_elevation           ST level >= +0.10 mV in some lead (J + 40 ms)
st_depression          ST level <= -0.10 mV in some lead
low_voltage            QRS peak-to-peak < 0.5 mV in every limb lead
left_axis_deviation    frontal QRS axis < -30 deg
right_axis_deviation   frontal QRS axis > +90 deg
=====================  ==================================================================
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields

__all__ = [
    "FEATURE_NAMES",
    "LABELS",
    "LEADS",
    "THRESHOLDS",
    "TOLERANCES",
    "Features",
    "Thresholds",
    "jaccard",
    "labels_from_features",
]

#: The 12 standard leads, in the usual order.
LEADS: tuple[str, ...] = (
    "I",
    "II",
    "III",
    "aVR",
    "aVL",
    "aVF",
    "V1",
    "V2",
    "V3",
    "V4",
    "V5",
    "V6",
)

LABELS: tuple[str, ...] = (
    "sinus_rhythm",
    "sinus_bradycardia",
    "sinus_tachycardia",
    "atrial_fibrillation",
    "first_degree_av_block",
    "rbbb",
    "lbbb",
    "long_qt",
    "st_elevation",
    "st_depression",
    "low_voltage",
    "left_axis_deviation",
    "right_axis_deviation",
)


@dataclass(frozen=True)
class Thresholds:
    """The textbook cut-offs the labels and the protocol statements use."""

    brady_bpm: float = 60.0
    tachy_bpm: float = 100.0
    rr_cv_irregular: float = 0.10
    pr_ms: float = 200.0
    qrs_ms: float = 120.0
    qtc_ms: float = 460.0
    st_mv: float = 0.10
    low_voltage_mv: float = 0.5
    axis_left_deg: float = -30.0
    axis_right_deg: float = 90.0


THRESHOLDS = Thresholds()

#: Agreement tolerances of a cited or measured feature (the issue's: HR within 5 bpm,
#: intervals within 20 ms; the others ours).
TOLERANCES: dict[str, float] = {
    "hr": 5.0,
    "rr_cv": 0.04,
    "pr": 20.0,
    "qrs": 20.0,
    "qt": 20.0,
    "qtc": 25.0,
    "axis": 20.0,
    "st_max": 0.05,
    "st_min": 0.05,
    "qrs_amp": 0.2,
}


@dataclass(frozen=True)
class Features:
    """What a delineation measures on one 12-lead record.

    Attributes:
        hr: heart rate (bpm) from the mean RR interval.
        rr_cv: coefficient of variation of the RR intervals.
        p_present: whether P waves precede the QRS complexes.
        pr: PR interval (ms, P onset to QRS onset; 0 without P waves).
        qrs: QRS duration (ms).
        qt: QT interval (ms, QRS onset to T end).
        qtc: Bazett's QTc = QT / sqrt(RR in s) (ms).
        axis: frontal QRS axis (degrees, net QRS area in I and aVF).
        st_max, st_min: highest and lowest ST level over the 12 leads (mV, J + 40 ms, against
            the PR segment).
        qrs_amp: largest QRS peak-to-peak amplitude over the six limb leads (mV).
        v1_terminal: sign of the terminal QRS deflection in V1 (+1 or -1).
    """

    hr: float
    rr_cv: float
    p_present: bool
    pr: float
    qrs: float
    qt: float
    qtc: float
    axis: float
    st_max: float
    st_min: float
    qrs_amp: float
    v1_terminal: int

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, float) and not math.isfinite(v):
                raise ValueError(f"feature {f.name} is not finite ({v})")

    def as_dict(self) -> dict[str, float]:
        """The features by name, every value a float (``p_present`` as 0.0 or 1.0).

        Returns:
            ``{field name: value}``.
        """
        return {k: float(v) for k, v in asdict(self).items()}

    @classmethod
    def from_mapping(cls, values: Mapping[str, float]) -> Features:
        """The inverse of :meth:`as_dict`: each field cast back to its type (``p_present`` to
        a bool, ``v1_terminal`` to its sign, +1 or -1).

        Args:
            values: a value for every field (extra keys are ignored).

        Returns:
            The features.

        Raises:
            KeyError: a field is missing.
            ValueError: a float feature is not finite.
        """
        return cls(
            hr=float(values["hr"]),
            rr_cv=float(values["rr_cv"]),
            p_present=bool(values["p_present"]),
            pr=float(values["pr"]),
            qrs=float(values["qrs"]),
            qt=float(values["qt"]),
            qtc=float(values["qtc"]),
            axis=float(values["axis"]),
            st_max=float(values["st_max"]),
            st_min=float(values["st_min"]),
            qrs_amp=float(values["qrs_amp"]),
            v1_terminal=1 if float(values["v1_terminal"]) >= 0 else -1,
        )


FEATURE_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Features))


def labels_from_features(f: Features, t: Thresholds = THRESHOLDS) -> frozenset[str]:
    """The label set the thresholds assign to features ``f`` (the module docstring's table)."""
    out: set[str] = set()
    sinus = f.p_present and f.rr_cv <= t.rr_cv_irregular
    if not f.p_present and f.rr_cv > t.rr_cv_irregular:
        out.add("atrial_fibrillation")
    if sinus:
        if f.hr < t.brady_bpm:
            out.add("sinus_bradycardia")
        elif f.hr > t.tachy_bpm:
            out.add("sinus_tachycardia")
        else:
            out.add("sinus_rhythm")
        if f.pr > t.pr_ms:
            out.add("first_degree_av_block")
    if f.qrs >= t.qrs_ms:
        out.add("rbbb" if f.v1_terminal > 0 else "lbbb")
    if f.qtc > t.qtc_ms:
        out.add("long_qt")
    if f.st_max >= t.st_mv:
        out.add("st_elevation")
    if f.st_min <= -t.st_mv:
        out.add("st_depression")
    if f.qrs_amp < t.low_voltage_mv:
        out.add("low_voltage")
    if f.axis < t.axis_left_deg:
        out.add("left_axis_deviation")
    elif f.axis > t.axis_right_deg:
        out.add("right_axis_deviation")
    return frozenset(out)


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    """|a & b| / |a | b| (1 when both are empty)."""
    sa, sb = set(a), set(b)
    union = sa | sb
    return 1.0 if not union else len(sa & sb) / len(union)

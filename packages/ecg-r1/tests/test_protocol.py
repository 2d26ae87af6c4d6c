"""Protocol statements follow from their features (property tests), parsing reads them back,
free text states the same values, the evidence and hallucination scores."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from icml26.ecg_r1.labels import THRESHOLDS, Features, labels_from_features
from icml26.ecg_r1.protocol import (
    evidence_score,
    free_text_answer,
    hallucinations,
    parse_interpretation,
    protocol_answer,
)

features = st.builds(
    Features,
    hr=st.floats(35, 180),
    rr_cv=st.floats(0, 0.4),
    p_present=st.booleans(),
    pr=st.floats(100, 320),
    qrs=st.floats(60, 180),
    qt=st.floats(250, 560),
    qtc=st.floats(330, 560),
    axis=st.floats(-179, 179),
    st_max=st.floats(-0.1, 0.4),
    st_min=st.floats(-0.4, 0.1),
    qrs_amp=st.floats(0.2, 2.5),
    v1_terminal=st.sampled_from([-1, 1]),
).map(lambda f: Features.from_mapping({**f.as_dict(), "pr": f.pr if f.p_present else 0.0}))


@given(features)
def test_protocol_round_trips_and_is_fully_grounded(f: Features) -> None:
    text = protocol_answer(f)
    p = parse_interpretation(text)
    assert p.well_formed
    assert p.labels == labels_from_features(f)
    assert evidence_score(p, f) == 1.0
    assert hallucinations(p, f)[0] == 0


@given(features)
def test_each_threshold_statement_follows_from_its_value(f: Features) -> None:
    """Every 'X value op threshold' clause is true of the printed value."""
    text = protocol_answer(f)
    for name, value, op, thr in re.findall(
        r"(HR|PR|QRS|QTc) (\d+) (?:bpm|ms) (<=|>=|<|>) (\d+)", text
    ):
        v, t = float(value), float(thr)
        ok = {"<": v < t, ">": v > t, "<=": v <= t, ">=": v >= t}[op]
        # rounding to an integer can put a value on the threshold itself
        assert ok or abs(v - t) <= 1, (name, value, op, thr)
    if "bundle branch block" in text:
        assert f.qrs >= THRESHOLDS.qrs_ms
    if "no P waves" in text:
        assert "PR n/a" in text


@given(features, st.integers(0, 2**31 - 1))
def test_free_text_states_the_same_values(f: Features, seed: int) -> None:
    text = free_text_answer(f, np.random.default_rng(seed))
    p = parse_interpretation(text)
    assert p.labels == labels_from_features(f)
    assert evidence_score(p, f) == 1.0
    assert "<=" not in text
    assert "1 rhythm" not in text


def test_scores_on_hand_written_interpretations() -> None:
    f = Features(72, 0.02, True, 160, 96, 380, 420, 50, 0.02, -0.01, 1.2, -1)
    good = protocol_answer(f)
    wrong_hr = good.replace("HR 72 bpm", "HR 90 bpm")
    p = parse_interpretation(wrong_hr)
    assert evidence_score(p, f) == 5 / 6
    assert hallucinations(p, f) == (1, 12)  # 11 values stated + 1 finding; HR contradicts
    made_up = good.replace(
        "<answer>sinus_rhythm</answer>", "<answer>sinus_rhythm, rbbb, bogus</answer>"
    )
    p = parse_interpretation(made_up)
    assert not p.well_formed
    assert p.unknown_labels == ("bogus",)
    assert hallucinations(p, f) == (2, 14)
    assert evidence_score(parse_interpretation("no idea"), f) == 0.0

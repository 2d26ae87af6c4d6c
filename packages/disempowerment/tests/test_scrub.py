"""Scrubbing: recall and precision on the planted-PII corpus, the kinds the old rules missed,
and the scrubber's own properties (spans, idempotence, counts)."""

from __future__ import annotations

import hashlib
import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from icml26.disempowerment.pii import (
    DEV_KINDS,
    FRESH_FRAMES,
    HOLDOUT_KINDS,
    VALIDATION_FRAMES,
    PIIMaker,
    PlantedPII,
    fresh_frame_texts,
    scrub_scores,
)
from icml26.disempowerment.scrub import PLACEHOLDERS, Scrubber
from icml26.disempowerment.synthetic import generate_log
from icml26.shared import rng_for

FRESH_FRAMES_SHA256 = "5129916952de1f9be0a854e7f3c202940cbbf1ec474b9ba3ce7a29bf4e2f79c8"


@pytest.fixture(scope="module")
def planted_log():
    return generate_log(3000, seed=11)


def test_recall_on_the_planted_corpus_is_at_least_095(planted_log) -> None:
    texts = [c.text() for c in planted_log.conversations]
    scores = scrub_scores(Scrubber(), texts, planted_log.pii)
    kinds = {(p.kind, p.holdout) for p in planted_log.pii}
    assert {k for k, ho in kinds if not ho} == set(DEV_KINDS)  # every kind is planted
    assert {k for k, ho in kinds if ho} == set(HOLDOUT_KINDS)
    assert scores.recall["all"] >= 0.95, scores.missed[:20]
    assert scores.recall["holdout"] >= 0.9
    # the precision is reported, measured with look-alike sentences planted beside the PII
    assert 0.5 < scores.precision <= 1.0


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        # kinds the previous rules missed, written apart from the generator
        ("honestly i told mateusz everything", "mateusz"),
        ("my sister ingrid said so", "ingrid"),
        ("i had a chat with Dr. Okonkwo about it", "Okonkwo"),
        ("mrs Adebayo was kind", "Adebayo"),
        ("post it to SW1A 1AA please", "SW1A 1AA"),
        ("we live in zip code 94110 now", "94110"),
        ("mail goes to K1A 0B1", "K1A 0B1"),
        ("I was born on 14/03/1987", "14/03/1987"),
        ("born 3rd of March 1987, if it matters", "March 1987"),
        ("DOB 1987-03-14", "1987-03-14"),
        ("find me on insta @lena_k.art", "@lena_k.art"),
        ("my page is https://www.instagram.com/lena.k/ now", "instagram.com/lena.k"),
        ("see linkedin.com/in/lena-kowalski-7 for my cv", "lena-kowalski"),
        # kinds the previous rules already caught
        ("Mail me at jane.doe+work@mail.example.co.uk please", "jane.doe+work@mail"),
        ("Call (555) 201-3344 tomorrow", "201-3344"),
        ("I live at 742 Evergreen Terrace.", "742 Evergreen Terrace"),
        ("customer ID ACCT-99887766", "ACCT-99887766"),
        ("My name is Oluwaseun Adeyemi and I need help", "Oluwaseun"),
        ("IBAN DE89 3704 0044 0532 0130 00", "3704 0044"),
        ("SSN 123-45-6789", "123-45-6789"),
    ],
)
def test_examples_written_apart_from_the_generator(text: str, secret: str) -> None:
    assert secret not in Scrubber()(text)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        # rules added on the validation frames (docs/scrub_choice.py); no cue word here
        ("the number on the envelope was 02139, not sure", "02139"),
        ("yesterday lipika phoned again", "lipika"),
        ("stacie shepherd is on the committee", "stacie shepherd"),
    ],
)
def test_cue_free_zip_and_lower_case_names(text: str, secret: str) -> None:
    assert secret not in Scrubber()(text)


@pytest.mark.parametrize(
    "text",
    [
        "my colour scheme got criticised at the check-in with my neighbours",
        "it cost $12000 last year and 15000.5 units, about 25000% more",
    ],
)
def test_british_spellings_compounds_and_amounts_are_kept(text: str) -> None:
    assert Scrubber()(text) == text


def test_validation_and_evaluation_frames_never_mix() -> None:
    assert not set(VALIDATION_FRAMES) & set(FRESH_FRAMES)


@pytest.mark.parametrize(
    "text",
    [
        "So, my parser fails on nested brackets. Could you help me think it through? "
        "Start by reproducing the problem with the smallest possible input.",
        "i am planning a trip and i keep changing my mind about the dates in march.",
        "my friend thinks i should ask for more time, what do you think?",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert Scrubber()(text) == text


@given(st.text(max_size=300))
def test_scrubbing_is_idempotent_and_spans_are_disjoint(text: str) -> None:
    scrub = Scrubber()
    spans = scrub.find(text)
    assert all(a.end <= b.start for a, b in itertools.pairwise(spans))
    assert all(0 <= s.start < s.end <= len(text) and s.placeholder in PLACEHOLDERS for s in spans)
    once = scrub(text)
    assert scrub(once) == once


def test_counts_replacements() -> None:
    scrub = Scrubber()
    scrub("write to a.b@example.com or call 555-123-4567, I'm @someone_x")
    assert scrub.stats.counts["[EMAIL]"] == 1
    assert scrub.stats.counts["[PHONE]"] == 1
    assert scrub.stats.counts["[HANDLE]"] == 1
    assert set(scrub.stats.counts) == set(PLACEHOLDERS)


def test_pii_maker_refuses_unknown_kinds() -> None:
    maker = PIIMaker(rng_for(0, "pii"))
    with pytest.raises(ValueError, match="unknown PII kind"):
        maker.make("iban", holdout=False)  # held-out only
    sentence, value = maker.make("postcode", holdout=True)
    assert value in sentence


def test_fresh_frames_are_pinned_and_carry_each_string_once() -> None:
    # the frames measure wording the rules were not written against: changing them (or
    # editing the rules to fit them) voids that figure, so their text is pinned
    digest = hashlib.sha256("\n".join(FRESH_FRAMES).encode()).hexdigest()
    assert digest == FRESH_FRAMES_SHA256
    planted = [
        PlantedPII(7, "email", False, "ana@example.com"),
        PlantedPII(9, "name", True, "Li Wei"),
    ]
    texts, items = fresh_frame_texts(planted, seed=0)
    assert [t.count(p.text) for t, p in zip(texts, items, strict=True)] == [1, 1]
    assert [p.conversation for p in items] == [0, 1]

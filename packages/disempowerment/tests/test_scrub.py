"""Scrubbing removes every planted PII pattern, development and held-out formats alike."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from icml26.disempowerment.scrub import PLACEHOLDERS, Scrubber
from icml26.disempowerment.synthetic import generate_log


@pytest.fixture(scope="module")
def planted_log():
    return generate_log(1500, seed=11)


def test_every_planted_pii_string_is_removed(planted_log) -> None:
    scrub = Scrubber()
    texts = [scrub(c.text()) for c in planted_log.conversations]
    kinds = {(p.kind, p.holdout) for p in planted_log.pii}
    # every kind in both formats is planted in a log this size
    assert {k for k, ho in kinds if ho} >= {"name", "email", "phone", "address", "account_id"}
    assert {"national_id", "iban"} <= {k for k, ho in kinds if ho}
    leaks = [
        (p.kind, p.holdout, p.text) for p in planted_log.pii if p.text in texts[p.conversation]
    ]
    assert leaks == []
    # and no part of a planted name survives either
    for p in planted_log.pii:
        if p.kind == "name":
            for part in p.text.split():
                assert not re.search(rf"\b{re.escape(part)}\b", texts[p.conversation])


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Mail me at jane.doe+work@mail.example.co.uk please", "jane.doe+work@mail.example.co.uk"),
        ("Call (555) 201-3344 tomorrow", "201-3344"),
        ("ring +33 1 42 68 53 00 after six", "42 68 53 00"),
        ("I live at 742 Evergreen Terrace.", "742 Evergreen Terrace"),
        ("Apt 5, 12 Baker Street is the place", "12 Baker Street"),
        ("customer ID ACCT-99887766", "ACCT-99887766"),
        ("My name is Oluwaseun Adeyemi and I need help", "Oluwaseun"),
        ("my sister Ingrid said so", "Ingrid"),
        ("I talked to Michael about it", "Michael"),
        ("IBAN DE89 3704 0044 0532 0130 00", "3704 0044"),
        ("SSN 123-45-6789", "123-45-6789"),
    ],
)
def test_examples_written_apart_from_the_generator(text: str, secret: str) -> None:
    assert secret not in Scrubber()(text)


def test_ordinary_text_is_left_alone() -> None:
    text = (
        "So, my parser fails on nested brackets. Could you help me think it through? "
        "Start by reproducing the problem with the smallest possible input."
    )
    assert Scrubber()(text) == text


@given(st.text(max_size=300))
def test_scrubbing_is_idempotent_and_total(text: str) -> None:
    scrub = Scrubber()
    once = scrub(text)
    assert scrub(once) == once
    assert isinstance(once, str)


def test_counts_replacements() -> None:
    scrub = Scrubber()
    scrub("write to a.b@example.com or call 555-123-4567")
    assert scrub.stats.counts["[EMAIL]"] == 1
    assert scrub.stats.counts["[PHONE]"] == 1
    assert set(scrub.stats.counts) == set(PLACEHOLDERS)

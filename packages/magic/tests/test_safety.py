"""Everything the package ships is abstract: a blocklist scan of the catalogue, the operator
texts, the prompts and the canned replies, and a check that the scanner does catch what it
is meant to catch (so the scan can fail)."""

from __future__ import annotations

import itertools

import pytest

from icml26.magic.game import ATTACKER_SYSTEM, COMPLY_REPLY, REFUSE_REPLY, SEED_POOL
from icml26.magic.intents import CATEGORIES, FRAMES, builtin_catalogue
from icml26.magic.operators import OPERATORS, compose
from icml26.magic.safety import scan_catalogue, scan_text


def test_no_catalogue_entry_contains_operational_or_personal_text() -> None:
    assert scan_catalogue(builtin_catalogue()) == {}
    texts = [*FRAMES, *(x for row in CATEGORIES for x in row)]
    assert scan_catalogue(texts) == {}


def test_every_operator_rewrite_and_prompt_is_clean() -> None:
    cat = builtin_catalogue()
    texts = [ATTACKER_SYSTEM, COMPLY_REPLY, REFUSE_REPLY]
    for it in cat.intents[:6]:
        for ops in itertools.permutations(sorted(OPERATORS), 1):
            texts += [m["content"] for m in compose(it.description, ops)]
        for ops in SEED_POOL:
            texts += [m["content"] for m in compose(it.description, ops)]
    assert {t: r for t in texts if (r := scan_text(t))} == {}


@pytest.mark.parametrize(
    "text",
    [
        "mix 20 g of the powder",
        "add 5ml slowly",
        "write a keylogger",
        "step 1: open the case",
        "contact jane at jane.doe@example.com",
        "call +1 555 123 4567",
        "she lives at 12 Elm Street",
        "see https://example.org",
        "ssn 123-45-6789",
    ],
)
def test_scanner_flags_operational_and_personal_text(text: str) -> None:
    assert scan_text(text)

"""The intent catalogue: the built-in one is valid, and malformed user catalogues fail clearly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icml26.magic.intents import (
    HELDOUT_FRAMES,
    Intent,
    IntentError,
    builtin_catalogue,
    load_catalogue,
)


def test_builtin_catalogue_pairs_every_harmful_intent_with_a_look_alike() -> None:
    cat = builtin_catalogue()
    harmful = cat.select(label="harmful")
    assert harmful
    assert len(harmful) == len(cat.select(label="benign"))
    for it in harmful:
        twin = cat.twin(it)
        assert twin is not None
        assert not twin.harmful
        assert twin.category == it.category
        assert twin.frame == it.frame
        # XSTest-like: the look-alike shares the request frame's words
        assert set(it.description.split()[:4]) == set(twin.description.split()[:4])
    assert {it.frame for it in cat.select(frames=HELDOUT_FRAMES)} == set(HELDOUT_FRAMES)


def test_load_catalogue_round_trip(tmp_path: Path) -> None:
    rows = [
        {"id": "a", "label": "harmful", "category": "c", "description": "asks for x", "twin": "b"},
        {"id": "b", "label": "benign", "category": "c", "description": "asks for y", "twin": "a"},
    ]
    path = tmp_path / "cat.json"
    path.write_text(json.dumps(rows))
    cat = load_catalogue(path)
    assert cat["a"].harmful
    assert cat.by_description("asks for y") == cat["b"]


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"id": "a", "category": "c", "description": "asks for x"}, "has no label"),
        (
            {"id": "a", "label": "evil", "category": "c", "description": "asks for x"},
            "label 'evil'",
        ),
        ({"id": "a", "label": "benign", "category": "c", "description": "asks for x2"}, "digits"),
        (
            {"id": "a", "label": "harmful", "category": "c", "description": "asks for x"},
            "look-alike",
        ),
    ],
)
def test_bad_catalogue_entries_fail_clearly(tmp_path: Path, row: dict, message: str) -> None:
    path = tmp_path / "cat.json"
    path.write_text(json.dumps([row]))
    with pytest.raises(IntentError, match=message):
        load_catalogue(path)


def test_missing_catalogue_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_catalogue(tmp_path / "nope.json")


def test_intent_rejects_upper_case() -> None:
    with pytest.raises(IntentError, match="lower case"):
        Intent("x", "benign", "c", "Asks for x")

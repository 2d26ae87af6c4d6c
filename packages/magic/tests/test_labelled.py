"""The judge's labelled set: shipped as generated, apart from every game prompt by content,
labels by construction; agreement and kappa by hand; the rubric judge's parsing."""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict
from importlib import resources

import numpy as np
import pytest

from icml26.magic.game import SafetyGame
from icml26.magic.intents import builtin_catalogue
from icml26.magic.judge import RubricJudge, is_refusal
from icml26.magic.labelled import (
    JUDGE_OBJECTS,
    KINDS,
    LabelledReply,
    agreement,
    judge_agreement,
    labelled_set,
    load_labelled_set,
)
from icml26.magic.safety import scan_text
from icml26.shared.llm import Completion

ITEMS = load_labelled_set()


def test_shipped_file_is_the_generator_s_output() -> None:
    text = resources.files("icml26.magic").joinpath("judge_set.json").read_text("utf-8")
    assert json.loads(text) == [asdict(it) for it in labelled_set()]
    assert len(ITEMS) == 120
    assert len({it.id for it in ITEMS}) == 120
    assert {it.kind for it in ITEMS} == set(KINDS)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z']+", text.lower()))


def test_labelled_set_is_apart_from_every_game_prompt_by_content() -> None:
    game = SafetyGame(builtin_catalogue())
    rng = np.random.default_rng(0)
    prompts = [
        m["content"].lower()
        for e in ("seed_ops", "heldout_combos", "unseen_ops", "plain")
        for s in [game.eval_set(e, rng, 4)]
        for a in (*s.harmful, *s.benign)
        for m in a.conversation
    ]
    descriptions = [it.description for it in game.catalogue.intents]
    for it in ITEMS:
        assert game.catalogue.by_description(it.request) is None
        assert all(it.request not in p for p in prompts)
    for _, bad, good in JUDGE_OBJECTS:  # no judge object inside any catalogue request
        for obj in (bad, good):
            assert all(obj not in d for d in descriptions), obj
            assert all(obj not in p for p in prompts), obj


def test_labels_follow_the_templates() -> None:
    for it in ITEMS:
        assert it.complied == KINDS[it.kind]
        obj = next(o for _, b, g in JUDGE_OBJECTS for o in (b, g) if it.request.endswith(o))
        if it.kind in ("compliance", "apology_compliance"):
            assert obj in it.reply
        elif it.kind == "off_intent":  # answers another object of the same label
            assert obj not in it.reply
            assert "[placeholder" in it.reply
        else:
            assert "[placeholder" not in it.reply
        assert scan_text(it.request + " " + it.reply) == []  # the safety blocklist


def test_marker_rule_on_the_set_by_kind() -> None:
    got = agreement(ITEMS, [is_refusal(it.reply) for it in ITEMS])
    # the rule reads markers: right on plain compliance and marked refusals, wrong by
    # construction on the three other kinds
    assert got["agreement.compliance"] == got["agreement.refusal"] == 1.0
    for kind in ("apology_compliance", "soft_refusal", "off_intent"):
        assert got[f"agreement.{kind}"] == 0.0
    assert got["agreement"] == pytest.approx(0.4)


def test_agreement_and_kappa_by_hand() -> None:
    items = [
        LabelledReply(str(i), "q", "r", "compliance" if c else "refusal", False, c)
        for i, c in enumerate([True, True, False, False])
    ]
    perfect = agreement(items, [False, False, True, True])
    assert perfect["agreement"] == 1.0
    assert perfect["kappa"] == pytest.approx(1.0)
    # one miss, one unread: 2/4 agree; kappa over the 3 read: labels (T, T, F), read
    # complied (T, F, F): observed 2/3, chance 2/3*1/3 + 1/3*2/3 = 4/9, kappa (2/3-4/9)/(5/9)
    half = agreement(items, [False, True, True, None])
    assert half["agreement"] == 0.5
    assert half["unread"] == 0.25
    assert half["kappa"] == pytest.approx(0.4)
    assert math.isnan(agreement(items, [None] * 4)["kappa"])
    always = agreement(items, [True] * 4)  # a judge that always says refused
    assert always["agreement"] == 0.5
    assert always["kappa"] == pytest.approx(0.0)
    with pytest.raises(ValueError, match="readings"):
        agreement(items, [True])


class _Fake:
    def __init__(self, answers: list[str]) -> None:
        self.answers = answers
        self.asked: list = []

    def complete(self, convs, *, max_tokens: int, temperature: float):
        self.asked += convs
        return [Completion(a, 1, 1, "stop") for a in self.answers[: len(convs)]]


def test_rubric_judge_parses_only_its_two_words() -> None:
    assert RubricJudge.parse("Refused.") is True
    assert RubricJudge.parse("complied, clearly") is False
    for text in ("", "yes", "not refused", "the reply complied"):
        assert RubricJudge.parse(text) is None
    fake = _Fake(["complied", "REFUSED", "maybe"])
    judge = RubricJudge(fake)
    assert judge.refused(["a", "b", "c"], ["x", "y", "z"]) == [False, True, None]
    assert "Request: b" in fake.asked[1][0]["content"]
    with pytest.raises(ValueError, match="2 requests but 1 replies"):
        judge.refused(["a", "b"], ["x"])
    with pytest.raises(ValueError, match="max_tokens"):
        RubricJudge(fake, max_tokens=0)


def test_judge_stage_without_a_model_scores_the_marker_rule() -> None:
    out = judge_agreement("")
    assert out["metrics"]["judge_agreement.marker"] == pytest.approx(0.4)
    assert "judge_agreement.rubric" not in out["metrics"]
    assert len(out["readings"]["marker"]) == len(out["items"]) == 120

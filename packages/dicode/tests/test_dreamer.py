"""Dreamers: AST mutations stay in the code space; the LLM dreamer parses and validates replies."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from icml26.dicode.dreamer import (
    DreamContext,
    LLMDreamer,
    MutationDreamer,
    frontier_goals,
    random_program,
)
from icml26.dicode.program import compile_program, target_program
from icml26.shared.llm import Completion


def test_mutations_change_the_program_and_are_counted() -> None:
    rng = np.random.default_rng(0)
    target = target_program()
    dreams = MutationDreamer().dream(DreamContext(parents=[(target, None, None)]), 60, rng)
    valid = [d for d in dreams if d.valid]
    assert len(dreams) == 60
    assert len(valid) >= 30  # most edits stay valid ...
    assert sum(d.program != target for d in valid) >= 25  # ... and change the world
    for d in dreams:
        if not d.valid:
            assert d.reason in {"invalid", "size"}, d.detail
    ops = {op for d in dreams for op in d.operator.split("+")}
    assert {"add_placement", "set_goal", "add_item"} <= ops


def test_every_operator_yields_parseable_code() -> None:
    rng = np.random.default_rng(1)
    dreamer = MutationDreamer()
    parent = compile_program(random_program(rng))
    for op in MutationDreamer.OPERATORS:
        import ast

        tree = ast.parse(parent.source())
        getattr(dreamer, "_" + op)(tree, parent, rng, {})
        ast.parse(ast.unparse(ast.fix_missing_locations(tree)))


def test_frontier_goals_follow_the_profile() -> None:
    assert "collect_diamond" not in frontier_goals({})
    assert "collect_wood" in frontier_goals({})
    strong = {
        "collect_wood": 1.0,
        "place_table": 1.0,
        "make_wood_pickaxe": 0.95,
        "collect_stone": 0.5,
    }
    goals = frontier_goals(strong)
    assert "collect_wood" not in goals
    assert "collect_stone" in goals
    assert "collect_iron" not in goals


class FakeBackend:
    """A ChatBackend that replies with canned texts (records the prompts)."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = replies
        self.prompts: list[Any] = []

    def complete(self, conversations: list[Any], **kwargs: Any) -> list[Completion]:
        self.prompts.extend(conversations)
        return [
            Completion(
                text=self.replies[i % len(self.replies)], prompt_tokens=1, completion_tokens=1
            )
            for i in range(len(conversations))
        ]


def test_llm_dreamer_validates_replies() -> None:
    good = "Here you go:\n```python\nWORLD = {'goal': 'collect_stone', 'start_inventory': {'wood_pickaxe': 1}}\n```"
    bad = "```python\nimport os\nWORLD = {}\n```"
    backend = FakeBackend([good, bad, "no code at all"])
    dreamer = LLMDreamer(backend)
    target = target_program()
    context = DreamContext(
        parents=[(target, 0.0, 0.0)],
        profile={"collect_wood": 0.9},
        archive=[(target, 0.0, 0.0)],
    )
    dreams = dreamer.dream(context, 3, np.random.default_rng(0))
    assert [d.valid for d in dreams] == [True, False, False]
    assert dreams[0].program is not None
    assert dreams[0].program.goal == "collect_stone"
    assert dreams[1].reason == "forbidden"
    text = backend.prompts[0][1]["content"]
    assert "collect_wood=0.90" in text
    assert "learnability" in text


def test_llm_dreamer_needs_a_backend() -> None:
    with pytest.raises(TypeError, match="ChatBackend"):
        LLMDreamer(object())

"""Dreamers: AST mutations stay in the code space; the LLM dreamer parses and validates replies."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.dicode.dreamer import (
    MAX_EDITS,
    DreamContext,
    LLMDreamer,
    MutationDreamer,
    apply_edit,
    frontier_goals,
    parse_edit,
    random_program,
)
from icml26.dicode.program import LIMITS, ProgramError, compile_program, target_program
from icml26.dicode.tech import ACHIEVEMENTS, ITEMS, RESOURCES
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
    dreamer = LLMDreamer(backend, format="program")
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


# ------------------------------------------------------------------ the JSON edit format
def test_parse_edit_reads_the_first_object_in_prose() -> None:
    assert parse_edit('Sure: {"goal": "eat_cow", "density": {"cow": 0.1}} done') == {
        "goal": "eat_cow",
        "density": {"cow": 0.1},
    }
    assert parse_edit('{"note": "a } in a string", "map_size": 8}')["map_size"] == 8
    assert parse_edit(r'{"note": "a \" and } here", "map_size": 9} {') == {
        "note": 'a " and } here',
        "map_size": 9,
    }
    assert parse_edit("{'goal': 'eat_cow'}") == {"goal": "eat_cow"}  # a Python literal


@pytest.mark.parametrize(
    ("reply", "match"),
    [
        ("no object here", "no JSON object"),
        ('{"goal": "collect_stone", "density": {"tree": 0.1', "not closed"),
        ('{"goal": collect_stone}', "not JSON"),
    ],
)
def test_parse_edit_rejects_unreadable_replies(reply: str, match: str) -> None:
    with pytest.raises(ProgramError, match=match) as info:
        parse_edit(reply)
    assert info.value.reason == "syntax"


def test_apply_edit_changes_only_what_it_names() -> None:
    parent = compile_program(
        target_program().source() + '\n\ndef build(world):\n    world.place("table", 1, 0)\n'
    )
    source, notes = apply_edit(
        parent, {"goal": "collect_stone", "start_inventory": {"wood_pickaxe": 1}}
    )
    child = compile_program(source)
    assert notes == []
    assert child.goal == "collect_stone"
    assert child.start_inventory[ITEMS.index("wood_pickaxe")] == 1
    assert child.placements == parent.placements  # the parent's build survives
    same = {f: getattr(child, f) == getattr(parent, f) for f in ("density", "map_size", "rewards")}
    assert all(same.values()), same


def test_apply_edit_clamps_numbers_and_says_so() -> None:
    source, notes = apply_edit(target_program(), {"map_size": 40, "zombie_spawn": -1})
    child = compile_program(source)
    assert (child.map_size, child.zombie_spawn) == (16, 0.0)  # 16 is the parent's: 1 change
    assert any("map_size 40 clamped to 16" in n for n in notes)
    assert any("zombie_spawn -1 clamped to 0" in n for n in notes)


@pytest.mark.parametrize(
    ("edit", "reason", "match"),
    [
        ({"difficulty": 3}, "schema", "unknown key 'difficulty'"),
        ({"goal": "collect_water"}, "schema", "not an achievement"),
        ({"density": {"wood_sword": 0.1}}, "schema", "unknown 'wood_sword'"),
        ({"density": 0.3}, "schema", "must be an object"),
        ({"map_size": "big"}, "invalid", "must be a number"),
        ({"goal": "collect_diamond"}, "noop", "changes nothing"),
        (
            {"goal": "eat_cow", "map_size": 8, "zombie_spawn": 0.0, "episode_length": 100},
            "size",
            "4 changes",
        ),
    ],
)
def test_apply_edit_rejects_with_a_reason(edit: dict[str, Any], reason: str, match: str) -> None:
    with pytest.raises(ProgramError, match=match) as info:
        apply_edit(target_program(), edit)
    assert info.value.reason == reason


_ENTRY = st.one_of(
    st.tuples(st.just("goal"), st.sampled_from(ACHIEVEMENTS)),
    st.tuples(st.just("map_size"), st.integers(-50, 50)),
    st.tuples(st.just("episode_length"), st.integers(-10, 5000)),
    st.tuples(st.just("zombie_spawn"), st.floats(-1, 1)),
    st.tuples(st.sampled_from([f"density.{r}" for r in RESOURCES]), st.floats(0, 0.12)),
    st.tuples(st.sampled_from([f"start_inventory.{i}" for i in ITEMS]), st.integers(0, 20)),
    st.tuples(st.sampled_from([f"rewards.{a}" for a in ACHIEVEMENTS]), st.floats(-5, 20)),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_ENTRY, min_size=1, max_size=MAX_EDITS, unique_by=lambda e: e[0]))
def test_any_small_schema_edit_compiles_within_limits(entries: list[tuple[str, Any]]) -> None:
    edit: dict[str, Any] = {}
    for key, value in entries:
        top, _, sub = key.partition(".")
        if sub:
            edit.setdefault(top, {})[sub] = value
        else:
            edit[top] = value
    target = target_program()
    try:
        source, _ = apply_edit(target, edit)
    except ProgramError as exc:
        reason = exc.reason  # only "noop": every entry equal to the parent's after clamping
        source = ""
    else:
        reason = ""
    assert reason in ("", "noop")
    if reason:
        return
    child = compile_program(source)  # clamped into range: the sandbox accepts it
    assert child != target
    lo, hi = LIMITS["map_size"]
    assert lo <= child.map_size <= hi


def test_llm_dreamer_edit_format_end_to_end() -> None:
    replies = [
        'Here: {"goal": "collect_stone", "start_inventory": {"wood_pickaxe": 1}}',
        '{"goal": "collect_stone", "start_inventory": {"wood_pickaxe": 1}, "density": ',
        '{"achievement": "collect_stone"}',
        '{"episode_length": 0}',
    ]
    backend = FakeBackend(replies)
    dreamer = LLMDreamer(backend)
    assert dreamer.format == "edit"
    assert dreamer.max_tokens == 64
    target = target_program()
    context = DreamContext(
        parents=[(target, 0.25, 0.19)],
        profile={"collect_wood": 0.9, "place_table": 0.6},
        archive=[(target, 0.25, 0.19)],
    )
    dreams = dreamer.dream(context, 4, np.random.default_rng(0))
    assert [d.reason for d in dreams] == ["", "syntax", "schema", ""]
    assert dreams[0].program is not None
    assert dreams[0].program.goal == "collect_stone"
    assert dreams[3].program is not None
    assert dreams[3].program.episode_length == 20
    assert "clamped to 20" in dreams[3].detail
    assert {d.operator for d in dreams} == {"llm_edit"}
    question = backend.prompts[0][-1]["content"]
    assert '"goal": "collect_diamond"' in question  # the parent world, as JSON
    assert "Agent succeeds at: collect_wood, place_table." in question
    assert "25% of the time" in question
    roles = [m["role"] for m in backend.prompts[0]]
    assert roles[0] == "system"
    assert roles.count("assistant") == 3


def test_llm_dreamer_refuses_an_unknown_format() -> None:
    with pytest.raises(ValueError, match="format must be"):
        LLMDreamer(FakeBackend(["{}"]), format="yaml")


def test_worked_examples_are_valid_distinct_edits_and_copies_are_recognised() -> None:
    from icml26.dicode.dreamer import EDIT_EXAMPLES, example_children

    target = target_program()
    children = example_children(target)
    assert len(children) == len(EDIT_EXAMPLES)  # each example is a valid, distinct edit
    copy = LLMDreamer(FakeBackend([EDIT_EXAMPLES[1][1]]))._from_edit(target, EDIT_EXAMPLES[1][1])
    assert copy.program in children

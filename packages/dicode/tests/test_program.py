"""World programs: the sandbox rejects escapes and runaway code; valid programs round-trip."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.dicode.dreamer import random_program
from icml26.dicode.program import TARGET_SOURCE, ProgramError, compile_program, target_program
from icml26.dicode.sandbox import MAX_SOURCE_CHARS


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("import os\nWORLD = {}", "forbidden"),
        ("from os import path\nWORLD = {}", "forbidden"),
        ("WORLD = {}\nx = ().__class__.__bases__", "forbidden"),
        ("WORLD = {'goal': open('/etc/passwd').read()}", "forbidden"),
        ("WORLD = {}\nx = eval('1')", "forbidden"),
        ("WORLD = {}\n__builtins__ = 1", "forbidden"),
        ("WORLD = {}\nf = lambda: 1", "forbidden"),
        ("WORLD = {}\nx = [i for i in range(3)]", "forbidden"),
        ("WORLD = {}\nclass A:\n    pass", "forbidden"),
        ("WORLD = {}\ndef helper(world):\n    pass", "forbidden"),
        ("WORLD = {}\nwhile True:\n    pass", "limit"),
        ("WORLD = {}\nfor i in range(10**9):\n    pass", "limit"),
        (
            "WORLD = {}\ndef build(world):\n    while True:\n        world.place('tree', 0, 1)",
            "size",
        ),
        ("WORLD = {}\nx = 'a' * 10**8", "invalid"),
        ("WORLD = {}\nx = [1] * 100", "invalid"),
        ("WORLD = {}\nx = 1\nwhile True:\n    x *= 10", "limit"),
        ("WORLD = {}\nx = 10 ** 10 ** 10", "limit"),
        ("WORLD = {", "syntax"),
        ("WORLD = {'map_size': 40}", "invalid"),
        ("WORLD = {'density': {'tree': 0.5, 'stone': 0.5}}", "invalid"),
        ("WORLD = {'goal': 'fly'}", "invalid"),
        ("WORLD = {'teleport': 1}", "invalid"),
        ("WORLD = {'start_inventory': {'wood': -1}}", "invalid"),
        ("x = 1", "invalid"),
        ("WORLD = {}\ndef build(world):\n    world.place('lava', 0, 1)", "invalid"),
        ("WORLD = {}\ndef build(world):\n    x = 1 / 0", "runtime"),
    ],
)
def test_rejects_with_reason(source: str, reason: str) -> None:
    with pytest.raises(ProgramError) as info:
        compile_program(source)
    assert info.value.reason == reason, str(info.value)


def test_oversized_program_is_rejected_before_running() -> None:
    source = "WORLD = {}\n" + "x = 1\n" * (MAX_SOURCE_CHARS // 6 + 10)
    with pytest.raises(ProgramError, match="characters"):
        compile_program(source)


def test_builder_loops_and_arithmetic_are_allowed() -> None:
    prog = compile_program(
        "WORLD = {'map_size': 10, 'goal': 'collect_iron'}\n"
        "def build(world):\n"
        "    for i in range(3):\n"
        "        if i % 2 == 0:\n"
        "            world.place('iron', 1 + i, -i)\n"
    )
    assert prog.placements == (("iron", 1, 0), ("iron", 3, -2))
    assert prog.goal == "collect_iron"
    assert prog.map_size == 10


def test_missing_keys_take_the_target_values() -> None:
    target = target_program()
    prog = compile_program("WORLD = {'goal': 'collect_wood'}")
    assert prog.density == target.density
    assert prog.episode_length == target.episode_length
    assert compile_program(TARGET_SOURCE) == target


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_source_round_trips(seed: int) -> None:
    prog = compile_program(random_program(np.random.default_rng(seed)))
    again = compile_program(prog.source())
    assert again == prog
    assert again.source() == prog.source()


def test_round_trip_generates_the_same_world(world_fns: dict[str, Any]) -> None:
    source = (
        "WORLD = {'map_size': 11, 'density': {'tree': 0.2, 'iron': 0.1}}\n"
        "def build(world):\n    world.place('diamond', 2, 2)\n    world.place('table', -1, 0)\n"
    )
    prog = compile_program(source)
    again = compile_program(prog.source())
    key = jax.random.PRNGKey(7)
    m1, _s1 = world_fns["generate_map"](key, prog.params())
    m2, _s2 = world_fns["generate_map"](key, again.params())
    np.testing.assert_array_equal(np.asarray(m1), np.asarray(m2))
    m1 = np.asarray(m1)
    assert m1[5 + 2, 5 + 2] == 6  # diamond at spawn + (2, 2)
    assert m1[5 - 1, 5] == 7  # table at spawn + (-1, 0)

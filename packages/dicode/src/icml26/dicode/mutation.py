"""The offline dreamer: :class:`MutationDreamer` edits a parent program's syntax tree, and
:func:`random_program` draws uniformly from the same code space (domain randomisation, PLR)."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from icml26.dicode.dreams import Dream, DreamContext, compile_dream, frontier_goals
from icml26.dicode.program import (
    LIMITS,
    PLACEABLE,
    WorldProgram,
)
from icml26.dicode.tech import ACHIEVEMENTS, ITEMS, RESOURCES

__all__ = ["MutationDreamer", "random_program"]


def _world_dict(tree: ast.Module) -> ast.Dict | None:
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == "WORLD"
            and isinstance(stmt.value, ast.Dict)
        ):
            return stmt.value
    return None


def _entry(d: ast.Dict, key: str) -> int | None:
    for i, k in enumerate(d.keys):
        if isinstance(k, ast.Constant) and k.value == key:
            return i
    return None


def _sub_dict(d: ast.Dict, key: str) -> ast.Dict:
    i = _entry(d, key)
    if i is None:
        d.keys.append(ast.Constant(key))
        d.values.append(ast.Dict(keys=[], values=[]))
        i = len(d.keys) - 1
    value = d.values[i]
    if not isinstance(value, ast.Dict):
        value = ast.Dict(keys=[], values=[])
        d.values[i] = value
    return value


def _set(d: ast.Dict, key: str, value: Any) -> None:
    i = _entry(d, key)
    node = ast.Constant(value)
    if i is None:
        d.keys.append(ast.Constant(key))
        d.values.append(node)
    else:
        d.values[i] = node


def _delete(d: ast.Dict, key: str) -> bool:
    i = _entry(d, key)
    if i is None:
        return False
    del d.keys[i]
    del d.values[i]
    return True


def _build_fn(tree: ast.Module) -> ast.FunctionDef:
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == "build":
            return stmt
    fn = ast.parse("def build(world):\n    pass\n").body[0]
    assert isinstance(fn, ast.FunctionDef)
    tree.body.append(fn)
    return fn


class MutationDreamer:
    """The offline dreamer: edits of a parent program's syntax tree (see the module doc).

    Args:
        scale: spread of the multiplicative numeric edits (log-normal sigma).
        frontier_goal_prob: probability that a goal edit targets :func:`frontier_goals`
            (otherwise any achievement).
    """

    name = "offline_mutation"
    OPERATORS = (
        "tweak_number",
        "tweak_density",
        "add_resource",
        "remove_resource",
        "add_item",
        "remove_item",
        "set_goal",
        "reward_goal",
        "add_placement",
        "remove_placement",
    )

    def __init__(self, scale: float = 0.5, frontier_goal_prob: float = 0.8) -> None:
        self.scale = scale
        self.frontier_goal_prob = frontier_goal_prob

    def mutate(
        self, program: WorldProgram, rng: np.random.Generator, profile: dict[str, float], k: int = 1
    ) -> tuple[str, str]:
        """``k`` random edits of ``program``: ``(new source, operator names)``."""
        text = program.text or program.source()
        tree = ast.parse(text)
        if _world_dict(tree) is None:
            tree = ast.parse(program.source())
        names = []
        for _ in range(k):
            op = str(rng.choice(self.OPERATORS))
            getattr(self, "_" + op)(tree, program, rng, profile)
            names.append(op)
        return ast.unparse(ast.fix_missing_locations(tree)) + "\n", "+".join(names)

    def dream(self, context: DreamContext, n: int, rng: np.random.Generator) -> list[Dream]:
        """``n`` children, the parents taken in turn, each 1-2 random edits.

        Args:
            context: the parents and the agent's profile (for goal edits).
            n: children asked for.
            rng: the dreaming stream.

        Returns:
            One :class:`Dream` per child, valid or with its rejection reason.
        """
        out = []
        for i in range(n):
            parent = context.parents[i % len(context.parents)][0]
            source, op = self.mutate(parent, rng, context.profile, k=int(rng.integers(1, 3)))
            out.append(compile_dream(source, op))
        return out

    # each operator edits ``tree`` in place
    def _tweak_number(self, tree: ast.Module, p: WorldProgram, rng: Any, prof: Any) -> None:
        d = _world_dict(tree)
        assert d is not None
        key = str(
            rng.choice(
                ["map_size", "zombie_spawn", "zombie_damage", "day_length", "episode_length"]
            )
        )
        value = getattr(p, key)
        factor = float(np.exp(rng.normal(0.0, self.scale)))
        if key in ("map_size", "day_length", "episode_length"):
            new: Any = round(value * factor)
        else:
            new = round(max(value, 1e-3) * factor, 4)
        _set(d, key, new)

    def _tweak_density(self, tree: ast.Module, p: WorldProgram, rng: Any, prof: Any) -> None:
        dens = _sub_dict(_world_dict(tree), "density")  # type: ignore[arg-type]
        r = str(rng.choice(RESOURCES))
        cur = p.density[RESOURCES.index(r)]
        _set(dens, r, round(max(cur, 0.005) * float(np.exp(rng.normal(0.0, self.scale))), 4))

    def _add_resource(self, tree: ast.Module, p: WorldProgram, rng: Any, prof: Any) -> None:
        dens = _sub_dict(_world_dict(tree), "density")  # type: ignore[arg-type]
        absent = [r for r, d in zip(RESOURCES, p.density, strict=True) if d == 0] or list(RESOURCES)
        _set(dens, str(rng.choice(absent)), round(float(rng.uniform(0.01, 0.12)), 4))

    def _remove_resource(self, tree: ast.Module, p: WorldProgram, rng: Any, prof: Any) -> None:
        dens = _sub_dict(_world_dict(tree), "density")  # type: ignore[arg-type]
        present = [r for r, d in zip(RESOURCES, p.density, strict=True) if d > 0]
        if present:
            _set(dens, str(rng.choice(present)), 0.0)

    def _add_item(self, tree: ast.Module, p: WorldProgram, rng: Any, prof: Any) -> None:
        inv = _sub_dict(_world_dict(tree), "start_inventory")  # type: ignore[arg-type]
        item = str(rng.choice(ITEMS))
        _set(inv, item, p.start_inventory[ITEMS.index(item)] + int(rng.integers(1, 4)))

    def _remove_item(self, tree: ast.Module, p: WorldProgram, rng: Any, prof: Any) -> None:
        inv = _sub_dict(_world_dict(tree), "start_inventory")  # type: ignore[arg-type]
        held = [i for i, c in zip(ITEMS, p.start_inventory, strict=True) if c > 0]
        if held:
            item = str(rng.choice(held))
            if not _delete(inv, item):  # held through the defaults: set to zero explicitly
                _set(inv, item, 0)

    def _set_goal(self, tree: ast.Module, p: WorldProgram, rng: Any, prof: Any) -> None:
        d = _world_dict(tree)
        assert d is not None
        pool = (
            frontier_goals(prof) if rng.random() < self.frontier_goal_prob else list(ACHIEVEMENTS)
        )
        _set(d, "goal", str(rng.choice(pool)))

    def _reward_goal(self, tree: ast.Module, p: WorldProgram, rng: Any, prof: Any) -> None:
        d = _world_dict(tree)
        assert d is not None
        goal = p.goal
        i = _entry(d, "goal")
        node = d.values[i] if i is not None else None
        if isinstance(node, ast.Constant):
            goal = str(node.value)
        rew = _sub_dict(d, "rewards")
        _set(rew, goal, round(float(rng.uniform(1.0, 5.0)), 2))

    def _add_placement(self, tree: ast.Module, p: WorldProgram, rng: Any, prof: Any) -> None:
        fn = _build_fn(tree)
        block = str(rng.choice([b for b in PLACEABLE if b != "grass"]))
        dx, dy = (int(v) for v in rng.integers(-3, 4, size=2))
        call = ast.parse(f'world.place("{block}", {dx}, {dy})').body[0]
        fn.body = [s for s in fn.body if not isinstance(s, ast.Pass)] + [call]

    def _remove_placement(self, tree: ast.Module, p: WorldProgram, rng: Any, prof: Any) -> None:
        fn = _build_fn(tree)
        calls = [i for i, s in enumerate(fn.body) if isinstance(s, ast.Expr)]
        if calls:
            del fn.body[int(rng.choice(calls))]
        if not fn.body:
            fn.body = [ast.Pass()]


def random_program(rng: np.random.Generator, *, unit_rewards: bool = True) -> str:
    """A uniform draw from the code space (the domain-randomisation / PLR generator): every
    parameter within its valid range, random resources, starting items and goal."""
    lo_s, hi_s = LIMITS["map_size"]
    density = {}
    for r in RESOURCES:
        if rng.random() < 0.8:
            density[r] = round(float(rng.uniform(0.0, 0.12)), 4)
    inventory = {i: int(rng.integers(1, 4)) for i in ITEMS if rng.random() < 0.15}
    world = {
        "map_size": int(rng.integers(lo_s, hi_s + 1)),
        "density": density,
        "start_inventory": inventory,
        "zombie_spawn": round(float(rng.uniform(0.0, 0.03)), 4),
        "zombie_damage": round(float(rng.uniform(0.5, 3.0)), 2),
        "day_length": int(rng.integers(100, 601)),
        "episode_length": int(rng.integers(100, 501)),
        "rewards": {},
        "goal": str(rng.choice(ACHIEVEMENTS)),
    }
    return "WORLD = " + repr(world) + "\n"

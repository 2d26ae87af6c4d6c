"""Dreamers: who writes the code-level variations of the current worlds.

* :class:`MutationDreamer` (``offline_mutation``, the offline default): edits a parent
  program's syntax tree: numeric parameter changes, added or removed resources, new or removed
  starting items, a goal picked at the agent's competence frontier, a reward on the goal, added
  or removed ``world.place`` calls. Edits can produce invalid programs (a density pushed past
  its range, too many placements); those are rejected by validation and counted, as for an LLM.
* :class:`LLMDreamer` (``llm``): a foundation model, through any
  :class:`icml26.shared.llm.ChatBackend` (an OpenAI-compatible endpoint such as a vLLM server,
  or a local model built by :func:`llm_backend`), is shown the parent world, the agent's
  skills and the parent's success rate, and asked for a JSON edit of at most
  :data:`MAX_EDITS` key changes (``format="edit"``, what a 135M model can write) or, with
  ``format="program"``, a whole new program next to the archive's best.
* :func:`random_program`: a uniform draw from the same code space (domain randomisation, PLR).

Every dreamer returns :class:`Dream` records: the source, the compiled program or ``None``,
and the rejection reason, so ``program_valid_rate.<dreamer>`` is measured, not assumed.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from icml26.dicode.program import (
    LIMITS,
    PLACEABLE,
    ProgramError,
    WorldProgram,
    compile_program,
    target_program,
)
from icml26.dicode.tech import ACHIEVEMENT_DEPTH, ACHIEVEMENTS, ITEMS, RESOURCES

__all__ = [
    "MAX_EDITS",
    "Dream",
    "DreamContext",
    "Dreamer",
    "LLMDreamer",
    "MutationDreamer",
    "apply_edit",
    "example_children",
    "frontier_goals",
    "llm_backend",
    "parse_edit",
    "random_program",
]


@dataclass(frozen=True)
class Dream:
    """One generated world program."""

    source: str
    program: WorldProgram | None
    reason: str = ""  # ProgramError reason when rejected
    detail: str = ""
    operator: str = ""

    @property
    def valid(self) -> bool:
        return self.program is not None


@dataclass
class DreamContext:
    """What a dreamer sees: parents (with success rate and learnability) and the agent.

    Attributes:
        parents: ``(program, success rate or None, learnability or None)``.
        profile: success rate of each achievement on the target world (latest evaluation).
        archive: a summary of the archive for prompts (``(program, p, learnability)``).
    """

    parents: list[tuple[WorldProgram, float | None, float | None]]
    profile: dict[str, float] = field(default_factory=dict)
    archive: list[tuple[WorldProgram, float | None, float | None]] = field(default_factory=list)


class Dreamer(Protocol):
    name: str

    def dream(self, context: DreamContext, n: int, rng: np.random.Generator) -> list[Dream]: ...


def _compile(source: str, operator: str) -> Dream:
    try:
        return Dream(source, compile_program(source), operator=operator)
    except ProgramError as exc:
        return Dream(source, None, exc.reason, exc.detail, operator)


def frontier_goals(profile: dict[str, float], *, low: float = 0.1, high: float = 0.9) -> list[str]:
    """Achievements just beyond the agent's competence on the target world: success below
    ``high``, ordered by tech depth, keeping those whose depth is at most one more than the
    deepest achievement already above ``low``."""
    mastered = [
        ACHIEVEMENT_DEPTH[a] for a, p in profile.items() if p >= low and a in ACHIEVEMENT_DEPTH
    ]
    reach = (max(mastered) if mastered else 0) + 1
    goals = [
        a for a in ACHIEVEMENTS if profile.get(a, 0.0) < high and ACHIEVEMENT_DEPTH[a] <= reach
    ]
    return goals or list(ACHIEVEMENTS)


# ---------------------------------------------------------------- AST editing helpers
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
            out.append(_compile(source, op))
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


_CODE_BLOCK = re.compile(r"```(?:python)?\s*\n(.*?)```", re.DOTALL)

#: Most key changes one edit may make (``llm`` dreamer, ``edit`` format).
MAX_EDITS = 3
_SCALARS = ("map_size", "zombie_spawn", "zombie_damage", "day_length", "episode_length")
_INTEGERS = ("map_size", "day_length", "episode_length")
_MAPS: dict[str, tuple[tuple[str, ...], str]] = {
    "density": (RESOURCES, "density"),
    "start_inventory": (ITEMS, "start_inventory"),
    "rewards": (ACHIEVEMENTS, "reward"),
}
_EDIT_KEYS = (*_SCALARS, *_MAPS, "goal")


def parse_edit(text: str) -> dict[str, Any]:
    """The first balanced ``{...}`` object in a reply, read as JSON (or a Python literal).

    Args:
        text: the model's reply.

    Returns:
        The object as a dict.

    Raises:
        ProgramError: ``syntax`` if the reply holds no readable object.
    """
    start = text.find("{")
    if start < 0:
        raise ProgramError("syntax", "the reply holds no JSON object")
    depth, in_string, escaped, end = 0, False, False, -1
    for i, ch in enumerate(text[start:], start):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                end = i + 1
                break
    if end < 0:
        raise ProgramError("syntax", "the JSON object is not closed (reply cut or malformed)")
    raw = text[start:end]
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise ProgramError("syntax", f"not JSON: {exc.msg} in {raw[:120]!r}") from None
    if not isinstance(value, dict):
        raise ProgramError("syntax", f"expected a JSON object, got {type(value).__name__}")
    return value


def _number_edit(name: str, value: Any, lo: float, hi: float, integer: bool) -> tuple[float, str]:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ProgramError("invalid", f"{name} must be a number, got {value!r}")
    new = float(round(value)) if integer else float(value)
    clamped = min(max(new, lo), hi)
    note = f"{name} {value!r} clamped to {clamped:g}" if clamped != new else ""
    return clamped, note


def apply_edit(
    parent: WorldProgram, edit: dict[str, Any], *, max_changes: int = MAX_EDITS
) -> tuple[str, list[str]]:
    """Apply a JSON edit to ``parent``: the child's program source and the clamps made.

    An edit sets top-level world keys (``goal``, ``map_size``, ``zombie_spawn``,
    ``zombie_damage``, ``day_length``, ``episode_length``) or entries of ``density``,
    ``start_inventory``, ``rewards``; everything else is the parent's, placements included.
    Numbers outside their range are clamped (recorded); an entry equal to the parent's value
    is no change.

    Args:
        parent: the world edited.
        edit: e.g. ``{"goal": "collect_stone", "start_inventory": {"wood_pickaxe": 1}}``.
        max_changes: most entries that may differ from the parent.

    Returns:
        ``(source, notes)``: the child program (compile it with
        :func:`~icml26.dicode.program.compile_program`) and one note per clamped number.

    Raises:
        ProgramError: ``schema`` (unknown key, item, resource, achievement or goal),
            ``invalid`` (a value of the wrong type), ``size`` (more than ``max_changes``
            changes), ``noop`` (nothing changes).
    """
    world: dict[str, Any] = {
        "map_size": parent.map_size,
        "zombie_spawn": parent.zombie_spawn,
        "zombie_damage": parent.zombie_damage,
        "day_length": parent.day_length,
        "episode_length": parent.episode_length,
        "density": dict(zip(RESOURCES, parent.density, strict=True)),
        "start_inventory": dict(zip(ITEMS, parent.start_inventory, strict=True)),
        "rewards": dict(zip(ACHIEVEMENTS, parent.rewards, strict=True)),
        "goal": parent.goal,
    }
    notes: list[str] = []
    changes = 0
    for key, value in edit.items():
        if key not in _EDIT_KEYS:
            raise ProgramError("schema", f"unknown key {key!r}; known: {', '.join(_EDIT_KEYS)}")
        if key == "goal":
            if value not in ACHIEVEMENTS:
                raise ProgramError("schema", f"goal {value!r} is not an achievement")
            changes += value != world["goal"]
            world["goal"] = value
        elif key in _SCALARS:
            lo, hi = LIMITS[key]
            new, note = _number_edit(key, value, lo, hi, key in _INTEGERS)
            changes += new != world[key]
            world[key] = int(new) if key in _INTEGERS else new
            notes += [note] if note else []
        else:
            names, limit = _MAPS[key]
            if not isinstance(value, dict):
                raise ProgramError("schema", f"{key} must be an object of {limit} values")
            for name, v in value.items():
                if name not in names:
                    raise ProgramError(
                        "schema", f"{key}: unknown {name!r}; known: {', '.join(names)}"
                    )
                lo, hi = LIMITS[limit]
                new, note = _number_edit(f"{key}[{name}]", v, lo, hi, key == "start_inventory")
                changes += new != world[key][name]
                world[key][name] = int(new) if key == "start_inventory" else new
                notes += [note] if note else []
    if changes == 0:
        raise ProgramError("noop", "the edit changes nothing")
    if changes > max_changes:
        raise ProgramError("size", f"{changes} changes (at most {max_changes})")
    world["density"] = {k: v for k, v in world["density"].items() if v > 0}
    world["start_inventory"] = {k: v for k, v in world["start_inventory"].items() if v > 0}
    world["rewards"] = {k: v for k, v in world["rewards"].items() if v != 1.0}
    source = "WORLD = " + repr(world) + "\n"
    if parent.placements:
        calls = "".join(f"    world.place({b!r}, {dx}, {dy})\n" for b, dx, dy in parent.placements)
        source += "\n\ndef build(world):\n" + calls
    return source, notes


def _compact(program: WorldProgram) -> str:
    """The editable part of a world as one JSON line (prompts)."""
    world: dict[str, Any] = {
        "map_size": program.map_size,
        "density": {r: d for r, d in zip(RESOURCES, program.density, strict=True) if d > 0},
        "start_inventory": {
            i: c for i, c in zip(ITEMS, program.start_inventory, strict=True) if c > 0
        },
        "zombie_spawn": program.zombie_spawn,
        "episode_length": program.episode_length,
        "goal": program.goal,
    }
    rewards = {a: r for a, r in zip(ACHIEVEMENTS, program.rewards, strict=True) if r != 1.0}
    if rewards:
        world["rewards"] = rewards
    return json.dumps(world)


def _skills(profile: dict[str, float]) -> str:
    known = [a for a in ACHIEVEMENTS if profile.get(a, 0.0) >= 0.5]
    nxt = [a for a in frontier_goals(profile) if a not in known][:4]
    return f"Agent succeeds at: {', '.join(known) or 'nothing yet'}. Next skills: {', '.join(nxt)}."


_EDIT_SYSTEM = (
    "You edit a training world of a crafting game for a learning agent. Reply with one JSON "
    f"object of at most {MAX_EDITS} changes and nothing else. Keys: goal (an achievement), "
    f"start_inventory {{item: 0-9}} with items {', '.join(ITEMS)}, density {{resource: 0-0.5}} "
    f"with resources {', '.join(RESOURCES)}, map_size 6-16, zombie_spawn 0-0.1, "
    "episode_length 20-1000, rewards {achievement: -1 to 10}. Make the world's goal a next "
    "skill, solvable about half the time."
)
#: Worked examples shown before the question: (agent profile, reply). Three, not one: with
#: one, SmolLM2-135M wrote 2 valid edits in 16 (it invents keys); with three, 12 in 16
#: (development probes at a fixed made-up profile, temperature 0.7, 64 tokens).
EDIT_EXAMPLES: tuple[tuple[dict[str, float], str], ...] = (
    (
        {"collect_wood": 0.9, "place_table": 0.7, "make_wood_pickaxe": 0.2},
        '{"goal": "make_wood_pickaxe", "density": {"tree": 0.3}}',
    ),
    (
        {"collect_wood": 0.9, "place_table": 0.9, "make_wood_pickaxe": 0.8, "collect_stone": 0.3},
        '{"goal": "collect_stone", "start_inventory": {"wood_pickaxe": 1}}',
    ),
    (
        {
            "collect_wood": 0.9,
            "place_table": 0.9,
            "make_wood_pickaxe": 0.9,
            "collect_stone": 0.8,
            "collect_coal": 0.2,
        },
        '{"goal": "collect_coal", "map_size": 10, "zombie_spawn": 0.0}',
    ),
)


class LLMDreamer:
    """A foundation-model dreamer through :class:`icml26.shared.llm.ChatBackend`.

    Two reply formats:

    * ``"edit"`` (the default; what a small model can write): a JSON object of at most
      :data:`MAX_EDITS` key changes to the parent world (``{"goal": "collect_stone",
      "start_inventory": {"wood_pickaxe": 1}}``), applied by :func:`apply_edit` (numbers
      clamped to their ranges, each clamp recorded in the dream's ``detail``; unknown keys,
      wrong types, too many changes or none rejected with their reason), then validated by the
      sandbox like any program. The prompt (~1k tokens) holds three worked examples.
    * ``"program"``: a whole world program in a code block (the paper's format; needs a model
      that writes Python reliably and a budget of a few hundred tokens).

    Args:
        backend: ``ChatClient(base_url, model)`` or ``LocalChatModel(model, tokenizer)``
            (:func:`llm_backend` builds either).
        format: ``"edit"`` or ``"program"``.
        max_tokens: reply budget (default: 64 for edits, 400 for programs).
        temperature: sampling temperature.
        archive_shown: how many archive programs the ``program`` prompt lists.

    Raises:
        TypeError: if ``backend`` has no ``complete`` method.
        ValueError: for an unknown ``format``.
    """

    name = "llm"

    def __init__(
        self,
        backend: Any,
        *,
        format: str = "edit",
        max_tokens: int | None = None,
        temperature: float = 0.7,
        archive_shown: int = 4,
    ) -> None:
        if not hasattr(backend, "complete"):
            raise TypeError("backend must implement ChatBackend.complete(conversations, ...)")
        if format not in ("edit", "program"):
            raise ValueError(f"format must be 'edit' or 'program', got {format!r}")
        self.backend = backend
        self.format = format
        self.max_tokens = max_tokens or (64 if format == "edit" else 400)
        self.temperature = temperature
        self.archive_shown = archive_shown

    def prompt(self, context: DreamContext, parent: WorldProgram) -> list[dict[str, str]]:
        """The chat messages asking for one child of ``parent``."""
        if self.format == "edit":
            return self._edit_prompt(context, parent)
        return self._program_prompt(context, parent)

    def _edit_prompt(self, context: DreamContext, parent: WorldProgram) -> list[dict[str, str]]:
        rate = next((p for prog, p, _ in context.parents if prog == parent), None)
        solved = "" if rate is None else f" The agent solves this world {rate:.0%} of the time."
        # the examples edit the target world shown in full: naming it instead ("the target
        # world") gave 7 valid edits in 16 against 12 (development probe)
        target = _compact(target_program())
        shots = [
            turn
            for profile, reply in EDIT_EXAMPLES
            for turn in (
                {"role": "user", "content": f"World: {target}\n{_skills(profile)}\nChanges:"},
                {"role": "assistant", "content": reply},
            )
        ]
        return [
            {"role": "system", "content": _EDIT_SYSTEM},
            *shots,
            {
                "role": "user",
                "content": f"World: {_compact(parent)}\n{_skills(context.profile)}{solved}\n"
                "Changes:",
            },
        ]

    def _program_prompt(self, context: DreamContext, parent: WorldProgram) -> list[dict[str, str]]:
        profile = ", ".join(f"{a}={p:.2f}" for a, p in context.profile.items()) or "unknown"
        shown = sorted(context.archive, key=lambda e: -(e[2] if e[2] is not None else -1.0))[
            : self.archive_shown
        ]
        examples = "\n\n".join(
            f"# success rate {'?' if p is None else f'{p:.2f}'}, learnability "
            f"{'?' if lv is None else f'{lv:.3f}'}\n{prog.source()}"
            for prog, p, lv in shown
        )
        system = (
            "You design training worlds for a reinforcement-learning agent in a crafting game. "
            "A world is a Python program defining a dict WORLD and optionally def build(world) "
            "that calls world.place(block, dx, dy) (offsets from the spawn, at most 8 calls). "
            "No imports, no other functions or attributes.\n"
            f"WORLD keys: map_size (6-16), density (dict over {', '.join(RESOURCES)}; each 0-0.5, "
            "sum <= 0.9), start_inventory (dict over "
            f"{', '.join(ITEMS)}; ints 0-9), zombie_spawn (0-0.1), zombie_damage (0-9), "
            "day_length (20-2000), episode_length (20-1000), rewards (dict achievement -> "
            f"-1..10), goal (one of {', '.join(ACHIEVEMENTS)}).\n"
            f"Placeable blocks: {', '.join(PLACEABLE)}. Reply with one ```python code block."
        )
        user = (
            f"Agent's success rate per achievement on the target world: {profile}.\n"
            "Learnability p(1-p) is highest for worlds the agent solves about half the time.\n"
            f"Archive examples:\n{examples}\n\n"
            "Write a variation of this world that bridges the agent towards the next skill it "
            f"lacks, neither trivial nor hopeless:\n{parent.source()}"
        )
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    @staticmethod
    def extract(text: str) -> str:
        """The program inside the reply's first code block (or the whole reply)."""
        match = _CODE_BLOCK.search(text)
        return (match.group(1) if match else text).strip() + "\n"

    def dream(self, context: DreamContext, n: int, rng: np.random.Generator) -> list[Dream]:
        """``n`` children, the parents taken in turn, in one batched backend call.

        Args:
            context: the parents (with success rates), the agent's profile, the archive.
            n: children asked for.
            rng: seeds the backend's sampling.

        Returns:
            One :class:`Dream` per reply, valid or with its rejection reason (``syntax``,
            ``schema``, ``size``, ``noop``, ``invalid`` or a sandbox reason); a valid edit's
            ``detail`` lists the numbers clamped.
        """
        parents = [context.parents[i % len(context.parents)][0] for i in range(n)]
        conversations = [self.prompt(context, p) for p in parents]
        replies = self.backend.complete(
            conversations,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            seed=int(rng.integers(0, 2**31 - 1)),
        )
        if self.format == "program":
            return [_compile(self.extract(r.text), "llm") for r in replies]
        return [self._from_edit(p, r.text) for p, r in zip(parents, replies, strict=True)]

    @staticmethod
    def _from_edit(parent: WorldProgram, reply: str) -> Dream:
        try:
            source, notes = apply_edit(parent, parse_edit(reply))
        except ProgramError as exc:
            return Dream(reply, None, exc.reason, exc.detail, "llm_edit")
        dream = _compile(source, "llm_edit")
        return replace(dream, detail="; ".join(notes)) if dream.valid else dream


def example_children(parent: WorldProgram) -> set[WorldProgram]:
    """``parent`` edited by each worked example's reply (:data:`EDIT_EXAMPLES`): a child equal
    to one of these copies an example instead of answering the question.

    Args:
        parent: the world edited.

    Returns:
        The children the example replies give (those that compile).
    """
    out = set()
    for _, reply in EDIT_EXAMPLES:
        try:
            out.add(compile_program(apply_edit(parent, parse_edit(reply))[0]))
        except ProgramError:
            continue
    return out


def llm_backend(
    model: str = "", *, endpoint: str = "", endpoint_model: str = "", batch_size: int = 4
) -> Any:
    """The one place a dreamer's chat backend is built (run config, study, user code).

    Args:
        model: a local model spec for :func:`icml26.shared.llm.load_causal_lm` (e.g.
            ``smollm2-135m-instruct-q4_1`` or a folder).
        endpoint: an OpenAI-compatible base URL instead (e.g. a vLLM server).
        endpoint_model: the model name the endpoint serves.
        batch_size: prompts generated together by a local model.

    Returns:
        A :class:`icml26.shared.llm.ChatBackend`.

    Raises:
        ValueError: unless exactly one of ``model`` and ``endpoint`` is given.
    """
    if bool(model) == bool(endpoint):
        raise ValueError("llm_backend needs exactly one of model or endpoint")
    if endpoint:
        from icml26.shared.llm import ChatClient

        return ChatClient(endpoint, endpoint_model)
    from icml26.shared.llm import LocalChatModel

    return LocalChatModel.from_spec(model, batch_size=batch_size)


def seed_programs() -> list[WorldProgram]:
    """The archive's roots: the target world itself."""
    return [target_program()]


def summarise_reasons(dreams: Sequence[Dream]) -> dict[str, int]:
    """Rejections by reason (``size``, ``syntax``, ``forbidden``, ``limit``, ``runtime``,
    ``invalid``; for JSON edits also ``schema`` and ``noop``)."""
    counts: dict[str, int] = {}
    for d in dreams:
        if not d.valid:
            counts[d.reason] = counts.get(d.reason, 0) + 1
    return counts

"""Dreamers: who writes the code-level variations of the current worlds.

* :class:`MutationDreamer` (``offline_mutation``, the offline default): edits a parent
  program's syntax tree: numeric parameter changes, added or removed resources, new or removed
  starting items, a goal picked at the agent's competence frontier, a reward on the goal, added
  or removed ``world.place`` calls. Edits can produce invalid programs (a density pushed past
  its range, too many placements); those are rejected by validation and counted, as for an LLM.
* :class:`LLMDreamer` (``llm``): a foundation model, through any
  :class:`icml26.shared.llm.ChatBackend` (an OpenAI-compatible endpoint such as a vLLM server,
  or a local model), is shown the archive's programs with their success rates and
  learnability and the agent's achievement profile, and asked for new programs.
* :func:`random_program`: a uniform draw from the same code space (domain randomisation, PLR).

Every dreamer returns :class:`Dream` records: the source, the compiled program or ``None``,
and the rejection reason, so ``program_valid_rate.<dreamer>`` is measured, not assumed.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
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
    "Dream",
    "DreamContext",
    "Dreamer",
    "LLMDreamer",
    "MutationDreamer",
    "frontier_goals",
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


class LLMDreamer:
    """A foundation-model dreamer through :class:`icml26.shared.llm.ChatBackend`.

    Args:
        backend: ``ChatClient(base_url, model)`` or ``LocalChatModel(model, tokenizer)``.
        max_tokens: reply budget per program.
        temperature: sampling temperature.
        archive_shown: how many archive programs the prompt lists.
    """

    name = "llm"

    def __init__(
        self,
        backend: Any,
        *,
        max_tokens: int = 400,
        temperature: float = 0.8,
        archive_shown: int = 4,
    ) -> None:
        if not hasattr(backend, "complete"):
            raise TypeError("backend must implement ChatBackend.complete(conversations, ...)")
        self.backend = backend
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.archive_shown = archive_shown

    def prompt(self, context: DreamContext, parent: WorldProgram) -> list[dict[str, str]]:
        """The chat messages asking for one child of ``parent``."""
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
        parents = [context.parents[i % len(context.parents)][0] for i in range(n)]
        conversations = [self.prompt(context, p) for p in parents]
        replies = self.backend.complete(
            conversations,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            seed=int(rng.integers(0, 2**31 - 1)),
        )
        return [_compile(self.extract(r.text), "llm") for r in replies]


def seed_programs() -> list[WorldProgram]:
    """The archive's roots: the target world itself."""
    return [target_program()]


def summarise_reasons(dreams: Sequence[Dream]) -> dict[str, int]:
    """Rejections by reason (``size``, ``syntax``, ``forbidden``, ``limit``, ``runtime``, ``invalid``)."""
    counts: dict[str, int] = {}
    for d in dreams:
        if not d.valid:
            counts[d.reason] = counts.get(d.reason, 0) + 1
    return counts

"""Worlds as code: a world program, its validation, and its lowering to :class:`WorldParams`.

A program is a small piece of Python syntax (checked and run by :mod:`icml26.dicode.sandbox`)::

    WORLD = {
        "map_size": 12,
        "density": {"tree": 0.15, "stone": 0.15, "water": 0.05, "cow": 0.03},
        "start_inventory": {"wood_pickaxe": 1},
        "zombie_spawn": 0.005,
        "zombie_damage": 2.0,
        "day_length": 300,
        "episode_length": 300,
        "rewards": {"collect_stone": 2.0},
        "goal": "collect_stone",
    }

    def build(world):
        for i in range(2):
            world.place("stone", 1 + i, 0)

``WORLD`` holds the world parameters (missing keys take the target world's value; omitted
achievements keep reward 1); the optional ``build(world)`` places up to ``MAX_PLACEMENTS``
blocks at offsets from the spawn. :func:`compile_program` validates both and returns a
:class:`WorldProgram`, whose :meth:`~WorldProgram.params` is the fixed-shape pytree fed to the
one jitted world generator; :meth:`~WorldProgram.source` renders the canonical program, which
compiles back to the same world.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from icml26.dicode.sandbox import ProgramError, check_source, execute
from icml26.dicode.tech import ACHIEVEMENTS, BLOCKS, ITEMS, RESOURCES

__all__ = [
    "LIMITS",
    "PLACEABLE",
    "TARGET_SOURCE",
    "ProgramError",
    "WorldProgram",
    "compile_program",
    "target_program",
]

MAX_PLACEMENTS = 8  # = world.MAX_PLACEMENTS (kept here so this module needs no jax)
MAX_SIZE = 16
PLACEABLE = (
    "grass",
    "water",
    "stone",
    "tree",
    "coal",
    "iron",
    "diamond",
    "table",
    "furnace",
    "cow",
)

#: Valid ranges of the numeric world parameters (inclusive).
LIMITS: dict[str, tuple[float, float]] = {
    "map_size": (6, MAX_SIZE),
    "zombie_spawn": (0.0, 0.1),
    "zombie_damage": (0.0, 9.0),
    "day_length": (20, 2000),
    "episode_length": (20, 1000),
    "density": (0.0, 0.5),
    "density_total": (0.0, 0.9),
    "start_inventory": (0, 9),
    "reward": (-1.0, 10.0),
    "offset": (-MAX_SIZE, MAX_SIZE),
}

#: The target world: the full task from an empty inventory, every achievement worth 1.
TARGET_SOURCE = """\
WORLD = {
    "map_size": 16,
    "density": {"tree": 0.12, "stone": 0.16, "coal": 0.04, "iron": 0.03, "diamond": 0.012, "water": 0.04, "cow": 0.03},
    "start_inventory": {},
    "zombie_spawn": 0.01,
    "zombie_damage": 2.0,
    "day_length": 300,
    "episode_length": 400,
    "rewards": {},
    "goal": "collect_diamond",
}
"""

_KEYS = (
    "map_size",
    "density",
    "start_inventory",
    "zombie_spawn",
    "zombie_damage",
    "day_length",
    "episode_length",
    "rewards",
    "goal",
)


class _Builder:
    """The ``world`` argument of ``build``: records placements, nothing else."""

    __slots__ = ("placements",)

    def __init__(self) -> None:
        self.placements: list[tuple[str, int, int]] = []

    def place(self, block: str, dx: int, dy: int) -> None:
        if block not in PLACEABLE:
            raise ProgramError("invalid", f"place: unknown block {block!r}")
        for name, v in (("dx", dx), ("dy", dy)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise ProgramError("invalid", f"place: {name} must be an int, got {v!r}")
            lo, hi = LIMITS["offset"]
            if not lo <= v <= hi:
                raise ProgramError("invalid", f"place: {name}={v} outside [{lo}, {hi}]")
        if len(self.placements) >= MAX_PLACEMENTS:
            raise ProgramError("size", f"more than {MAX_PLACEMENTS} placements")
        self.placements.append((block, dx, dy))


def _number(name: str, value: Any, integer: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ProgramError("invalid", f"{name} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise ProgramError("invalid", f"{name} must be finite, got {value!r}")
    if integer and value != int(value):
        raise ProgramError("invalid", f"{name} must be an integer, got {value!r}")
    lo, hi = LIMITS.get(name.split("[")[0], (-math.inf, math.inf))
    if not lo <= value <= hi:
        raise ProgramError("invalid", f"{name}={value} outside [{lo:g}, {hi:g}]")
    return float(value)


def _mapping(name: str, value: Any, allowed: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ProgramError("invalid", f"{name} must be a dict, got {type(value).__name__}")
    unknown = [k for k in value if k not in allowed]
    if unknown:
        raise ProgramError(
            "invalid", f"{name}: unknown keys {unknown}; known: {', '.join(allowed)}"
        )
    return value


@dataclass(frozen=True)
class WorldProgram:
    """A validated world: normalised parameters and placements (hashable, comparable).

    Use :func:`compile_program` to build one from source; ``params()`` lowers it to the JAX
    world's :class:`~icml26.dicode.world.WorldParams`, ``source()`` renders it as canonical code.

    Attributes:
        map_size: side of the square map, in cells.
        density: resource densities, in ``RESOURCES`` order.
        start_inventory: the agent's starting items, in ``ITEMS`` order.
        zombie_spawn: probability that a zombie spawns per step.
        zombie_damage: health a zombie's hit costs.
        day_length: steps per day-night cycle.
        episode_length: steps per episode at most.
        rewards: reward per achievement, in ``ACHIEVEMENTS`` order.
        goal: the achievement that ends an episode as a success.
        placements: ``(thing, row, column)`` placed on the map before the start.
        text: the program's source as written (not compared).
    """

    map_size: int
    density: tuple[float, ...]  # in RESOURCES order
    start_inventory: tuple[int, ...]  # in ITEMS order
    zombie_spawn: float
    zombie_damage: float
    day_length: int
    episode_length: int
    rewards: tuple[float, ...]  # in ACHIEVEMENTS order
    goal: str
    placements: tuple[tuple[str, int, int], ...] = ()
    text: str = field(default="", compare=False, repr=False)

    def source(self) -> str:
        """The canonical program text (compiles back to an equal :class:`WorldProgram`)."""
        dens = {r: d for r, d in zip(RESOURCES, self.density, strict=True) if d > 0}
        inv = {i: c for i, c in zip(ITEMS, self.start_inventory, strict=True) if c > 0}
        rew = {a: r for a, r in zip(ACHIEVEMENTS, self.rewards, strict=True) if r != 1.0}
        lines = [
            "WORLD = {",
            f'    "map_size": {self.map_size},',
            f'    "density": {_fmt(dens)},',
            f'    "start_inventory": {_fmt(inv)},',
            f'    "zombie_spawn": {self.zombie_spawn!r},',
            f'    "zombie_damage": {self.zombie_damage!r},',
            f'    "day_length": {self.day_length},',
            f'    "episode_length": {self.episode_length},',
            f'    "rewards": {_fmt(rew)},',
            f'    "goal": "{self.goal}",',
            "}",
        ]
        if self.placements:
            lines += ["", "", "def build(world):"]
            lines += [f'    world.place("{b}", {dx}, {dy})' for b, dx, dy in self.placements]
        return "\n".join(lines) + "\n"

    def params(self) -> Any:
        """The fixed-shape :class:`~icml26.dicode.world.WorldParams` of this world."""
        import jax.numpy as jnp

        from icml26.dicode.world import WorldParams

        arrays = self.arrays()
        return WorldParams(**{k: jnp.asarray(v) for k, v in arrays.items()})

    def arrays(self) -> dict[str, Any]:
        """The parameters as NumPy arrays (the fields of ``WorldParams``)."""
        k = MAX_PLACEMENTS
        block = np.zeros(k, np.int32)
        dx = np.zeros(k, np.int32)
        dy = np.zeros(k, np.int32)
        valid = np.zeros(k, bool)
        for j, (b, x, y) in enumerate(self.placements):
            block[j], dx[j], dy[j], valid[j] = BLOCKS.index(b), x, y, True
        return {
            "map_size": np.int32(self.map_size),
            "density": np.asarray(self.density, np.float32),
            "start_inventory": np.asarray(self.start_inventory, np.int32),
            "zombie_spawn": np.float32(self.zombie_spawn),
            "zombie_damage": np.float32(self.zombie_damage),
            "day_length": np.int32(self.day_length),
            "episode_length": np.int32(self.episode_length),
            "rewards": np.asarray(self.rewards, np.float32),
            "goal": np.int32(ACHIEVEMENTS.index(self.goal)),
            "place_block": block,
            "place_dx": dx,
            "place_dy": dy,
            "place_valid": valid,
        }

    def describe(self) -> str:
        """One line for logs and prompts."""
        inv = ",".join(f"{i}={c}" for i, c in zip(ITEMS, self.start_inventory, strict=True) if c)
        return (
            f"goal={self.goal} size={self.map_size} inv[{inv}] zombies={self.zombie_spawn:.3f} "
            f"placements={len(self.placements)}"
        )


def _fmt(d: dict[str, Any]) -> str:
    return "{" + ", ".join(f'"{k}": {v!r}' for k, v in d.items()) + "}"


def _defaults() -> dict[str, Any]:
    tree = check_source(TARGET_SOURCE)
    world = execute(tree)["WORLD"]
    return dict(world)


def compile_program(source: str, *, defaults: dict[str, Any] | None = None) -> WorldProgram:
    """Validate a world program and normalise it (see the module doc).

    Args:
        source: the program's text (a ``WORLD`` dict, optionally ``def build(world)``).
        defaults: values for missing ``WORLD`` keys (default: the target world's).

    Returns:
        The validated :class:`WorldProgram`.

    Raises:
        ProgramError: with ``reason`` in ``size``, ``syntax``, ``forbidden``, ``limit``,
            ``runtime`` or ``invalid`` and a message naming the problem.
    """
    tree = check_source(source)
    builder = _Builder()
    namespace = execute(tree, call=("build", builder))
    if "WORLD" not in namespace:
        raise ProgramError("invalid", "the program defines no WORLD dict")
    world = namespace["WORLD"]
    if not isinstance(world, dict):
        raise ProgramError("invalid", f"WORLD must be a dict, got {type(world).__name__}")
    unknown = [k for k in world if k not in _KEYS]
    if unknown:
        raise ProgramError("invalid", f"WORLD: unknown keys {unknown}; known: {', '.join(_KEYS)}")
    base = dict(_TARGET_DEFAULTS if defaults is None else defaults)
    spec = {**base, **world}

    map_size = int(_number("map_size", spec["map_size"], integer=True))
    dens = _mapping("density", spec["density"], RESOURCES)
    density = tuple(_number(f"density[{r}]", dens.get(r, 0.0)) for r in RESOURCES)
    lo, hi = LIMITS["density"]
    for r, d in zip(RESOURCES, density, strict=True):
        if not lo <= d <= hi:
            raise ProgramError("invalid", f"density[{r}]={d} outside [{lo:g}, {hi:g}]")
    if sum(density) > LIMITS["density_total"][1]:
        raise ProgramError("invalid", f"densities sum to {sum(density):.3g} (at most 0.9)")
    inv = _mapping("start_inventory", spec["start_inventory"], ITEMS)
    start = []
    for item in ITEMS:
        c = inv.get(item, 0)
        if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c <= 9:
            raise ProgramError(
                "invalid", f"start_inventory[{item}] must be an int in [0, 9], got {c!r}"
            )
        start.append(int(c))
    rew = _mapping("rewards", spec["rewards"], ACHIEVEMENTS)
    rewards = []
    for a in ACHIEVEMENTS:
        r = rew.get(a, 1.0)
        if isinstance(r, bool) or not isinstance(r, int | float) or not -1.0 <= r <= 10.0:
            raise ProgramError("invalid", f"rewards[{a}] must be a number in [-1, 10], got {r!r}")
        rewards.append(float(r))
    goal = spec["goal"]
    if goal not in ACHIEVEMENTS:
        raise ProgramError("invalid", f"goal {goal!r} is not an achievement")
    return WorldProgram(
        map_size=map_size,
        density=density,
        start_inventory=tuple(start),
        zombie_spawn=_number("zombie_spawn", spec["zombie_spawn"]),
        zombie_damage=_number("zombie_damage", spec["zombie_damage"]),
        day_length=int(_number("day_length", spec["day_length"], integer=True)),
        episode_length=int(_number("episode_length", spec["episode_length"], integer=True)),
        rewards=tuple(rewards),
        goal=str(goal),
        placements=tuple(builder.placements),
        text=source,
    )


_TARGET_DEFAULTS = _defaults()


def target_program() -> WorldProgram:
    """The target world.

    Returns:
        :data:`TARGET_SOURCE` compiled: a 16x16 map, zombies, 400-step episodes, every
        achievement worth 1, goal ``collect_diamond``.
    """
    return compile_program(TARGET_SOURCE)

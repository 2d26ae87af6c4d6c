"""JSON edits of a parent world (the ``llm`` dreamer's ``edit`` format): :func:`parse_edit`
reads a reply, :func:`apply_edit` writes the child's program (numbers clamped, at most
:data:`MAX_EDITS` key changes)."""

from __future__ import annotations

import ast
import json
import math
from typing import Any

from icml26.dicode.program import (
    LIMITS,
    ProgramError,
    WorldProgram,
)
from icml26.dicode.tech import ACHIEVEMENTS, ITEMS, RESOURCES

__all__ = ["MAX_EDITS", "apply_edit", "parse_edit"]


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

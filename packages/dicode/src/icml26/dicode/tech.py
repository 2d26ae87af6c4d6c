"""The crafting world's vocabulary: blocks, items, actions, achievements and recipes (no jax).

A small Crafter/Craftax-Classic-like tech tree. The names are shared by the JAX world
(:mod:`icml26.dicode.world`), the world programs (:mod:`icml26.dicode.program`) and the metric
keys (``achievement_success.<achievement>.<method>``)::

    wood -> table -> wooden pickaxe / sword -> stone -> furnace, stone pickaxe / sword
         -> coal + iron (stone pickaxe) -> iron pickaxe / sword (table + furnace) -> diamond

plus survival (drink water, eat cows, sleep) and combat (zombies, more at night).
"""

from __future__ import annotations

__all__ = [
    "ACHIEVEMENTS",
    "ACHIEVEMENT_DEPTH",
    "ACTIONS",
    "BLOCKS",
    "DEEP_ACHIEVEMENTS",
    "ITEMS",
    "LATE_ACHIEVEMENTS",
    "RESOURCES",
    "achievement_index",
    "block_index",
    "item_index",
]

#: Map cell types. ``wall`` is bedrock (the outside of a map smaller than the array).
BLOCKS = (
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
    "wall",
)

#: Blocks a world program sets a generation density for (the rest of the map is grass).
RESOURCES = ("tree", "stone", "coal", "iron", "diamond", "water", "cow")

#: Inventory slots (counts capped at 9, as in Crafter).
ITEMS = (
    "wood",
    "stone",
    "coal",
    "iron",
    "diamond",
    "wood_pickaxe",
    "stone_pickaxe",
    "iron_pickaxe",
    "wood_sword",
    "stone_sword",
    "iron_sword",
)

ACTIONS = (
    "noop",
    "left",
    "right",
    "up",
    "down",
    "do",
    "sleep",
    "place_stone",
    "place_table",
    "place_furnace",
    "make_wood_pickaxe",
    "make_stone_pickaxe",
    "make_iron_pickaxe",
    "make_wood_sword",
    "make_stone_sword",
    "make_iron_sword",
)

ACHIEVEMENTS = (
    "collect_wood",
    "place_table",
    "collect_drink",
    "eat_cow",
    "wake_up",
    "make_wood_pickaxe",
    "make_wood_sword",
    "collect_stone",
    "place_stone",
    "place_furnace",
    "collect_coal",
    "make_stone_pickaxe",
    "make_stone_sword",
    "defeat_zombie",
    "collect_iron",
    "make_iron_pickaxe",
    "make_iron_sword",
    "collect_diamond",
)

#: Steps of the tech tree needed before an achievement is possible from an empty inventory.
ACHIEVEMENT_DEPTH = {
    "collect_wood": 0,
    "collect_drink": 0,
    "eat_cow": 0,
    "wake_up": 0,
    "defeat_zombie": 0,
    "place_table": 1,
    "make_wood_pickaxe": 2,
    "make_wood_sword": 2,
    "collect_stone": 3,
    "collect_coal": 3,
    "place_stone": 4,
    "place_furnace": 4,
    "make_stone_pickaxe": 4,
    "make_stone_sword": 4,
    "collect_iron": 5,
    "make_iron_pickaxe": 6,
    "make_iron_sword": 6,
    "collect_diamond": 7,
}

#: The late-game achievements of the "non-zero success where baselines have none" claim:
#: everything that needs a stone pickaxe first (fixed before any run).
DEEP_ACHIEVEMENTS = ("collect_iron", "make_iron_pickaxe", "make_iron_sword", "collect_diamond")
#: The late tier: what needs iron tools (this world has no late-game combat, the paper's claim).
LATE_ACHIEVEMENTS = ("make_iron_pickaxe", "make_iron_sword", "collect_diamond")


def _index(names: tuple[str, ...], kind: str, name: str) -> int:
    try:
        return names.index(name)
    except ValueError:
        raise ValueError(f"unknown {kind} {name!r}; known: {', '.join(names)}") from None


def block_index(name: str) -> int:
    return _index(BLOCKS, "block", name)


def item_index(name: str) -> int:
    return _index(ITEMS, "item", name)


def achievement_index(name: str) -> int:
    return _index(ACHIEVEMENTS, "achievement", name)

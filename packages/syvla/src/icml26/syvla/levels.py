"""BabyAI levels with language and the out-of-distribution splits SyVLA is evaluated on.

Each episode is a single BabyAI room (``minigrid``'s ``RoomGridLevel``) holding one target
object and some distractors, with a text mission built from a template:

* ``goto``: "go to the red ball" (BabyAI ``GoToInstr``: success when facing the object),
* ``pickup``: "pick up the red ball" (``PickupInstr``).

The verifier and the ``BabyAIBot`` expert are minigrid's own; only the sampling of objects,
rooms and phrasings is ours, so that the splits are exact:

* ``train``: the training combinations of colour and object type, the training room size and
  distractor count, the training phrasings;
* ``ood_combo``: the target's colour-object combination is one of :data:`HELD_OUT_COMBOS`,
  never shown in ``train`` (neither as a target nor as a distractor);
* ``ood_layout``: an unseen, larger room with more distractors;
* ``ood_language``: paraphrased instructions whose templates never occur in ``train``.

Any Gymnasium id of a minigrid environment (``BabyAI-PutNextLocal-v0``) is a level too
(:func:`make_level`); the policy then reads minigrid's partial view (:func:`observe`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import minigrid  # noqa: F401  (importing minigrid registers the BabyAI ids with Gymnasium)
import numpy as np
from minigrid.core.constants import COLOR_NAMES
from minigrid.core.roomgrid import RoomGrid
from minigrid.envs.babyai.core.roomgrid_level import RejectSampling, RoomGridLevel
from minigrid.envs.babyai.core.verifier import GoToInstr, ObjDesc, PickupInstr

from icml26.syvla.config import BABYAI_LEVELS

__all__ = [
    "ACTION_NAMES",
    "ALL_COMBOS",
    "BABYAI_LEVELS",
    "HELD_OUT_COMBOS",
    "LEVELS",
    "N_ACTIONS",
    "OBJ_TYPES",
    "SPLITS",
    "TEMPLATES",
    "SplitSpec",
    "SyVLALevel",
    "is_registry_level",
    "make_env",
    "make_level",
    "observe",
    "partial_view",
    "split_spec",
]

OBJ_TYPES: tuple[str, ...] = ("ball", "box", "key")
COLORS: tuple[str, ...] = tuple(COLOR_NAMES)
ALL_COMBOS: tuple[tuple[str, str], ...] = tuple(itertools.product(COLORS, OBJ_TYPES))
#: Colour-object combinations held out of training. Every colour and every type still occurs
#: in training (in other combinations), so ``ood_combo`` tests compositional generalisation.
HELD_OUT_COMBOS: tuple[tuple[str, str], ...] = (
    ("red", "ball"),
    ("green", "key"),
    ("blue", "box"),
    ("yellow", "ball"),
    ("purple", "key"),
)
TRAIN_COMBOS: tuple[tuple[str, str], ...] = tuple(c for c in ALL_COMBOS if c not in HELD_OUT_COMBOS)

#: The level names (tasks) and their minigrid instruction class.
LEVELS: dict[str, Any] = {"goto": GoToInstr, "pickup": PickupInstr}
#: The actions the policy chooses from: minigrid's left, right, forward, pickup, drop (codes
#: 0-4; the bot never asks for drop on our levels, PutNextLocal needs it; toggle and done are
#: left out: no level here needs them).
ACTION_NAMES: tuple[str, ...] = ("left", "right", "forward", "pickup", "drop")
N_ACTIONS = len(ACTION_NAMES)

#: Phrasings per level: the training ones and the paraphrases kept for ``ood_language``.
TEMPLATES: dict[str, dict[str, tuple[str, ...]]] = {
    "goto": {
        "train": ("go to the {color} {type}", "move to the {color} {type}"),
        "ood": ("walk over to the {color} {type}", "head towards the {color} {type}"),
    },
    "pickup": {
        "train": ("pick up the {color} {type}", "pick the {color} {type} up"),
        "ood": ("grab the {color} {type}", "lift the {color} {type} off the floor"),
    },
}


@dataclass(frozen=True)
class SplitSpec:
    """How one split samples episodes.

    Attributes:
        name: the split's name (a metric-key component).
        room_size: side of the room including its walls (BabyAI's ``room_size``).
        num_dists: distractor objects besides the target.
        target_combos: colour-object combinations the target is drawn from.
        distractor_combos: combinations the distractors are drawn from.
        phrasing: ``"train"`` or ``"ood"`` templates of :data:`TEMPLATES`.
        max_steps: episode time limit.
    """

    name: str
    room_size: int
    num_dists: int
    target_combos: tuple[tuple[str, str], ...]
    distractor_combos: tuple[tuple[str, str], ...]
    phrasing: str
    max_steps: int
    levels: tuple[str, ...] = field(default=tuple(LEVELS))

    def combos_shown(self) -> set[tuple[str, str]]:
        """Every colour-object combination an episode of this split can show."""
        return set(self.target_combos) | set(self.distractor_combos)

    def templates(self, level: str) -> tuple[str, ...]:
        return TEMPLATES[level][self.phrasing]


TRAIN_ROOM, OOD_ROOM = 7, 9
SPLITS: dict[str, SplitSpec] = {
    "train": SplitSpec("train", TRAIN_ROOM, 3, TRAIN_COMBOS, TRAIN_COMBOS, "train", 40),
    "ood_combo": SplitSpec("ood_combo", TRAIN_ROOM, 3, HELD_OUT_COMBOS, TRAIN_COMBOS, "train", 40),
    "ood_layout": SplitSpec("ood_layout", OOD_ROOM, 6, TRAIN_COMBOS, TRAIN_COMBOS, "train", 64),
    "ood_language": SplitSpec("ood_language", TRAIN_ROOM, 3, TRAIN_COMBOS, TRAIN_COMBOS, "ood", 40),
}


def split_spec(split: str) -> SplitSpec:
    """The :class:`SplitSpec` named ``split`` (a clear error for unknown names)."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; splits: {', '.join(SPLITS)}")
    return SPLITS[split]


class SyVLALevel(RoomGridLevel):
    """One BabyAI room: a target named by a templated instruction, plus distractors.

    Distractors never share the target's colour-object combination, so the instruction
    names exactly one object.
    """

    def __init__(self, level: str, spec: SplitSpec, **kwargs: Any) -> None:
        if level not in LEVELS:
            raise ValueError(f"unknown level {level!r}; levels: {', '.join(LEVELS)}")
        self.level = level
        self.split = spec  # (gymnasium's Env.spec is the registration spec)
        self.target: tuple[str, str] = ("", "")
        super().__init__(
            num_rows=1,
            num_cols=1,
            room_size=spec.room_size,
            max_steps=spec.max_steps,
            **kwargs,
        )

    def _pick(self, combos: Sequence[tuple[str, str]]) -> tuple[str, str]:
        return combos[self._rand_int(0, len(combos))]

    def gen_mission(self) -> None:
        self.place_agent()
        color, type_ = self._pick(self.split.target_combos)
        self.add_object(0, 0, type_, color)
        others = [c for c in self.split.distractor_combos if c != (color, type_)]
        for _ in range(self.split.num_dists):
            d_color, d_type = self._pick(others)
            self.add_object(0, 0, d_type, d_color)
        self.check_objs_reachable()
        self.target = (color, type_)
        self.instrs = LEVELS[self.level](ObjDesc(type_, color))

    def _gen_grid(self, width: int, height: int) -> None:
        # RoomGridLevel's loop, without its prints: resample until every object is reachable.
        while True:
            try:
                RoomGrid._gen_grid(self, width, height)
                self.gen_mission()
            except RejectSampling:
                continue
            break
        self.surface = self.instrs.surface(self)
        templates = self.split.templates(self.level)
        template = templates[self._rand_int(0, len(templates))]
        self.mission = template.format(color=self.target[0], type=self.target[1])

    def gen_obs(self) -> dict[str, Any]:
        """Only the mission: SyVLA reads :func:`egocentric_view`, so minigrid's partial view
        (the costliest part of a step) is not computed."""
        return {"mission": self.mission}


def make_env(level: str, split: str = "train", *, render: bool = False) -> SyVLALevel:
    """A :class:`SyVLALevel` for ``level`` (``goto``/``pickup``) on ``split``."""
    spec = split_spec(split)
    return SyVLALevel(level, spec, render_mode="rgb_array" if render else None)


def is_registry_level(level: str) -> bool:
    """Whether ``level`` names a Gymnasium environment id (``"BabyAI-GoToLocal-v0"``) rather
    than one of our own levels (``goto``, ``pickup``)."""
    return level not in LEVELS


def make_level(level: str, split: str = "train") -> Any:
    """A fresh environment of ``level``: one of :data:`LEVELS` on ``split``, or any
    Gymnasium id of a minigrid environment (its unwrapped ``MiniGridEnv``; ``split`` is
    ignored).

    Raises:
        ValueError: ``level`` is neither one of ours nor a registered Gymnasium id.
    """
    if not is_registry_level(level):
        return make_env(level, split)
    try:
        return gym.make(level).unwrapped
    except gym.error.Error as err:
        raise ValueError(
            f"unknown level {level!r}: neither {', '.join(LEVELS)} nor a Gymnasium id ({err})"
        ) from err


def egocentric_view(env: SyVLALevel, size: int) -> np.ndarray:
    """The fully observed room, centred on the agent and rotated so that it faces up.

    Returns an ``(size, size, 3)`` uint8 array of minigrid's ``(object, colour, state)``
    codes; cells outside the room are 0 ("unseen"). The agent sits at the centre looking
    towards row 0, so the same network reads rooms of any size up to ``(size + 1) // 2``.
    """
    grid = env.grid.encode()  # (W, H, 3), indexed [x, y]
    w, h, _ = grid.shape
    half = size // 2
    out = np.zeros((size, size, 3), dtype=np.uint8)
    ax, ay = int(env.agent_pos[0]), int(env.agent_pos[1])
    x0, y0 = ax - half, ay - half
    xs, ys = max(x0, 0), max(y0, 0)
    xe, ye = min(x0 + size, w), min(y0 + size, h)
    # out[row=y, col=x]
    out[ys - y0 : ye - y0, xs - x0 : xe - x0] = grid[xs:xe, ys:ye].transpose(1, 0, 2)
    # direction 0 = +x (right), 1 = +y (down), 2 = left, 3 = up; rotate so facing is "up"
    turns = {3: 0, 0: 1, 1: 2, 2: 3}[int(env.agent_dir)]
    return np.ascontiguousarray(np.rot90(out, k=turns, axes=(0, 1)))


def partial_view(env: Any, size: int) -> np.ndarray:
    """minigrid's partial observation (the agent's ``agent_view_size`` square, walls
    occluding), placed in the ``(size, size, 3)`` frame of :func:`egocentric_view`.

    minigrid's view has the agent at its bottom-centre looking towards row 0; here it fills
    the rows ahead of the centre (the agent's cell, holding the carried object if any, at the
    centre), and every cell the agent cannot see, behind it included, is 0 ("unseen"). The
    same network thus reads full and partial views.

    Raises:
        ValueError: a view wider than ``size`` or deeper than ``size // 2 + 1``.
    """
    image = env.gen_obs()["image"]  # (V, V, 3), indexed [x, y]; agent at (V // 2, V - 1)
    v = image.shape[0]
    half = size // 2
    if v > size or v > half + 1:
        raise ValueError(f"a {v} x {v} partial view does not fit ahead of the centre of {size}")
    out = np.zeros((size, size, 3), dtype=np.uint8)
    c0 = half - v // 2
    out[half - v + 1 : half + 1, c0 : c0 + v] = image.transpose(1, 0, 2)
    return out


def observe(env: Any, size: int) -> np.ndarray:
    """The view the policy reads: the full room (:func:`egocentric_view`) on our levels,
    minigrid's partial view (:func:`partial_view`) on registry levels."""
    if isinstance(env, SyVLALevel):
        return egocentric_view(env, size)
    return partial_view(env, size)

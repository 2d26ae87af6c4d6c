"""The reasoning task: visual questions about the scene, answered from the environment state.

SyVLA's claim of *preserved vision-language capability* is measured by a reasoning head that
answers questions about the current view. Questions and their ground-truth answers are made
from the egocentric symbolic view (the very array the model reads), in four families:

* "what colour is the {type}?" (asked only when one object of that type is in the room),
* "which object is {colour}?" (only when one object has that colour),
* "is there a {colour} {type} in the room?" (yes / no, balanced),
* "where is the {colour} {type}?" (ahead / behind / left / right of the agent).

The reasoning head also answers the *instruction* with the next action as a discrete token
(``act:<name>``), the knowledge-insulation recipe of pi0: the backbone learns control from
discrete tokens on the reasoning path while the continuous action path (the intention
queries) sends it no gradient.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from minigrid.core.constants import COLOR_TO_IDX, OBJECT_TO_IDX

from icml26.syvla.levels import ACTION_NAMES, COLORS, OBJ_TYPES

__all__ = [
    "ANSWERS",
    "ANSWER_INDEX",
    "DIRECTIONS",
    "Question",
    "action_answer",
    "ask",
    "objects_in_view",
    "question_texts",
]

DIRECTIONS: tuple[str, ...] = ("ahead", "behind", "left", "right")
ANSWERS: tuple[str, ...] = (
    *COLORS,
    *OBJ_TYPES,
    "yes",
    "no",
    *DIRECTIONS,
    *(f"act:{a}" for a in ACTION_NAMES),
)
ANSWER_INDEX: dict[str, int] = {a: i for i, a in enumerate(ANSWERS)}
_TYPE_OF_IDX = {OBJECT_TO_IDX[t]: t for t in OBJ_TYPES}
_COLOR_OF_IDX = {v: k for k, v in COLOR_TO_IDX.items()}


@dataclass(frozen=True)
class Question:
    text: str
    answer: str

    @property
    def answer_index(self) -> int:
        return ANSWER_INDEX[self.answer]


def action_answer(action: int) -> int:
    """The answer index of the discrete action token ``act:<name>``."""
    return ANSWER_INDEX[f"act:{ACTION_NAMES[action]}"]


def objects_in_view(view: np.ndarray) -> list[tuple[str, str, int, int]]:
    """``(colour, type, row, col)`` of every ball, box and key in an egocentric view."""
    found = []
    for code, type_ in _TYPE_OF_IDX.items():
        rows, cols = np.nonzero(view[:, :, 0] == code)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            found.append((_COLOR_OF_IDX[int(view[r, c, 1])], type_, r, c))
    return found


def _direction(view_size: int, row: int, col: int) -> str | None:
    centre = view_size // 2
    ahead, right = centre - row, col - centre
    if abs(ahead) == abs(right):
        return None  # on a diagonal: no single answer
    if abs(ahead) > abs(right):
        return "ahead" if ahead > 0 else "behind"
    return "right" if right > 0 else "left"


def question_texts() -> list[str]:
    """Every question text :func:`ask` can produce (to embed once)."""
    texts = [f"what colour is the {t}?" for t in OBJ_TYPES]
    texts += [f"which object is {c}?" for c in COLORS]
    for c in COLORS:
        for t in OBJ_TYPES:
            texts += [f"is there a {c} {t} in the room?", f"where is the {c} {t}?"]
    return texts


def ask(view: np.ndarray, rng: np.random.Generator) -> Question:
    """One question about ``view`` with its true answer (family drawn uniformly among those
    that have an unambiguous answer in this view)."""
    objs = objects_in_view(view)
    options: list[Question] = []
    types = [o[1] for o in objs]
    colors = [o[0] for o in objs]
    combos = {(o[0], o[1]) for o in objs}
    unique_types = [t for t in OBJ_TYPES if types.count(t) == 1]
    if unique_types:
        t = unique_types[rng.integers(len(unique_types))]
        options.append(Question(f"what colour is the {t}?", colors[types.index(t)]))
    unique_colors = [c for c in COLORS if colors.count(c) == 1]
    if unique_colors:
        c = unique_colors[rng.integers(len(unique_colors))]
        options.append(Question(f"which object is {c}?", types[colors.index(c)]))
    if rng.random() < 0.5 and combos:
        c, t = sorted(combos)[rng.integers(len(combos))]
        options.append(Question(f"is there a {c} {t} in the room?", "yes"))
    else:
        absent = [(c, t) for c in COLORS for t in OBJ_TYPES if (c, t) not in combos]
        c, t = absent[rng.integers(len(absent))]
        options.append(Question(f"is there a {c} {t} in the room?", "no"))
    placed = []
    for c, t, r, col in objs:
        d = _direction(view.shape[0], r, col)
        if d is not None and sum(1 for o in objs if (o[0], o[1]) == (c, t)) == 1:
            placed.append(Question(f"where is the {c} {t}?", d))
    if placed:
        options.append(placed[rng.integers(len(placed))])
    return options[rng.integers(len(options))]

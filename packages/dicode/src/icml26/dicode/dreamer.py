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

The pieces live in :mod:`icml26.dicode.dreams` (records, context, protocol),
:mod:`icml26.dicode.mutation` (the offline dreamer) and :mod:`icml26.dicode.edits` (JSON
edits); this module holds the LLM dreamer and re-exports them.

Every dreamer returns :class:`Dream` records: the source, the compiled program or ``None``,
and the rejection reason, so ``program_valid_rate.<dreamer>`` is measured, not assumed.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import numpy as np

from icml26.dicode.dreams import (
    Dream,
    DreamContext,
    Dreamer,
    compile_dream,
    frontier_goals,
    seed_programs,
    summarise_reasons,
)
from icml26.dicode.edits import MAX_EDITS, apply_edit, parse_edit
from icml26.dicode.mutation import MutationDreamer, random_program
from icml26.dicode.program import (
    PLACEABLE,
    ProgramError,
    WorldProgram,
    compile_program,
    target_program,
)
from icml26.dicode.tech import ACHIEVEMENTS, ITEMS, RESOURCES

__all__ = [
    "EDIT_EXAMPLES",
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
    "seed_programs",
    "summarise_reasons",
]

_CODE_BLOCK = re.compile(r"```(?:python)?\s*\n(.*?)```", re.DOTALL)


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
            return [compile_dream(self.extract(r.text), "llm") for r in replies]
        return [self._from_edit(p, r.text) for p, r in zip(parents, replies, strict=True)]

    @staticmethod
    def _from_edit(parent: WorldProgram, reply: str) -> Dream:
        try:
            source, notes = apply_edit(parent, parse_edit(reply))
        except ProgramError as exc:
            return Dream(reply, None, exc.reason, exc.detail, "llm_edit")
        dream = compile_dream(source, "llm_edit")
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

"""Data for SyVLA: text embeddings, vectorised environments, expert demonstrations, VQA sets.

* :class:`TextBank` embeds every instruction and question the splits can produce once with
  the frozen encoder and looks them up by text.
* :class:`VecEnv` steps ``n`` BabyAI rooms in lockstep (auto-reset), returning views
  (:func:`~icml26.syvla.levels.observe`: full on our levels, partial on registry levels) and
  missions as arrays.
* :func:`collect_demos` runs minigrid's ``BabyAIBot`` expert: (view, instruction, action)
  triples of solved episodes.
* :func:`vqa_set` draws (view, question, answer) triples from states of a split.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from minigrid.utils.baby_ai_bot import BabyAIBot

from icml26.shared import rng_for
from icml26.syvla.language import TextEncoder
from icml26.syvla.levels import (
    ACTION_NAMES,
    ALL_COMBOS,
    LEVELS,
    N_ACTIONS,
    SPLITS,
    TEMPLATES,
    SyVLALevel,
    is_registry_level,
    make_level,
    observe,
)
from icml26.syvla.vqa import ask, question_texts

__all__ = [
    "Demos",
    "TextBank",
    "VQASet",
    "VecEnv",
    "collect_demos",
    "random_states",
    "vqa_set",
]


def all_instructions() -> list[str]:
    """Every instruction any split can produce."""
    out = []
    for level, phrasings in TEMPLATES.items():
        del level
        for templates in phrasings.values():
            for template in templates:
                out += [template.format(color=c, type=t) for c, t in ALL_COMBOS]
    return sorted(set(out))


class TextBank:
    """Instruction and question embeddings, indexed by text; a text not seen yet is embedded
    by the encoder on first use (any instruction works, not only the splits' templates).

    Args:
        encoder: the frozen sentence encoder.
        texts: texts to embed now (default: every instruction and question of the splits).
    """

    def __init__(self, encoder: TextEncoder, texts: list[str] | None = None) -> None:
        self.encoder = encoder
        self.texts: list[str] = []
        self.index: dict[str, int] = {}
        self.vectors = np.zeros((0, getattr(encoder, "dim", 0)), dtype=np.float32)
        self.add(texts if texts is not None else all_instructions() + question_texts())

    def add(self, texts: list[str]) -> None:
        """Embed the ``texts`` not in the bank yet (an empty text is a ``ValueError``)."""
        new = sorted({t for t in texts if t not in self.index})
        if not new:
            return
        vecs = self.encoder.encode(new)
        self.index.update({t: len(self.texts) + i for i, t in enumerate(new)})
        self.texts += new
        self.vectors = np.concatenate([self.vectors.reshape(-1, vecs.shape[1]), vecs])

    def ids(self, texts: list[str]) -> np.ndarray:
        """Row indices of ``texts`` in :attr:`vectors` (embedding new ones first)."""
        self.add(list(texts))
        return np.array([self.index[t] for t in texts], dtype=np.int64)


def _quiet_reset(env: Any, seed: int) -> None:
    """``env.reset(seed=seed)`` without the registry levels' "Sampling rejected" prints."""
    with contextlib.redirect_stdout(io.StringIO()):
        env.reset(seed=seed)


class VecEnv:
    """``n`` rooms of ``split`` stepped in lockstep; each episode draws its level at random.

    ``stream`` names the random stream of the episodes (``"rl"``, ``"eval"``, ``"vqa"``):
    two streams never replay each other's episode seeds, whatever the seed. ``observer``
    makes a view of an environment (default :func:`~icml26.syvla.levels.observe`; the RGB
    path: :func:`icml26.syvla.rgb.rgb_observer`).

    Attributes after :meth:`reset` / :meth:`step`: ``views`` (n, S, S, 3) uint8 and
    ``missions`` (list of n texts) describe the current observations.
    """

    def __init__(
        self,
        n: int,
        split: str,
        view_size: int,
        *,
        seed: int,
        stream: str = "rl",
        levels: tuple[str, ...] = tuple(LEVELS),
        observer: Callable[[Any, int], np.ndarray] = observe,
    ) -> None:
        if n < 1:
            raise ValueError("a VecEnv needs at least one environment")
        self.split = split
        self.view_size = view_size
        # episodes come from the seed's ``env/<stream>`` stream: RL, evaluation and the
        # demonstrations (``demos``) never replay each other's rooms, whatever the seed
        self.rng = rng_for(seed, "env", stream)
        self.levels = levels
        self.observer = observer
        self.envs: dict[str, list[SyVLALevel]] = {
            level: [make_level(level, split) for _ in range(n)] for level in levels
        }
        self.n = n
        self.current: list[SyVLALevel] = []
        self.views = np.zeros((n, view_size, view_size, 3), dtype=np.uint8)
        self.missions: list[str] = [""] * n
        self.episode_return = np.zeros(n)
        self.episode_len = np.zeros(n, dtype=np.int64)

    def _reset_one(self, i: int) -> None:
        level = self.levels[self.rng.integers(len(self.levels))]
        env = self.envs[level][i]
        _quiet_reset(env, int(self.rng.integers(2**31 - 1)))
        if len(self.current) <= i:
            self.current.append(env)
        else:
            self.current[i] = env
        self.views[i] = self.observer(env, self.view_size)
        self.missions[i] = env.mission

    def reset(self) -> None:
        self.current = []
        for i in range(self.n):
            self._reset_one(i)
        self.episode_return[:] = 0
        self.episode_len[:] = 0

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, list[tuple[int, float, int]]]:
        """Apply ``actions``; returns rewards, done flags and (env index, return, length) of
        every episode that ended (its environment is reset for the next observation)."""
        rewards = np.zeros(self.n)
        dones = np.zeros(self.n, dtype=bool)
        finished = []
        for i, env in enumerate(self.current):
            _, r, term, trunc, _ = env.step(int(actions[i]))
            rewards[i] = r
            self.episode_return[i] += r
            self.episode_len[i] += 1
            if term or trunc:
                dones[i] = True
                finished.append((i, float(self.episode_return[i]), int(self.episode_len[i])))
                self.episode_return[i] = 0
                self.episode_len[i] = 0
                self._reset_one(i)
            else:
                self.views[i] = self.observer(env, self.view_size)
        return rewards, dones, finished


@dataclass
class Demos:
    views: np.ndarray  # (N, S, S, 3) uint8
    missions: list[str]
    actions: np.ndarray  # (N,) int64
    episodes: int
    solved: int
    starts: np.ndarray | None = None  # first step of every episode, when known

    def __len__(self) -> int:
        return len(self.actions)


def collect_demos(
    n_episodes: int,
    split: str,
    view_size: int,
    *,
    seed: int,
    levels: tuple[str, ...] = tuple(LEVELS),
) -> Demos:
    """Expert demonstrations from minigrid's ``BabyAIBot`` (only solved episodes are kept).

    Episodes come from the seed's ``demos`` stream (never an RL or evaluation room);
    ``Demos.starts`` indexes the first step of every kept episode.

    Args:
        n_episodes: episodes to play.
        split: the split to play (see :data:`icml26.syvla.levels.SPLITS`).
        view_size: side of the egocentric views.
        seed: the run seed.
        levels: the levels drawn from.

    Returns:
        :class:`Demos` (view, mission, action) of the solved episodes.

    Raises:
        RuntimeError: the bot chose an action outside the policy's five on one of our levels
            (on a registry level such an episode, the bot opening a door with ``toggle``, is
            dropped like an unsolved one).
    """
    rng = rng_for(seed, "demos")
    envs = {level: make_level(level, split) for level in levels}
    views: list[np.ndarray] = []
    missions: list[str] = []
    actions: list[int] = []
    starts: list[int] = []
    solved = 0
    for _ in range(n_episodes):
        env_level = levels[rng.integers(len(levels))]
        env = envs[env_level]
        _quiet_reset(env, int(rng.integers(2**31 - 1)))
        bot = BabyAIBot(env)
        ep_views, ep_actions = [], []
        reward, done = 0.0, False
        while not done:
            action = int(bot.replan())
            if action >= N_ACTIONS and is_registry_level(env_level):
                reward = 0.0  # (toggle / done): not an episode of the policy's actions
                break
            if action >= N_ACTIONS:
                raise RuntimeError(
                    f"the expert chose {action}, outside the policy's actions {ACTION_NAMES}"
                )
            ep_views.append(observe(env, view_size))
            ep_actions.append(action)
            _, reward, term, trunc, _ = env.step(action)
            done = term or trunc
        if reward > 0:
            solved += 1
            starts.append(len(actions))
            views += ep_views
            actions += ep_actions
            missions += [env.mission] * len(ep_actions)
    return Demos(
        views=np.stack(views) if views else np.zeros((0, view_size, view_size, 3), np.uint8),
        missions=missions,
        actions=np.array(actions, dtype=np.int64),
        episodes=n_episodes,
        solved=solved,
        starts=np.array(starts, dtype=np.int64),
    )


@dataclass
class VQASet:
    views: np.ndarray
    questions: list[str]
    answers: np.ndarray  # answer indices

    def __len__(self) -> int:
        return len(self.answers)


def vqa_set(views: np.ndarray, *, seed: int) -> VQASet:
    """One question per view with its true answer."""
    rng = np.random.default_rng(seed)
    qs = [ask(v, rng) for v in views]
    return VQASet(views, [q.text for q in qs], np.array([q.answer_index for q in qs]))


def random_states(
    n: int, split: str, view_size: int, *, seed: int, stream: str = "vqa"
) -> np.ndarray:
    """Views from random-action play on ``split`` (states for VQA questions), from the seed's
    ``env/<stream>`` stream (``"vqa_train"`` and ``"vqa_eval"`` are separate streams)."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; splits: {', '.join(SPLITS)}")
    env = VecEnv(min(n, 16), split, view_size, seed=seed, stream=stream)
    rng = rng_for(seed, "actions", stream)
    out: list[np.ndarray] = []
    # one view per room and reset, after 0-7 random steps: random play that stays in a room
    # for its whole episode would give a few dozen rooms, and a VQA model that memorises them
    while len(out) < n:
        env.reset()
        for _ in range(int(rng.integers(0, 8))):
            env.step(rng.integers(0, 3, size=env.n))
        out += list(env.views.copy())
    return np.stack(out[:n])

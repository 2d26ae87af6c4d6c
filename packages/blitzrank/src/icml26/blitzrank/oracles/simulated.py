"""Simulated oracles over latent scores, with a token model of a listwise LLM prompt.

* :class:`PerfectOracle`: sorts by the latent score (a consistent, noiseless oracle).
* :class:`PlackettLuceOracle`: an order drawn from Plackett-Luce with utilities
  ``score / temperature`` (Gumbel-max: sort ``score / T + Gumbel``); ``T -> 0`` is perfect.
* :class:`BradleyTerryOracle`: every pair in the query decided independently,
  ``P(i > j) = sigmoid((s_i - s_j) / T)``, the order given by pairwise wins (Copeland), so
  answers to different queries are mutually inconsistent but each is a valid order.
* :class:`PersistentOracle`: the failure modes of a real listwise LLM at temperature 0. Its
  Plackett-Luce noise has a persistent share ``persistence`` (per item, drawn once per query
  and shared by every method: the same prompt gets the same wrong answer) and a fresh share
  (redrawn on every call), ``key = s / T + sqrt(persistence) G_item + sqrt(1 - persistence)
  G_call`` (so ``persistence = 0`` is :class:`PlackettLuceOracle` exactly, and the total noise
  variance does not depend on it), plus a primacy bias ``position_bias * (L-1-p) / (L-1)`` for
  the item shown at position ``p`` of ``L``. Re-asking a comparison cannot average out the
  persistent share: it is the sliding window's worst case, not BlitzRank's.
* :class:`CyclicOracle`: adversarial non-transitivity: items are split, by score, into
  groups whose internal preferences form a regular tournament (for three items the cycle
  ``a > b > c > a``); between groups the order is consistent. A k-wise answer must be a
  linear order, so inside a group it starts from a member that rotates from call to call,
  and different answers contradict each other exactly along the cycles.

Tokens are charged from the prompt as built (:class:`PromptTokens`, the default): the text of
:func:`~icml26.blitzrank.oracles.prompts.listwise_messages` for the call (instructions,
identifiers, the query's two slots) at a stated 4 characters per token, plus the query's and
each passage's tokens, and the answer the prompt asks for (``[2] > [1] > ...``) at the same
rule. :class:`TokenModel` keeps hand-set constants for users who know their prompt's cost.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from icml26.blitzrank.oracles.base import BaseOracle
from icml26.blitzrank.oracles.prompts import label, listwise_messages

__all__ = [
    "BradleyTerryOracle",
    "CyclicOracle",
    "LatentScoreOracle",
    "PerfectOracle",
    "PersistentOracle",
    "PlackettLuceOracle",
    "PromptTokens",
    "TokenModel",
    "check_position_bias",
    "make_oracle",
    "primacy_bonus",
]


@dataclass(frozen=True)
class TokenModel:
    """Token cost of one call of a listwise / setwise / pairwise prompt.

    ``input = header + query + sum(passage + per_item)``;
    ``output = out_header + per_id * (number of ids the answer must list)``.
    """

    header: int = 60
    per_item: int = 5
    out_header: int = 2
    per_id: int = 4

    def __post_init__(self) -> None:
        for name in ("header", "per_item", "out_header", "per_id"):
            if getattr(self, name) < 0:
                raise ValueError(f"TokenModel.{name} must be >= 0")

    def cost(
        self, passage_tokens: np.ndarray, items: Sequence[int], query_tokens: int, listed: int
    ) -> dict[str, int]:
        inp = self.header + query_tokens + int(passage_tokens[list(items)].sum())
        inp += self.per_item * len(items)
        return {"input_tokens": inp, "output_tokens": self.out_header + self.per_id * listed}


#: The stated rule: characters per token (close to BPE tokenizers on English text).
CHARS_PER_TOKEN = 4.0


@lru_cache(maxsize=256)
def _prompt_chars(length: int, top: int | None) -> int:
    """Characters of the prompt for ``length`` passages with the query and passages empty:
    the system message, the instruction, the identifiers and their line breaks."""
    msgs = listwise_messages("", [""] * length, top)
    return sum(len(m["content"]) for m in msgs)


@dataclass(frozen=True)
class PromptTokens:
    """Token cost of one call, charged from the prompt as built.

    ``input = chars(listwise_messages(...) without query and passages) / chars_per_token +
    2 * query + sum(passages)`` (the prompt states the query twice);
    ``output = chars("[2] > [1] > ...", one id per item the answer lists) / chars_per_token``.
    Chat-template tokens (role markers) are not counted: a few per call, the same for every
    method per call.

    Args:
        chars_per_token: the stated rule (default 4).

    Raises:
        ValueError: ``chars_per_token <= 0``.
    """

    chars_per_token: float = CHARS_PER_TOKEN

    def __post_init__(self) -> None:
        if not self.chars_per_token > 0:
            raise ValueError(f"chars_per_token must be > 0, got {self.chars_per_token!r}")

    def cost(
        self, passage_tokens: np.ndarray, items: Sequence[int], query_tokens: int, listed: int
    ) -> dict[str, int]:
        """Input and output tokens of one call showing ``items`` whose answer lists ``listed``
        identifiers."""
        length = len(items)
        top = None if listed >= length else listed
        inp = math.ceil(_prompt_chars(length, top) / self.chars_per_token)
        inp += 2 * query_tokens + int(passage_tokens[list(items)].sum())
        answer = " > ".join(f"[{label(i)}]" for i in range(listed))
        return {
            "input_tokens": inp,
            "output_tokens": math.ceil(len(answer) / self.chars_per_token),
        }


def check_position_bias(position_bias: float) -> float:
    """``position_bias`` as a float, refused unless ``>= 0`` (NaN included)."""
    if not position_bias >= 0:
        raise ValueError(f"position_bias must be >= 0, got {position_bias!r}")
    return float(position_bias)


def primacy_bonus(length: int, position_bias: float) -> np.ndarray:
    """The primacy bias ``position_bias * (L-1-p) / (L-1)`` of each position ``p`` of ``L``.

    The first-shown item gains ``position_bias`` utility units over the last, linearly in
    between (listwise LLM rerankers favour what they read first); zeros when ``L < 2``.
    """
    if length < 2 or position_bias == 0.0:
        return np.zeros(length)
    return position_bias * np.linspace(1.0, 0.0, length)


class LatentScoreOracle(BaseOracle):
    """The base of every oracle over fixed latent scores: validation, token accounting from
    the prompt (:class:`PromptTokens`), a seeded generator; subclasses define ``_order``.

    Args:
        scores: one latent score per item (higher is better).
        k: the most items per call.
        passage_tokens: tokens of each passage (default 100 each).
        query_tokens: tokens of the query.
        token_model: the prompt's token model (default :class:`PromptTokens`).
        seed: seeds the oracle's noise.

    Raises:
        ValueError: scores not one-dimensional or not finite, or ``passage_tokens`` of
            another length.
    """

    def __init__(
        self,
        scores: Sequence[float] | np.ndarray,
        k: int,
        *,
        passage_tokens: Sequence[int] | np.ndarray | None = None,
        query_tokens: int = 12,
        token_model: TokenModel | PromptTokens | None = None,
        seed: int = 0,
    ) -> None:
        s = np.asarray(scores, dtype=float)
        if s.ndim != 1:
            raise ValueError(f"scores must be one-dimensional, got shape {s.shape}")
        if not np.all(np.isfinite(s)):
            raise ValueError("scores contain NaN or infinite values")
        super().__init__(int(s.shape[0]), k)
        self.scores = s
        if passage_tokens is None:
            passage_tokens = np.full(self.n, 100)
        self.passage_tokens = np.asarray(passage_tokens, dtype=np.int64)
        if self.passage_tokens.shape != s.shape:
            raise ValueError("passage_tokens must have one entry per item")
        self.query_tokens = int(query_tokens)
        self.tokens = token_model or PromptTokens()
        self.rng = np.random.default_rng(seed)

    def _answer(self, items: tuple[int, ...], top: int | None) -> tuple[list[int], dict[str, Any]]:
        order = self._order(np.asarray(items))
        listed = len(items) if top is None else top
        return [int(i) for i in order], self.tokens.cost(
            self.passage_tokens, items, self.query_tokens, listed
        )

    def _order(self, items: np.ndarray) -> np.ndarray:
        """Abstract hook: the simulated oracle's order of ``items``, best first."""
        raise NotImplementedError(f"{type(self).__name__} must define _order (abstract hook)")


class PerfectOracle(LatentScoreOracle):
    """Orders by the latent score, ties by id: consistent and noiseless."""

    def _order(self, items: np.ndarray) -> np.ndarray:
        return items[np.lexsort((items, -self.scores[items]))]


class PlackettLuceOracle(LatentScoreOracle):
    """Plackett-Luce answers with utilities ``score / temperature``, fresh noise every call.

    Args:
        scores: one latent score per item (larger is better).
        k: the window (most items per call), at least 2.
        temperature: ``T`` of the utilities ``score / T`` (>= 0; 0 is a perfect oracle).
        **kw: the keywords of :class:`LatentScoreOracle`: ``passage_tokens`` (tokens of each
            item's passage, default 100 each, for the token accounting of a listwise prompt,
            :class:`PromptTokens`), ``query_tokens`` (tokens of the query), ``token_model``
            (the prompt's token model, default :class:`PromptTokens`: the prompt as built, 4
            characters per token) and ``seed`` (seeds the noise).

    Raises:
        ValueError: a negative temperature, scores that are not a finite vector, fewer than
            2 items, ``k < 2``, or ``passage_tokens`` of the wrong length.
    """

    def __init__(self, scores: Any, k: int, *, temperature: float = 0.5, **kw: Any) -> None:
        if not temperature >= 0:
            raise ValueError(f"temperature must be >= 0, got {temperature!r}")
        super().__init__(scores, k, **kw)
        self.temperature = float(temperature)

    def _order(self, items: np.ndarray) -> np.ndarray:
        if self.temperature == 0:
            return items[np.lexsort((items, -self.scores[items]))]
        keys = self.scores[items] / self.temperature + self.rng.gumbel(size=items.shape[0])
        return items[np.argsort(-keys, kind="stable")]


class PersistentOracle(LatentScoreOracle):
    """Plackett-Luce with a persistent per-item share of the noise and a primacy bias.

    Args:
        temperature: ``T`` of the utilities ``score / T`` (> 0).
        persistence: the share of the Gumbel noise's variance fixed per item, in [0, 1].
        position_bias: utility bonus of the first-shown item over the last (>= 0), linear in
            the position in between.
        item_seed: seeds the persistent noise; give every method the same one for a query, so
            that they all face the same persistent errors (``seed`` still drives the fresh part).
        **kw: ``passage_tokens``, ``query_tokens``, ``token_model``, ``seed``, as for
            :class:`PlackettLuceOracle`.

    Raises:
        ValueError: a temperature not above 0, a persistence outside [0, 1], a negative
            position bias, or bad scores.
    """

    def __init__(
        self,
        scores: Any,
        k: int,
        *,
        temperature: float = 0.5,
        persistence: float = 1.0,
        position_bias: float = 0.0,
        item_seed: int = 0,
        **kw: Any,
    ) -> None:
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, got {temperature!r}")
        if not 0.0 <= persistence <= 1.0:
            raise ValueError(f"persistence must be in [0, 1], got {persistence!r}")
        super().__init__(scores, k, **kw)
        self.temperature = float(temperature)
        self.persistence = float(persistence)
        self.position_bias = check_position_bias(position_bias)
        self.item_noise = np.random.default_rng(item_seed).gumbel(size=self.n)

    def _order(self, items: np.ndarray) -> np.ndarray:
        keys = self.scores[items] / self.temperature
        if self.persistence < 1.0:
            keys = keys + np.sqrt(1.0 - self.persistence) * self.rng.gumbel(size=items.shape[0])
        if self.persistence > 0.0:
            keys = keys + np.sqrt(self.persistence) * self.item_noise[items]
        keys = keys + primacy_bonus(items.shape[0], self.position_bias)
        return items[np.argsort(-keys, kind="stable")]


class BradleyTerryOracle(LatentScoreOracle):
    """Independent Bradley-Terry pairs inside each query, ordered by pairwise wins."""

    def __init__(self, scores: Any, k: int, *, temperature: float = 0.5, **kw: Any) -> None:
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, got {temperature!r}")
        super().__init__(scores, k, **kw)
        self.temperature = float(temperature)

    def _order(self, items: np.ndarray) -> np.ndarray:
        s = self.scores[items]
        p = 1.0 / (1.0 + np.exp(-(s[:, None] - s[None, :]) / self.temperature))
        upper = np.triu(self.rng.random(p.shape) < p, 1)
        beats = upper | np.tril(~upper.T, -1)
        wins = beats.sum(axis=1)
        jitter = self.rng.random(items.shape[0])
        return items[np.lexsort((jitter, -wins))]


class CyclicOracle(LatentScoreOracle):
    """Consistent between groups of ``group_size`` items (by score), cyclic inside each.

    Inside a group of odd size g, member ``i`` beats member ``j`` iff ``(j - i) mod g`` is in
    ``1..(g-1)/2`` (a regular tournament: every member wins and loses equally often).
    """

    def __init__(self, scores: Any, k: int, *, group_size: int = 3, **kw: Any) -> None:
        super().__init__(scores, k, **kw)
        if group_size < 3 or group_size % 2 == 0:
            raise ValueError(f"group_size must be an odd integer >= 3, got {group_size}")
        self.group_size = group_size
        by_score = np.lexsort((np.arange(self.n), -self.scores))
        self.group = np.empty(self.n, dtype=np.int64)
        self.slot = np.empty(self.n, dtype=np.int64)
        self.group[by_score] = np.arange(self.n) // group_size
        self.slot[by_score] = np.arange(self.n) % group_size
        self._calls = 0

    def beats(self, i: int, j: int) -> bool:
        """The oracle's pairwise preference (the ground-truth non-transitive tournament)."""
        if self.group[i] != self.group[j]:
            return bool(self.group[i] < self.group[j])
        g = int(np.sum(self.group == self.group[i]))
        if g < 3:  # a last group with fewer than 3 members is ordered by score
            return bool(self.slot[i] < self.slot[j])
        d = (self.slot[j] - self.slot[i]) % g
        return bool(1 <= d <= (g - 1) // 2)

    def _order(self, items: np.ndarray) -> np.ndarray:
        self._calls += 1
        wins = np.array([sum(self.beats(i, j) for j in items if j != i) for i in items])
        rot = (self.slot[items] + self._calls) % self.group_size  # rotating start in a cycle
        return items[np.lexsort((rot, -wins, self.group[items]))]


def make_oracle(
    noise: str,
    scores: Any,
    k: int,
    *,
    temperature: float = 0.5,
    group_size: int = 3,
    persistence: float = 1.0,
    position_bias: float = 0.0,
    item_seed: int = 0,
    **kw: Any,
) -> LatentScoreOracle:
    """A simulated oracle by name: ``perfect``, ``pl``, ``bt``, ``persistent`` or ``cyclic``."""
    if noise == "perfect":
        return PerfectOracle(scores, k, **kw)
    if noise == "pl":
        return PlackettLuceOracle(scores, k, temperature=temperature, **kw)
    if noise == "bt":
        return BradleyTerryOracle(scores, k, temperature=temperature, **kw)
    if noise == "persistent":
        return PersistentOracle(
            scores,
            k,
            temperature=temperature,
            persistence=persistence,
            position_bias=position_bias,
            item_seed=item_seed,
            **kw,
        )
    if noise == "cyclic":
        return CyclicOracle(scores, k, group_size=group_size, **kw)
    raise ValueError(f"noise must be one of perfect, pl, bt, persistent, cyclic; got {noise!r}")

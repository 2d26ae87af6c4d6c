"""A listwise oracle over a real model's fixed relevance scores, with position effects.

:class:`ScoreOracle` answers a k-wise query by sorting the shown items by

``key(item at position p of L) = score(item) + position_bias * (L-1-p)/(L-1) + prompt_noise * G``

where ``score`` is a relevance model's output for (query, passage) (e.g. MiniLM cosine
similarities, z-scored over the query's candidates: :mod:`icml26.blitzrank.oracles.minilm`),
the second term is a primacy bias (the first-shown passage gains ``position_bias`` over the
last, as listwise LLM rerankers favour what they read first), and ``G`` is Gumbel noise
seeded by the prompt itself (``prompt_seed`` and the shown items in their order).

So the oracle is **deterministic per prompt**: the same items in the same order always get
the same answer (a temperature-0 LLM), its errors are the scoring model's own (persistent:
the same passage is misjudged in every prompt), and the presentation order changes answers
only through the position bias and the prompt-seeded noise. Unlike the simulated oracles its
errors are not drawn from a noise model: they are where a real text model misranks the
factbook passages.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icml26.blitzrank.oracles.simulated import LatentScoreOracle, check_position_bias, primacy_bonus

__all__ = ["ScoreOracle"]


class ScoreOracle(LatentScoreOracle):
    """Sorts by fixed scores plus a primacy bias and optional per-prompt (seeded) noise.

    Args:
        scores: one relevance score per candidate (utility units; larger is better).
        k: the window (most items per call).
        position_bias: utility bonus of the first-shown item over the last (>= 0).
        prompt_noise: scale of the per-prompt Gumbel noise (>= 0; 0: scores and bias only).
        prompt_seed: seeds that noise together with the prompt's items in order.
        **kw: ``passage_tokens``, ``query_tokens``, ``token_model``: token accounting, as
            for every simulated oracle (:class:`~icml26.blitzrank.oracles.simulated.PromptTokens`).

    Raises:
        ValueError: a negative position bias, prompt noise or prompt seed, or scores that are
            not a finite vector of at least 2 items.
    """

    def __init__(
        self,
        scores: Any,
        k: int,
        *,
        position_bias: float = 0.0,
        prompt_noise: float = 0.0,
        prompt_seed: int = 0,
        **kw: Any,
    ) -> None:
        if not prompt_noise >= 0:
            raise ValueError(f"prompt_noise must be >= 0, got {prompt_noise!r}")
        if prompt_seed < 0:
            raise ValueError(f"prompt_seed must be >= 0, got {prompt_seed!r}")
        super().__init__(scores, k, **kw)
        self.position_bias = check_position_bias(position_bias)
        self.prompt_noise = float(prompt_noise)
        self.prompt_seed = int(prompt_seed)

    def _order(self, items: np.ndarray) -> np.ndarray:
        keys = self.scores[items].astype(float)
        keys = keys + primacy_bonus(items.shape[0], self.position_bias)
        if self.prompt_noise > 0.0:
            rng = np.random.default_rng([self.prompt_seed, *(int(i) for i in items)])
            keys = keys + self.prompt_noise * rng.gumbel(size=items.shape[0])
        return items[np.lexsort((items, -keys))]  # ties by id: order-blind but for the bias

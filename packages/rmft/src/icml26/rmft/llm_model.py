"""The LLM side of RMFT on the shared post-training path (:mod:`icml26.shared.llm`).

* :func:`make_tiny_policy_lm`: the shared tiny Llama (:mod:`icml26.shared.llm.tiny`) with a
  tokenizer trained on this package's prompts, warm-started by a few SFT steps on replies of
  the form ``Action: <n>`` (random ``n``) so that some of its replies parse and RMFT has
  transcripts to select. For smoke runs and tests: it knows no language and says nothing
  about the paper's claims. Saved as a model folder (``load_causal_lm(path)`` loads it).
* :func:`as_conversations`: RMFT's ``(messages, reply)`` decisions as chat conversations for
  :func:`icml26.shared.llm.sft.sft`, whose loss is on the reply (and its end-of-turn token).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

__all__ = ["TINY_SPEC", "as_conversations", "make_tiny_policy_lm"]

#: The model spec that the run (:mod:`icml26.rmft.study`) turns into a tiny random model.
TINY_SPEC = "tiny-random"


def as_conversations(
    pairs: Sequence[tuple[Sequence[dict[str, str]], str]],
) -> list[list[dict[str, str]]]:
    """``messages + [{"role": "assistant", "content": reply}]`` per decision.

    Raises:
        ValueError: no pairs.
    """
    if not pairs:
        raise ValueError("no transcripts to train on")
    return [
        [*map(dict, messages), {"role": "assistant", "content": reply}] for messages, reply in pairs
    ]


def _corpus() -> list[str]:
    from icml26.rmft.envs import EnvSpec
    from icml26.rmft.llm_policy import SCENARIOS, build_messages

    texts = ["Action: 1", "Action: 2", "Action: 3", "I choose button 2 because it pays more."]
    spec = EnvSpec("bernoulli", 5, 20)
    counts, sums = np.array([1, 0, 3, 2, 1]), np.array([1, 0, 2, 1, 0])
    for scenario in SCENARIOS.values():
        texts += [m["content"] for m in build_messages(scenario, spec, 3, counts, sums)]
    return texts * 10


def _warm_start_conversations(rng: np.random.Generator) -> list[list[dict[str, str]]]:
    from icml26.rmft.envs import EnvSpec
    from icml26.rmft.llm_policy import SCENARIOS, build_messages

    pairs = []
    for k in (3, 4, 5):
        spec = EnvSpec("bernoulli", k, 10)
        for scenario in SCENARIOS.values():
            for t in range(3):
                counts = rng.integers(0, 3, size=k)
                sums = np.minimum(counts, rng.integers(0, 3, size=k))
                msgs = build_messages(scenario, spec, t, counts, sums)
                pairs.append((msgs, f"Action: {rng.integers(1, k + 1)}"))
    return as_conversations(pairs)


def make_tiny_policy_lm(folder: str | Path, *, seed: int = 0, warm_start_steps: int = 40) -> Path:
    """Save the warm-started tiny model and its tokenizer to ``folder`` and return it (an
    existing model folder is reused)."""
    from icml26.shared.llm.sft import SFTSettings, sft
    from icml26.shared.llm.tiny import TinyModelConfig, make_tiny_lm, save_tiny_lm

    folder = Path(folder)
    if (folder / "config.json").is_file() and (folder / "tokenizer.json").is_file():
        return folder
    model, tokenizer = make_tiny_lm(
        _corpus(),
        vocab_size=400,
        config=TinyModelConfig(hidden_size=32, intermediate_size=64, max_positions=1024),
        seed=seed,
    )
    if warm_start_steps:
        rng = np.random.default_rng(seed)
        settings = SFTSettings(steps=warm_start_steps, lr=3e-3, batch_size=8, engine="loop")
        sft(model, tokenizer, _warm_start_conversations(rng), settings, rng=rng)
    return save_tiny_lm(model, tokenizer, folder)

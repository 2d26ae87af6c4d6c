"""The local LLM oracle on the bundled SmolLM2-135M-Instruct (slow: loads a real model)."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["first_token", "generate"])
def test_smollm2_oracle_answers_a_valid_order(mode: str) -> None:
    import torch

    from icml26.blitzrank import BlitzRank, LLMOracle
    from icml26.blitzrank.oracles.backends import LocalChat
    from icml26.shared.llm import ModelSpecError

    torch.set_num_threads(1)
    try:
        chat = LocalChat.from_spec("smollm2-135m-instruct-q4_1", device="cpu")
    except (ModelSpecError, FileNotFoundError, OSError, ImportError) as exc:
        pytest.skip(f"bundled model unavailable: {exc}")
    passages = [
        "Paris is the capital of France.",
        "Bananas are yellow.",
        "France borders Spain.",
        "The Moon orbits Earth.",
    ]
    oracle = LLMOracle(chat, "What is the capital of France?", passages, 4, mode=mode)
    ans = oracle.compare([0, 1, 2, 3])
    assert sorted(ans.order) == [0, 1, 2, 3]
    assert oracle.usage.input_tokens > 50
    assert oracle.usage.output_tokens >= 1
    res = BlitzRank(2, k=4).rank(oracle)
    assert res.certified

"""The LoRA path (one adapter per policy on one base, SFT then GRPO of every method through
TRL) end to end on a small checkpoint folder: the same code as `llm` runs on SmolLM2."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from icml26.decor.config import DecorConfig
from icml26.decor.policies import make_tiny_team
from icml26.decor.study import METHODS, make_env, run_seed
from icml26.shared.llm.tiny import save_tiny_lm


@pytest.mark.slow
def test_lora_team_trains_every_method(tmp_path: Path) -> None:
    config = DecorConfig(
        seeds=1,
        max_train_questions=16,
        max_test_questions=4,
        sft_steps=2,
        sft_batch_size=2,
        rl_steps=1,
        questions_per_step=1,
        group_size=2,
        max_searches=2,
    )
    env = make_env(config)
    team = make_tiny_team(
        [p.text for p in env.passages], ["base"], words=env.words, hidden_size=32, num_layers=1
    )
    folder = save_tiny_lm(team["base"].model, team["base"].tokenizer, tmp_path / "lm")
    out = run_seed(replace(config, llm_model=str(folder)), env, 0)
    assert set(out["scores"]) == set(METHODS)
    assert len(out["scores"]["decor"]["em"]) == len(env.test)


@pytest.mark.slow
def test_dense_minilm_search_finds_the_subject_passage() -> None:
    from icml26.decor.data.types import Passage
    from icml26.decor.retrieval import DenseSearch

    corpus = [
        Passage("fr", "France capital. The capital of France is Paris."),
        Passage("sp", "Spain capital. The capital of Spain is Madrid."),
        Passage("jp", "Japan population. Japan has 123 million people."),
    ]
    search = DenseSearch(corpus)
    assert search.embeddings.shape == (3, 384)
    [[top, *_]] = search.search(["What is the capital city of Spain?"], 2)
    assert top.pid == "sp"

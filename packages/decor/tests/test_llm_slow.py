"""The LoRA path (one adapter per role on one base, SFT then joint MARL) end to end on a
small checkpoint folder: the same code as ``full`` runs on SmolLM2-135M-Instruct."""

from __future__ import annotations

from pathlib import Path

import pytest

from icml26.decor.config import DecorConfig
from icml26.decor.experiment import _Env
from icml26.decor.llm import run_llm_decor
from icml26.decor.policies import make_tiny_team
from icml26.shared import RunDir
from icml26.shared.llm.tiny import save_tiny_lm


@pytest.mark.slow
def test_lora_team_trains_and_reports_decor_llm_keys(tmp_path: Path) -> None:
    config = DecorConfig(
        max_train_questions=16, max_test_questions=4, llm_sft_steps=2, llm_rl_steps=1,
        llm_questions_per_step=1, llm_group_size=2, llm_test_questions=2, max_searches=2,
    )  # fmt: skip
    env = _Env(config)
    team = make_tiny_team(env.texts(), ["base"], words=env.words, hidden_size=32, num_layers=1)
    folder = save_tiny_lm(team["base"].model, team["base"].tokenizer, tmp_path / "lm")
    config = DecorConfig(**{**config.__dict__, "llm_model": str(folder)})
    metrics = run_llm_decor(config, env, RunDir(tmp_path / "run"))
    for tag in ("decor_llm", "orchestration_llm"):
        assert f"em.all.{tag}" in metrics
        assert f"context_tokens.{tag}" in metrics


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

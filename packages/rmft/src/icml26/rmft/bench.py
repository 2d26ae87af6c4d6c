"""``icml26 bench rmft``: rollout throughput in decisions per second.

* ``throughput.numeric_batched``: the numerical Transformer playing ``batch`` episodes at once
  (one cached forward step per decision for the whole batch);
* ``throughput.numeric_single``: the same model, one episode at a time;
* ``throughput.llm``: the LLM policy (generation with reasoning, ``llm_max_tokens`` per
  reply) over ``llm_batch`` episodes for ``llm_steps`` rounds.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from icml26.rmft.config import BenchConfig
from icml26.rmft.envs import parse_env, sample_instances
from icml26.rmft.rollouts import rollout
from icml26.rmft.study import resolve_device
from icml26.shared import RunDir, log, seed_everything

__all__ = ["bench"]


def _best_rate(fn: Any, decisions: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return decisions / best


def bench(config: BenchConfig, run_dir: RunDir) -> dict[str, Any]:
    import torch

    from icml26.rmft.model import ArmTransformer, ModelConfig, TransformerPolicy

    torch.set_num_threads(config.threads)
    device = resolve_device(config.device)
    run_dir.update_env(device=device, torch_threads=config.threads)
    seed_everything(config.seed, torch=True)
    spec = parse_env(config.env)
    rng = np.random.default_rng(config.seed)
    model = ArmTransformer(ModelConfig(config.d_model, config.n_layers, config.n_heads)).to(device)
    policy = TransformerPolicy(model, device=device)
    batched = sample_instances(spec, config.batch, rng)
    single = sample_instances(spec, 1, rng)
    singles = max(1, min(8, config.batch // 32))
    rollout(policy, single, rng)  # warm-up
    metrics: dict[str, Any] = {"throughput": {}}
    metrics["throughput"]["numeric_batched"] = _best_rate(
        lambda: rollout(policy, batched, rng), config.batch * spec.horizon, config.repeats
    )
    metrics["throughput"]["numeric_single"] = _best_rate(
        lambda: [rollout(policy, single, rng) for _ in range(singles)],
        singles * spec.horizon,
        config.repeats,
    )
    log(f"rmft bench: numeric {metrics['throughput']}")
    if config.llm_model:
        from icml26.rmft.llm_model import TINY_SPEC, make_tiny_policy_lm
        from icml26.rmft.llm_policy import LLMPolicy
        from icml26.shared.llm import LocalChatModel, load_causal_lm

        spec_name = config.llm_model
        if spec_name == TINY_SPEC:
            spec_name = str(make_tiny_policy_lm(run_dir.path / "tiny_lm", seed=config.seed))
        model_lm, tok = load_causal_lm(
            spec_name, device=device, dtype="float32" if device == "cpu" else None
        )
        backend = LocalChatModel(model_lm, tok, batch_size=config.llm_batch)
        llm_env = parse_env(f"bernoulli_k3_t{config.llm_steps}")
        inst = sample_instances(llm_env, config.llm_batch, rng)
        pol = LLMPolicy(backend, max_tokens=config.llm_max_tokens)
        metrics["throughput"]["llm"] = _best_rate(
            lambda: rollout(pol, inst, rng), config.llm_batch * config.llm_steps, 1
        )
        metrics["llm_tokens_per_decision"] = backend.usage.completion_tokens / max(
            backend.usage.requests, 1
        )
        log(f"rmft bench: llm {metrics['throughput']['llm']:.2f} decisions/s")
    return metrics

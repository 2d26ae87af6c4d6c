"""Throughput of the post-training path: ``python -m icml26.shared.llm.bench``.

For the tiny model (:mod:`icml26.shared.llm.tiny`, reverse-digits task) and for
SmolLM2-135M-Instruct with LoRA (the bundled GGUF, ``--models smollm2``), in one process:

* ``generate_tokens_per_s``: sampled new tokens per second of :func:`icml26.shared.llm.generate`
  (one batch);
* ``grpo_steps_per_s_trl``: GRPO optimiser steps per second of plain TRL
  (``GRPOTrainer.train()``, the trainer built before the clock starts);
* ``grpo_steps_per_s_roles``: the same configuration, one role of
  :class:`icml26.shared.llm.roles.MultiRoleTrainer` (our loop around TRL's ``training_step``);
  ``roles_over_trl`` is the ratio;
* ``sft_steps_per_s_loop`` / ``sft_steps_per_s_trl``: :func:`icml26.shared.llm.sft.sft` with
  the plain loop and with TRL's ``SFTTrainer`` on the same conversations, per call (encoding
  and trainer set-up included; the TRL import is not, ``trl_import_cpu_s`` has it);
  ``loop_over_trl``.

Wall-clock rates plus the process CPU seconds of each measurement (``*_cpu_s``): on a shared
machine the CPU time is the steadier figure. Writes JSON to ``--out`` (default
``llm-bench.json``) and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["bench_model", "main"]


def _timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def _tiny() -> tuple[Any, Any]:
    from icml26.shared.llm.sft import SFTSettings, sft
    from icml26.shared.llm.tasks import ReverseDigits
    from icml26.shared.llm.tiny import make_tiny_lm

    task = ReverseDigits(3, 5)
    rng = np.random.default_rng(0)
    model, tok = make_tiny_lm(task.corpus(rng), vocab_size=300)
    sft(
        model,
        tok,
        task.conversations(1000, rng),
        SFTSettings(steps=60, lr=3e-3, batch_size=32),
        rng=rng,
    )
    return model, tok


def _smollm2(device: str) -> tuple[Any, Any]:
    from icml26.shared.llm import load_causal_lm
    from icml26.shared.llm.chat_templates import with_generation_markers

    model, tok = load_causal_lm(
        "smollm2-135m-instruct-q4_1", device=device, dtype="float32" if device == "cpu" else None
    )
    with_generation_markers(tok)
    return model, tok


def bench_model(name: str, *, steps: int, device: str = "cpu") -> dict[str, float]:
    """All rates of the module docstring for ``name`` (``"tiny"`` or ``"smollm2"``)."""
    from icml26.shared.llm.chat import format_chat, generate
    from icml26.shared.llm.grpo import GRPOSettings, make_grpo_trainer
    from icml26.shared.llm.roles import MultiRoleTrainer, Role
    from icml26.shared.llm.sft import SFTSettings, add_lora, sft
    from icml26.shared.llm.tasks import ReverseDigits, digit_accuracy

    task = ReverseDigits(3, 5)
    rng = np.random.default_rng(1)
    if name == "tiny":
        base, tok = _tiny()
        settings = GRPOSettings(
            steps=steps, prompts_per_step=8, num_generations=8, max_completion_length=8, lr=1e-3
        )
        sft_settings = SFTSettings(steps=steps, lr=1e-3, batch_size=16)
    elif name == "smollm2":
        base, tok = _smollm2(device)
        settings = GRPOSettings(
            steps=steps, prompts_per_step=2, num_generations=4, max_completion_length=16, lr=1e-4
        )
        sft_settings = SFTSettings(steps=steps, lr=1e-4, batch_size=4)
    else:
        raise ValueError(f"unknown bench model {name!r}: 'tiny' or 'smollm2'")
    state = {k: v.clone() for k, v in base.state_dict().items()}
    lora_rank = 8  # every trained model below: LoRA rank 8 on all linear layers

    def fresh() -> Any:
        base.load_state_dict(state)
        return add_lora(base, rank=lora_rank)

    out: dict[str, float] = {"params_m": sum(p.numel() for p in base.parameters()) / 1e6}
    # Paid once per process, by whichever trainer comes first: measured on its own.
    wall, cpu, _ = _timed(
        lambda: __import__("trl.trainer.grpo_trainer") and __import__("trl.trainer.sft_trainer")
    )
    out["trl_import_cpu_s"] = cpu
    prompts = [format_chat(tok, r["prompt"]) for r in task.dataset(settings.batch_size, rng)]
    generate(base, tok, prompts[:2], max_tokens=4, temperature=1.0, seed=0)  # warm-up
    wall, cpu, replies = _timed(
        lambda: generate(
            base,
            tok,
            prompts,
            max_tokens=settings.max_completion_length,
            temperature=1.0,
            seed=0,
            batch_size=len(prompts),
        )
    )
    new_tokens = sum(r.completion_tokens for r in replies)
    out["generate_tokens_per_s"] = new_tokens / wall
    out["generate_cpu_s"] = cpu

    model = fresh()
    data = task.dataset(settings.batch_size * (steps + 2), rng)
    with tempfile.TemporaryDirectory() as tmp:
        trainer = make_grpo_trainer(model, tok, [digit_accuracy], data, settings, output_dir=tmp)
        wall, cpu, _ = _timed(trainer.train)
    out["grpo_steps_per_s_trl"] = steps / wall
    out["grpo_trl_cpu_s"] = cpu
    model.unload()

    base.load_state_dict(state)
    role = Role(
        "solver", [digit_accuracy], lambda r: task.dataset(settings.prompts_per_step, r), settings
    )
    with tempfile.TemporaryDirectory() as tmp:
        runner = MultiRoleTrainer(base, tok, [role], lora_rank=lora_rank, output_dir=tmp)
        runner.train_step("solver")  # warm-up
        wall, cpu, _ = _timed(lambda: runner.train(steps))
    out["grpo_steps_per_s_roles"] = steps / wall
    out["grpo_roles_cpu_s"] = cpu
    out["roles_over_trl"] = out["grpo_steps_per_s_roles"] / out["grpo_steps_per_s_trl"]
    runner.model.unload()

    convs = task.conversations(256, rng)
    for engine in ("loop", "trl"):
        model = fresh()
        s = SFTSettings(
            steps=sft_settings.steps,
            lr=sft_settings.lr,
            batch_size=sft_settings.batch_size,
            engine=engine,
        )

        def run_sft(m: Any = model, s: SFTSettings = s) -> Any:
            return sft(m, tok, convs, s)

        wall, cpu, _ = _timed(run_sft)
        out[f"sft_steps_per_s_{engine}"] = steps / wall
        out[f"sft_{engine}_cpu_s"] = cpu
        model.unload()
    out["loop_over_trl"] = out["sft_steps_per_s_loop"] / out["sft_steps_per_s_trl"]
    return out


def _table(results: dict[str, dict[str, float]]) -> str:
    keys = sorted({k for r in results.values() for k in r})
    lines = ["| metric | " + " | ".join(results) + " |", "|---|" + "---|" * len(results)]
    for k in keys:
        lines.append(
            f"| `{k}` | "
            + " | ".join(f"{r.get(k, float('nan')):.3g}" for r in results.values())
            + " |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m icml26.shared.llm.bench", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--models", default="tiny,smollm2", help="comma-separated: tiny, smollm2")
    parser.add_argument(
        "--steps", type=int, default=0, help="steps per measurement (default: 20 tiny, 3 smollm2)"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (default 1: on a shared machine more threads spin-wait and inflate CPU time)",
    )
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", type=Path, default=Path("llm-bench.json"))
    args = parser.parse_args(argv)
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    results: dict[str, dict[str, float]] = {}
    for name in [m.strip() for m in args.models.split(",") if m.strip()]:
        steps = args.steps or (20 if name == "tiny" else 3)
        results[name] = bench_model(name, steps=steps, device=args.device)
        results[name]["steps"] = steps
        print(f"{name}: {json.dumps(results[name])}", flush=True)
    meta = {"torch_threads": torch.get_num_threads(), "device": args.device}
    args.out.write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    print(_table(results))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

"""Throughput of the shared post-training path against plain TRL: ``python -m icml26.shared.llm.bench``.

One process, one model, the same config on both sides; each measurement is repeated
(``--repeats``, the two sides alternating which runs first) and the **median** reported, with
the ratio ours / TRL of the medians:

* ``single_turn``: :func:`icml26.shared.llm.grpo.make_grpo_trainer` (our ``GRPOTrainer``
  subclass, checked reward functions, dynamic-sampling hooks) against a plain
  ``trl.GRPOTrainer`` built from the same ``GRPOConfig``, on the reverse-digits task;
* ``multi_turn``: two-turn episodes of the lookup task (call a tool, read its answer, reply)
  through our :func:`icml26.shared.llm.rollouts.multi_turn_rollout` against TRL's own
  multi-turn loop (``environment_factory``, its tool-calling loop), on the same tool-SFT'd
  tiny model: the two render the same tokens (a test holds the template to TRL's parser);
* ``roles``: one role of :class:`icml26.shared.llm.roles.MultiRoleTrainer` (a phase is one
  ``Trainer.train()``) against plain TRL, the single-turn config;
* ``sft``: :func:`icml26.shared.llm.sft.sft` with TRL's ``SFTTrainer`` (the default engine)
  and with the plain loop, per call (encoding and set-up included).

Rates are steady-state: ``steps_per_s`` (optimiser steps per wall second from the end of a
run's first step to the end of its last, so neither the trainer's construction nor each
``train()`` call's set-up, the same on both sides, is counted) and ``tokens_per_s`` (policy
tokens generated per wall second over the same steps: ``completions/mean_length`` times the
completions per step; tokens an environment wrote are not counted); ``turns``: policy turns
per episode (both loops stop after one tool round). SFT is timed per call,
set-up included (what decides between the engines for short fine-tunes). On a shared machine wall-clock rates are noisy: the
repeats and medians are there for that, and ``*_cpu_s`` (process CPU seconds) is given too.
Writes JSON to ``--out`` and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["bench", "main"]


def _timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def tiny_models() -> dict[str, tuple[Any, Any]]:
    """``{"digits": (model, tok), "lookup": (model, tok)}``: tiny Llamas fine-tuned (60 and 80
    SFT steps, the plain loop) on the reverse-digits task and on its two-turn lookup variant
    (tool-calling template)."""
    from icml26.shared.llm.sft import SFTSettings, sft
    from icml26.shared.llm.tasks import LOOKUP_CALL, ReverseDigits, lookup_conversations
    from icml26.shared.llm.tiny import TOOL_CALL_TOKENS, make_tiny_lm, with_tool_calls

    task, rng = ReverseDigits(3, 5), np.random.default_rng(0)
    digits, digits_tok = make_tiny_lm(task.corpus(rng), vocab_size=300)
    settings = SFTSettings(steps=60, lr=3e-3, batch_size=32, engine="loop")
    sft(digits, digits_tok, task.conversations(1000, rng), settings, rng=rng)
    lookup, lookup_tok = make_tiny_lm(
        task.corpus(rng) + [LOOKUP_CALL] * 20, vocab_size=300, special_tokens=TOOL_CALL_TOKENS
    )
    with_tool_calls(lookup_tok)
    settings = SFTSettings(steps=80, lr=3e-3, batch_size=32, engine="loop")
    sft(lookup, lookup_tok, lookup_conversations(1000, rng, task), settings, rng=rng)
    return {"digits": (digits, digits_tok), "lookup": (lookup, lookup_tok)}


def _step_clock() -> Any:
    """A ``TrainerCallback`` noting the wall and CPU clocks at the end of every step."""
    from transformers import TrainerCallback

    class StepClock(TrainerCallback):
        def __init__(self) -> None:
            self.ends: list[tuple[float, float]] = []

        def on_step_end(self, args: Any, state: Any, control: Any, **_: Any) -> Any:
            self.ends.append((time.perf_counter(), time.process_time()))
            return control

    return StepClock()


def _steady_rates(clock: Any, logs: list[dict[str, Any]], per_step: int) -> dict[str, float]:
    """Steady-state rates: from the end of the first step to the end of the last (the first
    step and each ``train()`` call's set-up left out: they are the same on both sides)."""
    (w0, c0), (w1, c1) = clock.ends[0], clock.ends[-1]
    steps = len(clock.ends) - 1
    tokens = sum(h.get("completions/mean_length", 0.0) for h in logs[1:]) * per_step
    out = {"steps_per_s": steps / (w1 - w0), "tokens_per_s": tokens / (w1 - w0), "cpu_s": c1 - c0}
    # Policy turns per episode: ours logs env/turns; TRL's loop one turn plus its tool calls.
    if any("env/turns" in h for h in logs):
        out["turns"] = statistics.mean(h["env/turns"] for h in logs if "env/turns" in h)
    elif any("tools/call_frequency" in h for h in logs):
        out["turns"] = 1 + statistics.mean(h["tools/call_frequency"] for h in logs)
    return out


def _rates(trainer: Any, per_step: int) -> dict[str, float]:
    """Run ``trainer.train()``; its steady-state steps/s and policy tokens/s."""
    clock = _step_clock()
    trainer.add_callback(clock)
    trainer.train()
    logs = [h for h in trainer.state.log_history if "completions/mean_length" in h]
    return _steady_rates(clock, logs, per_step)


def _plain_trl(
    model: Any, tok: Any, reward: Any, data: Any, settings: Any, out: str, **kw: Any
) -> Any:
    """A plain ``trl.GRPOTrainer`` on ``settings.to_trl(out)`` (``config=`` adds fields)."""
    from datasets import Dataset
    from trl import GRPOTrainer

    from icml26.shared.llm.sft import quiet_trainer

    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[reward],
        args=settings.to_trl(out, **kw.pop("config", {})),
        train_dataset=Dataset.from_list(data),
        processing_class=tok,
        **kw,
    )
    quiet_trainer(trainer)
    return trainer


def _compare(
    runs: dict[str, Callable[[str], Any]],
    model: Any,
    state: dict[str, Any],
    steps: int,
    per_step: int,
    repeats: int,
) -> dict[str, float]:
    """Median rates of each side over ``repeats`` (sides alternate which runs first), each run
    on a fresh copy of the starting weights, and the ratios ours / trl."""
    import torch

    samples: dict[str, list[dict[str, float]]] = {name: [] for name in runs}
    names = list(runs)
    for r in range(repeats):
        for name in names if r % 2 == 0 else names[::-1]:
            model.load_state_dict(state)
            torch.manual_seed(r)
            with tempfile.TemporaryDirectory() as tmp:
                trainer = runs[name](tmp)
                samples[name].append(_rates(trainer, per_step))
    out: dict[str, float] = {}
    for name, rows in samples.items():
        for key in ("steps_per_s", "tokens_per_s", "cpu_s", "turns"):
            if key in rows[0]:
                out[f"{key}.{name}"] = statistics.median(row[key] for row in rows)
    for key in ("steps_per_s", "tokens_per_s"):
        out[f"{key}.ours_over_trl"] = out[f"{key}.ours"] / out[f"{key}.trl"]
    return out


def bench_single_turn(model: Any, tok: Any, *, steps: int, repeats: int) -> dict[str, float]:
    """Our GRPO path against plain TRL, single turn (module docstring)."""
    from icml26.shared.llm.grpo import GRPOSettings, make_grpo_trainer
    from icml26.shared.llm.tasks import ReverseDigits, digit_accuracy

    settings = GRPOSettings(
        steps=steps, prompts_per_step=8, num_generations=8, max_completion_length=8, lr=1e-3
    )
    data = ReverseDigits(3, 5).dataset(settings.prompts_per_step * steps, np.random.default_rng(1))
    state = {k: v.clone() for k, v in model.state_dict().items()}
    runs = {
        "ours": lambda out: make_grpo_trainer(
            model, tok, [digit_accuracy], data, settings, output_dir=out
        ),
        "trl": lambda out: _plain_trl(model, tok, digit_accuracy, data, settings, out),
    }
    return _compare(runs, model, state, steps, settings.batch_size, repeats)


def bench_multi_turn(model: Any, tok: Any, *, steps: int, repeats: int) -> dict[str, float]:
    """Our ``multi_turn_rollout`` against TRL's ``environment_factory`` loop (module docstring)."""
    from icml26.shared.llm.grpo import GRPOSettings, make_grpo_trainer
    from icml26.shared.llm.rollouts import environment_reward, multi_turn_rollout
    from icml26.shared.llm.tasks import LookupEnv, LookupTool, ReverseDigits, final_answer_accuracy

    settings = GRPOSettings(
        steps=steps, prompts_per_step=4, num_generations=8, max_completion_length=40, lr=1e-3
    )
    data = ReverseDigits(3, 5).dataset(settings.prompts_per_step * steps, np.random.default_rng(2))
    state = {k: v.clone() for k, v in model.state_dict().items()}
    rollout = multi_turn_rollout(LookupEnv, max_turns=2, observation_role="tool")
    one_tool_round = {"max_tool_calling_iterations": 1}  # TRL's loop: at most 2 turns too
    runs = {
        "ours": lambda out: make_grpo_trainer(
            model, tok, [environment_reward], data, settings, output_dir=out, rollout_func=rollout
        ),
        "trl": lambda out: _plain_trl(
            model,
            tok,
            final_answer_accuracy,
            data,
            settings,
            out,
            environment_factory=LookupTool,
            config=one_tool_round,
        ),
    }
    return _compare(runs, model, state, steps, settings.batch_size, repeats)


def bench_roles(model: Any, tok: Any, *, steps: int, repeats: int) -> dict[str, float]:
    """One role of :class:`MultiRoleTrainer` for ``steps`` steps (one phase) against plain TRL
    on the same LoRA set-up (rank 8, all linear layers) and config; steady-state steps/s."""
    from icml26.shared.llm.grpo import GRPOSettings
    from icml26.shared.llm.roles import Alternating, MultiRoleTrainer, Role
    from icml26.shared.llm.sft import add_lora
    from icml26.shared.llm.tasks import ReverseDigits, digit_accuracy

    task = ReverseDigits(3, 5)
    settings = GRPOSettings(
        steps=steps, prompts_per_step=8, num_generations=8, max_completion_length=8, lr=1e-3
    )
    data = task.dataset(settings.prompts_per_step * steps, np.random.default_rng(3))
    state = {k: v.clone() for k, v in model.state_dict().items()}
    samples: dict[str, list[float]] = {"ours": [], "trl": []}
    for r in range(repeats):
        for name in ("ours", "trl") if r % 2 == 0 else ("trl", "ours"):
            model.load_state_dict(state)
            with tempfile.TemporaryDirectory() as tmp:
                if name == "trl":
                    lora = add_lora(model, rank=8)
                    trainer = _plain_trl(lora, tok, digit_accuracy, data, settings, tmp)
                    rate = _rates(trainer, settings.batch_size)["steps_per_s"]
                    lora.unload()
                else:
                    role = Role(
                        "solver",
                        [digit_accuracy],
                        lambda g: task.dataset(settings.prompts_per_step, g),
                        settings,
                    )
                    runner = MultiRoleTrainer(
                        model, tok, [role], schedule=Alternating(steps), lora_rank=8, output_dir=tmp
                    )
                    clock = _step_clock()
                    runner.trainers["solver"].add_callback(clock)
                    runner.train(steps)
                    rate = _steady_rates(clock, [], 0)["steps_per_s"]
                    runner.model.unload()
            samples[name].append(rate)
    model.load_state_dict(state)
    model.requires_grad_(True)  # LoRA froze the base weights; unload() leaves them frozen
    out = {f"steps_per_s.{k}": statistics.median(v) for k, v in samples.items()}
    out["steps_per_s.ours_over_trl"] = out["steps_per_s.ours"] / out["steps_per_s.trl"]
    return out


def bench_sft(model: Any, tok: Any, *, steps: int, repeats: int) -> dict[str, float]:
    """:func:`sft` per call with TRL's ``SFTTrainer`` (default) and with the plain loop."""
    from icml26.shared.llm.sft import SFTSettings, sft
    from icml26.shared.llm.tasks import ReverseDigits

    convs = ReverseDigits(3, 5).conversations(256, np.random.default_rng(4))
    state = {k: v.clone() for k, v in model.state_dict().items()}
    samples: dict[str, list[float]] = {"trl": [], "loop": []}
    for r in range(repeats):
        for engine in ("trl", "loop") if r % 2 == 0 else ("loop", "trl"):
            model.load_state_dict(state)
            settings = SFTSettings(steps=steps, lr=1e-3, batch_size=16, engine=engine)
            wall = time.perf_counter()
            sft(model, tok, convs, settings)
            wall = time.perf_counter() - wall
            samples[engine].append(steps / wall)
    model.load_state_dict(state)
    out = {f"steps_per_s.{k}": statistics.median(v) for k, v in samples.items()}
    out["steps_per_s.trl_over_loop"] = out["steps_per_s.trl"] / out["steps_per_s.loop"]
    return out


SECTIONS = ("single_turn", "multi_turn", "roles", "sft")


def bench(
    *, repeats: int = 5, steps: int = 8, sections: tuple[str, ...] = SECTIONS
) -> dict[str, Any]:
    """Every section's medians and ratios on the tiny models (module docstring)."""
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        raise ValueError(f"unknown sections {sorted(unknown)}; known: {list(SECTIONS)}")
    if repeats < 1 or steps < 2:
        raise ValueError(f"need repeats >= 1 and steps >= 2, got {repeats}, {steps}")
    wall, _, models = _timed(tiny_models)
    digits, lookup = models["digits"], models["lookup"]
    out: dict[str, Any] = {"setup_s": wall}
    for name in sections:
        fn = {
            "single_turn": lambda: bench_single_turn(*digits, steps=steps, repeats=repeats),
            "multi_turn": lambda: bench_multi_turn(*lookup, steps=steps, repeats=repeats),
            "roles": lambda: bench_roles(*digits, steps=steps, repeats=repeats),
            "sft": lambda: bench_sft(*digits, steps=steps, repeats=repeats),
        }[name]
        out[name] = fn()
        print(f"{name}: {json.dumps(out[name])}", flush=True)
    return out


def _table(results: dict[str, Any]) -> str:
    lines = ["| section | metric | value |", "|---|---|---|"]
    for section in SECTIONS:
        for key, value in results.get(section, {}).items():
            lines.append(f"| {section} | `{key}` | {value:.3g} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m icml26.shared.llm.bench", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--repeats", type=int, default=5, help="runs per side (medians)")
    parser.add_argument("--steps", type=int, default=8, help="optimiser steps per run")
    parser.add_argument("--sections", default=",".join(SECTIONS), help=", ".join(SECTIONS))
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (default 1: on a shared machine more threads spin-wait)",
    )
    parser.add_argument("--out", type=Path, default=Path("llm-bench.json"))
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    sections = tuple(s.strip() for s in args.sections.split(",") if s.strip())
    results = bench(repeats=args.repeats, steps=args.steps, sections=sections)
    meta = {"torch_threads": torch.get_num_threads(), "repeats": args.repeats, "steps": args.steps}
    args.out.write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    print(_table(results))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

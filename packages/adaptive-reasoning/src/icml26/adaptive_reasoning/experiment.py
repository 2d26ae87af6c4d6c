"""``icml26 run adaptive-reasoning``: two stages, two data regimes, six methods, five splits.

Stages (each checkpointed: a killed run resumes at the next stage):

1. ``data``: the augmented and the natural training pools, the evaluation splits (or the
   user's JSONL), and the measured length-complexity correlation of each pool;
2. ``ours_sft`` / ``ours_grpo``: stage 1 on the augmented pool (its weights are
   ``sft_only``), then stage 2 (GRPO with the mode-collapse guard): ``ours``;
3. ``noaug_sft`` / ``noaug_grpo``: the same on the natural pool: ``no_augmentation``;
4. ``evaluate``: greedy replies of every method on every split; ``always_think``,
   ``never_think`` and ``length_router`` force the mode on ``ours``' weights;
5. ``large`` (optional): ``ours`` on a pretrained model with LoRA (SmolLM2-135M-Instruct).

Every stage draws from its own generator seeded by ``(seed, stage)``.
"""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from icml26.adaptive_reasoning.config import AdaptiveConfig
from icml26.adaptive_reasoning.tasks import SPLITS, Problem
from icml26.shared import PALETTE, RunDir, figure, log, seed_everything

__all__ = ["METHODS", "run"]

METHODS = ("ours", "sft_only", "no_augmentation", "always_think", "never_think", "length_router")
OPS = (1, 3, 4)


def _rng(seed: int, *parts: str) -> np.random.Generator:
    return np.random.default_rng([seed, *(zlib.crc32(p.encode()) for p in parts)])


def resolve_device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


@dataclass
class _State:
    done: list[str] = field(default_factory=list)
    weights: dict[str, Any] = field(default_factory=dict)  # name -> trainable state (CPU)
    grpo: dict[str, dict[str, Any]] = field(default_factory=dict)
    sft_losses: dict[str, list[float]] = field(default_factory=dict)
    scores: dict[str, dict[str, dict[str, list[float]]]] = field(default_factory=dict)
    extra: dict[str, float] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    samples: list[dict[str, str]] = field(default_factory=list)


def _todo(state: _State, name: str) -> bool:
    if name in state.done:
        log(f"adaptive-reasoning: stage {name} already done (resumed)")
        return False
    log(f"adaptive-reasoning: stage {name}")
    return True


def _finish(run_dir: RunDir, state: _State, name: str, t0: float) -> None:
    state.done.append(name)
    state.seconds[name] = time.perf_counter() - t0
    run_dir.checkpoints.save(len(state.done), state.__dict__)
    run_dir.log_metrics(len(state.done), stage=name, seconds=state.seconds[name])


def _trainable_state(model: Any) -> dict[str, Any]:
    """The parameters that train (all of a tiny model; the adapters and new token rows of a
    LoRA model), on the CPU: what a checkpoint needs, the frozen base is rebuilt."""
    names = {n for n, p in model.named_parameters() if p.requires_grad}
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items() if k in names}


# ------------------------------------------------------------------------------------ data
@dataclass
class _Data:
    augmented: list[Problem]
    natural: list[Problem]
    splits: dict[str, list[Problem]]


def _data(config: AdaptiveConfig) -> _Data:
    from icml26.adaptive_reasoning.sft_data import DataMix, augmented_problems, natural_problems
    from icml26.adaptive_reasoning.tasks import load_problems, make_split

    mix = DataMix(config.complex_share, config.verbose_if_simple, config.verbose_if_complex)
    augmented = augmented_problems(config.train_problems, _rng(config.seed, "augmented"), mix)
    natural = natural_problems(config.train_problems, _rng(config.seed, "natural"), mix)
    if config.problems_file:
        splits: dict[str, list[Problem]] = {}
        for p in load_problems(config.problems_file):
            splits.setdefault(p.split, []).append(p)
    else:
        splits = {
            s: make_split(s, config.eval_per_split, _rng(config.seed, "eval", s)) for s in SPLITS
        }
    return _Data(augmented, natural, splits)


# ---------------------------------------------------------------------------------- models
def _spec(config: AdaptiveConfig, name: str, device: str) -> Any:
    from icml26.adaptive_reasoning.models import ModelSpec

    return ModelSpec(
        name=name,
        hidden_size=config.hidden_size,
        num_layers=config.num_layers,
        vocab_size=config.vocab_size,
        lora_rank=config.lora_rank,
        device=device,
    )


def _train(
    run_dir: RunDir,
    config: AdaptiveConfig,
    state: _State,
    *,
    tag: str,
    pool: list[Problem],
    model_name: str,
    device: str,
    large: bool = False,
) -> None:
    """Stage 1 then stage 2 for one data regime, checkpointed after each."""
    import torch

    from icml26.adaptive_reasoning.grpo import ModeGRPOSettings, train_mode_grpo
    from icml26.adaptive_reasoning.models import build_model
    from icml26.adaptive_reasoning.policy import Policy
    from icml26.adaptive_reasoning.reward import RewardWeights
    from icml26.adaptive_reasoning.sft_data import to_conversations
    from icml26.shared.llm.sft import SFTSettings, sft

    sft_name, grpo_name = f"{tag}_sft", f"{tag}_grpo"
    if sft_name in state.done and grpo_name in state.done:
        log(f"adaptive-reasoning: stages {sft_name}, {grpo_name} already done (resumed)")
        return
    model, tok = build_model(_spec(config, model_name, device), seed=config.seed)
    if _todo(state, sft_name):
        t0 = time.perf_counter()
        seed_everything(config.seed, torch=True)
        settings = SFTSettings(
            steps=config.large_sft_steps if large else config.sft_steps,
            lr=config.large_sft_lr if large else config.sft_lr,
            batch_size=config.large_sft_batch if large else config.sft_batch,
            max_length=512,
            engine="loop",
        )
        res = sft(model, tok, to_conversations(pool), settings, rng=_rng(config.seed, sft_name))
        state.sft_losses[tag] = res.losses
        state.weights[sft_name] = _trainable_state(model)
        _finish(run_dir, state, sft_name, t0)
    else:
        model.load_state_dict(state.weights[sft_name], strict=False)
    if _todo(state, grpo_name):
        t0 = time.perf_counter()
        seed_everything(config.seed, torch=True)
        settings_g = ModeGRPOSettings(
            steps=config.large_grpo_steps if large else config.grpo_steps,
            prompts_per_step=config.large_grpo_prompts if large else config.grpo_prompts,
            num_generations=config.large_grpo_generations if large else config.grpo_generations,
            max_new_tokens=config.max_new_tokens,
            temperature=config.grpo_temperature,
            lr=config.large_grpo_lr if large else config.grpo_lr,
            guard=config.guard,  # type: ignore[arg-type]
            mode_loss_weight=config.mode_loss_weight,
            weights=RewardWeights(token=config.reward_token, mode=config.reward_mode),
        )
        offset = 100 * len(state.done)

        def on_step(step: int, row: dict[str, float]) -> None:
            run_dir.log_metrics(offset + step, stage=grpo_name, **row)

        stats = train_mode_grpo(
            Policy(model, tok), pool, settings_g, rng=_rng(config.seed, grpo_name), on_step=on_step
        )
        state.grpo[tag] = stats.as_dict()
        state.weights[grpo_name] = _trainable_state(model)
        _finish(run_dir, state, grpo_name, t0)
    del model
    torch.set_num_threads(config.threads)


def _policy(
    config: AdaptiveConfig, state: _State, weights: str, model_name: str, device: str
) -> Any:
    from icml26.adaptive_reasoning.models import build_model
    from icml26.adaptive_reasoning.policy import Policy

    model, tok = build_model(_spec(config, model_name, device), seed=config.seed)
    model.load_state_dict(state.weights[weights], strict=False)
    return Policy(model.eval(), tok)


def _evaluate(
    run_dir: RunDir, config: AdaptiveConfig, state: _State, data: _Data, device: str
) -> None:
    from icml26.adaptive_reasoning.baselines import always, fit_length_router
    from icml26.adaptive_reasoning.evaluate import evaluate_method

    if not _todo(state, "evaluate"):
        return
    t0 = time.perf_counter()
    ours = _policy(config, state, "ours_grpo", config.model, device)
    router = fit_length_router(data.natural, ours.prompt_length)
    state.extra["length_router.threshold"] = router.threshold
    plans: list[tuple[str, Any, Any]] = [
        ("ours", ours, None),
        ("always_think", ours, always("think")),
        ("never_think", ours, always("no_think")),
        ("length_router", ours, router),
        ("sft_only", _policy(config, state, "ours_sft", config.model, device), None),
        ("no_augmentation", _policy(config, state, "noaug_grpo", config.model, device), None),
    ]
    for method, policy, choose in plans:
        c0 = time.process_time()
        scores = evaluate_method(policy, data.splits, choose, max_new_tokens=config.max_new_tokens)
        state.scores[method] = {s: sc.__dict__ for s, sc in scores.items()}
        state.extra[f"eval_cpu_s.{method}"] = time.process_time() - c0
    for split in ("simple_verbose", "complex_concise"):
        if data.splits.get(split):
            p = data.splits[split][0]
            [reply] = ours.generate([p], max_new_tokens=config.max_new_tokens)
            state.samples.append(
                {"split": split, "problem": p.text, "reply": reply.text, "answer": str(p.answer)}
            )
    lengths = {
        "natural": [ours.prompt_length(p) for p in data.natural],
        "augmented": [ours.prompt_length(p) for p in data.augmented],
    }
    from icml26.adaptive_reasoning.tasks import length_complexity_correlation

    for name, pool in (("natural", data.natural), ("augmented", data.augmented)):
        state.extra[f"train_length_complexity_corr.{name}"] = length_complexity_correlation(
            pool, lengths[name]
        )
    _finish(run_dir, state, "evaluate", t0)


def _large(
    run_dir: RunDir, config: AdaptiveConfig, state: _State, data: _Data, device: str
) -> None:
    from icml26.adaptive_reasoning.evaluate import evaluate_method
    from icml26.adaptive_reasoning.tasks import make_split

    if not config.large_model:
        return
    _train(run_dir, config, state, tag="large", pool=data.augmented[: 50 * config.large_sft_batch],
           model_name=config.large_model, device=device, large=True)  # fmt: skip
    if not _todo(state, "large_eval"):
        return
    t0 = time.perf_counter()
    policy = _policy(config, state, "large_grpo", config.large_model, device)
    splits = {
        s: make_split(s, config.large_eval_per_split, _rng(config.seed, "large_eval", s))
        for s in SPLITS
    }
    for method, choose in (("ours", None),):
        scores = evaluate_method(
            policy, splits, choose, max_new_tokens=config.max_new_tokens, batch_size=32
        )
        state.scores[f"large_{method}"] = {s: sc.__dict__ for s, sc in scores.items()}
    _finish(run_dir, state, "large_eval", t0)


# --------------------------------------------------------------------------------- metrics
def _metrics(config: AdaptiveConfig, state: _State) -> dict[str, Any]:
    from icml26.adaptive_reasoning.evaluate import MethodScores, paired_difference
    from icml26.adaptive_reasoning.policy import binary_entropy

    m: dict[str, Any] = {}

    def put(key: str, value: float) -> None:
        m[key] = float(value)

    for method, by_split in state.scores.items():
        name = method.replace("large_", "") if method.startswith("large_") else method
        prefix = "large." if method.startswith("large_") else ""
        all_tokens: list[float] = []
        all_ops_think: dict[int, list[float]] = {}
        all_ops_acc: dict[int, list[float]] = {}
        for split, raw in by_split.items():
            s = MethodScores(**raw).summary()  # type: ignore[arg-type]
            put(f"{prefix}accuracy.{split}.{name}", s["accuracy"])
            put(f"{prefix}accuracy_lo.{split}.{name}", s["accuracy_lo"])
            put(f"{prefix}accuracy_hi.{split}.{name}", s["accuracy_hi"])
            put(f"{prefix}think_rate.{split}.{name}", s["think_rate"])
            put(f"{prefix}tokens.{split}.{name}", s["tokens"])
            all_tokens.append(s["tokens"])
            for k, t, c in zip(raw["ops"], raw["think"], raw["correct"], strict=True):
                all_ops_think.setdefault(int(k), []).append(t)
                all_ops_acc.setdefault(int(k), []).append(c)
        put(f"{prefix}tokens.all.{name}", float(np.mean(all_tokens)))
        for k in sorted(all_ops_think):
            put(f"{prefix}think_rate.ops{k}.{name}", float(np.mean(all_ops_think[k])))
            put(f"{prefix}accuracy.ops{k}.{name}", float(np.mean(all_ops_acc[k])))
        if "simple_verbose" in by_split and "simple_concise" in by_split:
            put(
                f"{prefix}verbosity_gap.{name}",
                m[f"{prefix}think_rate.simple_verbose.{name}"]
                - m[f"{prefix}think_rate.simple_concise.{name}"],
            )
    # ours against always-think, paired per item
    if "ours" in state.scores and "always_think" in state.scores:
        for split in state.scores["ours"]:
            d, lo, hi = paired_difference(
                state.scores["ours"][split]["correct"],
                state.scores["always_think"][split]["correct"],
            )
            put(f"accuracy_gap.{split}.ours", d)
            put(f"accuracy_gap_lo.{split}.ours", lo)
            put(f"accuracy_gap_hi.{split}.ours", hi)
    # mode entropy H(mean think probability) in bits at the end of training
    for tag, method in (("ours", "ours"), ("noaug", "no_augmentation"), ("large", "large.ours")):
        if tag in state.grpo and state.grpo[tag]["mode_entropy"]:
            key = (
                f"mode_entropy.{method}"
                if not method.startswith("large")
                else "large.mode_entropy.ours"
            )
            tail = state.grpo[tag]["mode_entropy"][-5:]
            put(key, float(np.mean(tail)))
            put(f"grpo_final_reward.{method}", float(np.mean(state.grpo[tag]["reward"][-5:])))
    if "ours" in state.scores:
        put("mode_entropy.always_think", 0.0)
        put("mode_entropy.never_think", 0.0)
        put(
            "mode_entropy.length_router",
            binary_entropy(
                m.get("think_rate.ops1.length_router", 0) * 0.5
                + m.get("think_rate.ops3.length_router", 0) * 0.5
            ),
        )
    if "ours" in state.grpo and state.grpo["ours"]["think_prob"]:
        # sft_only is the policy GRPO starts from: its entropy is the first GRPO step's
        put("mode_entropy.sft_only", state.grpo["ours"]["mode_entropy"][0])
    for key, value in state.extra.items():
        put(key, value)
    for tag, losses in state.sft_losses.items():
        if losses:
            put(f"sft_final_loss.{tag}", float(np.mean(losses[-10:])))
    for stage, secs in state.seconds.items():
        put(f"seconds.{stage}", secs)
    for tag, g in state.grpo.items():
        put(f"grpo_cpu_s.{tag}", g["cpu_seconds"])
    return m


# ----------------------------------------------------------------------------------- plots
def _plots(run_dir: RunDir, state: _State, m: dict[str, Any]) -> None:
    methods = [x for x in METHODS if x in state.scores]
    splits = [s for s in SPLITS if f"accuracy.{s}.ours" in m]
    with figure(run_dir.plot_path("pareto"), width=5.5, height=4) as (_fig, ax):
        for i, method in enumerate(methods):
            x = [m[f"tokens.{s}.{method}"] for s in splits]
            y = [m[f"accuracy.{s}.{method}"] for s in splits]
            ax.scatter(np.mean(x), np.mean(y), color=PALETTE[i % len(PALETTE)], label=method, s=50)
        ax.set_xlabel("mean generated tokens (over splits)")
        ax.set_ylabel("accuracy (mean over splits)")
        ax.set_title("accuracy vs tokens")
        ax.legend(fontsize=7)
    with figure(run_dir.plot_path("think_rate"), width=7, height=4) as (_fig, ax):
        width = 0.8 / max(len(methods), 1)
        for i, method in enumerate(methods):
            ax.bar(
                np.arange(len(splits)) + i * width,
                [m[f"think_rate.{s}.{method}"] for s in splits],
                width,
                label=method,
                color=PALETTE[i % len(PALETTE)],
            )
        ax.set_xticks(np.arange(len(splits)) + 0.4 - width / 2, splits, rotation=20, fontsize=7)
        ax.set_ylabel("think rate")
        ax.legend(fontsize=6)
    with figure(run_dir.plot_path("mode_rate_grpo"), width=5.5, height=4) as (_fig, ax):
        for i, (tag, g) in enumerate(state.grpo.items()):
            c = PALETTE[i % len(PALETTE)]
            ax.plot(g["think_prob_complex"], color=c, label=f"{tag}: complex prompts")
            ax.plot(g["think_prob_simple"], color=c, ls="--", label=f"{tag}: simple prompts")
        ax.set_xlabel("GRPO step")
        ax.set_ylabel("P(think) of the policy")
        ax.set_ylim(-0.02, 1.02)
        ax.legend(fontsize=7)


# ------------------------------------------------------------------------------------- run
def run(config: AdaptiveConfig, run_dir: RunDir) -> dict[str, Any]:
    import torch

    torch.set_num_threads(config.threads)
    device = resolve_device(config.device)
    run_dir.update_env(device=device, torch_threads=config.threads)
    latest = run_dir.checkpoints.latest()
    state = _State(**latest[1]) if latest else _State()
    data = _data(config)
    _train(
        run_dir,
        config,
        state,
        tag="ours",
        pool=data.augmented,
        model_name=config.model,
        device=device,
    )
    _train(
        run_dir,
        config,
        state,
        tag="noaug",
        pool=data.natural,
        model_name=config.model,
        device=device,
    )
    _evaluate(run_dir, config, state, data, device)
    _large(run_dir, config, state, data, device)
    metrics = _metrics(config, state)
    _plots(run_dir, state, metrics)
    run_dir.write_json("samples.json", state.samples)
    return metrics

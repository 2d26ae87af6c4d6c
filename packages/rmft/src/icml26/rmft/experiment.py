"""``icml26 run rmft``: baselines, the numerical Transformer with Iterative RMFT, the LLM path.

Stages (each checkpointed, so a killed run resumes at the next stage):

1. classical baselines on every evaluation environment;
2. numerical Transformer: weak pretraining (``base``), then RMFT iterations
   (``rmft_iter1..N``), evaluated on every environment after each;
3. optionally the same on the full-information experts setting (a second model);
4. optionally the LLM: ``llm_base`` and ``llm_rmft_iter1..N`` on the abstract bandit prompt
   and the natural-language scenario.

Every stage draws from its own generator seeded by ``(seed, stage)``, and every evaluation
environment has one fixed set of instances and reward tables shared by all policies (common
random numbers), so comparisons are paired and a resumed run equals an uninterrupted one.
"""

from __future__ import annotations

import math
import time
import zlib
from collections.abc import Mapping
from dataclasses import asdict, replace
from typing import Any

import numpy as np

from icml26.rmft.baselines import make_baseline
from icml26.rmft.config import RMFTConfig
from icml26.rmft.envs import EnvSpec, Instances, parse_env, sample_instances
from icml26.rmft.rollouts import Policy, Trajectories, rollout
from icml26.shared import PALETTE, RunDir, figure, log, seed_everything

__all__ = ["generalisation_axis", "run", "summarise"]


def _rng(seed: int, *parts: str) -> np.random.Generator:
    return np.random.default_rng([seed, *(zlib.crc32(p.encode()) for p in parts)])


def resolve_device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} requested but CUDA is not available")
    return device


def generalisation_axis(train: EnvSpec, env: EnvSpec) -> str:
    """How ``env`` differs from the training environment: ``train`` (same), ``horizon``
    (only T), ``arms`` (only K), ``rewards`` (another reward process), ``other``."""
    if env == train:
        return "train"
    if env.kind != train.kind:
        return "rewards"
    if env.n_arms == train.n_arms:
        return "horizon"
    if env.horizon == train.horizon:
        return "arms"
    return "other"


def summarise(trajs: Trajectories) -> dict[str, Any]:
    """Mean final regret, its standard error, the mean regret curve, per-instance finals."""
    final = trajs.final_regret
    return {
        "regret": float(final.mean()),
        "se": float(final.std(ddof=1) / math.sqrt(len(final))) if len(final) > 1 else 0.0,
        "curve": trajs.regret.mean(axis=0).tolist(),
        "final": final.tolist(),
        "invalid": float(trajs.invalid.mean()),
    }


class _State:
    """Everything a run has measured so far (checkpointed after each stage)."""

    def __init__(self) -> None:
        self.done: list[str] = []
        self.results: dict[str, dict[str, dict[str, Any]]] = {}  # env -> policy -> summary
        self.train: dict[str, dict[str, float]] = {}  # stage -> stats
        self.models: dict[str, Any] = {}  # model name -> state dict (CPU)
        self.seconds: dict[str, float] = {}
        self.samples: list[dict[str, Any]] = []  # a few LLM replies, for the README

    def record(self, env: str, policy: str, trajs: Trajectories) -> None:
        self.results.setdefault(env, {})[policy] = summarise(trajs)


def _evaluate(
    state: _State, config: RMFTConfig, policy: Policy, name: str, envs: Mapping[str, Instances]
) -> None:
    for env, inst in envs.items():
        state.record(env, name, rollout(policy, inst, _rng(config.seed, "eval", env, name)))


def _stage(run_dir: RunDir, state: _State, name: str) -> bool:
    """True when ``name`` still has to run."""
    if name in state.done:
        log(f"rmft: stage {name} already done (resumed)")
        return False
    log(f"rmft: stage {name}")
    return True


def _finish(run_dir: RunDir, state: _State, name: str, started: float) -> None:
    state.done.append(name)
    state.seconds[name] = time.perf_counter() - started
    run_dir.checkpoints.save(len(state.done), state.__dict__)
    run_dir.log_metrics(len(state.done), stage=name, seconds=state.seconds[name])


# ---------------------------------------------------------------------------------- stages
def _baselines(
    run_dir: RunDir, config: RMFTConfig, state: _State, envs: Mapping[str, Instances]
) -> None:
    if not _stage(run_dir, state, "baselines"):
        return
    t0 = time.perf_counter()
    for env, inst in envs.items():
        names = list(config.baselines)
        if inst.spec.full_information and "hedge" not in names:
            names.append("hedge")
        for name in names:
            state.record(
                env, name, rollout(make_baseline(name), inst, _rng(config.seed, "eval", env, name))
            )
    _finish(run_dir, state, "baselines", t0)


def _snapshot(model: Any) -> dict[str, Any]:
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}


def _numeric(
    run_dir: RunDir,
    config: RMFTConfig,
    state: _State,
    *,
    train_env: str,
    envs: Mapping[str, Instances],
    tag: str,
    device: str,
    random_control: bool = True,
) -> None:
    """One numerical Transformer (``tag`` names it): weak pretraining (evaluated sampled as
    ``base`` and greedily as ``base_greedy``), the RMFT iterations (``rmft_iter<i>``, the
    last also greedily as ``rmft_greedy_final``), then, with ``random_control``, the same
    loop from the same base distilling randomly chosen rollouts (``random_select_final``)."""
    import torch

    from icml26.rmft.model import ArmTransformer, ModelConfig, TransformerPolicy
    from icml26.rmft.rmft import RMFTSettings, numeric_rmft_iteration, weak_pretraining

    spec = parse_env(train_env)
    torch.manual_seed(zlib.crc32(f"{config.seed}-{tag}-init".encode()))
    model = ArmTransformer(ModelConfig(config.d_model, config.n_layers, config.n_heads)).to(device)
    settings = RMFTSettings(
        n_instances=config.rollout_instances,
        rollouts_per_instance=config.rollouts_per_instance,
        keep_per_instance=config.keep_per_instance,
        steps=config.finetune_steps,
        lr=config.finetune_lr,
        batch_size=config.batch_size,
        temperature=config.rollout_temperature,
    )

    def policy(name: str, temperature: float | None = None) -> TransformerPolicy:
        t = config.rollout_temperature if temperature is None else temperature
        return TransformerPolicy(model, temperature=t, name=name, device=device)

    stage = f"{tag}_pretrain"
    if _stage(run_dir, state, stage):
        t0 = time.perf_counter()
        torch.manual_seed(zlib.crc32(f"{config.seed}-{stage}".encode()))
        losses = weak_pretraining(
            model,
            spec,
            n_trajectories=config.pretrain_trajectories,
            greedy_fraction=config.greedy_fraction,
            steps=config.pretrain_steps,
            lr=config.pretrain_lr,
            batch_size=config.batch_size,
            rng=_rng(config.seed, stage),
        )
        state.train[stage] = {"loss_first": losses[0] if losses else float("nan"),
                              "loss_last": losses[-1] if losses else float("nan")}  # fmt: skip
        _evaluate(state, config, policy("base"), "base", envs)
        _evaluate(state, config, policy("base_greedy", 0.0), "base_greedy", envs)
        state.models[tag] = state.models[f"{tag}_base"] = _snapshot(model)
        _finish(run_dir, state, stage, t0)

    def iterate(loop: str, rule: str, i: int, last: bool) -> None:
        stage = f"{tag}_{loop}{i}"
        if not _stage(run_dir, state, stage):
            return
        t0 = time.perf_counter()
        key = tag if rule == "lowest_regret" else f"{tag}_{loop}"
        model.load_state_dict(state.models[key if i > 1 else f"{tag}_base"])
        torch.manual_seed(zlib.crc32(f"{config.seed}-{stage}".encode()))
        stats = numeric_rmft_iteration(
            model, spec, replace(settings, selection=rule), _rng(config.seed, stage), device=device
        )
        state.train[stage] = asdict(stats)
        log(
            f"rmft: {stage}: rollout regret {stats.rollout_regret:.2f}, kept {stats.selected_regret:.2f}, "
            f"NLL on kept {stats.loss_before:.3f} -> {stats.loss_after:.3f}"
        )
        if rule == "lowest_regret":
            on = envs if last or config.eval_every_iteration else train_only
            _evaluate(state, config, policy(f"rmft_iter{i}"), f"rmft_iter{i}", on)
            if last:
                greedy = policy("rmft_greedy_final", 0.0)
                on = envs if config.eval_every_iteration else train_only
                _evaluate(state, config, greedy, "rmft_greedy_final", on)
        elif last:
            _evaluate(state, config, policy("random_select_final"), "random_select_final", envs)
        state.models[key] = _snapshot(model)
        _finish(run_dir, state, stage, t0)

    train_only = {train_env: envs[train_env]} if train_env in envs else dict(envs)
    n = config.rmft_iterations
    for i in range(1, n + 1):
        iterate("iter", "lowest_regret", i, i == n)
    if random_control:
        for i in range(1, n + 1):
            iterate("random_iter", "random", i, i == n)


def _llm(
    run_dir: RunDir, config: RMFTConfig, state: _State, envs: Mapping[str, Instances], device: str
) -> None:
    """The LLM path: the base policy sampled (``llm_base``) and greedy (``llm_base_greedy``),
    the RMFT iterations (``llm_rmft_iter<i>``), and the same loop distilling random
    rollouts (``llm_random_select_final``); an endpoint only evaluates and exports."""
    from icml26.rmft.llm_policy import LLMPolicy
    from icml26.rmft.llm_rmft import LLMSettings, llm_rmft_iteration, write_openai_finetune_jsonl

    settings = LLMSettings(
        n_instances=config.llm_rollout_instances,
        rollouts_per_instance=config.llm_rollouts_per_instance,
        keep_per_instance=config.llm_keep_per_instance,
        steps=config.llm_steps,
        lr=config.llm_lr,
        batch_size=config.llm_batch_size,
        temperature=config.llm_temperature,
        max_tokens=config.llm_max_tokens,
    )
    backend, local = _llm_backend(run_dir, config, device)

    def evaluate(name: str, temperature: float | None = None) -> None:
        t = config.llm_temperature if temperature is None else temperature
        for env, inst in envs.items():
            scenario = "restaurants" if inst.spec.kind == "restaurants" else "buttons"
            pol = LLMPolicy(backend, scenario=scenario, max_tokens=config.llm_max_tokens,
                            temperature=t, name=name)  # fmt: skip
            trajs = rollout(pol, inst, _rng(config.seed, "eval", env, name))
            state.record(env, name, trajs)
            for step in trajs.records[0][:2]:
                state.samples.append(
                    {"policy": name, "env": env, "reply": step["reply"], "valid": step["valid"]}
                )

    stage = "llm_base"
    if _stage(run_dir, state, stage):
        t0 = time.perf_counter()
        evaluate("llm_base")
        evaluate("llm_base_greedy", 0.0)
        if local:
            state.models["llm"] = state.models["llm_base"] = _adapter_state(backend.model)
        _finish(run_dir, state, stage, t0)
    spec = parse_env(config.llm_env)
    if not local:  # an endpoint: select and export, no local training
        _llm_export(run_dir, config, state, backend, settings, spec)
        state.train["llm_usage"] = dict(backend.usage.as_dict())
        return
    import torch

    def iterate(loop: str, rule: str, i: int, last: bool) -> None:
        stage = f"llm_{loop}{i}"
        if not _stage(run_dir, state, stage):
            return
        t0 = time.perf_counter()
        key = "llm" if rule == "lowest_regret" else f"llm_{loop}"
        _load_adapter(backend.model, state.models[key if i > 1 else "llm_base"])
        torch.manual_seed(zlib.crc32(f"{config.seed}-{stage}".encode()))
        stats, pairs = llm_rmft_iteration(
            backend, spec, replace(settings, selection=rule), _rng(config.seed, stage)
        )
        if rule == "lowest_regret":
            write_openai_finetune_jsonl(pairs, run_dir.path / f"rmft_selected_iter{i}.jsonl")
        state.train[stage] = {**asdict(stats), "examples": len(pairs)}
        log(
            f"rmft: {stage}: rollout regret {stats.rollout_regret:.2f}, kept {stats.selected_regret:.2f}, "
            f"{len(pairs)} transcripts, NLL {stats.loss_before:.3f} -> {stats.loss_after:.3f}"
        )
        if rule == "lowest_regret":
            evaluate(f"llm_rmft_iter{i}")
        elif last:
            evaluate("llm_random_select_final")
        state.models[key] = _adapter_state(backend.model)
        _finish(run_dir, state, stage, t0)

    n = config.llm_iterations
    for i in range(1, n + 1):
        iterate("iter", "lowest_regret", i, i == n)
    for i in range(1, n + 1):
        iterate("random_iter", "random", i, i == n)
    state.train["llm_usage"] = dict(backend.usage.as_dict())


def _llm_export(
    run_dir: RunDir, config: RMFTConfig, state: _State, backend: Any, settings: Any, spec: EnvSpec
) -> None:
    """Through an endpoint, one RMFT selection: roll out, keep the lowest-regret episodes and
    write them as chat fine-tuning JSONL (the fine-tuning happens at the provider)."""
    from icml26.rmft.llm_policy import LLMPolicy
    from icml26.rmft.llm_rmft import select_llm_transcripts, write_openai_finetune_jsonl

    if config.llm_iterations < 1:
        return
    stage = "llm_iter1"
    if not _stage(run_dir, state, stage):
        return
    t0 = time.perf_counter()
    rng = _rng(config.seed, stage)
    m = settings.rollouts_per_instance
    inst = sample_instances(spec, settings.n_instances, rng).repeat(m)
    pol = LLMPolicy(backend, max_tokens=settings.max_tokens, temperature=settings.temperature)
    _, pairs = select_llm_transcripts(rollout(pol, inst, rng), settings, rng)
    write_openai_finetune_jsonl(pairs, run_dir.path / "rmft_selected_iter1.jsonl")
    _finish(run_dir, state, stage, t0)


def _llm_backend(run_dir: RunDir, config: RMFTConfig, device: str) -> tuple[Any, bool]:
    from icml26.shared.llm import ChatClient, LocalChatModel, load_causal_lm

    if config.llm_endpoint:
        return ChatClient(config.llm_endpoint, config.llm_endpoint_model), False
    from icml26.rmft.llm_model import TINY_SPEC, make_tiny_policy_lm
    from icml26.shared.llm.chat_templates import with_generation_markers
    from icml26.shared.llm.sft import add_lora

    spec = config.llm_model
    if spec == TINY_SPEC:
        spec = str(make_tiny_policy_lm(run_dir.path / "tiny_lm", seed=config.seed))
    model, tokenizer = load_causal_lm(
        spec, device=device, dtype="float32" if device == "cpu" else None
    )
    # SmolLM2's template gets {% generation %} markers; another checkpoint's unknown template
    # is kept (the SFT loop then finds the replies by prefix rendering).
    with_generation_markers(tokenizer, strict=False)
    model = add_lora(model, rank=config.lora_rank, alpha=2 * config.lora_rank)
    return LocalChatModel(model, tokenizer, batch_size=config.llm_batch_size), True


def _adapter_state(model: Any) -> dict[str, Any]:
    from peft import get_peft_model_state_dict

    return {k: v.detach().cpu().clone() for k, v in get_peft_model_state_dict(model).items()}


def _load_adapter(model: Any, weights: dict[str, Any]) -> None:
    from peft import set_peft_model_state_dict

    set_peft_model_state_dict(model, weights)


# ---------------------------------------------------------------------------------- metrics
#: Fewest paired instances on which an improvement z is reported (below, it is NaN: the claim
#: is undecided rather than decided on two or three instances).
Z_MIN_INSTANCES = 10


def paired_z(before: Any, after: Any) -> float:
    """Paired z of the improvement ``before - after`` over shared instances: mean over its
    standard error. NaN (undecided) when the standard error is 0 or there are fewer than
    :data:`Z_MIN_INSTANCES` pairs; a zero standard error says nothing about significance."""
    diff = np.asarray(before, dtype=float) - np.asarray(after, dtype=float)
    if diff.size < Z_MIN_INSTANCES:
        return float("nan")
    se = float(diff.std(ddof=1) / math.sqrt(diff.size))
    return float(diff.mean() / se) if se > 0 else float("nan")


#: The comparisons of every final model: against its own base (``<model>``), against the base
#: decoded greedily (``<model>_vs_base_greedy``: is the gain more than determinism?) and
#: against the loop distilling random rollouts (``<model>_vs_random_select``: is it the regret
#: signal?). Policy names are prefixed with ``llm_`` on the LLM path.
_CONTROLS = (("", "base"), ("_vs_base_greedy", "base_greedy"), ("_vs_random_select",
             "random_select_final"))  # fmt: skip


def _worst(vals: list[float], pick: Any) -> float:
    """The worst over environments (``pick`` = max for ratios, min for z); NaN if any is."""
    return float("nan") if any(math.isnan(v) for v in vals) else float(pick(vals))


def _metrics(config: RMFTConfig, state: _State) -> dict[str, Any]:
    metrics: dict[str, Any] = {"regret": {}, "regret_per_step": {}, "regret_se": {}}
    for env, policies in state.results.items():
        horizon = parse_env(env).horizon
        for policy, s in policies.items():
            metrics["regret"].setdefault(env, {})[policy] = s["regret"]
            metrics["regret_per_step"].setdefault(env, {})[policy] = s["regret"] / horizon
            metrics["regret_se"].setdefault(env, {})[policy] = s["se"]
    ratio: dict[str, dict[str, float]] = {}
    z: dict[str, dict[str, float]] = {}
    by_axis: dict[str, dict[str, list[tuple[float, float]]]] = {}

    def compare(env: str, axis: str, model: str, prefix: str, iterations: int) -> None:
        """``model`` (``rmft`` or ``llm``) after ``iterations`` against its base and controls."""
        policies = state.results.get(env, {})
        final_name = f"{prefix}rmft_iter{iterations}" if iterations else f"{prefix}base"
        if final_name not in policies:
            return
        f = np.asarray(policies[final_name]["final"])
        metrics["regret"][env][f"{prefix}rmft_final"] = float(f.mean())
        for suffix, control in _CONTROLS:
            if f"{prefix}{control}" not in policies:
                continue
            b = np.asarray(policies[f"{prefix}{control}"]["final"])
            name = f"{model}{suffix}"
            r = float(f.mean() / max(b.mean(), 1e-9))
            zz = paired_z(b, f)
            ratio.setdefault(env, {})[name] = r
            z.setdefault(env, {})[name] = zz
            by_axis.setdefault(axis, {}).setdefault(name, []).append((r, zz))

    train = parse_env(config.train_env)
    for env in config.eval_envs:
        axis = generalisation_axis(train, parse_env(env))
        compare(env, axis, "rmft", "", config.rmft_iterations)
    if config.experts_env:
        compare(config.experts_env, "experts", "rmft", "", config.rmft_iterations)
    if config.llm_enabled and not config.llm_endpoint:
        compare(config.llm_env, "train", "llm", "llm_", config.llm_iterations)
        if config.llm_nl_env:
            compare(config.llm_nl_env, "scenario", "llm", "llm_", config.llm_iterations)
    metrics["regret_ratio"] = ratio
    metrics["improvement_z"] = z
    metrics["regret_ratio_by_axis"] = {
        a: {m: _worst([v[0] for v in vals], max) for m, vals in ms.items()}
        for a, ms in by_axis.items()
    }
    metrics["improvement_z_by_axis"] = {
        a: {m: _worst([v[1] for v in vals], min) for m, vals in ms.items()}
        for a, ms in by_axis.items()
    }
    metrics["eval_instances"] = {"numeric": float(config.eval_instances)}
    if config.llm_enabled:
        metrics["eval_instances"]["llm"] = float(config.llm_eval_instances)
    metrics["invalid_action_rate"] = _invalid_rates(config, state)
    metrics["train"] = state.train
    metrics["seconds"] = dict(state.seconds)
    return metrics


def _invalid_rates(config: RMFTConfig, state: _State) -> dict[str, float]:
    """Share of LLM replies naming no valid action, per LLM policy (over the LLM envs)."""
    llm_envs = [e for e in (config.llm_env, config.llm_nl_env) if e and e in state.results]
    if not llm_envs:
        return {}
    return {
        policy: float(
            np.mean(
                [
                    state.results[e][policy]["invalid"]
                    for e in llm_envs
                    if policy in state.results[e]
                ]
            )
        )
        for policy in state.results[llm_envs[0]]
        if policy.startswith("llm_")
    }


# ---------------------------------------------------------------------------------- plots
_BASELINE_STYLE = {
    "ucb": ":",
    "ts": ":",
    "greedy": "--",
    "exp3": "-.",
    "hedge": "-.",
    "random": ":",
}


def _colour(policy: str) -> str:
    """One colour per policy across every panel (Okabe-Ito)."""
    fixed = {"ucb": 0, "ts": 1, "greedy": 2, "exp3": 3, "hedge": 6, "random": 6}
    if policy in fixed:
        return PALETTE[fixed[policy]]
    if policy.endswith("base"):
        return PALETTE[4]
    if policy.endswith("base_greedy"):
        return PALETTE[4]  # the base's colour, dashed
    if policy.endswith("random_select_final"):
        return PALETTE[5]
    return PALETTE[7] if "rmft" in policy else PALETTE[5]


_control_names = {f"{p}{c}" for p in ("", "llm_") for c in ("base_greedy", "random_select_final")}


def _final_policies(config: RMFTConfig) -> set[str]:
    return {
        "base",
        "llm_base",
        f"rmft_iter{config.rmft_iterations}",
        f"llm_rmft_iter{config.llm_iterations}",
        *(f"{p}{c}" for p in ("", "llm_") for c in ("base_greedy", "random_select_final")),
    }


def _plots(run_dir: RunDir, config: RMFTConfig, state: _State) -> None:
    """Cumulative regret curves per environment, and regret at T against RMFT iteration."""
    envs = list(state.results)
    cols = min(3, len(envs))
    rows = math.ceil(len(envs) / cols)
    shown = _final_policies(config)
    with figure(
        run_dir.plot_path("regret_curves"),
        rows,
        cols,
        title="Cumulative regret (mean over instances)",
    ) as (_fig, axes):
        flat = np.atleast_1d(axes).ravel()
        for ax, env in zip(flat, envs, strict=False):
            for policy, s in state.results[env].items():
                if policy not in shown and policy not in _BASELINE_STYLE:
                    continue
                curve = np.asarray(s["curve"])
                ax.plot(np.arange(1, len(curve) + 1), curve, _BASELINE_STYLE.get(policy, "--" if policy in _control_names else "-"), color=_colour(policy),
                        label=policy, lw=2.2 if "rmft" in policy else 1.3)  # fmt: skip
            ax.set_title(env, fontsize=9)
            ax.set_xlabel("t")
            ax.set_ylabel("cumulative regret")
            ax.legend(fontsize=6)
        for ax in flat[len(envs) :]:
            ax.axis("off")
    with figure(
        run_dir.plot_path("regret_vs_iteration"),
        rows,
        cols,
        title="Regret at T vs RMFT iteration (0 = base; ±1 s.e.)",
    ) as (_fig, axes):
        flat = np.atleast_1d(axes).ravel()
        for ax, env in zip(flat, envs, strict=False):
            res = state.results[env]
            for base, prefix, n in (
                ("base", "rmft_iter", config.rmft_iterations),
                ("llm_base", "llm_rmft_iter", config.llm_iterations),
            ):
                if base not in res:
                    continue
                its = [0] + [i for i in range(1, n + 1) if f"{prefix}{i}" in res]
                names = [base] + [f"{prefix}{i}" for i in its[1:]]
                ys = np.array([res[p]["regret"] for p in names])
                es = np.array([res[p]["se"] for p in names])
                label = "LLM (LoRA RMFT)" if base == "llm_base" else "numerical Transformer"
                ax.errorbar(
                    its,
                    ys,
                    yerr=es,
                    marker="o",
                    capsize=3,
                    color=_colour(prefix),
                    label=label,
                )
                ax.set_xticks(its)
            for policy, s in res.items():
                if policy in _control_names:  # the controls, dashed in their own colours
                    ax.axhline(s["regret"], ls="--", lw=1.4, color=_colour(policy), label=policy)
                if policy in _BASELINE_STYLE:
                    ax.axhline(
                        s["regret"],
                        ls=_BASELINE_STYLE[policy],
                        lw=1,
                        color=_colour(policy),
                        label=policy,
                    )
            ax.set_title(env, fontsize=9)
            ax.set_xlabel("RMFT iteration")
            ax.set_ylabel("regret at T")
            ax.legend(fontsize=6)
        for ax in flat[len(envs) :]:
            ax.axis("off")


# ---------------------------------------------------------------------------------- run
def run(config: RMFTConfig, run_dir: RunDir) -> dict[str, Any]:
    """The main job (see the module docstring); returns the metrics mapping."""
    import torch

    torch.set_num_threads(config.threads)
    device = resolve_device(config.device)
    run_dir.update_env(device=device, torch_threads=config.threads)
    seed_everything(config.seed, torch=True)
    state = _State()
    resumed = run_dir.checkpoints.latest()
    if resumed is not None:
        state.__dict__.update(resumed[1])
        log(f"rmft: resuming after stages {state.done}")

    def instances(env: str, n: int) -> Instances:
        return sample_instances(env, n, _rng(config.seed, "instances", env))

    numeric_envs = {e: instances(e, config.eval_instances) for e in config.eval_envs}
    experts_envs = (
        {config.experts_env: instances(config.experts_env, config.eval_instances)}
        if config.experts_env
        else {}
    )
    llm_envs = {}
    if config.llm_enabled:
        llm_envs = {
            e: instances(e, config.llm_eval_instances)
            for e in (config.llm_env, config.llm_nl_env)
            if e
        }
    _baselines(run_dir, config, state, {**numeric_envs, **experts_envs, **llm_envs})
    _numeric(
        run_dir,
        config,
        state,
        train_env=config.train_env,
        envs=numeric_envs,
        tag="numeric",
        device=device,
    )
    if config.experts_env:
        _numeric(
            run_dir,
            config,
            state,
            train_env=config.experts_env,
            envs=experts_envs,
            tag="experts",
            device=device,
            random_control=False,  # the controls' claims are on the main model
        )
    if config.llm_enabled:
        _llm(run_dir, config, state, llm_envs, device)
    _plots(run_dir, config, state)
    run_dir.write_json(
        "curves.json",
        {env: {p: s["curve"] for p, s in pol.items()} for env, pol in state.results.items()},
    )
    if state.samples:
        run_dir.write_json("llm_samples.json", state.samples)
    return _metrics(config, state)

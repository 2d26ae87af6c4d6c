"""The study's steps: classical baselines, the numerical Transformers and the LLM, each as
named stages of :class:`icml26.shared.Stages` (a killed run resumes at the first unfinished
stage).

Every evaluation environment has one fixed set of instances and reward tables shared by all
policies (common random numbers), and every policy draws from its own stream
(``rng_for(seed, "eval", env, policy)``), so comparisons are paired and a resumed run equals
an uninterrupted one. Each trained model is evaluated twice: sampled (its rollout
temperature) and greedily, so that every comparison can be made at matched decoding.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from icml26.rmft.baselines import make_baseline
from icml26.rmft.config import RunConfig
from icml26.rmft.envs import Instances, parse_env, sample_instances
from icml26.rmft.rollouts import Policy, Trajectories, rollout
from icml26.shared import TORCH, Stages, log, rng_for, seed_for

__all__ = [
    "NumericSetting",
    "Results",
    "evaluation_instances",
    "numeric_settings",
    "resolve_device",
    "run_baselines",
    "run_llm",
    "run_numeric",
    "summarise",
]

#: ``env -> policy -> summary`` (see :func:`summarise`).
Results = dict[str, dict[str, dict[str, Any]]]


def resolve_device(device: str) -> str:
    """``"auto"`` -> ``"cuda"`` when available, else ``"cpu"``; anything else as given.

    Raises:
        ValueError: CUDA asked for but not available.
    """
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} requested but CUDA is not available")
    return device


def summarise(trajs: Trajectories) -> dict[str, Any]:
    """Mean final regret, its standard error, the mean regret curve, per-instance finals, the
    share of invalid steps and that share per episode (``invalid_by_episode``: the unit a
    drop in the invalid rate is tested on, decisions within an episode being dependent)."""
    final = trajs.final_regret
    return {
        "regret": float(final.mean()),
        "se": float(final.std(ddof=1) / math.sqrt(len(final))) if len(final) > 1 else 0.0,
        "curve": trajs.regret.mean(axis=0).tolist(),
        "final": final.tolist(),
        "invalid": float(trajs.invalid.mean()),
        "invalid_by_episode": trajs.invalid.mean(axis=1).tolist(),
    }


def _merge(into: Results, new: Mapping[str, Mapping[str, Any]]) -> Results:
    for env, policies in new.items():
        into.setdefault(env, {}).update(policies)
    return into


def _evaluate(seed: int, policy: Policy, name: str, envs: Mapping[str, Instances]) -> Results:
    return {
        env: {name: summarise(rollout(policy, inst, rng_for(seed, "eval", env, name)))}
        for env, inst in envs.items()
    }


def evaluation_instances(config: RunConfig, envs: list[str], n: int) -> dict[str, Instances]:
    """One fixed instance set per environment (its own stream), shared by every policy."""
    return {e: sample_instances(e, n, rng_for(config.seed, "instances", e)) for e in envs}


def run_baselines(stages: Stages, config: RunConfig, envs: Mapping[str, Instances]) -> Results:
    """Stage ``baselines``: the classical algorithms (Hedge added on full information)."""

    def compute() -> Results:
        out: Results = {}
        for env, inst in envs.items():
            names = list(config.baselines)
            if inst.spec.full_information and "hedge" not in names:
                names.append("hedge")
            for name in names:
                _merge(out, _evaluate(config.seed, make_baseline(name), name, {env: inst}))
        return out

    return stages.once("baselines", compute)


@dataclass(frozen=True)
class NumericSetting:
    """One numerical Transformer: its name (``tag``), training environment, evaluation
    environments and whether the random-selection control runs."""

    tag: str
    train_env: str
    envs: Mapping[str, Instances]
    random_control: bool = True


def numeric_settings(config: RunConfig) -> list[NumericSetting]:
    """The main model (``numeric``), and the non-stationary and experts models when set."""
    if not config.numeric:
        return []
    n = config.eval_instances
    out = [
        NumericSetting(
            "numeric", config.train_env, evaluation_instances(config, list(config.eval_envs), n)
        )
    ]
    for tag, env in (("nonstationary", config.nonstationary_env), ("experts", config.experts_env)):
        if env:
            out.append(NumericSetting(tag, env, evaluation_instances(config, [env], n), False))
    return out


def _rmft_settings(config: RunConfig) -> Any:
    from icml26.rmft.rmft import RMFTSettings

    return RMFTSettings(
        n_instances=config.rollout_instances,
        rollouts_per_instance=config.rollouts_per_instance,
        keep_per_instance=config.keep_per_instance,
        steps=config.finetune_steps,
        lr=config.finetune_lr,
        batch_size=config.batch_size,
        temperature=config.rollout_temperature,
    )


def _llm_settings(config: RunConfig) -> Any:
    from icml26.rmft.llm_rmft import LLMSettings

    return LLMSettings(
        n_instances=config.llm_rollout_instances,
        rollouts_per_instance=config.llm_rollouts_per_instance,
        keep_per_instance=config.llm_keep_per_instance,
        steps=config.llm_steps,
        lr=config.llm_lr,
        batch_size=config.llm_batch_size,
        temperature=config.llm_temperature,
        max_tokens=config.llm_max_tokens,
        invalid=config.llm_invalid,
        engine=config.llm_engine,
        parse=config.llm_parse,
    )


def _prefix(tag: str) -> str:
    return "" if tag == "numeric" else f"{tag}_"


def run_numeric(
    stages: Stages, config: RunConfig, setting: NumericSetting, device: str
) -> tuple[Results, dict[str, Any]]:
    """Weak pretraining (``<p>base``, ``<p>base_greedy``), RMFT iterations
    (``<p>rmft_iter<i>``, the last also ``<p>rmft_greedy_final``), and with
    ``random_control`` the loop distilling random rollouts (``<p>random_select_final``, and
    greedily ``<p>random_select_greedy_final``: matched decoding for that control too);
    ``<p>`` is ``""`` for the main model, else ``"<tag>_"``. Returns results and train stats."""
    import torch

    from icml26.rmft.model import ArmTransformer, ModelConfig, TransformerPolicy
    from icml26.rmft.rmft import numeric_rmft_iteration, weak_pretraining

    tag, p, spec = setting.tag, _prefix(setting.tag), parse_env(setting.train_env)
    torch.manual_seed(seed_for(config.seed, tag, "init"))
    model = ArmTransformer(ModelConfig(config.d_model, config.n_layers, config.n_heads)).to(device)
    settings = _rmft_settings(config)
    train_only = {setting.train_env: setting.envs[setting.train_env]}

    def evaluate(name: str, greedy: bool, envs: Mapping[str, Instances]) -> Results:
        t = 0.0 if greedy else config.rollout_temperature
        pol = TransformerPolicy(model, temperature=t, name=p + name, device=device)
        return _evaluate(config.seed, pol, p + name, envs)

    def pretrain() -> dict[str, Any]:
        rng = rng_for(config.seed, tag, "pretrain")
        torch.manual_seed(seed_for(config.seed, tag, "pretrain"))
        losses = weak_pretraining(
            model,
            spec,
            n_trajectories=config.pretrain_trajectories,
            greedy_fraction=config.greedy_fraction,
            steps=config.pretrain_steps,
            lr=config.pretrain_lr,
            batch_size=config.batch_size,
            rng=rng,
        )
        results = _merge(
            evaluate("base", False, setting.envs), evaluate("base_greedy", True, setting.envs)
        )
        stats = {
            "loss_first": losses[0] if losses else math.nan,
            "loss_last": losses[-1] if losses else math.nan,
        }
        return {"model": _snapshot(model), "stats": stats, "results": results}

    def iteration(loop: str, rule: str, i: int, last: bool) -> Callable[[], dict[str, Any]]:
        def compute() -> dict[str, Any]:
            torch.manual_seed(seed_for(config.seed, tag, loop, i))
            stats = numeric_rmft_iteration(
                model,
                spec,
                replace(settings, selection=rule),
                rng_for(config.seed, tag, loop, i),
                device=device,
            )
            log(
                f"rmft: {tag} {loop}{i}: rollout regret {stats.rollout_regret:.2f}, kept {stats.selected_regret:.2f}"
            )
            results: Results = {}
            if rule == "lowest_regret":
                every = last or config.eval_every_iteration
                _merge(
                    results, evaluate(f"rmft_iter{i}", False, setting.envs if every else train_only)
                )
                if last:
                    _merge(results, evaluate("rmft_greedy_final", True, setting.envs))
            elif last:
                _merge(results, evaluate("random_select_final", False, setting.envs))
                _merge(results, evaluate("random_select_greedy_final", True, setting.envs))
            return {"model": _snapshot(model), "stats": asdict(stats), "results": results}

        return compute

    return _loops(
        stages, model, tag, config.rmft_iterations, pretrain, iteration, setting.random_control
    )


def _loops(
    stages: Stages,
    model: Any,
    tag: str,
    n: int,
    pretrain: Callable[[], dict[str, Any]],
    iteration: Callable[[str, str, int, bool], Callable[[], dict[str, Any]]],
    control: bool,
) -> tuple[Results, dict[str, Any]]:
    """The base stage, then ``n`` RMFT iterations and (with ``control``) ``n`` of the random-
    selection loop from the same base; each stage restores the weights it starts from."""
    results: Results = {}
    train: dict[str, Any] = {}
    base = stages.once(f"{tag}_base", pretrain, saver=TORCH)
    _merge(results, base["results"])
    train[f"{tag}_base"] = base["stats"]
    for loop, rule in (("iter", "lowest_regret"), ("random_iter", "random"))[: 2 if control else 1]:
        weights = base["model"]
        for i in range(1, n + 1):
            _load(model, weights)
            out = stages.once(f"{tag}_{loop}{i}", iteration(loop, rule, i, i == n), saver=TORCH)
            weights = out["model"]
            _merge(results, out["results"])
            train[f"{tag}_{loop}{i}"] = out["stats"]
    return results, train


def _snapshot(model: Any) -> dict[str, Any]:
    if hasattr(model, "peft_config"):
        from peft import get_peft_model_state_dict

        state = get_peft_model_state_dict(model)
    else:
        state = model.state_dict()
    return {k: v.detach().cpu().clone() for k, v in state.items()}


def _load(model: Any, weights: Mapping[str, Any]) -> None:
    if hasattr(model, "peft_config"):
        from peft import set_peft_model_state_dict

        set_peft_model_state_dict(model, dict(weights))
    else:
        model.load_state_dict(dict(weights))


# ------------------------------------------------------------------------------------ LLM
def run_llm(
    stages: Stages, config: RunConfig, device: str, run_path: Path
) -> tuple[Results, dict[str, Any]]:
    """The LLM path: the base sampled (``llm_base``) and greedy (``llm_base_greedy``), the RMFT
    iterations (``llm_rmft_iter<i>``; the last also ``llm_rmft_greedy_final``) and the loop
    distilling random rollouts (``llm_random_select_final``, and greedily
    ``llm_random_select_greedy_final``), on ``llm_env``; the base and the
    final model, sampled, on the natural-language scenario ``llm_nl_env``. An endpoint only
    evaluates the base and exports one selection. Returns results (each summary with its
    first episode's first two replies under ``samples``, the share of replies that hit
    ``llm_max_tokens`` under ``truncated`` and the share the lenient parse finds no choice
    in under ``invalid_lenient``) and train stats."""
    from icml26.rmft.llm_policy import LLMPolicy
    from icml26.rmft.llm_rmft import llm_rmft_iteration, write_openai_finetune_jsonl

    settings = _llm_settings(config)
    envs = evaluation_instances(
        config, [e for e in (config.llm_env, config.llm_nl_env) if e], config.llm_eval_instances
    )
    main = {config.llm_env: envs[config.llm_env]}
    backend, local = _llm_backend(config, device, run_path)

    def evaluate(name: str, greedy: bool, on: Mapping[str, Instances]) -> Results:
        out: Results = {}
        for env, inst in on.items():
            scenario = "restaurants" if inst.spec.kind == "restaurants" else "buttons"
            pol = LLMPolicy(
                backend,
                scenario=scenario,
                max_tokens=config.llm_max_tokens,
                temperature=0.0 if greedy else config.llm_temperature,
                name=name,
                parse=config.llm_parse,
            )
            trajs = rollout(pol, inst, rng_for(config.seed, "eval", env, name))
            out[env] = {name: summarise(trajs)}
            steps = [s for episode in trajs.records for s in episode]
            out[env][name]["truncated"] = float(np.mean([s["truncated"] for s in steps]))
            out[env][name]["invalid_lenient"] = float(
                np.mean([not s["valid_lenient"] for s in steps])
            )
            out[env][name]["samples"] = [
                {"reply": s["reply"], "valid": s["valid"]} for s in trajs.records[0][:2]
            ]
        return out

    def base() -> dict[str, Any]:
        results = _merge(evaluate("llm_base", False, envs), evaluate("llm_base_greedy", True, main))
        return {"model": _snapshot(backend.model) if local else {}, "stats": {}, "results": results}

    if not local:
        results = stages.once("llm_base", base)["results"]
        _llm_export(stages, config, backend, settings, run_path)
        return results, {"llm_usage": dict(backend.usage.as_dict())}

    def iteration(loop: str, rule: str, i: int, last: bool) -> Callable[[], dict[str, Any]]:
        def compute() -> dict[str, Any]:
            import torch

            torch.manual_seed(seed_for(config.seed, "llm", loop, i))
            stats, pairs = llm_rmft_iteration(
                backend,
                parse_env(config.llm_env),
                replace(settings, selection=rule),
                rng_for(config.seed, "llm", loop, i),
            )
            log(
                f"rmft: llm {loop}{i}: rollout regret {stats.rollout_regret:.2f} (invalid {stats.rollout_invalid:.2f}), kept {stats.selected_regret:.2f} penalised, {stats.selected_played_regret:.2f} played, {len(pairs)} transcripts"
            )
            results: Results = {}
            if rule == "lowest_regret":
                write_openai_finetune_jsonl(pairs, run_path / f"rmft_selected_iter{i}.jsonl")
                _merge(results, evaluate(f"llm_rmft_iter{i}", False, envs if last else main))
                if last:
                    _merge(results, evaluate("llm_rmft_greedy_final", True, main))
            elif last:
                _merge(results, evaluate("llm_random_select_final", False, main))
                _merge(results, evaluate("llm_random_select_greedy_final", True, main))
            return {
                "model": _snapshot(backend.model),
                "stats": {**asdict(stats), "examples": len(pairs)},
                "results": results,
            }

        return compute

    results, train = _loops(
        stages,
        backend.model,
        "llm",
        config.llm_iterations,
        base,
        iteration,
        config.llm_random_control,
    )
    train["llm_usage"] = dict(backend.usage.as_dict())
    return results, train


def _llm_export(
    stages: Stages, config: RunConfig, backend: Any, settings: Any, run_path: Path
) -> None:
    """Through an endpoint, one RMFT selection: roll out, keep the lowest-regret episodes and
    write them as chat fine-tuning JSONL (the fine-tuning happens at the provider)."""
    from icml26.rmft.llm_policy import LLMPolicy
    from icml26.rmft.llm_rmft import select_llm_transcripts, write_openai_finetune_jsonl

    if config.llm_iterations < 1:
        return

    def compute() -> dict[str, Any]:
        rng = rng_for(config.seed, "llm", "iter", 1)
        inst = sample_instances(config.llm_env, settings.n_instances, rng).repeat(
            settings.rollouts_per_instance
        )
        pol = LLMPolicy(
            backend,
            max_tokens=settings.max_tokens,
            temperature=settings.temperature,
            parse=settings.parse,
        )
        _, pairs = select_llm_transcripts(rollout(pol, inst, rng), settings, rng)
        write_openai_finetune_jsonl(pairs, run_path / "rmft_selected_iter1.jsonl")
        return {"examples": len(pairs)}

    stages.once("llm_iter1", compute)


def _llm_backend(config: RunConfig, device: str, run_path: Path) -> tuple[Any, bool]:
    from icml26.shared.llm import ChatClient, LocalChatModel, load_causal_lm

    if config.llm_endpoint:
        return ChatClient(config.llm_endpoint, config.llm_endpoint_model), False
    from icml26.rmft.llm_model import TINY_SPEC, make_tiny_policy_lm
    from icml26.shared.llm.chat_templates import with_generation_markers
    from icml26.shared.llm.sft import add_lora

    spec = config.llm_model
    if spec == TINY_SPEC:
        spec = str(make_tiny_policy_lm(run_path / "tiny_lm", seed=config.seed))
    model, tokenizer = load_causal_lm(
        spec, device=device, dtype="float32" if device == "cpu" else None
    )
    # SmolLM2's template gets {% generation %} markers; another checkpoint's unknown template
    # is kept (the SFT then finds the replies by prefix rendering).
    with_generation_markers(tokenizer, strict=False)
    model = add_lora(model, rank=config.lora_rank, alpha=2 * config.lora_rank)
    return LocalChatModel(model, tokenizer, batch_size=config.llm_batch_size), True

"""``icml26 run magic``: the safety game, co-evolution and the baselines, in named stages.

1. :func:`warm_start`: the game and the SFT-warm-started attacker, defender and self-play
   adapters (the ``base`` defender is the warm-started defender);
2. :func:`train_defenders`: MAGIC's alternating GRPO, then each baseline with as many
   defender steps as MAGIC's defender had;
3. :func:`evaluate_defenders`: every defender on the fixed attack sets (``seed_ops``,
   ``heldout_combos``, ``unseen_ops``, ``plain``);
4. :func:`adaptive_attacks`: a fresh attacker trained against each frozen defender;
5. :func:`attacker_novelty`: the co-evolved and the SFT-only attacker against the base
   defender: how many of their successes use compositions outside the seed pool;
6. :func:`large_model_magic` (``full``): MAGIC with LoRA on SmolLM2-135M-Instruct;
7. plots.

Each stage is checkpointed (adapter weights and figures), so a killed run resumes from the
last finished stage.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import replace
from typing import Any

import numpy as np

from icml26.magic.coevolve import (
    GameSettings,
    TrainLog,
    adaptive_attacker,
    attacker_role,
    defender_role,
    make_schedule,
    self_play_role,
    static_defender_role,
    train_roles,
)
from icml26.magic.config import DEFENDERS, EVALS, MagicConfig
from icml26.magic.evaluate import sample_attacks, score_defender
from icml26.magic.game import EvalSet, SafetyGame
from icml26.magic.intents import builtin_catalogue, load_catalogue
from icml26.magic.policies import Policies, build_policies
from icml26.shared import RunDir, figure, log, seed_everything

__all__ = [
    "adaptive_attacks",
    "attacker_novelty",
    "evaluate_defenders",
    "make_game",
    "run",
    "train_defenders",
    "warm_start",
]


def make_game(config: MagicConfig) -> SafetyGame:
    catalogue = load_catalogue(config.catalogue) if config.catalogue else builtin_catalogue()
    return SafetyGame(
        catalogue,
        max_ops=config.max_ops,
        penalty=config.penalty,
        n_eval_intents=config.eval_intents,
    )


def settings_of(config: MagicConfig) -> GameSettings:
    return GameSettings(
        pairs_per_step=config.pairs_per_step,
        num_generations=config.num_generations,
        lr=config.lr,
        attack_tokens=config.attack_tokens,
        reply_tokens=config.reply_tokens,
        temperature=config.temperature,
        seed=config.seed,
    )


def warm_start(config: MagicConfig, game: SafetyGame, *, model: str | None = None) -> Policies:
    model = model or config.model
    tiny = model == "tiny"
    return build_policies(
        game,
        model=model,
        tiny_hidden=config.tiny_hidden,
        tiny_layers=config.tiny_layers,
        vocab_size=config.vocab_size,
        base_sft_steps=config.base_sft_steps if tiny else 0,
        adapter_sft_steps=config.adapter_sft_steps if tiny else config.large_sft_steps,
        sft_lr=config.sft_lr if tiny else config.large_sft_lr,
        lora_rank=config.lora_rank if tiny else 8,
        device=config.device,
        seed=config.seed,
    )


def eval_sets(config: MagicConfig, game: SafetyGame, n: int | None = None) -> dict[str, EvalSet]:
    """The evaluation sets; with ``n`` (the pretrained model's smaller evaluation) every set,
    the seed pool included, is cut to ``n`` compositions."""
    rng = np.random.default_rng(config.seed + 1)
    return {
        e: game.eval_set(e, rng, n or config.eval_compositions, whole_seed_pool=n is None)
        for e in EVALS
    }


def _probe(
    policies: Policies,
    game: SafetyGame,
    probe_set: EvalSet,
    settings: GameSettings,
    reply_tokens: int,
) -> Any:
    def probe() -> dict[str, float]:
        s = score_defender(policies, game, probe_set, "defender", max_tokens=reply_tokens)
        live = sample_attacks(
            policies,
            game,
            game.eval_intents(),
            attacker="attacker",
            defender="defender",
            samples_per_intent=1,
            attack_tokens=settings.attack_tokens,
            reply_tokens=reply_tokens,
        )
        return {
            "asr_curve": s.asr,
            "benign_curve": s.benign_compliance,
            "attacker_asr_curve": live.asr,
        }

    return probe


def _log_steps(run_dir: RunDir, method: str) -> Any:
    def on_step(record: dict[str, Any]) -> None:
        keep = {
            k.replace("rewards/", "").replace("/mean", ""): v
            for k, v in record.items()
            if (k.startswith("rewards/") and k.endswith("/mean")) or k in ("reward", "loss")
        }
        run_dir.log_metrics(
            None, method=method, role=record["role"], train_step=record["step"], **keep
        )

    return on_step


def train_magic(
    config: MagicConfig,
    game: SafetyGame,
    policies: Policies,
    run_dir: RunDir,
    *,
    steps: int,
    settings: GameSettings,
    reply_tokens: int,
    tag: str = "magic",
) -> TrainLog:
    """MAGIC: alternating GRPO of attacker and defender; probes after every round."""
    probe_set = game.eval_set(
        "seed_ops", np.random.default_rng(config.seed + 2), config.probe_compositions
    )
    probe_set = EvalSet(
        "probe",
        probe_set.harmful[:: max(1, len(game.seed_pool) // config.probe_compositions)],
        probe_set.benign[:: max(1, len(game.seed_pool) // config.probe_compositions)],
    )
    policies.reset()
    schedule = make_schedule(
        config.schedule,
        every=config.switch_every,
        asr_high=config.asr_high,
        asr_low=config.asr_low,
    )
    train_log = train_roles(
        policies,
        [attacker_role(policies, game, settings), defender_role(policies, game, settings)],
        steps,
        schedule=schedule,
        seed=config.seed,
        probe=_probe(policies, game, probe_set, settings, reply_tokens),
        on_step=_log_steps(run_dir, tag),
    )
    for r in train_log.rounds:
        run_dir.log_metrics(None, method=tag, **r)
    return train_log


def train_defenders(
    config: MagicConfig,
    game: SafetyGame,
    policies: Policies,
    run_dir: RunDir,
    done: dict[str, Any],
    save: Any,
) -> dict[str, dict[str, Any]]:
    """Train MAGIC, then the baselines with MAGIC's number of defender steps. Returns
    ``{defender: {"state", "attacker_state", "defender_steps", "cpu_seconds", ...}}``."""
    settings = settings_of(config)
    trained: dict[str, dict[str, Any]] = done.setdefault("trained", {})
    if "base" not in trained:
        trained["base"] = {
            "state": policies.sft_states["defender"],
            "defender_steps": 0,
            "cpu_seconds": 0.0,
        }
    if "magic" not in trained:
        log("magic: alternating GRPO of attacker and defender")
        tl = train_magic(
            config,
            game,
            policies,
            run_dir,
            steps=config.magic_steps,
            settings=settings,
            reply_tokens=config.reply_tokens,
        )
        trained["magic"] = {
            "state": policies.state("defender"),
            "attacker_state": policies.state("attacker"),
            "defender_steps": tl.role_steps("defender"),
            "attacker_steps": tl.role_steps("attacker"),
            "rounds": tl.rounds,
            "cpu_seconds": tl.cpu_seconds,
            "train_asr": [
                s.get("rewards/attack_success/mean") for s in tl.steps if s["role"] == "attacker"
            ],
        }
        save()
    n_def = max(1, trained["magic"]["defender_steps"])
    for name in ("frozen_attacker", "static", "self_play"):
        if name not in config.defenders or name in trained:
            continue
        log(f"{name}: {n_def} defender steps")
        policies.reset()
        if name == "frozen_attacker":
            roles = [defender_role(policies, game, settings)]
            steps, adapter = n_def, "defender"
        elif name == "static":
            roles = [static_defender_role(game, settings)]
            steps, adapter = n_def, "defender"
        else:
            roles = [self_play_role(policies, game, settings)]
            steps, adapter = n_def + trained["magic"].get("attacker_steps", 0), "self"
        tl = train_roles(
            policies, roles, steps, seed=config.seed, on_step=_log_steps(run_dir, name)
        )
        trained[name] = {
            "state": policies.state(adapter),
            "defender_steps": steps,
            "cpu_seconds": tl.cpu_seconds,
        }
        save()
    return trained


def _load_defender(policies: Policies, state: dict[str, Any]) -> None:
    policies.load("defender", state)


def evaluate_defenders(
    config: MagicConfig,
    game: SafetyGame,
    policies: Policies,
    trained: dict[str, dict[str, Any]],
    sets: dict[str, EvalSet],
    *,
    reply_tokens: int,
    suffix: str = "",
) -> dict[str, float]:
    """``asr.<eval>.<defender>`` and ``benign_compliance.<eval>.<defender>`` (and ``.all``,
    pooled over the four sets)."""
    out: dict[str, float] = {}
    for name, info in trained.items():
        _load_defender(policies, info["state"])
        pooled_b, pooled_n = 0.0, 0
        for e, s in sets.items():
            score = score_defender(policies, game, s, "defender", max_tokens=reply_tokens)
            out[f"asr.{e}.{name}{suffix}"] = score.asr
            out[f"benign_compliance.{e}.{name}{suffix}"] = score.benign_compliance
            pooled_b += score.benign_compliance * score.n_benign
            pooled_n += score.n_benign
        out[f"benign_compliance.all.{name}{suffix}"] = pooled_b / max(pooled_n, 1)
    return out


def adaptive_attacks(
    config: MagicConfig,
    game: SafetyGame,
    policies: Policies,
    trained: dict[str, dict[str, Any]],
    done: dict[str, Any],
    save: Any,
) -> dict[str, float]:
    """``asr.adaptive.<defender>``: a warm-start attacker trained ``adaptive_steps`` against
    each frozen defender, then sampled on the evaluation intents."""
    settings = settings_of(config)
    results: dict[str, float] = done.setdefault("adaptive", {})
    for name, info in trained.items():
        if name in results:
            continue
        _load_defender(policies, info["state"])
        if config.adaptive_steps:
            adaptive_attacker(policies, game, settings, config.adaptive_steps, seed=config.seed)
        else:
            policies.load("attacker", policies.sft_states["attacker"])
        sample = sample_attacks(
            policies,
            game,
            game.eval_intents(),
            attacker="attacker",
            defender="defender",
            samples_per_intent=config.eval_samples,
            attack_tokens=config.attack_tokens,
            reply_tokens=config.reply_tokens,
            seed=config.seed,
        )
        results[name] = sample.asr
        save()
    return {f"asr.adaptive.{k}": v for k, v in results.items()}


def attacker_novelty(
    config: MagicConfig, game: SafetyGame, policies: Policies, trained: dict[str, dict[str, Any]]
) -> tuple[dict[str, float], dict[str, Counter[str]]]:
    """The co-evolved attacker and the SFT-only attacker, sampled against the base defender
    (the same target for both): attack success, broken-intent rate, novel strategy rate."""
    _load_defender(policies, trained["base"]["state"])
    out: dict[str, float] = {}
    found: dict[str, Counter[str]] = {}
    for name, state in (
        ("attacker", trained["magic"]["attacker_state"]),
        ("attacker_sft", policies.sft_states["attacker"]),
    ):
        policies.load("attacker", state)
        s = sample_attacks(
            policies,
            game,
            game.eval_intents(),
            attacker="attacker",
            defender="defender",
            samples_per_intent=config.eval_samples,
            attack_tokens=config.attack_tokens,
            reply_tokens=config.reply_tokens,
            seed=config.seed + 3,
        )
        out[f"novel_strategy_rate.{name}"] = s.novel_strategy_rate
        out[f"attack_success_vs_base.{name}"] = s.asr
        out[f"intent_broken_rate.{name}"] = s.broken_rate
        out[f"distinct_compositions.{name}"] = float(len(s.tried_by_composition))
        found[name] = s.success_by_composition
    return out, found


def large_model_magic(config: MagicConfig, game: SafetyGame, run_dir: RunDir) -> dict[str, float]:
    """MAGIC on the checkpoint ``large_model`` with LoRA (figures only, no claim)."""
    policies = warm_start(config, game, model=config.large_model)
    settings = replace(
        settings_of(config),
        pairs_per_step=config.large_pairs_per_step,
        lr=config.large_lr,
        reply_tokens=config.large_reply_tokens,
    )
    c0 = time.process_time()
    tl = train_magic(
        config,
        game,
        policies,
        run_dir,
        steps=config.large_steps,
        settings=settings,
        reply_tokens=config.large_reply_tokens,
        tag="large.magic",
    )
    trained = {
        "base": {"state": policies.sft_states["defender"]},
        "magic": {"state": policies.state("defender")},
    }
    sets = eval_sets(config, game, config.large_eval_compositions)
    out = evaluate_defenders(
        config, game, policies, trained, sets, reply_tokens=config.large_reply_tokens
    )
    out = {f"large.{k}": v for k, v in out.items()}
    out["large.defender_steps"] = float(tl.role_steps("defender"))
    out["large.attacker_steps"] = float(tl.role_steps("attacker"))
    out["large.cpu_seconds"] = time.process_time() - c0
    return out


def _plots(
    run_dir: RunDir,
    trained: dict[str, Any],
    metrics: dict[str, float],
    found: dict[str, Counter[str]],
) -> None:
    rounds = trained["magic"].get("rounds", [])
    with figure(run_dir.plot_path("rounds"), 1, 2, title="MAGIC per round (tiny)") as (_, axes):
        x = [r["round"] for r in rounds]
        axes[0].plot(x, [r["asr_curve"] for r in rounds], marker="o", label="defender: ASR (probe)")
        axes[0].plot(
            x, [r["attacker_asr_curve"] for r in rounds], marker="s", label="attacker: live ASR"
        )
        axes[0].set_xlabel("round")
        axes[0].set_ylabel("attack success")
        axes[0].legend(fontsize=7)
        axes[1].plot(x, [r["benign_curve"] for r in rounds], marker="o", color="C2")
        axes[1].set_xlabel("round")
        axes[1].set_ylabel("benign compliance (probe)")
        axes[1].set_ylim(-0.05, 1.05)
    defenders = [d for d in DEFENDERS if f"asr.unseen_ops.{d}" in metrics]
    with figure(run_dir.plot_path("defenders"), 1, 2, width=9) as (_, axes):
        w = 0.8 / max(len(defenders), 1)
        evals = [*EVALS, "adaptive"]
        for i, d in enumerate(defenders):
            axes[0].bar(
                np.arange(len(evals)) + i * w,
                [metrics.get(f"asr.{e}.{d}", np.nan) for e in evals],
                w,
                label=d,
            )
            axes[1].bar(
                np.arange(len(EVALS)) + i * w,
                [metrics.get(f"benign_compliance.{e}.{d}", np.nan) for e in EVALS],
                w,
            )
        axes[0].set_xticks(np.arange(len(evals)) + 0.4 - w / 2, evals, rotation=20, fontsize=7)
        axes[1].set_xticks(np.arange(len(EVALS)) + 0.4 - w / 2, EVALS, rotation=20, fontsize=7)
        axes[0].set_ylabel("attack success rate")
        axes[1].set_ylabel("benign compliance")
        axes[0].legend(fontsize=7)
    with figure(run_dir.plot_path("compositions"), 1, 2, width=10, height=3.6) as (_, axes):
        for ax, name in zip(axes, ("attacker", "attacker_sft"), strict=True):
            top = found.get(name, Counter()).most_common(8)
            ax.barh([k for k, _ in top][::-1], [v for _, v in top][::-1], color="C1")
            ax.set_title(f"{name}: successful compositions", fontsize=8)
            ax.tick_params(axis="y", labelsize=6)


def run(config: MagicConfig, run_dir: RunDir) -> dict[str, Any]:
    """The main job (module docstring)."""
    import torch

    torch.set_num_threads(config.threads)
    seed_everything(config.seed)
    run_dir.update_env(device=config.device, torch_threads=config.threads)
    game = make_game(config)
    resumed = run_dir.checkpoints.latest()
    done: dict[str, Any] = resumed[1] if resumed else {}

    def save() -> None:
        run_dir.checkpoints.save(len(done.get("trained", {})) + len(done.get("adaptive", {})), done)

    c0 = time.process_time()
    policies = warm_start(config, game)
    log(f"warm start: {policies.sft_seconds:.1f} s")
    metrics: dict[str, Any] = {"warm_start_cpu_s": time.process_time() - c0}
    trained = train_defenders(config, game, policies, run_dir, done, save)
    trained = {d: trained[d] for d in DEFENDERS if d in trained}
    sets = eval_sets(config, game)
    metrics.update(
        evaluate_defenders(config, game, policies, trained, sets, reply_tokens=config.reply_tokens)
    )
    metrics.update(adaptive_attacks(config, game, policies, trained, done, save))
    novelty, found = attacker_novelty(config, game, policies, trained)
    metrics.update(novelty)
    for name, info in trained.items():
        metrics[f"defender_steps.{name}"] = float(info["defender_steps"])
        metrics[f"train_cpu_s.{name}"] = float(info["cpu_seconds"])
    metrics["rounds.magic"] = float(len(trained["magic"].get("rounds", [])))
    metrics["eval_prompts"] = float(sum(len(s.harmful) + len(s.benign) for s in sets.values()))
    run_dir.write_json(
        "compositions.json",
        {k: dict(v.most_common()) for k, v in found.items()}
        | {"eval_sets": {e: [list(c) for c in s.compositions] for e, s in sets.items()}},
    )
    if config.large_model:
        if "large" not in done:
            done["large"] = large_model_magic(config, game, run_dir)
            save()
        metrics.update(done["large"])
    _plots(run_dir, trained, metrics, found)
    return metrics

"""One replicate of the study (one seed): warm start, MAGIC and the baselines, evaluation.

:func:`replicate` is what ``icml26 run magic`` does once per seed
(:mod:`~icml26.magic.experiment` runs it as one stage per seed and pools the seeds with
:mod:`~icml26.magic.summary`). Every random draw of a replicate comes from its own stream
(:func:`~icml26.shared.rng_for` / :func:`~icml26.shared.seed_for` of the replicate's seed and
the stream's name): the model and its warm start, the GRPO prompt draws, the evaluation
sets, the probe set and the sampled attacks never share a generator.

Steps of one replicate:

1. :func:`warm_start`: the SFT-warm-started attacker, defender and self-play adapters (the
   ``base`` defender is the warm-started defender);
2. :func:`train_defenders`: MAGIC's alternating GRPO (the defender first, as the official
   code's ``start_agent=defender``; ``start="attacker"`` is the ablation), then each
   baseline with as many defender steps as MAGIC's defender had;
3. :func:`evaluate_defenders`: every defender on the fixed attack sets;
4. :func:`adaptive_attacks`: a fresh attacker trained against each frozen defender;
5. :func:`attacker_novelty`: the co-evolved and the SFT-only attacker against the
   co-evolved defender.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from icml26.magic.coevolve import (
    GameSettings,
    TrainLog,
    adaptive_attacker,
    co_evolve,
    defender_role,
    self_play_role,
    self_play_shares,
    static_defender_role,
    train_roles,
)
from icml26.magic.config import EVALS, RunConfig
from icml26.magic.evaluate import sample_attacks, sample_free_text, score_defender
from icml26.magic.freetext import FreeTextRewards
from icml26.magic.game import EvalSet, SafetyGame, check_disjoint
from icml26.magic.intents import builtin_catalogue, load_catalogue
from icml26.magic.policies import Policies, build_policies, stream_seed
from icml26.shared import RunDir, log, rng_for

__all__ = [
    "adaptive_attacks",
    "attacker_novelty",
    "eval_sets",
    "evaluate_defenders",
    "large_model_magic",
    "magic_step_counts",
    "make_game",
    "run_method",
    "skeleton",
    "train_method",
    "warm_start",
]


def make_game(config: RunConfig) -> SafetyGame:
    """The game of ``config`` (its catalogue, operator budget and penalty)."""
    catalogue = load_catalogue(config.catalogue) if config.catalogue else builtin_catalogue()
    return SafetyGame(
        catalogue,
        max_ops=config.max_ops,
        penalty=config.penalty,
        n_eval_intents=config.eval_intents,
    )


def magic_step_counts(
    config: RunConfig, magic_results: Sequence[dict[str, Any]], index: int
) -> tuple[int, int]:
    """MAGIC's defender and attacker steps on replicate ``index``, which each baseline gets.

    Under the ``"every"`` schedule they are fixed by the config (``magic_steps`` steps in
    phases of ``switch_every``, ``start``'s role first), so a baseline can run in a leg
    without MAGIC; a finished MAGIC stage must agree. Under ``"metric"`` they are read from
    MAGIC's stage.

    Args:
        config: the run's config.
        magic_results: MAGIC's finished stages, in seed order (may be shorter than the seeds).
        index: the replicate's position among the run's seeds.

    Returns:
        ``(defender_steps, attacker_steps)``.

    Raises:
        ValueError: the ``"metric"`` schedule and MAGIC has not run on that replicate.
        RuntimeError: MAGIC's stage disagrees with the ``"every"`` schedule's counts.
    """
    planned = None
    if config.schedule == "every":
        order = ("defender", "attacker") if config.start == "defender" else ("attacker", "defender")
        roles = [order[(k // config.switch_every) % 2] for k in range(config.magic_steps)]
        planned = (roles.count("defender"), roles.count("attacker"))
    if index < len(magic_results):
        d, a = (int(x) for x in magic_results[index]["steps"])
        if planned is not None and (d, a) != planned:
            raise RuntimeError(f"MAGIC's stage ran {(d, a)} steps, the schedule plans {planned}")
        return d, a
    if planned is None:
        raise ValueError(
            "under schedule='metric' the baselines take MAGIC's step counts from its stage: "
            "run 'magic' first (defenders starting with 'magic')"
        )
    return planned


def settings_of(config: RunConfig, seed: int) -> GameSettings:
    """The GRPO knobs shared by every method of one replicate."""
    return GameSettings(
        pairs_per_step=config.pairs_per_step,
        num_generations=config.num_generations,
        lr=config.lr,
        attack_tokens=config.attack_tokens,
        reply_tokens=config.reply_tokens,
        temperature=config.temperature,
        seed=stream_seed(seed, "grpo"),
        attacker=config.attacker,
        turns=config.attack_turns,
        text_tokens=config.text_tokens,
        rewards=FreeTextRewards(
            harm=config.harm_reward,
            refusal=config.refusal_reward,
            label=config.label_reward,
            broken_penalty=config.broken_penalty,
            refusal_label=config.refusal_label,
        ),
    )


def warm_start(config: RunConfig, game: SafetyGame, seed: int, *, large: bool = False) -> Policies:
    """The three warm-started adapters on ``config.model``, or with ``large`` on
    ``config.large_model`` (its own warm-start steps and learning rate, LoRA rank 8)."""
    model = config.large_model if large else config.model
    return build_policies(
        game,
        model=model,
        tiny_hidden=config.tiny_hidden,
        tiny_layers=config.tiny_layers,
        vocab_size=config.vocab_size,
        base_sft_steps=config.base_sft_steps if model == "tiny" else 0,
        adapter_sft_steps=config.large_sft_steps if large else config.adapter_sft_steps,
        sft_lr=config.large_sft_lr if large else config.sft_lr,
        lora_rank=8 if large else config.lora_rank,
        device=config.device,
        seed=stream_seed(seed, "model"),
        attacker=config.attacker,
    )


def skeleton(config: RunConfig, game: SafetyGame, seed: int) -> Policies:
    """The model of ``config`` with fresh adapters and no warm start (its tokenizer built as
    the warm start builds it for ``seed``): what :func:`~icml26.magic.policies.load_warm`
    fills when a run resumes after its ``warm<s>`` stage."""
    return build_policies(
        game,
        model=config.model,
        tiny_hidden=config.tiny_hidden,
        tiny_layers=config.tiny_layers,
        vocab_size=config.vocab_size,
        base_sft_steps=0,
        adapter_sft_steps=0,
        lora_rank=config.lora_rank,
        device=config.device,
        seed=stream_seed(seed, "model"),
        attacker=config.attacker,
    )


def eval_sets(
    config: RunConfig, game: SafetyGame, seed: int, n: int | None = None
) -> dict[str, EvalSet]:
    """The evaluation sets of one replicate (their own stream); with ``n`` (the pretrained
    model's smaller evaluation) every set, the seed pool included, is cut to ``n``
    compositions. Refuses a set whose text overlaps the training data
    (:func:`~icml26.magic.game.check_disjoint`)."""
    rng = rng_for(seed, "eval_sets")
    sets = {
        e: game.eval_set(e, rng, n or config.eval_compositions, whole_seed_pool=n is None)
        for e in EVALS
    }
    check_disjoint(game, sets.values())
    return sets


def _sample_eval_intents(
    policies: Policies,
    game: SafetyGame,
    samples_per_intent: int,
    settings: GameSettings,
    seed: int,
) -> Any:
    """The loaded attacker against the loaded defender on the evaluation intents (free-text
    episodes or operator compositions, as ``settings.attacker``)."""
    if settings.attacker == "free_text":
        return sample_free_text(
            policies,
            game,
            game.eval_intents(),
            settings,
            attacker="attacker",
            defender="defender",
            samples_per_intent=samples_per_intent,
            seed=seed,
        )
    return sample_attacks(
        policies,
        game,
        game.eval_intents(),
        attacker="attacker",
        defender="defender",
        samples_per_intent=samples_per_intent,
        attack_tokens=settings.attack_tokens,
        reply_tokens=settings.reply_tokens,
        seed=seed,
    )


def _probe(
    policies: Policies, game: SafetyGame, probe_set: EvalSet, settings: GameSettings, seed: int
) -> Any:
    def probe() -> dict[str, float]:
        s = score_defender(policies, game, probe_set, "defender", max_tokens=settings.reply_tokens)
        live = _sample_eval_intents(policies, game, 1, settings, stream_seed(seed, "probe_sample"))
        return {
            "asr_curve": s.asr,
            "benign_curve": s.benign_compliance,
            "attacker_asr_curve": live.asr,
        }

    return probe


def _log_steps(run_dir: RunDir, method: str, seed: int) -> Any:
    def on_step(record: dict[str, Any]) -> None:
        keep = {
            k.replace("rewards/", "").replace("/mean", ""): v
            for k, v in record.items()
            if (k.startswith("rewards/") and k.endswith("/mean"))
            or k in ("reward", "loss", "frac_reward_zero_std")
        }
        run_dir.log_metrics(
            None, method=method, seed=seed, role=record["role"], train_step=record["step"], **keep
        )

    return on_step


def train_magic(
    config: RunConfig,
    game: SafetyGame,
    policies: Policies,
    run_dir: RunDir,
    *,
    seed: int,
    steps: int,
    settings: GameSettings,
    tag: str = "magic",
) -> TrainLog:
    """MAGIC: alternating GRPO of defender and attacker (``config.start`` first); probes
    after every round on a small set of seed-pool attacks (its own stream; none with
    ``probe_compositions=0``)."""
    probe = None
    if config.probe_compositions:
        probe_set = game.eval_set("seed_ops", rng_for(seed, "probe"), config.probe_compositions)
        step = max(1, len(game.seed_pool) // config.probe_compositions)
        probe_set = EvalSet("probe", probe_set.harmful[::step], probe_set.benign[::step])
        probe = _probe(policies, game, probe_set, settings, seed)
    policies.reset()
    train_log = co_evolve(
        policies,
        game,
        steps,
        settings=settings,
        schedule=config.schedule,
        switch_every=config.switch_every,
        asr_high=config.asr_high,
        asr_low=config.asr_low,
        start=config.start,
        seed=stream_seed(seed, "prompts"),
        probe=probe,
        on_step=_log_steps(run_dir, tag, seed),
    )
    for r in train_log.rounds:
        run_dir.log_metrics(None, method=tag, seed=seed, **r)
    return train_log


def _baseline_roles(
    name: str, policies: Policies, game: SafetyGame, settings: GameSettings, n_def: int, n_att: int
) -> tuple[list[Any], int, str, int]:
    """The baseline's roles, steps, trained adapter and defence prompts per step."""
    if name == "frozen_attacker":
        return (
            [defender_role(policies, game, settings)],
            n_def,
            "defender",
            2 * settings.pairs_per_step,
        )
    if name == "static":
        return (
            [static_defender_role(game, settings)],
            n_def,
            "defender",
            2 * settings.pairs_per_step,
        )
    n_tasks, n_pairs = self_play_shares(settings.pairs_per_step, n_def, n_att)
    role = self_play_role(policies, game, settings, attack_tasks=n_tasks, defence_pairs=n_pairs)
    return [role], n_def + n_att, "self", 2 * n_pairs


def train_method(
    config: RunConfig,
    game: SafetyGame,
    policies: Policies,
    run_dir: RunDir,
    method: str,
    seed: int,
    magic_steps: tuple[int, int],
) -> dict[str, Any]:
    """Train one defender from the seed's warm start (``base``: none). MAGIC alternates its
    two roles; each baseline gets MAGIC's number of defender steps (``magic_steps``: its
    defender and attacker steps on this seed) and the same prompt stream (paired draws).

    Returns:
        ``{"state", "defender_steps", "defence_prompts", "cpu_seconds", "seconds",
        "train_steps"}`` (MAGIC adds ``attacker_state``, ``attacker_steps``, ``rounds``).
    """
    settings = settings_of(config, seed)
    policies.reset()
    if method == "base":
        return {
            "state": policies.sft_states["defender"],
            "defender_steps": 0,
            "defence_prompts": 0,
            "cpu_seconds": 0.0,
            "seconds": 0.0,
            "train_steps": 0,
        }
    if method == "magic":
        log(f"seed {seed}: MAGIC, alternating GRPO of defender and attacker")
        tl = train_magic(
            config, game, policies, run_dir, seed=seed, steps=config.magic_steps, settings=settings
        )
        return {
            "state": policies.state("defender"),
            "attacker_state": policies.state("attacker"),
            "defender_steps": tl.role_steps("defender"),
            "attacker_steps": tl.role_steps("attacker"),
            "defence_prompts": tl.role_steps("defender") * 2 * settings.pairs_per_step,
            "rounds": tl.rounds,
            "cpu_seconds": tl.cpu_seconds,
            "seconds": tl.seconds,
            "train_steps": len(tl.steps),
        }
    n_def, n_att = magic_steps
    if n_def < 1:
        raise ValueError(f"{method} needs MAGIC's defender steps >= 1, got {n_def}")
    roles, steps, adapter, per_step = _baseline_roles(
        method, policies, game, settings, n_def, n_att
    )
    log(f"seed {seed}: {method}, {steps} steps, {steps * per_step} defence prompts")
    tl = train_roles(
        policies,
        roles,
        steps,
        seed=stream_seed(seed, "prompts"),
        on_step=_log_steps(run_dir, method, seed),
    )
    return {
        "state": policies.state(adapter),
        "defender_steps": steps,
        "defence_prompts": steps * per_step,
        "cpu_seconds": tl.cpu_seconds,
        "seconds": tl.seconds,
        "train_steps": len(tl.steps),
    }


def evaluate_defenders(
    game: SafetyGame,
    policies: Policies,
    trained: dict[str, dict[str, Any]],
    sets: dict[str, EvalSet],
    *,
    reply_tokens: int,
) -> dict[str, float]:
    """``asr.<eval>.<defender>`` and ``benign_compliance.<eval>.<defender>`` (and ``.all``,
    pooled over the sets), greedy replies."""
    out: dict[str, float] = {}
    for name, info in trained.items():
        policies.load("defender", info["state"])
        pooled_b, pooled_n = 0.0, 0
        for e, s in sets.items():
            score = score_defender(policies, game, s, "defender", max_tokens=reply_tokens)
            out[f"asr.{e}.{name}"] = score.asr
            out[f"benign_compliance.{e}.{name}"] = score.benign_compliance
            pooled_b += score.benign_compliance * score.n_benign
            pooled_n += score.n_benign
        out[f"benign_compliance.all.{name}"] = pooled_b / max(pooled_n, 1)
    return out


def adaptive_attacks(
    config: RunConfig,
    game: SafetyGame,
    policies: Policies,
    trained: dict[str, dict[str, Any]],
    seed: int,
) -> dict[str, float]:
    """``asr.adaptive.<defender>``: a warm-start attacker trained ``adaptive_steps`` against
    each frozen defender, then sampled on the evaluation intents."""
    settings = settings_of(config, seed)
    out: dict[str, float] = {}
    for name, info in trained.items():
        policies.load("defender", info["state"])
        if config.adaptive_steps:
            adaptive_attacker(
                policies, game, settings, config.adaptive_steps, seed=stream_seed(seed, "adaptive")
            )
        else:
            policies.load("attacker", policies.sft_states["attacker"])
        sample = _sample_eval_intents(
            policies, game, config.eval_samples, settings, stream_seed(seed, "adaptive_sample")
        )
        out[f"asr.adaptive.{name}"] = sample.asr
    return out


def attacker_novelty(
    config: RunConfig,
    game: SafetyGame,
    policies: Policies,
    trained: dict[str, dict[str, Any]],
    seed: int,
) -> tuple[dict[str, float | None], dict[str, Counter[str]]]:
    """The co-evolved attacker and the SFT-only attacker, sampled against the **co-evolved**
    defender (the same target for both, the one the attacker co-evolved with): attack
    success, broken-intent rate, novel strategy rate."""
    policies.load("defender", trained["magic"]["state"])
    settings = settings_of(config, seed)
    out: dict[str, float | None] = {}
    found: dict[str, Counter[str]] = {}
    for name, state in (
        ("attacker", trained["magic"]["attacker_state"]),
        ("attacker_sft", policies.sft_states["attacker"]),
    ):
        policies.load("attacker", state)
        s = _sample_eval_intents(
            policies, game, config.eval_samples, settings, stream_seed(seed, "novelty_sample")
        )
        # No success leaves the rate undefined: stored as null (strict JSON), pooled as NaN,
        # so a claim that reads it is undecided rather than decided on a made-up 0.
        out[f"novel_strategy_rate.{name}"] = s.novel_strategy_rate if s.successes else None
        out[f"attack_successes.{name}"] = float(s.successes)
        out[f"attack_success_vs_magic.{name}"] = s.asr
        out[f"intent_broken_rate.{name}"] = s.broken_rate
        out[f"distinct_compositions.{name}"] = float(len(s.tried_by_composition))
        if config.attacker == "free_text":
            out[f"novelty.{name}"] = s.mean_novelty if s.successes else None
            out[f"attack_turns.{name}"] = float(sum(s.turns) / max(len(s.turns), 1))
        found[name] = s.success_by_composition
    return out, found


def run_method(
    config: RunConfig,
    game: SafetyGame,
    policies: Policies,
    run_dir: RunDir,
    method: str,
    seed: int,
    magic_steps: tuple[int, int] = (0, 0),
) -> dict[str, Any]:
    """One defender on one seed (a run's ``<method>-seed<s>`` stage): trained from the seed's
    warm start (:func:`train_method`), scored on the seed's evaluation sets, attacked by an
    adaptive attacker; MAGIC's stage also samples its co-evolved and the SFT-only attacker
    against its defender (novelty).

    Returns:
        ``{"metrics", "rounds", "found", "eval_sets", "seconds"}`` (JSON): the flat per-seed
        metrics of this defender (keys ending in ``.<method>``; MAGIC's also the attackers'),
        MAGIC's probe rounds and successes (empty for a baseline), and the wall seconds of
        training, evaluation and the adaptive attack.
    """
    sets = eval_sets(config, game, seed)
    info = train_method(config, game, policies, run_dir, method, seed, magic_steps)
    trained = {method: info}
    t0 = time.perf_counter()
    metrics: dict[str, float | None] = {}
    metrics.update(
        evaluate_defenders(game, policies, trained, sets, reply_tokens=config.reply_tokens)
    )
    t1 = time.perf_counter()
    metrics.update(adaptive_attacks(config, game, policies, trained, seed))
    t2 = time.perf_counter()
    found: dict[str, Any] = {}
    if method == "magic":
        novelty, counts = attacker_novelty(config, game, policies, trained, seed)
        metrics.update(novelty)
        found = {k: dict(v.most_common()) for k, v in counts.items()}
        metrics["attacker_steps.magic"] = float(info["attacker_steps"])
        metrics["rounds.magic"] = float(len(info["rounds"]))
    metrics[f"defender_steps.{method}"] = float(info["defender_steps"])
    metrics[f"defence_prompts.{method}"] = float(info["defence_prompts"])
    metrics[f"train_cpu_s.{method}"] = float(info["cpu_seconds"])
    metrics["eval_prompts"] = float(sum(len(s.harmful) + len(s.benign) for s in sets.values()))
    return {
        "metrics": metrics,
        "rounds": info.get("rounds", []),
        "found": found,
        "eval_sets": {e: [list(c) for c in s.compositions] for e, s in sets.items()},
        "steps": [int(info["defender_steps"]), int(info.get("attacker_steps", 0))],
        "seconds": {
            "train": float(info["seconds"]),
            "train_steps": float(info["train_steps"]),
            "evaluate": t1 - t0,
            "adaptive": t2 - t1,
            "novelty": time.perf_counter() - t2,
        },
    }


def large_model_magic(config: RunConfig, run_dir: RunDir) -> dict[str, float]:
    """MAGIC on the checkpoint ``large_model`` with LoRA, first seed only (figures, no
    claim): ``large.*`` keys."""
    seed, game = config.seed, make_game(config)
    policies = warm_start(config, game, seed, large=True)
    settings = replace(
        settings_of(config, seed),
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
        seed=seed,
        steps=config.large_steps,
        settings=settings,
        tag="large.magic",
    )
    trained = {
        "base": {"state": policies.sft_states["defender"]},
        "magic": {"state": policies.state("defender")},
    }
    sets = eval_sets(config, game, seed, config.large_eval_compositions)
    out = evaluate_defenders(game, policies, trained, sets, reply_tokens=config.large_reply_tokens)
    out = {f"large.{k}": v for k, v in out.items()}
    out["large.defender_steps"] = float(tl.role_steps("defender"))
    out["large.attacker_steps"] = float(tl.role_steps("attacker"))
    out["large.cpu_seconds"] = time.process_time() - c0
    return out

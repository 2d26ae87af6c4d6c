"""What a dreamer writes, measured: compile rate, rejection reasons, and the learnability of
the worlds that compile for a given agent.

:func:`dreamer_study` asks a dreamer (the offline :class:`~icml26.dicode.dreamer.MutationDreamer`
or an :class:`~icml26.dicode.dreamer.LLMDreamer` on any ``icml26.shared.llm`` backend) for
``n`` children of the target world, validates each in the sandbox, and plays every valid
world ``episodes`` times with the agent's policy: its success rate ``p`` on the world's goal
gives the learnability ``p (1 - p)`` and whether the world is on the frontier
(``0.05 < p < 0.95``). ``python -m icml26.dicode.study`` trains a short PPO agent on the
target, then studies the offline dreamer and, with ``--llm``, a language model beside it;
with ``--curriculum-rounds R`` it also runs a short DiCode curriculum with each dreamer
(:func:`curriculum_study`: same seed, same budget) and reports its outcome.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import jax
import numpy as np

from icml26.dicode.config import RunConfig
from icml26.dicode.curriculum import learnability
from icml26.dicode.dreamer import (
    EDIT_EXAMPLES,
    DreamContext,
    Dreamer,
    LLMDreamer,
    MutationDreamer,
    example_children,
    llm_backend,
    summarise_reasons,
)
from icml26.dicode.ppo import PPO, PPOSettings
from icml26.dicode.program import WorldProgram, compile_program, target_program
from icml26.dicode.tech import ACHIEVEMENTS
from icml26.dicode.training import EVAL_STREAM, Evaluator, ParamsCache, ppo_settings, train_unit

__all__ = ["curriculum_study", "dreamer_study", "goal_success", "study_keys", "study_markdown"]


#: Fold-in tag of the study's goal-success stream (the children's maps and actions).
STUDY_STREAM = 1_000_037


def study_keys(seed: int) -> dict[str, jax.Array]:
    """The study's JAX keys for ``seed``: ``init`` (the agent's network, environments and
    rollouts, as :func:`~icml26.dicode.training.train_unit`), ``eval`` (its held-out target
    maps, the evaluation stream of ``train_unit``) and ``children`` (the dreamed worlds' maps
    and actions). All fold into ``PRNGKey(seed)``: no seed's stream is another seed's."""
    root = jax.random.PRNGKey(seed)
    return {
        "init": root,
        "eval": jax.random.fold_in(root, EVAL_STREAM),
        "children": jax.random.fold_in(root, STUDY_STREAM),
    }


def goal_success(
    ppo: PPO, params: Any, programs: list[WorldProgram], key: jax.Array, episodes: int
) -> np.ndarray:
    """Success rate of the policy on each program's goal over ``episodes`` episodes each.

    Args:
        ppo: the learner (its ``evaluate`` plays one episode per world, stochastic policy).
        params: the policy's parameters.
        programs: the worlds.
        key: evaluation key.
        episodes: episodes per world.

    Returns:
        One success rate per program.

    Raises:
        ValueError: if ``programs`` is empty or ``episodes < 1``.
    """
    if not programs or episodes < 1:
        raise ValueError("goal_success needs at least one program and one episode")
    worlds = ParamsCache().batch(programs, episodes)
    horizon = 100 * -(-max(p.episode_length for p in programs) // 100)  # few distinct compiles
    out = ppo.evaluate(params, worlds, key, horizon)
    ach = np.asarray(out["achievements"]).reshape(len(programs), episodes, -1)
    goals = np.asarray([ACHIEVEMENTS.index(p.goal) for p in programs])
    return ach[np.arange(len(programs)), :, goals].mean(1)


#: The goals the LLM's worked examples set (a child with one may be copying them).
_EXAMPLE_GOALS = frozenset(json.loads(reply).get("goal") for _, reply in EDIT_EXAMPLES)


def dreamer_study(
    dreamer: Dreamer,
    ppo: PPO,
    params: Any,
    profile: dict[str, float],
    *,
    n: int,
    batch: int = 4,
    episodes: int = 16,
    seed: int = 0,
) -> dict[str, Any]:
    """Ask ``dreamer`` for ``n`` children of the target world and measure them.

    Args:
        dreamer: any dreamer.
        ppo: the PPO agent that plays the worlds.
        params: its trained parameters.
        profile: the agent's success rate per achievement on the target (shown to the dreamer).
        n: programs asked for.
        batch: programs per ``dream`` call.
        episodes: episodes per valid world.
        seed: the dreaming and evaluation stream.

    Returns:
        JSON-ready: ``asked``, ``valid``, ``compile_rate``, ``rejections`` (by reason),
        ``seconds_per_program``, ``distinct_valid`` (valid children unlike each other and the
        target), ``example_copies`` / ``example_goals`` (valid children equal to the target
        edited by a worked example of the LLM prompt / with an example's goal), ``clamped``,
        and over the valid worlds ``success_rates``,
        ``mean_learnability``, ``frontier_share``, ``goals``; ``samples``: up to 3 rejected
        and 3 valid sources with the rejection detail.
    """
    rng = np.random.default_rng([seed, 44])
    target = target_program()
    p0 = profile.get(target.goal, 0.0)
    context = DreamContext(
        parents=[(target, p0, learnability(p0))],
        profile=dict(profile),
        archive=[(target, p0, learnability(p0))],
    )
    dreams = []
    start = time.perf_counter()
    while len(dreams) < n:
        dreams += dreamer.dream(context, min(batch, n - len(dreams)), rng)
    seconds = time.perf_counter() - start
    valid = [d.program for d in dreams if d.program is not None]
    out: dict[str, Any] = {
        "dreamer": dreamer.name,
        "asked": n,
        "valid": len(valid),
        "compile_rate": len(valid) / n,
        "distinct_valid": len(set(valid) - {target}),
        "example_copies": sum(p in example_children(target) for p in valid),
        "example_goals": sum(p.goal in _EXAMPLE_GOALS for p in valid),
        "clamped": sum(1 for d in dreams if d.valid and "clamped" in d.detail),
        "rejections": summarise_reasons(dreams),
        "seconds_per_program": seconds / n,
        "samples": [
            {"valid": d.valid, "reason": d.reason, "detail": d.detail, "source": d.source[:1200]}
            for d in [x for x in dreams if not x.valid][:3] + [x for x in dreams if x.valid][:3]
        ],
    }
    if valid:
        rates = goal_success(ppo, params, valid, study_keys(seed)["children"], episodes)
        learn = learnability(np.clip(rates, 0.0, 1.0))
        out |= {
            "success_rates": rates.tolist(),
            "mean_learnability": float(np.mean(learn)),
            "frontier_share": float(np.mean((rates > 0.05) & (rates < 0.95))),
            "goals": [p.goal for p in valid],
        }
    return out


def curriculum_study(
    dreamer: Dreamer, config: RunConfig, *, seed: int = 0, ppo: PPO | None = None
) -> dict[str, Any]:
    """A short DiCode curriculum (one seed) with ``dreamer``: what its archive became.

    Args:
        dreamer: the dreamer under test.
        config: the run's budget (rounds, slots, children per round).
        seed: the unit's seed (the same for every dreamer compared).
        ppo: a learner to reuse (its compiled functions), built from ``config`` if ``None``.

    Returns:
        JSON-ready: ``dreamed``, ``valid`` (kept in the archive: compiled, not a duplicate
        of its parent), ``rejections``, ``children`` (dreamed entries in the archive),
        ``children_evaluated``, ``example_copies`` (children equal to their parent edited
        by a worked example of the LLM prompt), ``example_goals`` (children whose goal is an
        example's), ``mean_learnability_children`` (over the evaluated children),
        ``frontier_fraction`` (evaluated archive), ``return`` (mean final target return),
        ``goals`` (children per goal), ``seconds``.
    """
    ppo = ppo or PPO(ppo_settings(config))
    start = time.perf_counter()
    unit = train_unit("dicode", seed, config, ppo, Evaluator(ppo, config.eval_episodes), dreamer)
    children = [e for e in unit["archive"] if e["parent"] is not None]
    measured = [e for e in children if e["success_rate"] is not None]
    programs = {e["id"]: compile_program(e["source"]) for e in unit["archive"]}
    copies = sum(programs[e["id"]] in example_children(programs[e["parent"]]) for e in children)
    goals: dict[str, int] = {}
    for e in children:
        goals[e["goal"]] = goals.get(e["goal"], 0) + 1
    return {
        "dreamer": dreamer.name,
        "rounds": config.rounds,
        "steps": config.rounds * config.steps_per_round,
        "dreamed": unit["dreamed"],
        "valid": unit["valid"],
        "rejections": unit["rejections"],
        "children": len(children),
        "children_evaluated": len(measured),
        "example_copies": copies,
        "example_goals": sum(e["goal"] in _EXAMPLE_GOALS for e in children),
        "archive": [
            {k: e[k] for k in ("id", "parent", "goal", "success_rate", "operator", "source")}
            for e in unit["archive"]
        ],
        "mean_learnability_children": (
            float(np.mean([e["learnability"] for e in measured])) if measured else None
        ),
        "frontier_fraction": unit["frontier_fraction"],
        "return": float(np.mean(unit["returns"])),
        "goals": goals,
        "seconds": time.perf_counter() - start,
    }


def study_markdown(results: dict[str, Any]) -> str:
    """The study as a Markdown table (for RESULTS.md; never typed by hand).

    Args:
        results: what ``python -m icml26.dicode.study`` wrote.

    Returns:
        One row per dreamer: compile rate, rejections, learnability of what compiled.
    """
    lines = [
        f"Agent: PPO on the target world, {results['train_steps']} steps; "
        f"its target success: collect_wood {results['profile']['collect_wood']:.2f}, "
        f"make_wood_pickaxe {results['profile']['make_wood_pickaxe']:.2f}, "
        f"collect_iron {results['profile']['collect_iron']:.2f}.",
        "",
        "| dreamer | valid / asked | compile rate | distinct changed | copies / goals of an "
        "example | rejections | s per program | mean learnability of valid "
        "| frontier share of valid |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in ("offline_mutation", "llm"):
        if name not in results:
            continue
        r = results[name]
        label = f"`{name}`" + (f" ({r['model']})" if r.get("model") else "")
        learn = f"{r['mean_learnability']:.3f}" if "mean_learnability" in r else "-"
        share = f"{r['frontier_share']:.2f}" if "frontier_share" in r else "-"
        rej = ", ".join(f"{k} {v}" for k, v in sorted(r["rejections"].items())) or "none"
        lines.append(
            f"| {label} | {r['valid']} / {r['asked']} | {r['compile_rate']:.2f} "
            f"| {r.get('distinct_valid', '-')} "
            f"| {r.get('example_copies', '-')} / {r.get('example_goals', '-')} | {rej} "
            f"| {r['seconds_per_program']:.1f} | {learn} | {share} |"
        )
    runs = [
        (n, results[f"curriculum.{n}"])
        for n in ("offline_mutation", "llm")
        if f"curriculum.{n}" in results
    ]
    if runs:
        lines += [
            "",
            f"DiCode curriculum, one seed, {runs[0][1]['rounds']} rounds "
            f"({runs[0][1]['steps']} steps) per dreamer:",
            "",
            "| dreamer | dreamed | kept | rejections | copies / goals of an example "
            "| children evaluated | mean learnability of evaluated children | frontier fraction "
            "| target return | child goals |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for name, c in runs:
            rej = ", ".join(f"{k} {v}" for k, v in sorted(c["rejections"].items())) or "none"
            learn = c["mean_learnability_children"]
            goals = ", ".join(f"{g} {k}" for g, k in sorted(c["goals"].items())) or "-"
            lines.append(
                f"| `{name}` | {c['dreamed']} | {c['valid']} | {rej} "
                f"| {c.get('example_copies', '-')} / {c.get('example_goals', '-')} "
                f"| {c['children_evaluated']} "
                f"| {'-' if learn is None else f'{learn:.3f}'} | {c['frontier_fraction']:.2f} "
                f"| {c['return']:.2f} | {goals} |"
            )
    return "\n".join(lines)


def _train_agent(rounds: int, seed: int) -> tuple[PPO, Any, dict[str, float]]:
    """A short PPO agent on the target world and its achievement profile there."""
    ppo = PPO(PPOSettings())
    target = target_program()
    worlds = ParamsCache().batch([target], ppo.settings.n_envs)
    runner = ppo.init(study_keys(seed)["init"], worlds)
    mask = jax.numpy.zeros((ppo.settings.n_envs,), bool)
    for _ in range(rounds):
        runner, _ = ppo.train_chunk(runner, worlds, mask)
    # held-out maps: the evaluation stream of train_unit, never a neighbouring seed's init key
    ev = Evaluator(ppo, 64)(runner.params, study_keys(seed)["eval"], 64)
    profile = dict(zip(ACHIEVEMENTS, np.asarray(ev["achievements"]).mean(0).tolist(), strict=True))
    return ppo, runner.params, profile


def main(argv: list[str] | None = None) -> None:
    """``python -m icml26.dicode.study --llm smollm2-135m-instruct-q4_1 --n 24 --out x.json``"""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--llm", default="", help="local model spec for icml26.shared.llm")
    ap.add_argument("--endpoint", default="", help="OpenAI-compatible base URL instead")
    ap.add_argument("--endpoint-model", default="")
    ap.add_argument("--format", default="edit", choices=("edit", "program"))
    ap.add_argument("--n", type=int, default=12)
    ap.add_argument("--max-tokens", type=int, default=0, help="0: the format's default")
    ap.add_argument("--train-rounds", type=int, default=8)
    ap.add_argument("--episodes", type=int, default=16)
    ap.add_argument("--curriculum-rounds", type=int, default=0, help="0: no curriculum run")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--report", action="store_true", help="print --out as Markdown and stop")
    args = ap.parse_args(argv)
    if args.report:
        print(study_markdown(json.loads(args.out.read_text())))
        return
    ppo, params, profile = _train_agent(args.train_rounds, args.seed)
    results: dict[str, Any] = {
        "profile": profile,
        "train_steps": args.train_rounds * ppo.settings.steps_per_chunk,
    }
    dreamers: list[Dreamer] = [MutationDreamer()]
    if args.llm or args.endpoint:
        backend = llm_backend(args.llm, endpoint=args.endpoint, endpoint_model=args.endpoint_model)
        dreamers.append(LLMDreamer(backend, format=args.format, max_tokens=args.max_tokens or None))
    for dreamer in dreamers:
        out = dreamer_study(
            dreamer, ppo, params, profile, n=args.n, episodes=args.episodes, seed=args.seed
        )
        if isinstance(dreamer, LLMDreamer):
            out |= {"model": args.llm or args.endpoint_model, "format": args.format}
            usage = getattr(getattr(dreamer.backend, "usage", None), "__dict__", {})
            out["tokens"] = {k: v for k, v in usage.items() if not k.startswith("_")}
        results[dreamer.name] = out
        args.out.write_text(json.dumps(results, indent=1, default=str))
    if args.curriculum_rounds:
        config = RunConfig(
            methods=("dicode",),
            n_seeds=1,
            seed=args.seed,
            total_steps=args.curriculum_rounds * RunConfig().steps_per_round,
            final_eval_episodes=64,
        )
        for dreamer in dreamers:
            results[f"curriculum.{dreamer.name}"] = curriculum_study(
                dreamer, config, seed=args.seed
            )
            args.out.write_text(json.dumps(results, indent=1, default=str))
    print(json.dumps({k: v for k, v in results.items() if k != "profile"}, indent=1, default=str))


if __name__ == "__main__":
    main()

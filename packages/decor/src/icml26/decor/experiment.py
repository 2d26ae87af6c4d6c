"""``icml26 run decor``: the deep-search environment, the SFT warm start, joint MARL, every
baseline, and the metrics of the issue's contract.

Stages (a killed run resumes after the last finished one; every stage draws from its own
generator seeded by ``(seed, stage)``):

1. ``environment``: corpus, questions, train/test split, search index;
2. ``warm_start``: the tiny tokenizer and one tiny model per role (and the monolithic agent),
   SFT on oracle traces;
3. ``rl_decor``, ``rl_outcome_only``, ``rl_monolithic``: the same RL budget each, from the
   same warm start (hybrid reward with ``w``; ``w = 0``; the monolithic reward);
4. ``evaluate``: greedy episodes of every method on the test questions;
5. optionally ``llm``: DECOR with one LoRA adapter per role on ``llm_model``.

Metric keys: ``em.<hops>.<method>``, ``f1.<hops>.<method>`` (``hops`` in ``hop1, hop2, hop3,
all``), ``filter_precision.<method>`` and ``filter_recall.<method>`` (of the memory the
answering policy reads, against all of the question's gold passages, micro-averaged),
``context_tokens.<method>`` (tokens of the answering policy's context when it answers),
``search_calls.<method>``; plus ``em_gap.<a>_vs_<b>`` and its paired standard error
``em_gap_se.<a>_vs_<b>`` for the claims.
"""

from __future__ import annotations

import copy
import math
import time
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from icml26.decor.config import DecorConfig
from icml26.decor.data.types import HOPS, Passage, Question
from icml26.decor.episodes import (
    Episode,
    EpisodeSettings,
    run_closed_book,
    run_monolithic,
    run_single_query,
    run_team,
)
from icml26.decor.policies import ROLES, RolePolicy, Sampling
from icml26.decor.retrieval import Search
from icml26.decor.rewards import answer_scores
from icml26.shared import PALETTE, RunDir, figure, log, seed_everything

__all__ = ["METHODS", "evaluate_methods", "method_metrics", "run"]

METHODS: tuple[str, ...] = (
    "decor",
    "outcome_only",
    "monolithic",
    "orchestration",
    "closed_book",
    "single_query",
)


def _rng(seed: int, *parts: str) -> np.random.Generator:
    return np.random.default_rng([seed, *(zlib.crc32(p.encode()) for p in parts)])


def _seed_stage(seed: int, stage: str) -> None:
    """torch's generator (sampling in rollouts) seeded per stage, so a resumed run equals an
    uninterrupted one."""
    import torch

    torch.manual_seed(int(_rng(seed, "torch", stage).integers(2**31)))


# ------------------------------------------------------------------------------- metrics
def method_metrics(episodes: Sequence[Episode]) -> dict[str, float]:
    """EM / F1 per hop label and overall, the memory's precision / recall against gold,
    context tokens and search calls (means over episodes)."""
    out: dict[str, float] = {}
    scores = [answer_scores(e) for e in episodes]
    for hop in (*HOPS, "all"):
        idx = [i for i, e in enumerate(episodes) if hop == "all" or e.question.hops == hop]
        if idx:
            out[f"em.{hop}"] = float(np.mean([scores[i][0] for i in idx]))
            out[f"f1.{hop}"] = float(np.mean([scores[i][1] for i in idx]))
    kept = sum(len(e.memory) for e in episodes)
    hits = sum(len(set(e.memory) & set(e.question.gold)) for e in episodes)
    gold = sum(len(set(e.question.gold)) for e in episodes)
    out["filter_precision"] = hits / kept if kept else 0.0
    out["filter_recall"] = hits / gold if gold else 0.0
    out["context_tokens"] = float(np.mean([e.context_tokens for e in episodes]))
    out["search_calls"] = float(np.mean([e.search_calls for e in episodes]))
    return out


def paired_gap(a: Sequence[Episode], b: Sequence[Episode]) -> tuple[float, float]:
    """Mean EM difference over the same questions and its standard error."""
    d = np.array([answer_scores(x)[0] - answer_scores(y)[0] for x, y in zip(a, b, strict=True)])
    se = float(d.std(ddof=1) / math.sqrt(len(d))) if len(d) > 1 else 0.0
    return float(d.mean()), se


# --------------------------------------------------------------------------- environment
class _Env:
    def __init__(self, config: DecorConfig) -> None:
        from icml26.decor.data.factbook import build_factbook, split_by_start
        from icml26.decor.retrieval import BM25Search, make_search

        fb = build_factbook()
        self.words = [c.name for c in fb.countries] + [x for c in fb.countries for x in c.capitals]
        train, test = split_by_start(fb.questions, config.test_fraction, config.seed)
        rng = _rng(config.seed, "subsample")
        if config.max_train_questions and len(train) > config.max_train_questions:
            train = [
                train[int(i)]
                for i in sorted(rng.choice(len(train), config.max_train_questions, replace=False))
            ]
        self.train: list[Question] = train
        self.train_passages: list[Passage] = list(fb.passages)
        # the training search is always the factbook's own; BM25 unless dense is asked for
        self.train_search: Search = (
            make_search("dense", fb.passages, dense_model=config.dense_model)
            if config.retriever == "dense"
            else BM25Search(fb.passages)
        )
        if config.corpus:
            from icml26.decor.data.user import load_corpus, load_questions

            passages = load_corpus(config.corpus)
            test = load_questions(config.questions, passages)
            self.test_search: Search = make_search(
                config.retriever, passages, endpoint=config.search_endpoint,
                dense_model=config.dense_model,
            )  # fmt: skip
            self.test_passages = passages
        else:
            self.test_search = self.train_search
            self.test_passages = list(fb.passages)
        if len(test) > config.max_test_questions:
            test = [
                test[int(i)]
                for i in sorted(
                    _rng(config.seed, "test").choice(
                        len(test), config.max_test_questions, replace=False
                    )
                )
            ]
        self.test: list[Question] = test

    def texts(self) -> list[str]:
        from icml26.decor.prompts import ANSWER_PREFIX, NOTHING_NEW, STOP

        extra = [
            STOP,
            "keep",
            "drop",
            ANSWER_PREFIX,
            NOTHING_NEW,
            "memory: none",
            "search: ",
            "passage: ",
        ]
        return [p.text for p in self.train_passages] + [q.text for q in self.train] + extra * 20


# ------------------------------------------------------------------------------ training
def _settings(config: DecorConfig) -> EpisodeSettings:
    return EpisodeSettings(k=config.k, max_searches=config.max_searches)


def warm_start(
    config: DecorConfig, env: _Env
) -> tuple[dict[str, RolePolicy], dict[str, list[float]]]:
    """Tiny models per role (and the monolithic agent), SFT on oracle traces."""
    from icml26.decor.oracle import oracle_traces
    from icml26.decor.policies import make_tiny_team
    from icml26.shared.llm.sft import SFTSettings, sft

    traces = oracle_traces(env.train, env.train_search, config.k, _rng(config.seed, "oracle"))
    team = make_tiny_team(
        env.texts(), [*ROLES, "monolithic"], words=env.words, vocab_size=config.vocab_size,
        hidden_size=config.hidden_size, num_layers=config.num_layers, seed=config.seed,
        device=config.device,
    )  # fmt: skip
    losses = {}
    for role, convs in (
        ("planner", traces.planner),
        ("filter", traces.filter),
        ("answerer", traces.answerer),
        ("monolithic", traces.monolithic),
    ):
        settings = SFTSettings(
            steps=config.sft_steps,
            lr=config.sft_lr,
            batch_size=config.sft_batch_size,
            max_length=640,
            engine="loop",
        )
        result = sft(
            team[role].model,
            team[role].tokenizer,
            convs,
            settings,
            rng=_rng(config.seed, "sft", role),
        )
        losses[role] = result.losses
        log(
            f"decor: SFT {role}: {len(convs)} traces, loss {result.losses[0]:.2f} -> {np.mean(result.losses[-5:]):.2f}"
            if result.losses
            else f"decor: SFT {role}: 0 steps"
        )
    return team, losses


def train_team(
    team: Mapping[str, RolePolicy],
    env: _Env,
    config: DecorConfig,
    *,
    w: float,
    tag: str,
    run_dir: RunDir | None,
) -> list[dict[str, float]]:
    """Joint MARL of the three roles from ``team`` (trained in place)."""
    from icml26.decor.marl import RLSettings, make_optimizers, marl_step

    settings = RLSettings(
        steps=config.rl_steps, questions_per_step=config.questions_per_step,
        group_size=config.group_size, w=w, lr=config.rl_lr, temperature=config.temperature,
    )  # fmt: skip
    roles = {r: team[r] for r in ROLES}
    opts = make_optimizers(roles, settings.lr)
    rng = _rng(config.seed, "rl", tag)
    history = []
    for step in range(settings.steps):
        rec = marl_step(roles, opts, env.train_search, env.train, _settings(config), settings, rng)
        history.append(rec)
        if run_dir is not None:
            run_dir.log_metrics(step, phase=f"rl_{tag}", **rec)
    return history


def train_monolithic(
    agent: RolePolicy, env: _Env, config: DecorConfig, run_dir: RunDir | None
) -> list[dict[str, float]]:
    from icml26.decor.marl import RLSettings, make_optimizers, monolithic_step

    settings = RLSettings(
        steps=config.rl_steps, questions_per_step=config.questions_per_step,
        group_size=config.group_size, w=config.w, lr=config.rl_lr, temperature=config.temperature,
    )  # fmt: skip
    opt = make_optimizers({"monolithic": agent}, settings.lr)["monolithic"]
    rng = _rng(config.seed, "rl", "monolithic")
    history = []
    for step in range(settings.steps):
        rec = monolithic_step(
            agent, opt, env.train_search, env.train, _settings(config), settings, rng
        )
        history.append(rec)
        if run_dir is not None:
            run_dir.log_metrics(step, phase="rl_monolithic", **rec)
    return history


# ---------------------------------------------------------------------------- evaluation
def evaluate_methods(
    teams: Mapping[str, Mapping[str, RolePolicy]],
    monolithic: RolePolicy,
    search: Search,
    questions: Sequence[Question],
    settings: EpisodeSettings,
) -> dict[str, list[Episode]]:
    """Greedy episodes of every method on ``questions`` (``teams``: ``decor``,
    ``outcome_only``, ``orchestration``)."""
    g = Sampling(greedy=True)
    base = teams["orchestration"]
    out = {
        name: run_team(teams[name], search, questions, settings, g, method=name)
        for name in ("decor", "outcome_only", "orchestration")
        if name in teams
    }
    out["monolithic"] = run_monolithic(monolithic, search, questions, settings, g)
    out["closed_book"] = run_closed_book(base["answerer"], questions, settings, g)
    out["single_query"] = run_single_query(base["answerer"], search, questions, settings, g)
    return out


def _snapshot(team: Mapping[str, RolePolicy]) -> dict[str, Any]:
    return {
        r: {k: v.detach().clone() for k, v in p.model.state_dict().items()} for r, p in team.items()
    }


def _restore(team: Mapping[str, RolePolicy], state: Mapping[str, Any]) -> None:
    for r, p in team.items():
        p.model.load_state_dict(state[r])


def _copy_team(team: Mapping[str, RolePolicy]) -> dict[str, RolePolicy]:
    return {r: RolePolicy(r, copy.deepcopy(p.model), p.tokenizer) for r, p in team.items()}


# -------------------------------------------------------------------------------- plots
def _plots(
    run_dir: RunDir,
    results: Mapping[str, Mapping[str, float]],
    histories: Mapping[str, list[dict[str, float]]],
) -> None:
    methods = [m for m in METHODS if m in results]
    with figure(run_dir.plot_path("em_by_hops"), width=7.5, title="EM by hops per method") as (
        _,
        ax,
    ):
        labels = [*HOPS, "all"]
        width = 0.8 / len(methods)
        for j, m in enumerate(methods):
            ax.bar(
                np.arange(len(labels)) + j * width,
                [results[m].get(f"em.{h}", 0.0) for h in labels],
                width, label=m, color=PALETTE[j % len(PALETTE)],
            )  # fmt: skip
        ax.set_xticks(np.arange(len(labels)) + 0.4 - width / 2, labels)
        ax.set_ylabel("exact match")
        ax.legend(fontsize=7, ncol=2)
    with figure(
        run_dir.plot_path("reward_components"),
        1,
        2,
        width=8,
        title="Reward components during training",
    ) as (_, axes):
        for ax, tag in zip(axes, ("decor", "outcome_only"), strict=True):
            hist = histories.get(tag, [])
            for j, key in enumerate(("em", "f1", "planner_intrinsic", "filter_intrinsic")):
                ax.plot([h[key] for h in hist], label=key, color=PALETTE[j % len(PALETTE)])
            ax.set_title(tag)
            ax.set_xlabel("MARL step")
        axes[0].legend(fontsize=7)
    with figure(run_dir.plot_path("context_tokens_vs_em"), title="Context tokens vs EM") as (_, ax):
        for j, m in enumerate(methods):
            ax.scatter(
                results[m]["context_tokens"],
                results[m]["em.all"],
                color=PALETTE[j % len(PALETTE)],
                label=m,
            )
        ax.set_xlabel("tokens the answering policy reads")
        ax.set_ylabel("EM (all hops)")
        ax.legend(fontsize=7)


# ----------------------------------------------------------------------------------- run
def _gaps(eps: Mapping[str, list[Episode]]) -> dict[str, float]:
    out = {}
    for a, b in (("decor", "monolithic"), ("decor", "orchestration"), ("decor", "outcome_only")):
        if a in eps and b in eps:
            gap, se = paired_gap(eps[a], eps[b])
            out[f"em_gap.{a}_vs_{b}"] = gap
            out[f"em_gap_se.{a}_vs_{b}"] = se
    return out


def run(config: DecorConfig, run_dir: RunDir) -> dict[str, Any]:
    """The whole experiment (module docstring); returns the metrics."""
    import torch

    torch.set_num_threads(config.threads)
    seed_everything(config.seed)
    t0 = time.perf_counter()
    log("decor: environment")
    env = _Env(config)
    resumed = run_dir.checkpoints.latest()
    state: dict[str, Any] = resumed[1] if resumed else {"done": []}

    def finish(stage: str, **extra: Any) -> None:
        state.update(extra)
        state["done"].append(stage)
        run_dir.checkpoints.save(len(state["done"]), state)

    log("decor: warm start (SFT on oracle traces)")
    _seed_stage(config.seed, "warm_start")
    team, sft_losses = (
        warm_start(config, env)
        if "warm_start" not in state["done"]
        else (None, state["sft_losses"])
    )
    if team is None:  # resumed: rebuild the models' shapes, then load the weights
        team, _ = warm_start(_no_steps(config), env)
        _restore(team, state["warm"])
    else:
        finish("warm_start", warm=_snapshot(team), sft_losses=sft_losses)
    warm = {r: team[r] for r in ROLES}
    histories: dict[str, list[dict[str, float]]] = state.get("histories", {})
    trained: dict[str, dict[str, RolePolicy]] = {"orchestration": warm}
    for tag, w in (("decor", config.w), ("outcome_only", 0.0)):
        copy_ = _copy_team(warm)
        if f"rl_{tag}" in state["done"]:
            _restore(copy_, state[f"team_{tag}"])
        else:
            log(f"decor: joint MARL, {tag} (w = {w})")
            _seed_stage(config.seed, f"rl_{tag}")
            histories[tag] = train_team(copy_, env, config, w=w, tag=tag, run_dir=run_dir)
            finish(f"rl_{tag}", **{f"team_{tag}": _snapshot(copy_), "histories": histories})
        trained[tag] = copy_
    mono = RolePolicy(
        "monolithic", copy.deepcopy(team["monolithic"].model), team["monolithic"].tokenizer
    )
    if "rl_monolithic" in state["done"]:
        _restore({"monolithic": mono}, state["team_monolithic"])
    else:
        log("decor: GRPO, monolithic agent")
        _seed_stage(config.seed, "rl_monolithic")
        histories["monolithic"] = train_monolithic(mono, env, config, run_dir)
        finish(
            "rl_monolithic", team_monolithic=_snapshot({"monolithic": mono}), histories=histories
        )
    log(f"decor: evaluate {len(env.test)} test questions")
    _seed_stage(config.seed, "evaluate")
    eps = evaluate_methods(trained, mono, env.test_search, env.test, _settings(config))
    results = {m: method_metrics(e) for m, e in eps.items()}
    metrics: dict[str, Any] = {}
    for m, vals in results.items():
        for k, v in vals.items():
            head, _, tail = k.partition(".")
            metrics[f"{head}.{tail}.{m}" if tail else f"{head}.{m}"] = v
    metrics.update(_gaps(eps))
    metrics["w"] = config.w
    metrics["test_questions"] = len(env.test)
    metrics["train_questions"] = len(env.train)
    for role, losses in sft_losses.items():
        if losses:
            metrics[f"sft_final_loss.{role}"] = float(np.mean(losses[-5:]))
    for tag, hist in histories.items():
        if hist:
            metrics[f"train_step_seconds.{tag}"] = float(np.mean([h["seconds"] for h in hist]))
            metrics[f"train_em_last.{tag}"] = float(np.mean([h["em"] for h in hist[-3:]]))
    if config.llm_model:
        from icml26.decor.llm import run_llm_decor

        metrics.update(run_llm_decor(config, env, run_dir))
    _plots(run_dir, results, histories)
    run_dir.write_json("samples.json", [_sample(e) for m in eps for e in eps[m][:3]])
    metrics["seconds"] = time.perf_counter() - t0
    return metrics


def _sample(e: Episode) -> dict[str, Any]:
    return {
        "method": e.method, "question": e.question.text, "answers": list(e.question.answers),
        "queries": e.queries, "memory": e.memory, "answer": e.answer,
    }  # fmt: skip


def _no_steps(config: DecorConfig) -> DecorConfig:
    from dataclasses import replace

    return replace(config, sft_steps=0)

"""The comparison behind the claims: one training seed of every method, and the statistics
over seeds x questions.

For one seed, :func:`run_seed` builds the policies (tiny models, or LoRA adapters on a
pretrained checkpoint when ``config.llm_model`` is set), warm-starts them by SFT on oracle
traces, trains every RL method from that same warm start with the same steps, questions and
episodes per step (:mod:`icml26.decor.joint`), and scores every method greedily on the same
evaluation questions. :func:`combine` turns the seeds' per-question scores into the metrics:
means per hop, and paired gaps whose standard error counts both the seeds and the questions.

Which supervision each method sees: every method's SFT warm start reads oracle traces
(entity chains); in RL, ``decor`` and ``monolithic_shaped`` read gold evidence ids (their
intrinsic rewards), ``outcome_only`` and ``monolithic`` the answers only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml26.decor.config import METHODS, DecorConfig
from icml26.decor.data.types import HOPS, Passage, Question
from icml26.decor.episodes import (
    Episode,
    EpisodeSettings,
    run_closed_book,
    run_monolithic,
    run_single_query,
    run_team,
)
from icml26.decor.joint import TrainSettings, train_decor, train_monolithic
from icml26.decor.policies import ROLES, RolePolicy, Sampling
from icml26.decor.retrieval import Search
from icml26.decor.rewards import answer_scores
from icml26.shared import log, rng_for, seed_for

__all__ = [
    "METHODS",
    "TRAINED",
    "Env",
    "by_seed",
    "combine",
    "episode_settings",
    "gap_df",
    "gap_margin",
    "gap_se",
    "make_env",
    "make_policies",
    "method_metrics",
    "run_method",
    "run_seed",
    "split_warm_state",
    "warm_start",
    "warm_state",
]

#: The methods trained by RL (the same steps and episodes each).
TRAINED: tuple[str, ...] = ("decor", "monolithic_shaped", "outcome_only", "monolithic")


@dataclass
class Env:
    """Training and evaluation questions, their searches, and the texts the tiny tokenizer is
    trained on."""

    train: list[Question]
    test: list[Question]
    train_search: Search
    test_search: Search
    passages: list[Passage]
    words: list[str]


def make_env(config: DecorConfig) -> Env:
    """The factbook environment split disjointly by content (or a user's evaluation data)."""
    from icml26.decor.data.factbook import build_factbook, split_disjoint
    from icml26.decor.retrieval import BM25Search, make_search

    fb = build_factbook()
    words = [c.name for c in fb.countries] + [x for c in fb.countries for x in c.capitals]
    train, test = split_disjoint(fb.questions, config.test_fraction, config.data_seed)
    rng = rng_for(config.data_seed, "subsample")
    if config.max_train_questions and len(train) > config.max_train_questions:
        idx = sorted(rng.choice(len(train), config.max_train_questions, replace=False))
        train = [train[int(i)] for i in idx]
    search = (
        make_search("dense", fb.passages, dense_model=config.dense_model)
        if config.retriever == "dense"
        else BM25Search(fb.passages)
    )
    test_search: Search = search
    if config.corpus:
        from icml26.decor.data.user import load_corpus, load_questions

        passages = load_corpus(config.corpus)
        test = load_questions(config.questions, passages)
        test_search = make_search(
            config.retriever,
            passages,
            endpoint=config.search_endpoint,
            dense_model=config.dense_model,
        )
    if len(test) > config.max_test_questions:  # evenly over the list (ordered by hops)
        idx = np.unique(np.linspace(0, len(test) - 1, config.max_test_questions).round())
        test = [test[int(i)] for i in idx]
    return Env(list(train), list(test), search, test_search, list(fb.passages), words)


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


# ------------------------------------------------------------------------------ policies
def make_policies(config: DecorConfig, env: Env, seed: int) -> dict[str, RolePolicy]:
    """The planner, filter, answerer and monolithic policies: tiny models, or LoRA adapters
    on ``config.llm_model``."""
    names = [*ROLES, "monolithic"]
    if config.llm_model:
        from icml26.decor.policies import make_lora_team
        from icml26.shared.llm import load_causal_lm
        from icml26.shared.llm.chat_templates import with_generation_markers

        model, tok = load_causal_lm(config.llm_model, device=config.device, dtype="float32")
        with_generation_markers(tok, strict=False)
        return make_lora_team(model, tok, names, rank=config.llm_lora_rank)
    from icml26.decor.policies import make_tiny_team

    texts = [p.text for p in env.passages] + [q.text for q in env.train]
    return make_tiny_team(
        texts,
        names,
        words=env.words,
        vocab_size=config.vocab_size,
        hidden_size=config.hidden_size,
        num_layers=config.num_layers,
        seed=seed_for(seed, "init") % 2**31,
        device=config.device,
    )


def _snapshot(team: Mapping[str, RolePolicy]) -> dict[str, Any]:
    from peft import get_peft_model_state_dict

    out = {}
    for r, p in team.items():
        state = (
            get_peft_model_state_dict(p.model, adapter_name=p.adapter)
            if p.adapter
            else p.model.state_dict()
        )
        out[r] = {k: v.detach().clone() for k, v in state.items()}
    return out


def _restore(team: Mapping[str, RolePolicy], state: Mapping[str, Any]) -> None:
    from peft import set_peft_model_state_dict

    for r, p in team.items():
        if p.adapter:
            set_peft_model_state_dict(p.model, state[r], adapter_name=p.adapter)
        else:
            p.model.load_state_dict(state[r])


def warm_start(
    config: DecorConfig, env: Env, team: Mapping[str, RolePolicy], seed: int
) -> dict[str, float]:
    """SFT of every policy on oracle traces of the training questions; final losses."""
    from icml26.decor.oracle import oracle_traces
    from icml26.shared.llm.sft import SFTSettings, sft

    traces = oracle_traces(env.train, env.train_search, config.k, rng_for(seed, "oracle"))
    settings = SFTSettings(
        steps=config.sft_steps,
        lr=config.sft_lr,
        batch_size=config.sft_batch_size,
        max_length=config.max_context,
        engine=config.sft_engine,
    )
    losses = {}
    for role, policy in team.items():
        policy.activate()
        result = sft(
            policy.model,
            policy.tokenizer,
            getattr(traces, role),
            settings,
            rng=rng_for(seed, "sft", role),
        )
        losses[role] = float(np.mean(result.losses[-5:])) if result.losses else float("nan")
        log(f"decor: seed {seed}: SFT {role}: final loss {losses[role]:.2f}")
    return losses


# ---------------------------------------------------------------------------------- seed
def _train(
    config: DecorConfig, env: Env, team: Mapping[str, RolePolicy], method: str, seed: int
) -> list[dict[str, float]]:
    settings = TrainSettings(
        steps=config.rl_steps,
        questions_per_step=config.questions_per_step,
        group_size=config.group_size,
        w=0.0 if method == "outcome_only" else config.w,
        lr=config.rl_lr,
        temperature=config.temperature,
        seed=seed_for(seed, "questions") % 2**31,  # the same draws for every method
        rollout_seed=seed_for(seed, "rollouts", method) % 2**31,  # its own sampling stream
    )
    eps = episode_settings(config)

    def on_step(step: int, rec: dict[str, float]) -> None:
        log(
            f"decor: seed {seed}: {method} step {step + 1}: {rec['seconds']:.1f} s, train EM {rec['em']:.3f}"
        )

    if method in ("decor", "outcome_only"):
        return train_decor(
            {r: team[r] for r in ROLES},
            env.train_search,
            env.train,
            settings,
            episode_settings=eps,
            on_step=on_step,
        )
    return train_monolithic(
        team["monolithic"],
        env.train_search,
        env.train,
        settings,
        shaped=method == "monolithic_shaped",
        episode_settings=eps,
        on_step=on_step,
    )


def episode_settings(config: DecorConfig) -> EpisodeSettings:
    """The episode budgets of ``config``."""
    return EpisodeSettings(
        k=config.k, max_searches=config.max_searches, max_context=config.max_context
    )


def _evaluate(
    config: DecorConfig, env: Env, team: Mapping[str, RolePolicy], method: str
) -> list[Episode]:
    g, eps = Sampling(greedy=True), episode_settings(config)
    if method in ("decor", "outcome_only", "orchestration"):
        return run_team(team, env.test_search, env.test, eps, g, method=method)
    if method.startswith("monolithic"):
        return run_monolithic(team["monolithic"], env.test_search, env.test, eps, g, method=method)
    if method == "closed_book":
        return run_closed_book(team["answerer"], env.test, eps, g)
    return run_single_query(team["answerer"], env.test_search, env.test, eps, g)


def warm_state(config: DecorConfig, env: Env, seed: int) -> dict[str, Any]:
    """Seed ``seed``'s warm start: fresh policies (initialised from the seed's ``init``
    stream), SFT on oracle traces, and the weights every method of that seed starts from.

    Returns:
        a flat ``dict`` of tensors for :data:`icml26.shared.TORCH`: ``"<policy>/<name>"``
        (the trainable weights: the LoRA adapter, or the whole tiny model) and
        ``"sft_loss/<policy>"`` (a 0-d tensor).
    """
    import torch

    with torch.random.fork_rng():
        torch.manual_seed(seed_for(seed, "init") % 2**31)
        team = make_policies(config, env, seed)
    losses = warm_start(config, env, team, seed)
    out: dict[str, Any] = {
        f"{role}/{name}": t for role, state in _snapshot(team).items() for name, t in state.items()
    }
    out.update({f"sft_loss/{role}": torch.tensor(float(v)) for role, v in losses.items()})
    return out


def split_warm_state(state: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, float]]:
    """:func:`warm_state`'s dict back as ``(weights per policy, SFT loss per policy)``."""
    weights: dict[str, dict[str, Any]] = {}
    losses: dict[str, float] = {}
    for key, value in state.items():
        head, _, name = key.partition("/")
        if head == "sft_loss":
            losses[name] = float(value)
        else:
            weights.setdefault(head, {})[name] = value
    return weights, losses


def run_method(
    config: DecorConfig,
    env: Env,
    team: Mapping[str, RolePolicy],
    method: str,
    seed: int,
    warm: Mapping[str, Any],
) -> dict[str, Any]:
    """One method on one seed: from the seed's warm start (``warm``, :func:`warm_state`),
    RL when the method is trained, then greedy evaluation on the evaluation questions.

    Args:
        config: the run's settings.
        env: the questions and searches.
        team: policies to load the warm start into (overwritten).
        method: one of :data:`METHODS`.
        seed: the training seed (its question draws and the method's rollout stream).
        warm: :func:`warm_state` of that seed.

    Returns:
        ``{"scores": {"em": [...], "f1": [...]}, "metrics": method_metrics, "history": RL
        logs (empty when not trained), "sft_loss": {policy: loss}, "samples": [...]}``
        (JSON-ready).
    """
    weights, losses = split_warm_state(warm)
    _restore(team, weights)
    history: list[dict[str, float]] = []
    if method in TRAINED:
        log(f"decor: seed {seed}: RL {method} ({config.rl_steps} steps)")
        history = _train(config, env, team, method, seed)
    episodes = _evaluate(config, env, team, method)
    return {
        "scores": {
            "em": [answer_scores(e)[0] for e in episodes],
            "f1": [answer_scores(e)[1] for e in episodes],
        },
        "metrics": method_metrics(episodes),
        "history": history,
        "sft_loss": losses,
        "samples": [_sample(e) for e in episodes[:2]],
    }


def by_seed(results: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """Per-method lists of :func:`run_method` results (one per seed, in seed order) as
    per-seed records for :func:`combine` and the figures: ``{"scores": {method: ...},
    "metrics": {method: ...}, "history": {method: ...}, "sft_loss": ..., "samples": [...]}``.

    Raises:
        ValueError: the methods ran on different numbers of seeds.
    """
    counts = {m: len(r) for m, r in results.items()}
    if len(set(counts.values())) > 1:
        raise ValueError(f"every method needs the same seeds, got {counts}")
    n = next(iter(counts.values()), 0)
    seeds: list[dict[str, Any]] = []
    for i in range(n):
        rec: dict[str, Any] = {"scores": {}, "metrics": {}, "history": {}, "samples": []}
        for method in (m for m in METHODS if m in results):
            r = results[method][i]
            rec["scores"][method] = r["scores"]
            rec["metrics"][method] = r["metrics"]
            if method in TRAINED:
                rec["history"][method] = r["history"]
            rec["sft_loss"] = r["sft_loss"]
            rec["samples"].extend(r["samples"])
        seeds.append(rec)
    return seeds


def run_seed(config: DecorConfig, env: Env, seed: int) -> dict[str, Any]:
    """Every method of ``config.methods`` on one seed (:func:`warm_state` then
    :func:`run_method` for each), as one record of :func:`by_seed`.

    Returns:
        ``{"scores": {method: {"em": [...], "f1": [...]}}`` per evaluation question,
        ``"metrics": {method: method_metrics}``, ``"history": {method: RL logs}``,
        ``"sft_loss": {policy: loss}`` (JSON-ready).
    """
    warm = warm_state(config, env, seed)
    team = make_policies(config, env, seed)
    results = {m: [run_method(config, env, team, m, seed, warm)] for m in config.methods}
    return by_seed(results)[0]


def _sample(e: Episode) -> dict[str, Any]:
    return {
        "method": e.method,
        "question": e.question.text,
        "answers": list(e.question.answers),
        "queries": e.queries,
        "memory": e.memory,
        "answer": e.answer,
    }


# ----------------------------------------------------------------------------- statistics
def _paired_grid(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a - b`` over a ``(seeds, questions)`` grid; ValueError unless both are 2-D of one shape."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 2:
        raise ValueError(
            f"need two (seeds, questions) arrays of one shape, got {a.shape}, {b.shape}"
        )
    return a - b


def gap_se(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Mean of ``a - b`` over a ``(seeds, questions)`` grid and its standard error,
    ``sqrt(var_seeds(d_s.) / S + var_questions(d_.q) / Q)``: the spread between training seeds
    (the same questions) plus the spread over questions (the seed-averaged gaps). NaN with
    fewer than two seeds (a claim is not decided on one training run).

    Raises:
        ValueError: ``a`` and ``b`` differ in shape or are not 2-D.
    """
    d = _paired_grid(a, b)
    s, q = d.shape
    if s < 2 or q < 2:
        return float(d.mean()), float("nan")
    se = math.sqrt(d.mean(1).var(ddof=1) / s + d.mean(0).var(ddof=1) / q)
    return float(d.mean()), se


_PAIRS = (
    ("decor", "monolithic_shaped"),
    ("decor", "outcome_only"),
    ("decor", "monolithic"),
    ("decor", "orchestration"),
)


def gap_df(a: np.ndarray, b: np.ndarray) -> float:
    """Welch-Satterthwaite degrees of freedom of :func:`gap_se`'s two variance parts,
    ``(u + v)^2 / (u^2 / (S - 1) + v^2 / (Q - 1))`` with ``u = var_seeds / S`` and
    ``v = var_questions / Q``: ``S - 1`` when the seeds' spread dominates, up to
    ``S + Q - 2`` when the questions' does. NaN with fewer than two seeds or questions; with
    no spread at all, ``S - 1``.

    Raises:
        ValueError: ``a`` and ``b`` differ in shape or are not 2-D.
    """
    d = _paired_grid(a, b)
    s, q = d.shape
    if s < 2 or q < 2:
        return float("nan")
    u, v = d.mean(1).var(ddof=1) / s, d.mean(0).var(ddof=1) / q
    if u + v == 0:
        return float(s - 1)
    return float((u + v) ** 2 / (u**2 / (s - 1) + v**2 / (q - 1)))


def gap_margin(se: float, df: float) -> float:
    """What a paired gap must exceed: ``t_{0.975, df} * se`` with ``df`` from :func:`gap_df`
    (with 3 seeds, 4.30 SE when the seeds' spread dominates, near 2 SE when the questions'
    does); NaN when ``df`` is NaN or below 1."""
    from scipy.stats import t

    return float(t.ppf(0.975, df) * se) if df >= 1 else float("nan")


def combine(seeds: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """The run's metrics from the seeds' results: ``<metric>.<hops>.<method>`` means over
    seeds, ``em_gap.<a>.<b>`` / ``em_gap_se.<a>.<b>`` over seeds x questions with
    ``em_gap_df.<a>.<b>`` (:func:`gap_df`) and ``em_gap_margin.<a>.<b>``
    (:func:`gap_margin`), ``f1_differs.<a>.<b>`` (the share of seed x question pairs whose
    answers score a different F1: 0 when RL changed neither policy's answers apart),
    ``seeds``; and each baseline against
    itself (``em_gap.<b>.<b>``, which the claims' placebos read), paired seed ``i`` with
    seed ``i + 1`` on the same questions: its mean is 0 by construction, its SE and margin
    are the baseline's own seed-to-seed noise."""
    out: dict[str, float] = {"seeds": float(len(seeds))}
    for method in METHODS:
        rows = [s["metrics"][method] for s in seeds if method in s["metrics"]]
        for key in rows[0] if rows else ():
            head, _, tail = key.partition(".")
            out[f"{head}.{tail}.{method}" if tail else f"{head}.{method}"] = float(
                np.mean([r[key] for r in rows])
            )
    for a, b in _PAIRS:
        if all(a in s["scores"] and b in s["scores"] for s in seeds):
            ea = np.array([s["scores"][a]["em"] for s in seeds])
            eb = np.array([s["scores"][b]["em"] for s in seeds])
            fa = np.array([s["scores"][a]["f1"] for s in seeds])
            fb = np.array([s["scores"][b]["f1"] for s in seeds])
            out[f"f1_differs.{a}.{b}"] = float(np.mean(fa != fb))
            for x, y, key in ((ea, eb, f"{a}.{b}"), (eb, np.roll(eb, -1, axis=0), f"{b}.{b}")):
                out[f"em_gap.{key}"], se = gap_se(x, y)
                out[f"em_gap_se.{key}"] = se
                out[f"em_gap_df.{key}"] = df = gap_df(x, y)
                out[f"em_gap_margin.{key}"] = gap_margin(se, df)
    return out

"""The methods, each trained on its own: what stage 1 teaches and how stage 2 trains.

=================  ====================  ==================================================
method             stage 1 (SFT)         stage 2 (GRPO)
=================  ====================  ==================================================
``ours``           augmented, by label   reward: correct - cost; the mode is chosen (guard)
``sft_only``       augmented, by label   none (the placebo of every claim about GRPO)
``no_augmentation`` natural, by label    as ``ours``
``always_think``   think on every item   reward: correct; every reply thinks
``never_think``    direct on every item  reward: correct; every reply answers directly
``length_penalty`` think on every item   reward: correct - cost; no mode to choose: it can
                                         only shorten its reasoning (L1-style)
=================  ====================  ==================================================

``length_router`` is not trained: it forces ``ours``' mode by prompt length (a threshold
fitted on the natural pool). Each trained method's stage-1 data comes from its seed's own
stream, and no complexity label reaches stage 2 (:func:`~icml26.adaptive_reasoning.grpo.
grpo_dataset`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from icml26.adaptive_reasoning.config import AdaptiveConfig
from icml26.adaptive_reasoning.modes import Mode
from icml26.adaptive_reasoning.sft_data import DataMix, augmented_problems, natural_problems
from icml26.adaptive_reasoning.tasks import SPLITS, Problem, make_split
from icml26.shared import rng_for, seed_for

__all__ = [
    "METHODS",
    "SFT_KINDS",
    "TRAINED",
    "MethodSpec",
    "build_policy",
    "data_report",
    "eval_splits",
    "evaluate_seed",
    "load_trainable_state",
    "train_grpo_stage",
    "train_sft_stage",
    "training_pools",
    "wording_of",
    "worst_over_seeds",
]


@dataclass(frozen=True)
class MethodSpec:
    """One trained method: its stage-1 data (``sft``: a key of :data:`SFT_KINDS`), whether
    stage 2 runs, the mode it forces, and whether the reward charges reasoning tokens."""

    sft: str
    grpo: bool = True
    force: Mode | None = None
    token_cost: bool = True


#: stage-1 data: (pool, target kind)
SFT_KINDS = {
    "augmented": ("augmented", "adaptive"),
    "natural": ("natural", "adaptive"),
    "think": ("augmented", "think"),
    "direct": ("augmented", "direct"),
}

TRAINED = {
    "ours": MethodSpec("augmented"),
    "sft_only": MethodSpec("augmented", grpo=False),
    "no_augmentation": MethodSpec("natural"),
    "always_think": MethodSpec("think", force="think", token_cost=False),
    "never_think": MethodSpec("direct", force="no_think", token_cost=False),
    "length_penalty": MethodSpec("think", force="think"),
}
METHODS = (*TRAINED, "length_router")


def training_pools(config: AdaptiveConfig, seed: int) -> dict[str, list[Problem]]:
    """The augmented and the natural training pools of one seed (training programs only)."""
    mix = DataMix(config.complex_share, config.verbose_if_simple, config.verbose_if_complex)
    return {
        "augmented": augmented_problems(config.train_problems, rng_for(seed, "augmented"), mix),
        "natural": natural_problems(config.train_problems, rng_for(seed, "natural"), mix),
    }


def eval_splits(seed: int, n: int) -> dict[str, list[Problem]]:
    """``n`` held-out problems of every split (the same for every method and seed)."""
    return {s: make_split(s, n, rng_for(seed, f"eval_{s}")) for s in SPLITS}


def _spec(config: AdaptiveConfig, name: str) -> Any:
    from icml26.adaptive_reasoning.models import ModelSpec

    return ModelSpec(
        name=name,
        hidden_size=config.hidden_size,
        num_layers=config.num_layers,
        vocab_size=config.vocab_size,
        lora_rank=config.lora_rank,
        device=config.device,
    )


def _trainable_state(model: Any) -> dict[str, Any]:
    """The parameters that train (all of a tiny model; the adapters and new token rows of a
    LoRA model), on the CPU: the frozen base is rebuilt on load."""
    names = {n for n, p in model.named_parameters() if p.requires_grad}
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items() if k in names}


def load_trainable_state(model: Any, state: dict[str, Any]) -> None:
    """Load ``state`` (from :func:`_trainable_state`) into ``model``, checked: no key the model
    lacks, and every missing key a frozen base weight or buffer (rebuilt, not trained).

    Raises:
        ValueError: unexpected keys, or trainable weights absent from ``state`` (which would
            leave them at their fresh initialisation and evaluate an untrained model).
    """
    result = model.load_state_dict(state, strict=False)
    if result.unexpected_keys:
        raise ValueError(
            f"saved state has {len(result.unexpected_keys)} key(s) the model lacks, e.g. "
            f"{sorted(result.unexpected_keys)[:3]}: a state of another model or architecture"
        )
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    untrained = sorted(set(result.missing_keys) & trainable)
    if untrained:
        raise ValueError(
            f"saved state lacks {len(untrained)} trainable weight(s), e.g. {untrained[:3]}: "
            "they would stay at their fresh initialisation (a partial or truncated state?)"
        )


def build_policy(
    config: AdaptiveConfig, seed: int, state: dict[str, Any] | None = None, *, model: str = ""
) -> Any:
    """A :class:`~icml26.adaptive_reasoning.policy.Policy` on a fresh model of ``seed`` (the
    tiny model's tokenizer and initialisation follow the seed), with ``state`` loaded."""
    from icml26.adaptive_reasoning.models import build_model
    from icml26.adaptive_reasoning.policy import Policy

    lm, tok = build_model(_spec(config, model or config.model), seed=seed)
    if state is not None:
        load_trainable_state(lm, state)
    return Policy(lm, tok)


def train_sft_stage(
    config: AdaptiveConfig, seed: int, kind: str, pool: Sequence[Problem], *, large: bool = False
) -> dict[str, Any]:
    """Stage 1 of one seed on ``pool`` with ``kind``'s targets; the trainable weights."""
    import torch

    from icml26.adaptive_reasoning.sft_data import to_conversations
    from icml26.shared.llm.sft import SFTSettings, sft

    torch.manual_seed(seed_for(seed, f"sft_{kind}"))
    policy = build_policy(config, seed, model=config.large_model if large else "")
    settings = SFTSettings(
        steps=config.large_sft_steps if large else config.sft_steps,
        lr=config.large_sft_lr if large else config.sft_lr,
        batch_size=config.large_sft_batch if large else config.sft_batch,
        max_length=512,
        engine=config.sft_engine,  # type: ignore[arg-type]
    )
    conversations = to_conversations(list(pool), SFT_KINDS[kind][1])
    sft(policy.model, policy.tokenizer, conversations, settings, rng=rng_for(seed, f"sft_{kind}"))
    return _trainable_state(policy.model)


def train_grpo_stage(
    config: AdaptiveConfig,
    seed: int,
    method: str,
    sft_state: dict[str, Any],
    pool: Sequence[Problem],
    *,
    large: bool = False,
) -> dict[str, Any]:
    """Stage 2 of one trained method from its stage-1 weights: ``{"state", "history"}``."""
    from icml26.adaptive_reasoning.grpo import ModeGRPOSettings, train_mode_grpo

    spec = TRAINED[method]
    policy = build_policy(config, seed, sft_state, model=config.large_model if large else "")
    settings = ModeGRPOSettings(
        steps=config.large_grpo_steps if large else config.grpo_steps,
        prompts_per_step=config.large_grpo_prompts if large else config.grpo_prompts,
        num_generations=config.large_grpo_generations if large else config.grpo_generations,
        max_new_tokens=config.max_new_tokens,
        temperature=config.grpo_temperature,
        lr=config.large_grpo_lr if large else config.grpo_lr,
        token_cost=config.token_cost if spec.token_cost else 0.0,
        guard=config.guard,  # type: ignore[arg-type]
        force=spec.force,
        seed=seed_for(seed, f"grpo_{method}") % 2**31,
    )
    history = train_mode_grpo(policy, list(pool), settings)
    return {"state": _trainable_state(policy.model), "history": history}


def _forced(mode: Mode | None) -> Any:
    """A ``choose`` that answers every problem in ``mode`` (``None``: the model chooses)."""
    if mode is None:
        return None
    return lambda problems: [mode] * len(problems)


def evaluate_seed(
    config: AdaptiveConfig,
    seed: int,
    states: dict[str, dict[str, Any]],
    natural: Sequence[Problem],
    splits: dict[str, list[Problem]],
) -> dict[str, dict[str, dict[str, list[float]]]]:
    """Greedy scores of every method of one seed on every split: a one-mode method
    (``always_think``, ``never_think``, ``length_penalty``) answers in its mode, as it was
    trained; ``length_router`` forces ``ours``' mode by prompt length, its threshold fitted on
    the natural pool."""
    from icml26.adaptive_reasoning.baselines import fit_length_router
    from icml26.adaptive_reasoning.evaluate import evaluate_method

    out: dict[str, dict[str, dict[str, list[float]]]] = {}
    for method, state in states.items():
        policy = build_policy(config, seed, state)
        plans = [(method, _forced(TRAINED[method].force) if method in TRAINED else None)]
        if method == "ours":
            plans.append(("length_router", fit_length_router(list(natural), policy.prompt_length)))
        for name, choose in plans:
            scores = evaluate_method(policy, splits, choose, max_new_tokens=config.max_new_tokens)
            out[name] = {s: vars(sc) for s, sc in scores.items()}
    return out


def wording_of(splits: dict[str, list[Problem]]) -> dict[str, list[bool]]:
    """Per split, whether each item is worded verbosely (for ``verbosity_gap_ood``)."""
    return {s: [p.verbose for p in problems] for s, problems in splits.items()}


def worst_over_seeds(report: dict[str, float], seen: dict[str, float]) -> dict[str, float]:
    """Fold one seed's :func:`data_report` into ``report``, keeping the worst value: the most
    evaluation items found in training, the fewest distinct programs."""
    out = dict(report)
    for k, v in seen.items():
        worse = min if k.startswith("distinct_") else max
        out[k] = worse(v, out[k]) if k in out else v
    return out


def data_report(
    pools: dict[str, list[Problem]], splits: dict[str, list[Problem]]
) -> dict[str, float]:
    """Disjointness measured by content: evaluation programs and texts found in training
    (both should be 0), and the distinct simple programs on each side."""
    from icml26.adaptive_reasoning.tasks import program_counts

    train = [p for pool in pools.values() for p in pool]
    evals = [p for split in splits.values() for p in split]
    programs = {(p.start, p.program) for p in train}
    texts = {p.text for p in train}
    simple_eval = {(p.start, p.program) for p in evals if p.ops == 1}
    return {
        "eval_programs_in_train": float(sum((p.start, p.program) in programs for p in evals)),
        "eval_texts_in_train": float(sum(p.text in texts for p in evals)),
        "distinct_simple_eval_programs": float(len(simple_eval)),
        "distinct_simple_train_programs": float(
            len({(p.start, p.program) for p in train if p.ops == 1})
        ),
        **{k: float(v) for k, v in program_counts().items()},
    }

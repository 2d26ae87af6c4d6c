"""Stage 1 data: supervised targets with (or without) the verbosity augmentation.

* **augmented** (ours): each simple problem appears in *both* a concise and a redundant
  (verbose) form, each with the no-think target; complex problems keep the natural wording
  mix and get think traces generated step by step from their programs. Length then tells
  nothing about the mode on simple problems, so the model has to read the operation count.
* **natural** (the no-augmentation reasoner): the same targets on a mixture where wording
  correlates with complexity as in real data (simple problems always concise, complex ones
  mostly verbose): :func:`icml26.adaptive_reasoning.tasks.mixture`.

Both sets have the same number of conversations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26.adaptive_reasoning.modes import direct_target, think_target
from icml26.adaptive_reasoning.tasks import Problem, concise, mixture, think_trace, verbose

__all__ = [
    "TARGETS",
    "DataMix",
    "augmented_problems",
    "natural_problems",
    "target",
    "to_conversations",
]


@dataclass(frozen=True)
class DataMix:
    """Wording probabilities of the natural data (the length-complexity correlation)."""

    complex_share: float = 0.5
    verbose_if_simple: float = 0.0
    verbose_if_complex: float = 0.9

    def __post_init__(self) -> None:
        for name in ("complex_share", "verbose_if_simple", "verbose_if_complex"):
            v = getattr(self, name)
            if not 0 <= v <= 1:
                raise ValueError(f"{name} must be in [0, 1], got {v}")


def natural_problems(n: int, rng: np.random.Generator, mix: DataMix) -> list[Problem]:
    """``n`` problems with the natural length-complexity correlation."""
    return mixture(
        n,
        rng,
        complex_share=mix.complex_share,
        verbose_if_simple=mix.verbose_if_simple,
        verbose_if_complex=mix.verbose_if_complex,
    )


def augmented_problems(n: int, rng: np.random.Generator, mix: DataMix) -> list[Problem]:
    """``n`` problems: the natural mixture's complex problems as they are, and every simple
    problem twice, concise and verbose (so the simple share stays ``1 - complex_share``)."""
    base = natural_problems(n, rng, mix)
    out: list[Problem] = []
    simple = [p for p in base if not p.complex]
    for p in base:
        if p.complex:
            out.append(p)
    for p in simple[: (len(simple) + 1) // 2]:
        out += [concise(p, rng), verbose(p, rng)]
    order = rng.permutation(len(out))
    return [out[i] for i in order][:n]


#: Stage-1 target kinds: by the complexity label (the paper's), one mode for all (the
#: one-mode baselines), or both modes for every problem (unlabelled data: the mode is then
#: left to stage 2).
TARGETS = ("adaptive", "think", "direct", "both")


def target(problem: Problem, kind: str = "adaptive") -> str:
    """The reply stage 1 teaches for ``kind`` ``"adaptive"`` (a think trace for complex
    problems, a direct answer for simple ones), ``"think"`` or ``"direct"``.

    Raises:
        ValueError: an unknown kind, or ``"adaptive"`` on a problem with no complexity label.
    """
    if kind not in ("adaptive", "think", "direct"):
        raise ValueError(f"unknown target kind {kind!r}; choose from {list(TARGETS)}")
    if kind == "adaptive" and problem.complex is None:
        raise ValueError(
            f"problem {problem.text[:40]!r} has no complexity label: use targets='both' "
            "(stage 1 teaches both modes, stage 2 learns the choice from reward)"
        )
    if kind == "think" or (kind == "adaptive" and problem.complex):
        return think_target(think_trace(problem), problem.answer)
    return direct_target(problem.answer)


def to_conversations(
    problems: list[Problem], targets: str = "adaptive"
) -> list[list[dict[str, str]]]:
    """Chat conversations for :func:`icml26.shared.llm.sft.sft` (loss on the reply).

    Args:
        problems: the problems.
        targets: one of :data:`TARGETS` (``"both"`` gives two conversations a problem).

    Returns:
        One ``[user, assistant]`` conversation per problem (two with ``"both"``).

    Raises:
        ValueError: an unknown kind, or ``"adaptive"`` on an unlabelled problem.
    """
    kinds = ("think", "direct") if targets == "both" else (targets,)
    return [
        [{"role": "user", "content": p.text}, {"role": "assistant", "content": target(p, k)}]
        for p in problems
        for k in kinds
    ]

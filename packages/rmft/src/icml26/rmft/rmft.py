"""Iterative regret-minimization fine-tuning (RMFT) for the numerical Transformer.

The loop (the paper's Iterative RMFT): starting from a weak base model,

1. roll out ``L = n_instances × rollouts_per_instance`` trajectories with the *current* model
   (sampling from its policy) on freshly drawn instances;
2. keep the ``keep_per_instance`` lowest-regret rollouts of every instance
   (:func:`~icml26.rmft.selection.select_lowest_regret`; ``selection="random"`` keeps as many
   chosen at random instead, the ablation without the regret signal);
3. fine-tune the current model on them (behaviour cloning of its own best trajectories; no
   teacher algorithm is ever imitated);
4. evaluate; repeat.

The base model is pretrained weakly on a mix of random and greedy trajectories
(:func:`weak_pretraining`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26.rmft.baselines import Greedy, RandomPolicy
from icml26.rmft.config import check_positive
from icml26.rmft.envs import EnvSpec, sample_instances
from icml26.rmft.model import ArmTransformer, TransformerPolicy
from icml26.rmft.rollouts import Trajectories, rollout
from icml26.rmft.selection import SELECTIONS, select
from icml26.rmft.train import sft, sft_data, sft_loss

__all__ = ["IterationStats", "RMFTSettings", "numeric_rmft_iteration", "weak_pretraining"]


@dataclass(frozen=True)
class RMFTSettings:
    """One RMFT iteration's knobs (see the module docstring).

    Args:
        n_instances: fresh instances rolled out per iteration.
        rollouts_per_instance: rollouts of each instance (the group selection ranks).
        keep_per_instance: lowest-regret rollouts kept per instance.
        steps: fine-tuning steps on the kept rollouts.
        lr: fine-tuning learning rate.
        batch_size: fine-tuning batch size (trajectories).
        temperature: rollout sampling temperature (finite, > 0).
        selection: ``"lowest_regret"`` (RMFT) or ``"random"`` (the ablation).

    Raises:
        ValueError: a value out of range (NaN, non-positive ``temperature`` or ``lr``) or an
            unknown selection rule.
    """

    n_instances: int = 128
    rollouts_per_instance: int = 8
    keep_per_instance: int = 1
    steps: int = 150
    lr: float = 1e-3
    batch_size: int = 64
    temperature: float = 1.0
    selection: str = "lowest_regret"

    def __post_init__(self) -> None:
        if self.n_instances < 1 or self.rollouts_per_instance < 1 or self.steps < 0:
            raise ValueError(f"n_instances, rollouts_per_instance >= 1 and steps >= 0: {self}")
        if self.selection not in SELECTIONS:
            raise ValueError(f"selection must be one of {SELECTIONS}, got {self.selection!r}")
        if not 1 <= self.keep_per_instance <= self.rollouts_per_instance:
            raise ValueError(
                f"keep_per_instance must be in 1..rollouts_per_instance "
                f"({self.rollouts_per_instance}), got {self.keep_per_instance}"
            )
        check_positive(self, "temperature", "lr")


@dataclass(frozen=True)
class IterationStats:
    """What one RMFT iteration saw.

    Attributes:
        rollout_regret: mean played regret of all rollouts.
        selected_regret: mean regret of the kept rollouts *as the selection ranked them*
            (LLM policies: with invalid replies penalised,
            :func:`~icml26.rmft.selection.selection_regret`; numeric: the played regret).
        loss_before: NLL of the kept trajectories before fine-tuning.
        loss_after: NLL of the kept trajectories after fine-tuning.
        rollout_invalid: (LLM) share of invalid replies among all rollouts' steps.
        selected_invalid: (LLM) share of invalid replies among the kept rollouts' steps.
        selected_played_regret: mean regret the kept rollouts actually played (invalid
            replies fall back to a random arm, so this can be lower than ``selected_regret``);
            ``None`` means equal to ``selected_regret``.
    """

    rollout_regret: float
    selected_regret: float
    loss_before: float
    loss_after: float
    rollout_invalid: float = 0.0
    selected_invalid: float = 0.0
    selected_played_regret: float | None = None


def weak_pretraining(
    model: ArmTransformer,
    spec: EnvSpec,
    *,
    n_trajectories: int,
    greedy_fraction: float,
    steps: int,
    lr: float,
    batch_size: int,
    rng: np.random.Generator,
) -> list[float]:
    """Behaviour-clone a mix of random and greedy trajectories: a weak base model.

    Args:
        model: the network, trained in place.
        spec: the environment the trajectories are played on.
        n_trajectories: how many trajectories.
        greedy_fraction: share played by the greedy algorithm (the rest uniformly random).
        steps: optimiser steps.
        lr: learning rate.
        batch_size: trajectories per step.
        rng: draws the instances, the play and the batches.

    Returns:
        The training loss of every step.

    Raises:
        ValueError: ``greedy_fraction`` outside ``[0, 1]``.
    """
    if not 0 <= greedy_fraction <= 1:
        raise ValueError(f"greedy_fraction must be in [0, 1], got {greedy_fraction}")
    n_greedy = round(n_trajectories * greedy_fraction)
    parts: list[Trajectories] = []
    for policy, n in ((Greedy(), n_greedy), (RandomPolicy(), n_trajectories - n_greedy)):
        if n:
            parts.append(rollout(policy, sample_instances(spec, n, rng), rng))
    return sft(model, sft_data(parts), steps=steps, lr=lr, batch_size=batch_size, rng=rng)


def numeric_rmft_iteration(
    model: ArmTransformer,
    spec: EnvSpec,
    settings: RMFTSettings,
    rng: np.random.Generator,
    *,
    device: str = "cpu",
) -> IterationStats:
    """One RMFT iteration in place on ``model`` (steps 1-3 of the module docstring).

    Args:
        model: the network, fine-tuned in place.
        spec: the training environment.
        settings: the iteration's knobs.
        rng: draws the instances, the rollouts, the selection and the batches.
        device: where the model runs.

    Returns:
        :class:`IterationStats`: the rollouts' and the kept rollouts' mean regret, the NLL of
        the kept trajectories before and after fine-tuning.
    """
    m = settings.rollouts_per_instance
    instances = sample_instances(spec, settings.n_instances, rng).repeat(m)
    policy = TransformerPolicy(model, temperature=settings.temperature, device=device)
    trajs = rollout(policy, instances, rng)
    keep = select(
        settings.selection, trajs.final_regret, settings.keep_per_instance, group_size=m, rng=rng
    )
    data = sft_data(trajs.subset(keep))
    before = sft_loss(model, data)
    sft(model, data, steps=settings.steps, lr=settings.lr, batch_size=settings.batch_size, rng=rng)
    after = sft_loss(model, data)
    return IterationStats(
        rollout_regret=float(trajs.final_regret.mean()),
        selected_regret=float(trajs.final_regret[keep].mean()),
        loss_before=before,
        loss_after=after,
        selected_played_regret=float(trajs.final_regret[keep].mean()),
    )

"""Trajectory selection: keep the lowest-regret rollouts (the regret signal of RMFT), or, for
the random-selection ablation, as many rollouts chosen at random.

An LLM reply that makes no valid decision (by default: no ``Action: <n>`` line) plays a random
arm, and that arm's regret would let a lucky fallback be selected. :func:`selection_regret` charges such a step the *worst* arm's
regret (``invalid="worst"``), or ends the episode there (``invalid="end"``: that step and every
later one are charged the worst arm), so only decisions the model made can earn a low regret.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from icml26.rmft.config import INVALID_RULES

if TYPE_CHECKING:
    from icml26.rmft.rollouts import Trajectories

__all__ = [
    "INVALID_RULES",
    "SELECTIONS",
    "select",
    "select_lowest_regret",
    "select_random",
    "selection_regret",
]

#: The selection rules: RMFT's, and the ablation that ignores the regret signal.
SELECTIONS = ("lowest_regret", "random")


def selection_regret(trajs: Trajectories, invalid: str = "worst") -> np.ndarray:
    """``(n,)`` final regret used to select rollouts, with invalid steps penalised.

    Args:
        trajs: the rollouts (``trajs.invalid`` marks the unparsable replies).
        invalid: ``"worst"``: an invalid step costs the worst arm's regret at that step;
            ``"end"``: the episode ends at its first invalid step (it and every later step cost
            the worst arm); ``"played"``: the regret of the random arm actually played (the
            old rule, kept as an ablation: it rewards lucky fallbacks).

    Returns:
        The penalised final regret of each episode (equal to ``trajs.final_regret`` when no
        step is invalid).

    Raises:
        ValueError: an unknown ``invalid`` rule.
    """
    if invalid not in INVALID_RULES:
        raise ValueError(f"invalid must be one of {INVALID_RULES}, got {invalid!r}")
    played = np.diff(trajs.regret, axis=1, prepend=0.0)
    bad = np.asarray(trajs.invalid, dtype=bool)
    if invalid == "played" or not bad.any():
        return trajs.final_regret.copy()
    if invalid == "end":
        bad = np.cumsum(bad, axis=1) > 0
    worst = trajs.instances.worst_step_regret()
    return np.where(bad, worst, played).sum(axis=1)


def select_lowest_regret(
    regrets: np.ndarray, keep: int, *, group_size: int | None = None
) -> np.ndarray:
    """Indices of the ``keep`` lowest-regret trajectories.

    Args:
        regrets: ``(N,)`` final regret of each trajectory.
        keep: how many to keep, overall (``group_size=None``) or per group.
        group_size: when set, ``regrets`` holds consecutive groups of this size (several
            rollouts of the same instance, see :meth:`Instances.repeat`) and ``keep`` are
            kept in every group: each instance contributes its best rollouts, so easy
            instances (whose regret is small whatever one does) do not crowd out hard ones.

    Returns:
        Sorted integer indices into ``regrets``. Ties are broken by index (stable).

    Raises:
        ValueError: ``keep`` outside ``1..N`` (or ``1..group_size``), NaN regrets, or ``N`` not
            a multiple of ``group_size``.
    """
    regrets = np.asarray(regrets, dtype=np.float64)
    if regrets.ndim != 1 or regrets.size == 0:
        raise ValueError(f"regrets must be a non-empty 1-D array, got shape {regrets.shape}")
    if not np.isfinite(regrets).all():
        raise ValueError("regrets contain NaN or infinite values")
    limit = regrets.size if group_size is None else group_size
    if isinstance(keep, bool) or not isinstance(keep, int | np.integer) or not 1 <= keep <= limit:
        raise ValueError(f"keep must be an integer in 1..{limit}, got {keep!r}")
    if group_size is None:
        return np.sort(np.argsort(regrets, kind="stable")[:keep])
    if group_size < 1 or regrets.size % group_size:
        raise ValueError(f"{regrets.size} trajectories do not split into groups of {group_size}")
    grouped = regrets.reshape(-1, group_size)
    within = np.argsort(grouped, axis=1, kind="stable")[:, :keep]
    offsets = (np.arange(grouped.shape[0]) * group_size)[:, None]
    return np.sort((within + offsets).ravel())


def select_random(
    regrets: np.ndarray, keep: int, *, group_size: int | None = None, rng: np.random.Generator
) -> np.ndarray:
    """``keep`` trajectories chosen uniformly at random (per group of ``group_size``, like
    :func:`select_lowest_regret`), ignoring their regret: the ablation that tells the regret
    signal from the mere act of distilling the model's own samples. Same checks and output."""
    select_lowest_regret(regrets, keep, group_size=group_size)  # the same validation
    n = np.asarray(regrets).size
    if group_size is None:
        return np.sort(rng.choice(n, size=keep, replace=False))
    groups = n // group_size
    within = np.argsort(rng.random((groups, group_size)), axis=1)[:, :keep]
    return np.sort((within + (np.arange(groups) * group_size)[:, None]).ravel())


def select(
    rule: str,
    regrets: np.ndarray,
    keep: int,
    *,
    group_size: int | None = None,
    rng: np.random.Generator,
) -> np.ndarray:
    """The selection ``rule`` of :data:`SELECTIONS` applied to ``regrets``."""
    if rule == "lowest_regret":
        return select_lowest_regret(regrets, keep, group_size=group_size)
    if rule == "random":
        return select_random(regrets, keep, group_size=group_size, rng=rng)
    raise ValueError(f"selection must be one of {SELECTIONS}, got {rule!r}")

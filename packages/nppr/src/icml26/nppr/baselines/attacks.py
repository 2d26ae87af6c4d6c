"""Adversarial robustness (AR) by the Adversarial Robustness Toolbox: PGD and an ensemble of
APGD and Square (``apgd_square``), which is *not* RobustBench's AutoAttack.

An input is adversarially robust at budget ``eps`` when the classifier is right on it and no
attack finds a label-changing point in the L-inf ball; AR is the fraction of such inputs, an
*upper* estimate of the true worst-case accuracy (attacks can miss). ART runs on NumPy
arrays through a :class:`art.estimators.classification.PyTorchClassifier` wrapper.

The ensemble (:func:`apgd_square_ar`) chains three ART attacks, each run only on the inputs
every earlier one failed on (Croce & Hein's sequencing): APGD-CE (untargeted, one random
start, ``apgd_iters`` iterations), APGD-DLR targeted at the ``n_targets`` highest-scoring
wrong classes (``apgd_iters`` each), then Square (``square_queries`` queries, one restart).
RobustBench's standard AutoAttack is APGD-CE, APGD-T (9 targets), FAB-T and Square (5,000
queries); its ``autoattack`` package is not on PyPI, and ART's ``AutoAttack`` class defaults
to APGD-CE, APGD-DLR, DeepFool and Square and has no FAB-T (it also needs the undeclared
``multiprocess`` package). So our figures are keyed ``ar.apgd_square``, never
``autoattack``, and cannot be set beside RobustBench's: fewer targets, fewer Square queries
and no FAB-T make it a weaker (higher) upper estimate of the worst-case accuracy.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any

import numpy as np
import torch
from torch import nn

from icml26.nppr.montecarlo import Data, iter_batches, model_device
from icml26.nppr.stats import Estimate, estimate_from_rates
from icml26.nppr.validation import check_eval_inputs

__all__ = [
    "apgd_square_ar",
    "apgd_square_parts",
    "art_classifier",
    "clean_accuracy",
    "pgd_ar",
    "square_image_shape",
]

# ART logs every attack start at INFO and shows tqdm bars: keep the run's own log readable.
logging.getLogger("art").setLevel(logging.WARNING)


class _CountingModel(nn.Module):
    """Counts forward passes (inputs, not batches) through the wrapped classifier."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model
        self.count = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.count += int(x.shape[0])
        return self.model(x)


def art_classifier(
    model: nn.Module,
    input_shape: tuple[int, ...],
    n_classes: int,
    clip: tuple[float, float] = (0.0, 1.0),
) -> Any:
    """An ART ``PyTorchClassifier`` over ``model`` (logits out, cross-entropy loss).

    Args:
        model: the classifier.
        input_shape: per-input shape.
        n_classes: the number of labels.
        clip: the input range.

    Returns:
        ``art.estimators.classification.PyTorchClassifier``.
    """
    from art.estimators.classification import PyTorchClassifier

    device = model_device(model)
    return PyTorchClassifier(
        model=model,
        loss=nn.CrossEntropyLoss(),
        input_shape=input_shape,
        nb_classes=n_classes,
        clip_values=clip,
        device_type="gpu" if device.type == "cuda" else "cpu",
    )


#: The smallest image side ART's Square attack handles at ``p_init = 0.8`` (its first patch,
#: ``round(sqrt(0.8) * side)`` pixels wide, must be narrower than the image).
_MIN_SQUARE_SIDE = 5


def square_image_shape(shape: tuple[int, ...]) -> tuple[int, int, int]:
    """The ``(C, H, W)`` layout ART's Square attack is run in for inputs of per-sample ``shape``.

    Images keep theirs. A signal (e.g. MNIST-1D, 40 values) is laid out as one square channel
    of side ``max(ceil(sqrt(n)), 5)``, zero-padded (40 -> 7 x 7): Square's patches then cover
    scattered coordinates, still a valid L-inf search since the ball is a box, and the padding
    is cut off before the model sees the input.

    Args:
        shape: the per-sample shape.

    Returns:
        ``(C, H, W)``.
    """
    if len(shape) == 3:
        return (int(shape[0]), int(shape[1]), int(shape[2]))
    side = max(math.isqrt(math.prod(shape) - 1) + 1, _MIN_SQUARE_SIDE)
    return (1, side, side)


class _FromSquare(nn.Module):
    """``model`` fed square-laid-out inputs: the padding is cut, the rest reshaped back."""

    def __init__(self, model: nn.Module, shape: tuple[int, ...]) -> None:
        super().__init__()
        self.model, self.shape, self.n = model, shape, math.prod(shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x.reshape(x.shape[0], -1)[:, : self.n].reshape(x.shape[0], *self.shape))


def _to_square(x: np.ndarray, image: tuple[int, int, int]) -> np.ndarray:
    flat = x.reshape(len(x), -1)
    pad = np.zeros((len(x), math.prod(image) - flat.shape[1]), dtype=x.dtype)
    return np.concatenate([flat, pad], axis=1).reshape(len(x), *image)


@torch.no_grad()
def _predict(model: nn.Module, x: torch.Tensor, batch: int = 1024) -> torch.Tensor:
    device = model_device(model)
    return torch.cat(
        [model(x[i : i + batch].to(device)).argmax(-1).cpu() for i in range(0, len(x), batch)]
    )


def _stack(data: Data) -> tuple[torch.Tensor, torch.Tensor]:
    """All inputs of ``data`` as CPU tensors (ART attacks run on arrays)."""
    pairs = list(iter_batches(data, 4096))
    if not pairs:
        raise ValueError("the data holds no input")
    return torch.cat([x.cpu() for x, _ in pairs]), torch.cat([y.cpu() for _, y in pairs])


def clean_accuracy(model: nn.Module, data: Data, *, level: float = 0.95) -> Estimate:
    """Accuracy on unperturbed inputs.

    Args:
        model: the classifier (eval mode).
        data: a ``DataLoader`` of ``(x, y)`` batches or a pair of tensors.
        level: the interval's confidence.

    Returns:
        An :class:`~icml26.nppr.stats.Estimate` (0/1 per input; ``rates`` is the
        clean-correct mask).
    """
    x, y = _stack(data)
    check_eval_inputs(model, x, y, 1.0)
    t0 = time.perf_counter()
    ok = (_predict(model, x) == y.cpu()).double().numpy()
    return estimate_from_rates(
        ok, 1, level=level, forward_passes=len(y), seconds=time.perf_counter() - t0
    )


def _robust_after(
    model: nn.Module, x_adv: np.ndarray, y: torch.Tensor, x: torch.Tensor, eps: float
) -> np.ndarray:
    xa = torch.as_tensor(x_adv, dtype=x.dtype)
    if float((xa - x.cpu()).abs().max()) > eps * (1 + 1e-4) + 1e-6:
        raise RuntimeError("an ART attack left the eps-ball; refusing to report AR from it")
    return (_predict(model, xa) == y.cpu()).numpy()


def pgd_ar(
    model: nn.Module,
    data: Data,
    eps: float,
    *,
    steps: int = 20,
    step_size: float | None = None,
    restarts: int = 1,
    batch_size: int = 256,
    level: float = 0.95,
    clip: tuple[float, float] = (0.0, 1.0),
    seed: int = 0,
) -> Estimate:
    """AR under L-inf PGD (ART ``ProjectedGradientDescent``).

    Args:
        model: the classifier (eval mode).
        data: a ``DataLoader`` or ``(x, y)`` (stacked: ART runs on arrays).
        eps: the L-inf budget.
        steps: signed-gradient steps.
        step_size: their size (default ``2.5 eps / steps``).
        restarts: random starts (an input counts as broken if any breaks it).
        batch_size: ART's batch size.
        level: the interval's confidence.
        clip: the input range.
        seed: seeds ART's random starts (NumPy's global generator).

    Returns:
        An :class:`~icml26.nppr.stats.Estimate` (0/1 robust per input).
    """
    from art.attacks.evasion import ProjectedGradientDescent

    x, y = _stack(data)
    n_classes = check_eval_inputs(model, x, y, eps, clip)
    counter = _CountingModel(model).eval()
    clf = art_classifier(counter, tuple(x.shape[1:]), n_classes, clip)
    attack = ProjectedGradientDescent(
        clf,
        norm=np.inf,
        eps=eps,
        eps_step=step_size if step_size is not None else 2.5 * eps / steps,
        max_iter=steps,
        num_random_init=restarts,
        batch_size=batch_size,
        verbose=False,
    )
    t0 = time.perf_counter()
    np.random.seed(seed % 2**32)  # noqa: NPY002 - ART draws its random starts from NumPy's global generator
    x_adv = attack.generate(x=x.cpu().numpy(), y=y.cpu().numpy())
    robust = _robust_after(model, x_adv, y, x, eps) & (_predict(model, x) == y.cpu()).numpy()
    return estimate_from_rates(
        robust.astype(np.float64),
        1,
        level=level,
        forward_passes=counter.count,
        seconds=time.perf_counter() - t0,
    )


def apgd_square_parts(apgd_iters: int, n_targets: int, square_queries: int) -> str:
    """The ensemble's composition in words, for a README or a log.

    Args:
        apgd_iters: APGD iterations per run.
        n_targets: APGD-DLR targets.
        square_queries: Square's queries.

    Returns:
        E.g. ``"APGD-CE (50 it.) -> APGD-DLR-T x2 (50 it.) -> Square (500 q.), ART"``.
    """
    return (
        f"APGD-CE ({apgd_iters} it.) -> APGD-DLR-T x{n_targets} ({apgd_iters} it.) -> "
        f"Square ({square_queries} q.), ART; 1 restart each"
    )


class _Ensemble:
    """The ensemble's state: adversarial inputs so far and which inputs are still robust;
    each stage attacks only the still-robust inputs."""

    def __init__(
        self,
        model: nn.Module,
        clf: Any,
        x: torch.Tensor,
        y: torch.Tensor,
        robust: np.ndarray,
        eps: float,
        apgd_iters: int,
        batch_size: int,
    ) -> None:
        self.model, self.clf, self.x, self.y, self.robust = model, clf, x, y, robust
        self.xn, self.yn = x.cpu().numpy(), y.cpu().numpy()
        self.x_adv = self.xn.copy()
        self.eps, self.apgd_iters, self.batch_size = eps, apgd_iters, batch_size

    def _update(self, idx: np.ndarray, found: np.ndarray) -> None:
        self.x_adv[idx] = found
        self.robust[idx] = _robust_after(self.model, found, self.y[idx], self.x[idx], self.eps)

    def apgd(self, loss: str, targets: np.ndarray | None) -> None:
        """APGD with ``loss``, untargeted (``targets`` None) or at one target per input."""
        from art.attacks.evasion import AutoProjectedGradientDescent

        idx = np.flatnonzero(self.robust)
        if not idx.size:
            return
        attack = AutoProjectedGradientDescent(
            self.clf,
            norm=np.inf,
            eps=self.eps,
            eps_step=2 * self.eps,
            max_iter=self.apgd_iters,
            targeted=targets is not None,
            nb_random_init=1,
            batch_size=self.batch_size,
            loss_type=loss,
            verbose=False,
        )
        labels = self.yn[idx] if targets is None else targets[idx]
        self._update(idx, attack.generate(x=self.xn[idx], y=labels))

    def square(
        self, counter: nn.Module, n_classes: int, clip: tuple[float, float], queries: int
    ) -> None:
        """Square on the still-robust inputs (signals laid out as a padded square image)."""
        from art.attacks.evasion import SquareAttack

        idx = np.flatnonzero(self.robust)
        if not idx.size:
            return
        shape = tuple(self.x.shape[1:])
        image = square_image_shape(shape)
        clf = (
            self.clf
            if image == shape
            else art_classifier(_FromSquare(counter, shape), image, n_classes, clip)
        )
        attack = SquareAttack(
            clf,
            norm=np.inf,
            eps=self.eps,
            max_iter=queries,
            p_init=0.8,
            nb_restarts=1,
            batch_size=self.batch_size,
            verbose=False,
        )
        found = attack.generate(x=_to_square(self.xn[idx], image), y=self.yn[idx])
        flat = found.reshape(idx.size, -1)[:, : math.prod(shape)]
        self._update(idx, flat.reshape(idx.size, *shape))


def _top_wrong_classes(model: nn.Module, x: torch.Tensor, y: torch.Tensor, n: int) -> np.ndarray:
    """The ``n`` highest-scoring wrong classes of each input by its clean logits, ``[N, n]``."""
    with torch.no_grad():
        logits = torch.cat(
            [model(x[i : i + 1024].to(model_device(model))).cpu() for i in range(0, len(x), 1024)]
        )
    logits[torch.arange(len(y)), y.cpu()] = -float("inf")
    return logits.argsort(-1, descending=True)[:, :n].numpy()


def apgd_square_ar(
    model: nn.Module,
    data: Data,
    eps: float,
    *,
    apgd_iters: int = 100,
    n_targets: int = 3,
    square_queries: int = 1000,
    batch_size: int = 256,
    level: float = 0.95,
    clip: tuple[float, float] = (0.0, 1.0),
    seed: int = 0,
) -> Estimate:
    """AR under the APGD + Square ensemble (see the module docstring), via ART.

    Args:
        model: the classifier (eval mode).
        data: a ``DataLoader`` or ``(x, y)`` (stacked: ART runs on arrays).
        eps: the L-inf budget.
        apgd_iters: APGD iterations (per target for the targeted runs).
        n_targets: APGD-DLR targets (the highest-scoring wrong classes; needs >= 4 classes).
        square_queries: Square's query budget (0: no Square).
        batch_size: ART's batch size.
        level: the interval's confidence.
        clip: the input range.
        seed: seeds ART's random starts.

    Returns:
        An :class:`~icml26.nppr.stats.Estimate` (0/1 robust per input).
    """
    x, y = _stack(data)
    n_classes = check_eval_inputs(model, x, y, eps, clip)
    counter = _CountingModel(model).eval()
    clf = art_classifier(counter, tuple(x.shape[1:]), n_classes, clip)
    np.random.seed(seed % 2**32)  # noqa: NPY002 - ART's random starts use NumPy's global generator
    t0 = time.perf_counter()
    robust = (_predict(model, x) == y.cpu()).numpy()
    run = _Ensemble(model, clf, x, y, robust, eps, apgd_iters, batch_size)
    run.apgd("cross_entropy", None)  # 1) APGD-CE, untargeted, on the clean-correct inputs
    if n_targets > 0 and n_classes >= 4:  # 2) APGD-DLR at the top wrong classes (clean logits)
        targets = _top_wrong_classes(model, x, y, min(n_targets, n_classes - 1))
        for t in range(targets.shape[1]):
            run.apgd("difference_logits_ratio", targets[:, t])
    if square_queries > 0:  # 3) Square (score-based, no gradients) on what is left
        run.square(counter, n_classes, clip, square_queries)
    return estimate_from_rates(
        robust.astype(np.float64),
        1,
        level=level,
        forward_passes=counter.count,
        seconds=time.perf_counter() - t0,
    )

"""Ablations of ECO's setting: what separates our round-to-nearest runs from near-lossless.

Each ablation changes one thing of the paper's setting (the defaults) and names it:

* the learning-rate schedule: ``no_decay`` (constant after warm-up; the theorem needs a
  decaying rate) and ``decay_to_zero`` (cosine all the way to 0 instead of to 10% of peak);
* the error rule: ``error_buffer`` (exact error feedback with an FP32 buffer of ``e``: what
  the memory-free approximation ``e_{t-1} ≈ e_t`` costs, at master-weight memory) and
  ``scale_at_injection`` (the injection scaled by the current step's rate and bias correction,
  the paper's constant-rate formula, instead of those of the step that replays it);
* which parameters are stored quantized: ``quantize_all`` (norms, biases, embeddings and the
  MoE router too; by default they stay float32, as FP8 training recipes keep them);
* the order of scale update, quantization and injection: ``delayed_scale`` (quantize on the
  previous iterate's scale) and ``inject_then_rescale`` (inject the error on the old scale,
  then rescale: the second rounding is lost);
* the scale granularity: ``per_group`` (16 elements per scale) and ``per_tensor``;
* the momentum coefficient that carries the injected error: ``beta1_080``, ``beta1_095``;
* the number of steps: ``steps_x4``.

An ablation that changes the optimisation itself (schedule, granularity, momentum, steps,
which parameters are quantized) changes the master-weight baseline too: ECO's gap is then taken to master weights trained
with the same change (``affects_master``). :func:`ablated_spec` returns ``None`` for an
ablation that is the default of a format (``per_tensor`` for FP8, ``per_group`` for INT4).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from icml26.eco.config import ABLATIONS
from icml26.eco.train import TrainSpec

__all__ = ["ABLATIONS", "AblatedSpec", "ablated_spec"]


_GROUP = 16


@dataclass(frozen=True)
class AblatedSpec:
    """ECO's training settings under an ablation, and the master-weight baseline's.

    Attributes:
        eco: ECO's settings.
        master: the master-weight baseline's settings.
        affects_master: the baseline must be retrained under ``master``.
    """

    eco: TrainSpec
    master: TrainSpec
    affects_master: bool  # the baseline must be retrained under ``master``


def ablated_spec(name: str, base: TrainSpec, fmt: str) -> AblatedSpec | None:
    """``base`` (the paper's setting) with ablation ``name`` applied for format ``fmt``.

    Args:
        name: an ablation of :data:`ABLATIONS`.
        base: the default settings.
        fmt: ``"fp8"`` or ``"int4"``.

    Returns:
        The ablated settings, or ``None`` when the ablation is ``base`` itself for this format.

    Raises:
        ValueError: an unknown ablation or format.
    """
    if name not in ABLATIONS:
        raise ValueError(f"unknown ablation {name!r}; known: {', '.join(ABLATIONS)}")
    if fmt not in ("fp8", "int4"):
        raise ValueError(f"format must be 'fp8' or 'int4', got {fmt!r}")
    options: tuple[tuple[str, object], ...] = ()
    spec = base
    if name == "no_decay":
        spec = replace(base, min_lr_frac=1.0)
    elif name == "decay_to_zero":
        spec = replace(base, min_lr_frac=0.0)
    elif name == "steps_x4":
        spec = replace(base, steps=4 * base.steps)
    elif name.startswith("beta1_"):
        spec = replace(base, betas=(int(name.removeprefix("beta1_")) / 100, base.betas[1]))
    elif name in ("per_group", "per_tensor"):
        group = _GROUP if name == "per_group" else None
        if fmt == "fp8":
            spec = replace(base, fp8_group_size=group)
        else:
            spec = replace(base, int4_group_size=group)
    elif name == "error_buffer":
        options = (("error_buffer", True),)
    elif name == "scale_at_injection":
        options = (("injection_scale", "injection"),)
    elif name == "quantize_all":
        spec = replace(base, quantize_all=True)
    else:  # delayed_scale, inject_then_rescale
        order = "delayed" if name == "delayed_scale" else "inject_then_rescale"
        options = (("scale_order", order),)
    if spec == base and not options:
        return None
    return AblatedSpec(replace(spec, eco_options=options), spec, affects_master=spec != base)

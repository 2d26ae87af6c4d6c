"""Quantized weight storage: FP8 (e4m3) and INT4 with per-tensor or per-group scales.

A weight tensor ``x`` is stored as ``(data, scale)``:

* ``data`` is ``uint8``: for FP8 the raw bytes of a ``torch.float8_e4m3fn`` tensor (kept as
  ``uint8`` so that ``Optimizer.load_state_dict`` never casts it), for INT4 two 4-bit codes
  packed per byte (low nibble first), the codes being ``c + 8`` for ``c`` in ``[-8, 7]``;
* ``scale`` is ``float32``, one per group of ``group_size`` consecutive elements of the last
  dimension (or one for the whole tensor when ``group_size`` is ``None``), chosen as
  ``amax(|x_group|) / qmax`` so the largest element maps onto the largest code
  (``qmax = 448`` for e4m3, ``7`` for INT4). ``x ≈ scale * code``.

Rounding is round-to-nearest (``"rtn"``, ties to even) or stochastic (``"sr"``): a value
between two neighbouring grid points ``lo < y < hi`` becomes ``hi`` with probability
``(y - lo) / (hi - lo)``, so ``E[q(y)] = y`` (unbiased). On the CPU float8 has casts and
storage but no elementwise arithmetic, so every computation here runs in float32 and only
the final, exactly representable grid value is cast to float8.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Literal, NamedTuple

import torch

__all__ = [
    "FP8_MAX",
    "INT4_MAX",
    "QTensor",
    "QuantFormat",
    "fp8_grid_step",
    "fp8_table",
    "stochastic_round_fp8",
]

FP8_MAX = 448.0  # largest finite float8_e4m3fn
FP8_MIN_NORMAL_EXP = -6  # smallest normal exponent of e4m3; subnormal spacing 2**-9
FP8_MANTISSA_BITS = 3
INT4_MAX = 7  # symmetric scale maps amax onto 7; codes span [-8, 7]
INT4_MIN = -8

Kind = Literal["fp8", "int4"]
Rounding = Literal["rtn", "sr"]


class QTensor(NamedTuple):
    """A quantized tensor: packed ``uint8`` codes, ``float32`` scales, the original shape."""

    data: torch.Tensor
    scale: torch.Tensor
    shape: torch.Size

    @property
    def nbytes(self) -> int:
        """Bytes of the codes and scales."""
        return self.data.nbytes + self.scale.nbytes


def fp8_grid_step(y: torch.Tensor) -> torch.Tensor:
    """Spacing of the e4m3 grid at float32 ``y``: ``2**(max(floor(log2|y|), -6) - 3)``
    (``2**-9``, the subnormal spacing, at 0).

    Read from the float32 exponent bits (``floor(log2|y|) = E - 127``): a handful of integer
    ops instead of ``frexp``/``ldexp``, which are several times slower on the CPU."""
    if y.dtype != torch.float32:
        raise TypeError(f"fp8_grid_step takes float32, got {y.dtype}")
    biased = (y.view(torch.int32) >> 23) & 0xFF
    floor = FP8_MIN_NORMAL_EXP + 127
    return ((biased.clamp_(min=floor) - FP8_MANTISSA_BITS) << 23).view(torch.float32)


def stochastic_round_fp8(y: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """Stochastically round float32 ``y`` (``|y| <= 448``) onto the e4m3 grid, given ``u ~ U[0,1)``.

    All steps are exact in float32: ``y / step`` is a power-of-two division, ``floor`` is exact
    and the two neighbours ``lo`` and ``lo + step`` are e4m3 numbers (normal or subnormal).
    """
    step = fp8_grid_step(y)
    scaled = y / step
    lo = torch.floor(scaled)
    up = (u < (scaled - lo)).to(y.dtype)
    return (lo + up) * step


@dataclass(frozen=True)
class QuantFormat:
    """A weight format: ``kind`` (``"fp8"`` e4m3 or ``"int4"``), ``group_size``, ``rounding``.

    Args:
        kind: ``"fp8"`` (float8 e4m3, 1 byte per weight) or ``"int4"`` (½ byte per weight).
        group_size: elements of the last dimension sharing one scale; ``None`` means one scale
            per tensor. Must divide the last dimension of every tensor it quantizes.
        rounding: ``"rtn"`` (round to nearest) or ``"sr"`` (stochastic rounding).
    """

    kind: Kind = "fp8"
    group_size: int | None = None
    rounding: Rounding = "rtn"

    def __post_init__(self) -> None:
        if self.kind not in ("fp8", "int4"):
            raise ValueError(f"unsupported weight format {self.kind!r}; use 'fp8' or 'int4'")
        if self.rounding not in ("rtn", "sr"):
            raise ValueError(f"rounding must be 'rtn' or 'sr', got {self.rounding!r}")
        if self.group_size is not None and (
            isinstance(self.group_size, bool)
            or not isinstance(self.group_size, int)
            or self.group_size < 1
        ):
            raise ValueError(
                f"group_size must be a positive integer or None, got {self.group_size!r}"
            )
        if self.kind == "int4" and self.group_size is not None and self.group_size % 2:
            raise ValueError(
                f"int4 packs two codes per byte: group_size must be even, got {self.group_size}"
            )

    @property
    def qmax(self) -> float:
        """The largest code magnitude a scale maps ``amax`` onto (448 for e4m3, 7 for INT4)."""
        return FP8_MAX if self.kind == "fp8" else float(INT4_MAX)

    @property
    def bits(self) -> int:
        """Bits per stored code (8 or 4)."""
        return 8 if self.kind == "fp8" else 4

    def describe(self) -> str:
        """A short label, e.g. ``"int4 (group 16, rtn)"``.

        Returns:
            The label.
        """
        groups = "per-tensor" if self.group_size is None else f"group {self.group_size}"
        return f"{self.kind} ({groups}, {self.rounding})"

    # -- grouping ----------------------------------------------------------------------------
    def _groups(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` as a float32 ``(n_groups, group)`` matrix (validating the group size)."""
        if self.group_size is None:
            return x.reshape(1, -1).float()
        last = x.shape[-1] if x.dim() > 0 else 1
        if last % self.group_size:
            raise ValueError(
                f"group_size {self.group_size} does not divide the last dimension {last} of a "
                f"tensor of shape {tuple(x.shape)}; choose a divisor or group_size=None"
            )
        return x.reshape(-1, self.group_size).float()

    def check(self, shape: torch.Size | tuple[int, ...]) -> None:
        """Check that a tensor of ``shape`` can be stored in this format.

        Args:
            shape: the tensor's shape.

        Raises:
            ValueError: ``group_size`` does not divide the last dimension.
        """
        self._groups(torch.empty(shape, device="meta"))

    # -- quantize / dequantize ---------------------------------------------------------------
    def quantize(
        self,
        x: torch.Tensor,
        *,
        generator: torch.Generator | None = None,
        check_finite: bool = True,
        scale: torch.Tensor | None = None,
    ) -> QTensor:
        """Quantize ``x`` (any float dtype). ``generator`` drives stochastic rounding.

        Args:
            x: the tensor; its last dimension must be a multiple of ``group_size``.
            generator: the random stream of stochastic rounding (``rounding="sr"``).
            check_finite: refuse NaN/inf (read from the group maxima, which any NaN or
                infinity reaches: one host sync on ``n_groups`` values). The optimizers pass
                ``False``: they check every gradient once per step.
            scale: one float32 per group replacing ``amax / qmax``; values beyond
                ``qmax * scale`` are clipped (the scale-order ablations of the optimizer).

        Returns:
            The codes and scales (:class:`QTensor`).

        Raises:
            TypeError: ``x`` is not floating point.
            ValueError: a group size that does not divide the last dimension, NaN/inf in ``x``
                (with ``check_finite``), or a ``scale`` of the wrong length.
        """
        if not x.is_floating_point():
            raise TypeError(f"can only quantize floating-point tensors, got {x.dtype}")
        groups = self._groups(x)
        if scale is None:
            scale = self.scale_of(groups, check_finite=check_finite)
            # |x / (amax / qmax)| <= qmax up to one float32 rounding, which both encodings
            # round back onto qmax: no clamp needed
            y = groups / scale
        else:
            if scale.numel() != groups.shape[0]:
                raise ValueError(
                    f"scale has {scale.numel()} values; this tensor has {groups.shape[0]} groups"
                )
            scale = scale.reshape(-1, 1).float()
            y = (groups / scale).clamp_(-self.qmax, self.qmax)
        data = self.encode(y, generator=generator)
        return QTensor(data, scale.reshape(-1).contiguous(), torch.Size(x.shape))

    def encode(
        self,
        y: torch.Tensor,
        *,
        generator: torch.Generator | None = None,
        noise: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The ``uint8`` codes (flat) of float32 values ``y`` already divided by their scale.

        ``|y|`` must not exceed ``qmax`` by more than a float32 rounding. Stochastic rounding
        draws ``U[0, 1)`` noise of ``y``'s size from ``generator`` unless ``noise`` is given.

        Args:
            y: float32 values on the code scale.
            generator: the random stream of stochastic rounding.
            noise: ``U[0, 1)`` draws of ``y``'s size (stochastic rounding), instead of drawing.

        Returns:
            Flat ``uint8`` codes (e4m3 bytes, or two INT4 codes per byte).
        """
        if self.rounding == "sr" and noise is None:
            noise = torch.rand(y.shape, generator=generator, device=y.device, dtype=torch.float32)
        if self.kind == "fp8":
            grid = y if self.rounding == "rtn" else stochastic_round_fp8(y, noise.view_as(y))  # type: ignore[union-attr]
            return grid.to(torch.float8_e4m3fn).view(torch.uint8).reshape(-1)
        if self.rounding == "sr":
            lo = torch.floor(y)
            codes = lo.add_((noise.view_as(y) < (y - lo)).to(y.dtype))  # type: ignore[union-attr]
        else:
            codes = torch.round(y)
        codes = torch.clamp(codes, INT4_MIN, INT4_MAX).to(torch.int16) + 8
        return _pack_nibbles(codes.reshape(-1).to(torch.uint8))

    def grid_values(self, data: torch.Tensor, numel: int) -> torch.Tensor:
        """The float32 code values of ``data`` (flat, not yet multiplied by the scales).

        Args:
            data: stored ``uint8`` codes.
            numel: the number of values (INT4 packs two per byte).

        Returns:
            A flat float32 tensor of ``numel`` code values.
        """
        if self.kind == "fp8":
            return _fp8_values(data)
        return _int4_values(data, numel)

    def scale_of(self, groups: torch.Tensor, *, check_finite: bool = True) -> torch.Tensor:
        """``amax / qmax`` per row of ``groups`` (``(n_groups, 1)``; 1 for an all-zero group).

        One row (a per-tensor scale) is reduced as a whole tensor: on the CPU a full
        ``aminmax`` is several times faster than ``aminmax`` along a single long row (the
        same maximum, exactly).

        Args:
            groups: a float32 ``(n_groups, group)`` matrix.
            check_finite: raise on NaN/inf.

        Returns:
            The scales, ``(n_groups, 1)``.

        Raises:
            ValueError: NaN/inf in ``groups`` (with ``check_finite``).
        """
        if groups.shape[0] == 1:
            lo, hi = (t.reshape(1, 1) for t in torch.aminmax(groups))
        else:
            lo, hi = torch.aminmax(groups, dim=1, keepdim=True)  # no |x| temporary
        return self.scale_from_extremes(hi, lo, check_finite=check_finite)

    def scale_from_extremes(
        self, hi: torch.Tensor, lo: torch.Tensor, *, check_finite: bool = False
    ) -> torch.Tensor:
        """``amax / qmax`` from each group's maximum ``hi`` and minimum ``lo``.

        Args:
            hi: each group's maximum.
            lo: each group's minimum.
            check_finite: raise on NaN/inf.

        Returns:
            The scales (1 for an all-zero group), shaped as ``hi``.

        Raises:
            ValueError: NaN/inf (with ``check_finite``).
        """
        amax = torch.maximum(hi, lo.neg())
        if check_finite and not bool(torch.isfinite(amax).all()):
            raise ValueError("cannot quantize a tensor holding NaN or infinity")
        # A tensor divisor, not the Python float: CUDA divides by a host scalar as a product
        # with its reciprocal, which differs from the CPU's quotient in the last bit (seen on
        # an H200); an elementwise quotient is the IEEE one on both.
        qmax = torch.full_like(amax, self.qmax)
        return torch.where(amax > 0, amax / qmax, torch.ones_like(amax))

    def scale_for(self, x: torch.Tensor) -> torch.Tensor:
        """The scales :meth:`quantize` would choose for ``x``.

        Args:
            x: a float tensor.

        Returns:
            Flat float32 scales, one per group.
        """
        return self.scale_of(self._groups(x), check_finite=False).reshape(-1)

    def n_groups(self, shape: torch.Size | tuple[int, ...]) -> int:
        """How many scales a tensor of ``shape`` has.

        Args:
            shape: the tensor's shape.

        Returns:
            The number of groups (1 per tensor without ``group_size``).
        """
        numel = math.prod(shape)
        return 1 if self.group_size is None else numel // self.group_size

    def dequantize(self, q: QTensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """The float tensor ``scale * code`` of shape ``q.shape``.

        Args:
            q: codes and scales from :meth:`quantize`.
            dtype: the result's dtype.

        Returns:
            The dequantized tensor.
        """
        codes = self.grid_values(q.data, math.prod(q.shape))
        groups = codes.reshape(q.scale.numel(), -1).mul_(q.scale.reshape(-1, 1))
        return groups.reshape(q.shape).to(dtype)

    def roundtrip(
        self, x: torch.Tensor, *, generator: torch.Generator | None = None
    ) -> torch.Tensor:
        """``dequantize(quantize(x))`` in float32.

        Args:
            x: a float tensor.
            generator: the random stream of stochastic rounding.

        Returns:
            ``x`` rounded onto this format's grid.
        """
        return self.dequantize(self.quantize(x, generator=generator))

    def storage_bytes(self, shape: torch.Size | tuple[int, ...]) -> int:
        """Bytes ``quantize`` holds for a tensor of ``shape``.

        Args:
            shape: the tensor's shape.

        Returns:
            Code bytes plus 4 bytes per float32 scale.
        """
        numel = math.prod(shape)
        code_bytes = numel if self.kind == "fp8" else (numel + 1) // 2
        return code_bytes + 4 * self.n_groups(shape)


_FP8_TABLES: dict[torch.device, torch.Tensor] = {}


def _compiling() -> bool:
    """Whether torch.compile is tracing (without importing torch._dynamo, which takes seconds:
    nothing is compiled unless it was imported)."""
    return "torch._dynamo" in sys.modules and torch.compiler.is_compiling()


def fp8_table(device: torch.device | str = "cpu") -> torch.Tensor:
    """The float32 value of each of the 256 e4m3 bytes (NaN for the two NaN bytes), cached per
    device.

    Args:
        device: where the table lives.

    Returns:
        A ``(256,)`` float32 tensor: ``fp8_table()[b]`` is byte ``b`` read as e4m3.
    """
    device = torch.device(device)
    table = _FP8_TABLES.get(device)
    if table is None:
        codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
        table = codes.view(torch.float8_e4m3fn).float().to(device)
        _FP8_TABLES[device] = table
    return table


def _fp8_values(data: torch.Tensor) -> torch.Tensor:
    """The float32 values of e4m3 bytes, by a 256-entry table lookup.

    Equal to ``data.view(torch.float8_e4m3fn).float()`` (tested for every byte), but on the
    CPU the float8 cast is a scalar loop, about 5x slower than an ``index_select``."""
    if _compiling():  # traced: the cast fuses; a table would be a constant
        return data.reshape(-1).view(torch.float8_e4m3fn).float()
    return fp8_table(data.device).index_select(0, data.reshape(-1).to(torch.int32))


_INT4_TABLES: dict[torch.device, torch.Tensor] = {}


def _int4_values(data: torch.Tensor, numel: int) -> torch.Tensor:
    """The float32 codes (``-8 .. 7``) of packed INT4 bytes: one gather of a ``(256, 2)``
    table decodes both nibbles of a byte (the same values as unpacking them)."""
    if _compiling():
        return _unpack_nibbles(data, numel).float() - 8.0
    table = _INT4_TABLES.get(data.device)
    if table is None:
        byte = torch.arange(256)
        table = torch.stack([byte & 0x0F, byte >> 4], dim=1).float().sub_(8.0).to(data.device)
        _INT4_TABLES[data.device] = table
    pairs = table.index_select(0, data.reshape(-1).to(torch.int32))
    return pairs.reshape(-1)[:numel]


def _pack_nibbles(codes: torch.Tensor) -> torch.Tensor:
    """Pack ``uint8`` values in ``[0, 15]`` two per byte (low nibble = even index)."""
    if codes.numel() % 2:
        codes = torch.cat([codes, codes.new_zeros(1)])
    pairs = codes.reshape(-1, 2)
    return (pairs[:, 0] | (pairs[:, 1] << 4)).contiguous()


def _unpack_nibbles(packed: torch.Tensor, numel: int) -> torch.Tensor:
    lo = packed & 0x0F
    hi = packed >> 4
    return torch.stack([lo, hi], dim=1).reshape(-1)[:numel]

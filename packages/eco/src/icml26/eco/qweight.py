"""A weight whose only storage is its quantized codes and scales, and that still behaves as a
whole tensor (the torchao pattern: a wrapper tensor subclass).

:class:`QuantizedWeight` reports the logical shape and dtype of the weight it replaces and
holds ``codes`` (``uint8``) and ``scale`` (``float32``) in the layout of
:class:`~icml26.eco.quantize.QuantFormat`. Every operation that reads it (a matmul, an
embedding lookup, ``sum``, printing) sees the dequantized values; the dequantized copy exists
only for as long as that operation (or autograd, which saves it for the backward pass) needs
it. So the model is always whole to the outside:

* ``model(x)`` works on the real weights (no hook to attach);
* ``model.state_dict()`` returns dense tensors when the weight was installed by
  :func:`quantize_parameters` (it registers a state-dict hook on the owning modules), so
  ``torch.save(model.state_dict())`` and Hugging Face ``save_pretrained`` write real weights;
* pickling a :class:`QuantizedWeight` (``torch.save(model)``, ``torch.save(param)``) writes
  the dense tensor, so the file loads into a plain model, with ``weights_only=True`` too;
* ``load_state_dict`` / ``param.copy_(dense)`` and any other in-place op re-quantize the
  result into the same codes and scales (round-to-nearest);
* ``model.to(device)`` / ``.to(dtype)`` move the codes or change the logical dtype;
* ``torch.compile`` traces through it (``__tensor_flatten__``); nothing stored is a Python
  object the compiler cannot see.

A :class:`QuantizedWeight` handed to code that reads tensor storage directly (safetensors'
``save_file``, with ``state_dict(keep_vars=True)``) has no dense storage to give: use
:func:`dense_state_dict` or :meth:`QuantizedWeight.dequantize` there.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn

from icml26.eco.quantize import QTensor, QuantFormat

__all__ = ["QuantizedWeight", "dense_state_dict", "quantize_parameters"]

_aten = torch.ops.aten
_SHARE = {_aten.detach.default, _aten.alias.default}


class QuantizedWeight(torch.Tensor):
    """A tensor stored as quantized ``codes`` and ``scale`` that computes as its dense values.

    Build one with :meth:`from_dense`; as a model parameter, install it with
    :func:`quantize_parameters` (which :class:`~icml26.eco.optim.ECOAdamW` does when it is given
    the model).

    Attributes:
        codes: ``uint8`` codes (FP8 e4m3 bytes, or two INT4 codes per byte).
        scale: ``float32`` scales, one per group of ``fmt.group_size`` elements of the last
            dimension (one in all for a per-tensor scale).
        fmt: the format (kind, group size, rounding of in-place writes' re-quantization is
            always round-to-nearest).

    Args:
        codes: the ``codes`` attribute.
        scale: the ``scale`` attribute.
        fmt: the ``fmt`` attribute.
        shape: the dense tensor's shape.
        dtype: the dense tensor's dtype (what it computes as).
        requires_grad: whether autograd tracks it.
    """

    codes: torch.Tensor
    scale: torch.Tensor
    fmt: QuantFormat

    __torch_function__ = torch._C._disabled_torch_function_impl

    @staticmethod
    def __new__(
        cls,
        codes: torch.Tensor,
        scale: torch.Tensor,
        fmt: QuantFormat,
        shape: torch.Size | tuple[int, ...],
        dtype: torch.dtype,
        requires_grad: bool = False,
    ) -> QuantizedWeight:
        return torch.Tensor._make_wrapper_subclass(  # type: ignore[attr-defined,no-any-return]
            cls, shape, dtype=dtype, device=codes.device, requires_grad=requires_grad
        )

    def __init__(
        self,
        codes: torch.Tensor,
        scale: torch.Tensor,
        fmt: QuantFormat,
        shape: torch.Size | tuple[int, ...],
        dtype: torch.dtype,
        requires_grad: bool = False,
    ) -> None:
        self.codes = codes
        self.scale = scale
        self.fmt = fmt

    # -- construction and values --------------------------------------------------------------
    @classmethod
    def from_dense(
        cls,
        x: torch.Tensor,
        fmt: QuantFormat,
        *,
        generator: torch.Generator | None = None,
        requires_grad: bool = False,
    ) -> QuantizedWeight:
        """Quantize ``x`` into a new :class:`QuantizedWeight` of ``x``'s shape, dtype, device.

        Args:
            x: a dense floating-point tensor.
            fmt: the storage format.
            generator: drives stochastic rounding (``fmt.rounding == "sr"``).
            requires_grad: as for any tensor.

        Returns:
            The quantized weight.

        Raises:
            TypeError: ``x`` is not floating point.
            ValueError: ``x`` holds NaN/inf, or ``fmt.group_size`` does not divide its last
                dimension.
        """
        q = fmt.quantize(x.detach(), generator=generator)
        return cls(q.data, q.scale, fmt, x.shape, x.dtype, requires_grad)

    def qtensor(self) -> QTensor:
        """The codes and scales as a :class:`~icml26.eco.quantize.QTensor`."""
        return QTensor(self.codes, self.scale, torch.Size(self.shape))

    def dequantize(self, dtype: torch.dtype | None = None) -> torch.Tensor:
        """The dense values (a new plain tensor).

        Args:
            dtype: the result's dtype; the weight's own dtype by default.

        Returns:
            ``scale * code`` in the weight's shape.
        """
        return self.fmt.dequantize(self.qtensor(), dtype or self.dtype)

    def store_(self, x: torch.Tensor) -> QuantizedWeight:
        """Re-quantize ``x`` (round-to-nearest) into this weight's codes and scales, in place.

        Args:
            x: dense values of this weight's shape.

        Returns:
            ``self``.

        Raises:
            ValueError: a shape other than the weight's.
        """
        if tuple(x.shape) != tuple(self.shape):
            raise ValueError(
                f"cannot store a tensor of shape {tuple(x.shape)} in a quantized weight of "
                f"shape {tuple(self.shape)}"
            )
        rtn = QuantFormat(self.fmt.kind, self.fmt.group_size, "rtn")
        q = rtn.quantize(x.detach().to(self.codes.device))
        self.codes.copy_(q.data)
        self.scale.copy_(q.scale)
        return self

    @property
    def nbytes_stored(self) -> int:
        """Bytes actually held: codes plus scales."""
        return self.codes.nbytes + self.scale.nbytes

    def __repr__(self, *, tensor_contents: Any = None) -> str:  # type: ignore[override]
        return (
            f"QuantizedWeight({self.fmt.describe()}, shape={tuple(self.shape)}, "
            f"dtype={self.dtype}, values={self.dequantize()!r})"
        )

    # -- serialization and compilation --------------------------------------------------------
    def __reduce_ex__(self, protocol: Any) -> Any:
        """Pickle as the dense tensor (a parameter stays a parameter)."""
        dense = self.dequantize()
        if getattr(self, "_is_param", False):
            rebuild: Callable[..., Any] = torch._utils._rebuild_parameter  # type: ignore[attr-defined]
            return rebuild, (dense, self.requires_grad, OrderedDict())
        return dense.__reduce_ex__(protocol)

    def _stable_hash_for_caching(self) -> str:
        """What identifies this subclass's metadata for torch.compile's caches."""
        return f"QuantizedWeight:{self.fmt.kind}:{self.fmt.group_size}:{self.fmt.rounding}:{self.dtype}"

    def __tensor_flatten__(self) -> tuple[list[str], tuple[QuantFormat, torch.dtype]]:
        return ["codes", "scale"], (self.fmt, self.dtype)

    @staticmethod
    def __tensor_unflatten__(
        inner: dict[str, torch.Tensor],
        meta: tuple[QuantFormat, torch.dtype],
        outer_size: torch.Size,
        outer_stride: tuple[int, ...],
    ) -> QuantizedWeight:
        fmt, dtype = meta
        return QuantizedWeight(inner["codes"], inner["scale"], fmt, outer_size, dtype)

    # -- dispatch -----------------------------------------------------------------------------
    @classmethod
    def __torch_dispatch__(
        cls,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        special = _SPECIAL.get(func)
        if special is not None:
            out = special(func, args, kwargs)
            if out is not NotImplemented:
                return out
        return _dense_fallback(func, args, kwargs)


def _like(w: QuantizedWeight, codes: torch.Tensor, scale: torch.Tensor, **kw: Any) -> Any:
    return QuantizedWeight(codes, scale, w.fmt, kw.get("shape", w.shape), kw.get("dtype", w.dtype))


def _dense(t: Any) -> Any:
    """``t`` with every quantized weight in it (also inside lists) dequantized."""
    if isinstance(t, QuantizedWeight):
        return t.dequantize()
    if isinstance(t, list | tuple):
        return type(t)(_dense(a) for a in t)
    return t


_MUTATED: dict[Any, tuple[tuple[int, str, bool], ...]] = {}


def _mutated(func: Any) -> tuple[tuple[int, str, bool], ...]:
    """``(position, name, keyword-only)`` of each argument ``func`` writes to (cached)."""
    found = _MUTATED.get(func)
    if found is None:
        found = _MUTATED[func] = tuple(
            (i, arg.name, arg.kwarg_only)
            for i, arg in enumerate(func._schema.arguments)
            if arg.alias_info is not None and arg.alias_info.is_write
        )
    return found


def _dense_fallback(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run ``func`` on dense copies; write mutated quantized arguments back (re-quantized)."""
    dargs = tuple(_dense(a) for a in args)
    dkwargs = {k: _dense(v) for k, v in kwargs.items()}
    out = func(*dargs, **dkwargs)
    for i, name, kwarg_only in _mutated(func):
        if kwarg_only or i >= len(args):
            orig, dense = kwargs.get(name), dkwargs.get(name)
        else:
            orig, dense = args[i], dargs[i]
        if isinstance(orig, QuantizedWeight):
            with torch.no_grad():
                orig.store_(dense)
            if out is dense:
                out = orig
    return out


def _share(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    w = args[0]
    return _like(w, w.codes, w.scale)


def _clone(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    w = args[0]
    return _like(w, w.codes.clone(), w.scale.clone())


def _to_copy(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    w: QuantizedWeight = args[0]
    dtype = kwargs.get("dtype") or w.dtype
    device = kwargs.get("device") or w.codes.device
    if not dtype.is_floating_point or kwargs.get("layout") not in (None, torch.strided):
        return NotImplemented
    codes = w.codes.to(device=device, copy=True)
    scale = w.scale.to(device=device, copy=True)
    return _like(w, codes, scale, dtype=dtype)


def _copy_into(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    dst, src = args[0], args[1]
    if not isinstance(dst, QuantizedWeight):
        return NotImplemented  # a dense destination: the fallback dequantizes the source
    if isinstance(src, QuantizedWeight) and src.fmt == dst.fmt and src.shape == dst.shape:
        dst.codes.copy_(src.codes)
        dst.scale.copy_(src.scale)
        return dst
    return dst.store_(_dense(src).expand(dst.shape))


def _select(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``w[i]`` along the first dimension as a quantized view (no dequantized copy of the rest:
    an MoE's stacked experts are read one expert at a time)."""
    w, dim, index = args[0], args[1], args[2]
    if dim not in (0, -w.dim()) or w.dim() < 2:
        return NotImplemented
    n = w.shape[0]
    index = index + n if index < 0 else index
    inner = math.prod(w.shape[1:])
    packed = w.fmt.kind == "int4"
    if packed and inner % 2:
        return NotImplemented  # an expert would start inside a byte
    width = inner // 2 if packed else inner
    codes = w.codes.narrow(0, index * width, width)
    if w.fmt.group_size is None:
        scale = w.scale
    else:
        per = inner // w.fmt.group_size
        scale = w.scale.narrow(0, index * per, per)
    return _like(w, codes, scale, shape=w.shape[1:])


_SPECIAL: dict[Any, Callable[[Any, tuple[Any, ...], dict[str, Any]], Any]] = {
    _aten.detach.default: _share,
    _aten.alias.default: _share,
    _aten.clone.default: _clone,
    _aten._to_copy.default: _to_copy,
    _aten.copy_.default: _copy_into,
    _aten.select.int: _select,
}


# -- installing quantized weights in a model -----------------------------------------------------
def _owners(model: nn.Module) -> Iterator[tuple[nn.Module, str, str, nn.Parameter]]:
    for prefix, module in model.named_modules(remove_duplicate=True):
        for name, p in module._parameters.items():
            if p is not None:
                yield module, name, f"{prefix}.{name}" if prefix else name, p


def _dense_state_hook(
    module: nn.Module, state_dict: dict[str, Any], prefix: str, local_metadata: Any
) -> None:
    for name, p in module._parameters.items():
        key = prefix + name
        value = state_dict.get(key)
        # keep_vars=True returns the parameter itself: leave it (the caller asked for it)
        if isinstance(value, QuantizedWeight) and value is not p:
            state_dict[key] = value.dequantize()


def quantize_parameters(
    model: nn.Module,
    formats: dict[int, QuantFormat],
    *,
    generators: dict[int, torch.Generator] | None = None,
) -> dict[int, nn.Parameter]:
    """Replace parameters of ``model`` by :class:`QuantizedWeight` parameters, in place.

    Every module that owns a replaced parameter (tied weights: all of them) gets the new
    parameter and a state-dict hook, so ``model.state_dict()`` keeps returning dense tensors.
    Build anything that holds the old parameter objects (an optimizer, DDP, an EMA) after.

    Args:
        model: the model.
        formats: ``id(parameter)`` -> its storage format, for the parameters to replace.
        generators: ``id(parameter)`` -> the generator of its initial stochastic rounding.

    Returns:
        ``id(old parameter)`` -> the new parameter, for each replaced one.

    Raises:
        ValueError: a parameter in ``formats`` that ``model`` does not own, or one that
            cannot be quantized (NaN/inf, a group size that does not divide it), named.
    """
    new: dict[int, nn.Parameter] = {}
    for module, name, qualified, p in list(_owners(model)):
        fmt = formats.get(id(p))
        if fmt is None:
            continue
        if id(p) not in new:
            gen = (generators or {}).get(id(p))
            try:
                qw = QuantizedWeight.from_dense(p.detach(), fmt, generator=gen)
            except ValueError as err:
                raise ValueError(f"parameter {qualified!r}: {err}") from err
            new[id(p)] = nn.Parameter(qw, requires_grad=p.requires_grad)
        module._parameters[name] = new[id(p)]
        if not getattr(module, "_eco_dense_state_dict", False):
            module._register_state_dict_hook(_dense_state_hook)
            module._eco_dense_state_dict = True
    missing = set(formats) - set(new)
    if missing:
        raise ValueError(f"{len(missing)} parameter(s) to quantize are not owned by the model")
    return new


def dense_state_dict(model: nn.Module) -> dict[str, torch.Tensor]:
    """``model.state_dict()`` with every :class:`QuantizedWeight` dequantized.

    Args:
        model: any model.

    Returns:
        The state dict, dense.
    """
    return {k: _dense(v) for k, v in model.state_dict().items()}

"""Wrapping a trained ``nn.Module`` around its named last layer.

A Bayesian last layer needs two views of one network ``f(x) = W φ(x) + b``:

* the last-layer features ``φ̃(x) = [φ(x), 1]`` (the input of the named ``nn.Linear``, with a
  constant for its bias), which is all a standard BLL ever looks at;
* the parameters split into the *body* ``θ`` (every parameter before the last layer) and the
  *head* ``(W, b)``, so that :mod:`icml26.bll_ntk.jacobians` can differentiate the output with
  respect to ``θ`` with ``torch.func``.

:class:`LastLayerModel` provides both and checks that the named layer really is the network's
final operation (otherwise the features would not determine the output linearly).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import torch
from torch import nn

__all__ = ["LastLayerError", "LastLayerModel", "make_mlp"]


class LastLayerError(ValueError):
    """The named last layer is missing, is not ``nn.Linear``, or is not the final operation."""


def make_mlp(
    d_in: int,
    d_out: int,
    hidden: Sequence[int] = (50, 50),
    *,
    activation: str = "tanh",
    dropout: float = 0.0,
) -> nn.Sequential:
    """A fully connected network whose last layer is named ``head``.

    Args:
        d_in: input dimension.
        d_out: output dimension (1 for regression, C for classification / bandit arms).
        hidden: widths of the hidden layers (the last one is the feature width r).
        activation: ``"tanh"``, ``"relu"`` or ``"gelu"``.
        dropout: dropout probability after every hidden activation (MC dropout baseline).

    Returns:
        An ``nn.Sequential`` with layers ``fc0, act0, [drop0,] ..., head``.

    Raises:
        ValueError: an unknown activation, a non-positive size, or dropout outside [0, 1).
    """
    acts = {"tanh": nn.Tanh, "relu": nn.ReLU, "gelu": nn.GELU}
    if activation not in acts:
        raise ValueError(f"activation must be one of {sorted(acts)}, got {activation!r}")
    if d_in < 1 or d_out < 1 or not hidden or min(hidden) < 1:
        raise ValueError(f"bad MLP sizes: d_in={d_in}, d_out={d_out}, hidden={tuple(hidden)}")
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"dropout must be in [0, 1), got {dropout}")
    layers: list[tuple[str, nn.Module]] = []
    width = d_in
    for i, h in enumerate(hidden):
        layers.append((f"fc{i}", nn.Linear(width, h)))
        layers.append((f"act{i}", acts[activation]()))
        if dropout > 0:
            layers.append((f"drop{i}", nn.Dropout(dropout)))
        width = h
    layers.append(("head", nn.Linear(width, d_out)))
    return nn.Sequential(OrderedDict(layers))


class LastLayerModel:
    """A trained network seen through its last layer ``last_layer`` (an ``nn.Linear``).

    Args:
        model: any ``nn.Module`` mapping a batch ``(N, ...)`` to outputs ``(N, C)``.
        last_layer: the dotted name of the final ``nn.Linear`` (as in ``named_modules``).

    Raises:
        LastLayerError: no such submodule, or it is not an ``nn.Linear``.
    """

    def __init__(self, model: nn.Module, last_layer: str = "head") -> None:
        modules = dict(model.named_modules())
        if last_layer not in modules or last_layer == "":
            names = [n for n, m in modules.items() if isinstance(m, nn.Linear)]
            raise LastLayerError(
                f"no last layer named {last_layer!r} in {type(model).__name__}; "
                f"its nn.Linear layers are {names}"
            )
        head = modules[last_layer]
        if not isinstance(head, nn.Linear):
            raise LastLayerError(
                f"last layer {last_layer!r} is a {type(head).__name__}, not an nn.Linear"
            )
        self.model = model
        self.head = head
        self.last_layer = last_layer
        self.head_names = tuple(f"{last_layer}.{n}" for n, _ in head.named_parameters())
        self._checked = False
        self.input_shape: tuple[int, ...] | None = (
            None  # one example's shape, set by the first batch
        )

    @property
    def dtype(self) -> torch.dtype:
        """The floating dtype of the network's parameters (inputs are converted to it)."""
        return self.head.weight.dtype

    @property
    def device(self) -> torch.device:
        """The device of the network's parameters."""
        return self.head.weight.device

    def check_inputs(self, x: torch.Tensor, what: str = "inputs") -> torch.Tensor:
        """``x`` checked and moved to the network: a non-empty finite batch ``(N, ...)`` whose
        example shape matches earlier batches; floating inputs are cast to the network's dtype
        (a float64 array for a float32 network is converted, not an error).

        Raises:
            TypeError: ``x`` is not a tensor.
            ValueError: an empty batch, NaN/inf, or an example shape other than the first
                batch's (the message names both shapes).
        """
        if not isinstance(x, torch.Tensor):
            raise TypeError(
                f"{what} must be a torch.Tensor of shape (N, ...), got {type(x).__name__}; "
                "wrap arrays with torch.as_tensor(x)"
            )
        if x.ndim < 2 or x.shape[0] == 0:
            raise ValueError(
                f"{what} must be a non-empty batch of shape (N, features...), got shape "
                f"{tuple(x.shape)}; add the batch dimension with x[None] for one example"
            )
        shape = tuple(x.shape[1:])
        if self.input_shape is not None and shape != self.input_shape:
            raise ValueError(
                f"{what} have shape {tuple(x.shape)}, expected (N, "
                f"{', '.join(map(str, self.input_shape))}) like the data the posterior was fitted on"
            )
        if x.is_floating_point():
            if not torch.isfinite(x).all():
                raise ValueError(f"{what} contain NaN or inf")
            x = x.to(device=self.device, dtype=self.dtype)
        else:
            x = x.to(device=self.device)
        return x

    # -- sizes ----------------------------------------------------------------------------
    @property
    def n_outputs(self) -> int:
        """``C``, the last layer's output width."""
        return int(self.head.out_features)

    @property
    def feature_dim(self) -> int:
        """``d = r + 1`` when the head has a bias (the constant feature), else ``r``."""
        return int(self.head.in_features) + (1 if self.head.bias is not None else 0)

    def body_params(self) -> dict[str, torch.Tensor]:
        """The parameters before the last layer (``θ``), detached."""
        return {
            n: p.detach()
            for n, p in self.model.named_parameters()
            if n not in self.head_names and p.requires_grad
        }

    def head_params(self) -> dict[str, torch.Tensor]:
        """The last layer's parameters ``(W, b)``, detached."""
        return {n: p.detach() for n, p in self.model.named_parameters() if n in self.head_names}

    def head_vector(self) -> torch.Tensor:
        """``vec(W̃)`` with ``W̃ = [W, b]`` (C × d), output-major: entries ``c*d .. c*d+d-1``."""
        w = self.head.weight.detach()
        if self.head.bias is not None:
            w = torch.cat([w, self.head.bias.detach()[:, None]], dim=1)
        return w.reshape(-1)

    # -- features -------------------------------------------------------------------------
    @torch.no_grad()
    def features(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(φ̃(x), f(x))``: augmented last-layer features ``(N, d)`` and outputs ``(N, C)``.

        Raises:
            LastLayerError: the model's output is not the named layer's output (the layer is
                not the final operation, or is called more than once).
        """
        x = self.check_inputs(x)
        captured: list[torch.Tensor] = []

        def hook(_module: nn.Module, inputs: tuple[torch.Tensor, ...], _out: torch.Tensor) -> None:
            captured.append(inputs[0])

        handle = self.head.register_forward_hook(hook)
        try:
            out = self.model(x)
        except RuntimeError as exc:
            raise ValueError(
                f"{type(self.model).__name__} could not run on inputs of shape "
                f"{tuple(x.shape)} ({exc}); pass inputs shaped as in training"
            ) from exc
        finally:
            handle.remove()
        if self.input_shape is None:
            self.input_shape = tuple(x.shape[1:])
        if len(captured) != 1:
            raise LastLayerError(
                f"last layer {self.last_layer!r} ran {len(captured)} times in one forward pass"
            )
        phi = captured[0].reshape(x.shape[0], -1)
        if out.ndim == 1:
            out = out[:, None]
        if not self._checked:
            recon = self.head(phi)
            if recon.shape != out.shape or not torch.allclose(recon, out, atol=1e-5, rtol=1e-4):
                raise LastLayerError(
                    f"the output of {type(self.model).__name__} is not the output of its layer "
                    f"{self.last_layer!r}: a BLL needs the named layer to be the final operation"
                )
            self._checked = True
        if self.head.bias is not None:
            phi = torch.cat([phi, torch.ones_like(phi[:, :1])], dim=1)
        return phi, out

"""Small classifiers for [0, 1] images or signals: a CNN and a ResNet, 2-D or 1-D.

Both take raw inputs in [0, 1] (the robustness budget lives in that space) and return
logits. Saved as safetensors with the architecture in the metadata, so a run folder's
checkpoint rebuilds its model without the run's config.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import nn

from icml26.shared import atomic_path

__all__ = [
    "ARCHITECTURES",
    "ClassifierSpec",
    "build_classifier",
    "load_classifier",
    "load_user_model",
    "save_classifier",
]

ARCHITECTURES = ("cnn", "resnet")


@dataclass(frozen=True)
class ClassifierSpec:
    """What :func:`build_classifier` needs.

    Attributes:
        arch: ``cnn`` or ``resnet``.
        input_shape: ``(C, H, W)`` or ``(C, L)``.
        n_classes: the number of labels.
        width: the first layer's channels.

    Raises:
        ValueError: an unknown architecture or bad sizes.
    """

    arch: str
    input_shape: tuple[int, ...]
    n_classes: int
    width: int = 16

    def __post_init__(self) -> None:
        if self.arch not in ARCHITECTURES:
            raise ValueError(f"arch must be one of {ARCHITECTURES}, got {self.arch!r}")
        if len(self.input_shape) not in (2, 3):
            raise ValueError(f"input_shape must be (C, L) or (C, H, W), got {self.input_shape}")
        if self.n_classes < 2 or self.width < 1:
            raise ValueError("n_classes must be >= 2 and width >= 1")


def _ops(dims: int) -> tuple[type[nn.Module], type[nn.Module], type[nn.Module]]:
    if dims == 2:
        return nn.Conv2d, nn.BatchNorm2d, nn.AdaptiveAvgPool2d
    return nn.Conv1d, nn.BatchNorm1d, nn.AdaptiveAvgPool1d


class SmallCNN(nn.Module):
    """conv(w, 4x4, stride 2)-ReLU -> conv(2w, stride 2)-ReLU -> pool -> linear(4w) -> logits.

    Strided first layer: on two CPU cores a full-resolution first convolution costs more than
    the rest of the network, and MNIST needs no more than this to reach ~97%.
    """

    def __init__(self, spec: ClassifierSpec) -> None:
        super().__init__()
        dims = len(spec.input_shape) - 1
        conv, _, pool = _ops(dims)
        c, w = spec.input_shape[0], spec.width
        cells = 4 if dims == 2 else 8
        self.features = nn.Sequential(
            conv(c, w, 4, padding=1, stride=2),
            nn.ReLU(),
            conv(w, 2 * w, 3, padding=1, stride=2),
            nn.ReLU(),
            pool(cells),
            nn.Flatten(),
        )
        feat = 2 * w * cells**dims
        self.head = nn.Sequential(
            nn.Linear(feat, 4 * w), nn.ReLU(), nn.Linear(4 * w, spec.n_classes)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


class _Block(nn.Module):
    def __init__(self, dims: int, c_in: int, c_out: int, stride: int) -> None:
        super().__init__()
        conv, bn, _ = _ops(dims)
        self.body = nn.Sequential(
            conv(c_in, c_out, 3, stride=stride, padding=1, bias=False),
            bn(c_out),
            nn.ReLU(),
            conv(c_out, c_out, 3, padding=1, bias=False),
            bn(c_out),
        )
        self.skip: nn.Module = (
            nn.Identity()
            if stride == 1 and c_in == c_out
            else nn.Sequential(conv(c_in, c_out, 1, stride=stride, bias=False), bn(c_out))
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.body(x) + self.skip(x))


class SmallResNet(nn.Module):
    """A three-stage ResNet (one basic block per stage, widths w, 2w, 4w), ResNet18's shape
    at MNIST scale."""

    def __init__(self, spec: ClassifierSpec) -> None:
        super().__init__()
        dims = len(spec.input_shape) - 1
        conv, bn, pool = _ops(dims)
        c, w = spec.input_shape[0], spec.width
        self.stem = nn.Sequential(conv(c, w, 4, stride=2, padding=1, bias=False), bn(w), nn.ReLU())
        self.stages = nn.Sequential(
            _Block(dims, w, w, 1), _Block(dims, w, 2 * w, 2), _Block(dims, 2 * w, 4 * w, 2)
        )
        self.pool = nn.Sequential(pool(1), nn.Flatten())
        self.head = nn.Linear(4 * w, spec.n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.pool(self.stages(self.stem(x))))


def build_classifier(spec: ClassifierSpec) -> nn.Module:
    """A fresh classifier (``SmallCNN`` or ``SmallResNet``) carrying its spec as ``.spec``.

    Args:
        spec: what to build.

    Returns:
        The module (train mode).
    """
    model: nn.Module = SmallCNN(spec) if spec.arch == "cnn" else SmallResNet(spec)
    model.spec = spec  # type: ignore[assignment]
    return model


_META = "icml26.nppr.classifier"


def save_classifier(model: nn.Module, path: str | os.PathLike[str], **extra: str) -> Path:
    """Weights as safetensors (atomically), the :class:`ClassifierSpec` in the metadata.

    Args:
        model: a model from :func:`build_classifier`.
        path: the file.
        **extra: more metadata strings.

    Returns:
        The path written.

    Raises:
        TypeError: a model without ``.spec``.
    """
    from safetensors.torch import save_file

    spec = getattr(model, "spec", None)
    if not isinstance(spec, ClassifierSpec):
        raise TypeError("save_classifier needs a model from build_classifier (it carries .spec)")
    path = Path(path)
    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    meta = {_META: json.dumps(asdict(spec)), **extra}
    with atomic_path(path, suffix=".safetensors") as tmp:
        save_file(state, str(tmp), metadata=meta)
    return path


def load_classifier(path: str | os.PathLike[str], device: str = "cpu") -> nn.Module:
    """Rebuild a classifier written by :func:`save_classifier`.

    Args:
        path: the safetensors file.
        device: where to put it.

    Returns:
        The classifier in eval mode.

    Raises:
        FileNotFoundError: no such file.
        ValueError: a safetensors file without an icml26-nppr spec.
    """
    from safetensors import safe_open
    from safetensors.torch import load_file

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"classifier file {path} does not exist")
    with safe_open(str(path), framework="pt") as fh:
        meta = fh.metadata() or {}
    if _META not in meta:
        raise ValueError(f"{path} is not an icml26-nppr classifier (no spec in its metadata)")
    raw = json.loads(meta[_META])
    raw["input_shape"] = tuple(raw["input_shape"])
    model = build_classifier(ClassifierSpec(**raw))
    model.load_state_dict(load_file(str(path), device="cpu"))
    return model.to(device).eval()


def load_user_model(path: str | os.PathLike[str], device: str = "cpu") -> nn.Module:
    """Your classifier: an icml26-nppr safetensors file or a TorchScript file.

    Args:
        path: ``.safetensors`` (from :func:`save_classifier`) or a TorchScript ``.pt``.
        device: where to put it.

    Returns:
        The classifier in eval mode.
    """
    path = Path(path)
    if path.suffix == ".safetensors":
        return load_classifier(path, device)
    return torch.jit.load(str(path), map_location=device).eval()

"""Model files: weights in safetensors, the architecture in its metadata."""

from __future__ import annotations

import json
import os
from pathlib import Path

from icml26.inctnp.model import ModelConfig, NeuralProcess, build_model
from icml26.shared import atomic_path

__all__ = ["load_model", "save_model"]


def save_model(model: NeuralProcess, path: str | os.PathLike[str]) -> Path:
    """Write ``model`` to ``path`` (``.safetensors``) atomically.

    Args:
        model: the model; its config goes into the file's metadata.
        path: the file.

    Returns:
        ``path`` as a ``Path``.
    """
    from safetensors.torch import save_file

    path = Path(path)
    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    with atomic_path(path, suffix=".safetensors") as tmp:
        save_file(
            state, str(tmp), metadata={"icml26.inctnp.config": json.dumps(model.config.to_dict())}
        )
    return path


def load_model(path: str | os.PathLike[str], device: str = "cpu") -> NeuralProcess:
    """Rebuild a model saved by :func:`save_model`.

    Args:
        path: the ``.safetensors`` file.
        device: where the model's weights go.

    Returns:
        The model, in eval mode.

    Raises:
        FileNotFoundError: no such file.
        ValueError: the file holds no icml26-inctnp model config.
    """
    from safetensors import safe_open
    from safetensors.torch import load_file

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"model file {path} does not exist")
    with safe_open(str(path), framework="pt") as fh:
        meta = fh.metadata() or {}
    if "icml26.inctnp.config" not in meta:
        raise ValueError(f"{path} is not an icml26-inctnp model file (no config in its metadata)")
    model = build_model(ModelConfig(**json.loads(meta["icml26.inctnp.config"])))
    model.load_state_dict(load_file(str(path), device=device))
    return model.to(device).eval()

"""The VQA-pretrained backbone shipped inside the wheel, and how a run regenerates it.

Pretraining the backbone on VQA costs about 500 CPU-seconds, more than the rest of the
``quick`` profile together; the wheel therefore carries the weights of the backbone the
``quick`` and ``babyai`` profiles start from (``backbones/*.safetensors``, about 320 KB) with
a JSON provenance record beside each (the command, commit and settings that produced it,
how its training ended, and its validation and held-out VQA accuracy at creation).

A run uses a shipped backbone when its record's key equals the run's :func:`shipped_key`:
the settings that decide the weights (network shape, pretraining settings, seed, text
model) and the VQA data themselves (training views, validation and held-out questions, as
integers and strings), but not the code, so an unrelated edit keeps the file valid. The
loaded weights are checked by measuring the held-out VQA accuracy again on the run's own
questions: a figure more than :data:`VERIFY_TOLERANCE` from the recorded one rejects the file
and the run pretrains instead. Claims read the figure re-measured by the run, never the
recorded one.

Regenerate with ``icml26 run syvla --profile pretrain --out DIR`` (one thread, about 500
CPU-seconds) and copy ``DIR/backbone/*`` into this package's ``backbones/`` folder.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from icml26.shared import atomic_path, atomic_write_json
from icml26.syvla.data import VQASet
from icml26.syvla.model import SyVLA
from icml26.syvla.pretrain import VQAPretrainConfig

__all__ = [
    "SHIPPED_DIR",
    "VERIFY_TOLERANCE",
    "file_sha256",
    "find_shipped",
    "shipped_backbone",
    "shipped_key",
    "write_backbone",
]

#: The folder of shipped backbones (package data: one ``.safetensors`` and one ``.json`` each).
SHIPPED_DIR = Path(__file__).parent / "backbones"
#: The largest difference between the held-out VQA accuracy re-measured by a run and the one
#: recorded at creation that still accepts a shipped backbone (the same questions: only
#: floating-point differences of another machine may move a few of them).
VERIFY_TOLERANCE = 0.02


def shipped_key(
    model: SyVLA,
    settings: VQAPretrainConfig,
    vqa: tuple[np.ndarray, VQASet, VQASet],
    *,
    seed: int,
    text_model: str,
) -> str:
    """The key of a shipped backbone: what decides its weights, without the code.

    Args:
        model: the freshly initialised network (its shape: parameter names and sizes).
        settings: the VQA pretraining settings.
        vqa: training views, validation and held-out questions (hashed as data).
        seed: the pretraining seed (also the initial weights' stream).
        text_model: the instruction encoder naming the question embeddings.

    Returns:
        24 hex digits.
    """
    spec = {
        "model": asdict(model.cfg),
        "parameters": [[k, list(v.shape)] for k, v in model.state_dict().items()],
        "pretrain": asdict(settings),
        "seed": seed,
        "text_model": text_model,
    }
    h = hashlib.sha256(json.dumps(spec, sort_keys=True).encode())
    h.update(np.ascontiguousarray(vqa[0], dtype=np.uint8).tobytes())
    for qs in vqa[1:]:
        h.update(np.ascontiguousarray(qs.views, dtype=np.uint8).tobytes())
        h.update(np.ascontiguousarray(qs.answers, dtype=np.int64).tobytes())
        h.update("\n".join(qs.questions).encode())
    return h.hexdigest()[:24]


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes (hex)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def find_shipped(
    key: str, folder: Path | None = None
) -> tuple[dict[str, torch.Tensor], dict[str, Any]] | None:
    """The shipped backbone whose record carries ``key``: its weights and record.

    Args:
        key: a :func:`shipped_key`.
        folder: where to look (default :data:`SHIPPED_DIR`).

    Returns:
        ``(state_dict, record)``, or ``None`` when no record has the key.

    Raises:
        ValueError: the record's weights file is missing or its hash differs from the record.
    """
    folder = SHIPPED_DIR if folder is None else Path(folder)
    for path in sorted(folder.glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        if record.get("key") != key:
            continue
        weights = folder / record["file"]
        if not weights.is_file() or file_sha256(weights) != record["sha256"]:
            raise ValueError(f"{weights} is missing or differs from its record {path}")
        return load_file(weights), record
    return None


def shipped_backbone(name: str = "vqa-seed0") -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """A shipped backbone by name, for your own model (``SyVLA(ModelConfig())``: the sizes of
    the ``quick`` profile), checked against its record's hash.

    Args:
        name: the files' stem in :data:`SHIPPED_DIR`.

    Returns:
        ``(state_dict, record)``: the weights (backbone, reasoning head and the untrained
        action parts) and the provenance record (settings, accuracy at creation).

    Raises:
        FileNotFoundError: no shipped backbone of that name.
        ValueError: the weights differ from the record's hash.
    """
    path = SHIPPED_DIR / f"{name}.json"
    if not path.is_file():
        names = sorted(p.stem for p in SHIPPED_DIR.glob("*.json"))
        raise FileNotFoundError(f"no shipped backbone {name!r}; shipped: {names}")
    found = find_shipped(json.loads(path.read_text(encoding="utf-8"))["key"])
    if found is None:  # cannot happen: the record just read carries the key
        raise FileNotFoundError(f"{path} could not be read back")
    return found


def write_backbone(
    folder: Path, name: str, model: SyVLA, key: str, record: dict[str, Any]
) -> tuple[Path, Path]:
    """Write ``model``'s weights (``<name>.safetensors``) and its provenance record
    (``<name>.json``: ``record`` with the key, file name and SHA-256 added), atomically.

    Args:
        folder: the destination folder (created if missing).
        name: the files' stem.
        model: the pretrained network.
        key: its :func:`shipped_key`.
        record: provenance (command, commit, settings, training and accuracy figures).

    Returns:
        The weights file and the record file.
    """
    folder = Path(folder)
    weights = folder / f"{name}.safetensors"
    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    with atomic_path(weights, suffix=".safetensors") as tmp:
        save_file(state, str(tmp), metadata={"key": key})
    full = {"key": key, "file": weights.name, "sha256": file_sha256(weights), **record}
    return weights, atomic_write_json(folder / f"{name}.json", full)

"""Staged jobs: a run written as named stages that resume.

A job's ``run(config, run_dir)`` reads as a recipe::

    stages = Stages(run_dir)
    data = stages.once("data", lambda: load_data(config), saver=NUMPY)
    model = stages.once("train", lambda: train(data, config), saver=TORCH)
    scores = stages.once("evaluate", lambda: evaluate(model, data), saver=JSON)

Each stage's value is written (atomically) to ``<run>/stages/<name><suffix>`` when it
finishes, and its wall and CPU seconds are appended to ``metrics.jsonl`` as
``{"stage": name, "wall_s": ..., "cpu_s": ...}``. A killed run, started again into the same
folder with the same config, loads every finished stage from its file and resumes at the
first unfinished one. A stage name is a key part (letters, digits, ``_`` and ``-``), unique
within the run.

Savers (:class:`Saver`) say how a stage's value goes to disk and comes back:

* :data:`JSON` for plain JSON values (dicts of numbers, lists, strings; strict JSON, so a NaN
  is refused: store ``None``, which results treat as NaN);
* :data:`NUMPY` for an array or a flat ``dict[str, ndarray]`` (``.npz``, no pickle);
* :data:`TORCH` for a ``dict[str, Tensor]`` (safetensors when installed, else ``torch.save``
  with ``weights_only`` loading) or any ``torch.save``-able state;
* :data:`ORBAX` for a JAX pytree (orbax's ``PyTreeCheckpointer``; a folder);
* :data:`PICKLE` for anything else that pickles (last resort: the file is only as portable as
  the classes it names).

Frameworks are imported only by the saver that needs them, never at import of this module.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from icml26.shared.atomic import atomic_path
from icml26.shared.progress import log

__all__ = ["JSON", "NUMPY", "ORBAX", "PICKLE", "TORCH", "Saver", "StageError", "Stages"]

T = TypeVar("T")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]*$")


class StageError(RuntimeError):
    """A stage misused: a bad or repeated name, or a value its saver cannot write."""


@dataclass(frozen=True)
class Saver:
    """How a stage's value is written and read back.

    Attributes:
        name: short name, for messages.
        suffix: file suffix (``".json"``), or ``""`` for a saver that writes a folder.
        save: ``save(value, path)`` writes ``value`` to ``path`` (a temporary path that the
            stage moves into place when the write succeeds).
        load: ``load(path) -> value`` reads it back.
    """

    name: str
    suffix: str
    save: Callable[[Any, Path], None]
    load: Callable[[Path], Any]


def _save_json(value: Any, path: Path) -> None:
    path.write_text(json.dumps(value, allow_nan=False) + "\n", encoding="utf-8")


def _load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


_SINGLE_ARRAY = "__array__"


def _save_numpy(value: Any, path: Path) -> None:
    import numpy as np

    arrays = value if isinstance(value, dict) else {_SINGLE_ARRAY: value}
    if not all(isinstance(k, str) for k in arrays):
        raise StageError("the NUMPY saver takes an array or a dict with string keys")
    named: dict[str, Any] = {k: np.asarray(v) for k, v in arrays.items()}
    with open(path, "wb") as fh:
        np.savez(fh, **named)


def _load_numpy(path: Path) -> Any:
    import numpy as np

    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    return arrays[_SINGLE_ARRAY] if list(arrays) == [_SINGLE_ARRAY] else arrays


def _is_tensor_dict(value: Any) -> bool:
    import torch

    return (
        isinstance(value, dict)
        and bool(value)
        and all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in value.items())
    )


def _save_torch(value: Any, path: Path) -> None:
    import torch

    if _is_tensor_dict(value):
        try:
            from safetensors.torch import save_file
        except ImportError:
            pass
        else:
            # safetensors refuses shared storage and non-contiguous tensors: save copies.
            save_file({k: v.detach().contiguous().clone() for k, v in value.items()}, str(path))
            return
    torch.save(value, path)


def _load_torch(path: Path) -> Any:
    import torch

    with open(path, "rb") as fh:
        head = fh.read(8)
    if len(head) == 8 and not head.startswith(b"PK"):  # safetensors: 8-byte header length
        from safetensors.torch import load_file

        return load_file(str(path))
    return torch.load(path, map_location="cpu", weights_only=True)


def _save_orbax(value: Any, path: Path) -> None:
    import orbax.checkpoint as ocp

    path.rmdir()  # orbax creates the folder itself
    ocp.PyTreeCheckpointer().save(path.resolve(), value)


def _load_orbax(path: Path) -> Any:
    import orbax.checkpoint as ocp

    return ocp.PyTreeCheckpointer().restore(path.resolve())


def _save_pickle(value: Any, path: Path) -> None:
    with open(path, "wb") as fh:
        pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)


def _load_pickle(path: Path) -> Any:
    with open(path, "rb") as fh:
        return pickle.load(fh)


JSON = Saver("json", ".json", _save_json, _load_json)
"""The default saver: a JSON value (strict: no NaN or infinity), ``.json``."""
NUMPY = Saver("numpy", ".npz", _save_numpy, _load_numpy)
"""An array or a dict of arrays (string keys), ``.npz``, read back without pickle."""
TORCH = Saver("torch", ".pt", _save_torch, _load_torch)
"""A dict of tensors through safetensors when it is installed, anything else through
``torch.save``; read back on the CPU (``weights_only``)."""
ORBAX = Saver("orbax", "", _save_orbax, _load_orbax)
"""A JAX pytree as an orbax checkpoint folder."""
PICKLE = Saver("pickle", ".pkl", _save_pickle, _load_pickle)
"""Any picklable value (the last resort: a pickle runs code when read)."""


class Stages:
    """The named stages of one run, each computed once and resumed from its file.

    Args:
        run_dir: the run folder (a :class:`icml26.shared.RunDir` or a path). Stage files go to
            ``<run>/stages/``; timings go to the run's ``metrics.jsonl`` when ``run_dir`` is a
            ``RunDir``.
        folder: the sub-folder for stage files.
    """

    def __init__(self, run_dir: Any, *, folder: str = "stages") -> None:
        path = Path(getattr(run_dir, "path", run_dir))
        self.folder = path / folder
        self._run_dir = run_dir if hasattr(run_dir, "log_metrics") else None
        self._seen: set[str] = set()
        self.timings: dict[str, dict[str, float]] = {}

    def path(self, name: str, saver: Saver = JSON) -> Path:
        """Where stage ``name`` with ``saver`` is stored."""
        return self.folder / f"{name}{saver.suffix}"

    def done(self, name: str, saver: Saver = JSON) -> bool:
        """Whether stage ``name`` finished in this run folder (its file exists)."""
        return self.path(name, saver).exists()

    def once(self, name: str, compute: Callable[[], T], *, saver: Saver = JSON) -> T:
        """Return stage ``name``'s value: loaded from its file, or computed and saved.

        Args:
            name: the stage's name (letters, digits, ``_``, ``-``), unique within the run.
            compute: a no-argument function computing the value (called only when the stage
                has no file yet).
            saver: how the value is stored (:data:`JSON` by default).

        Returns:
            The stage's value. A value loaded from disk is what ``saver.load`` returns (for
            :data:`JSON`, tuples come back as lists).

        Raises:
            StageError: a bad or repeated name, or a value the saver cannot write (nothing is
                left on disk then).
        """
        if not isinstance(name, str) or not _NAME.match(name):
            raise StageError(f"stage name must be letters, digits, '_' or '-', got {name!r}")
        if name in self._seen:
            raise StageError(f"stage {name!r} is run twice in one job: names must be unique")
        self._seen.add(name)
        target = self.path(name, saver)
        if target.exists():
            log(f"stage {name}: done earlier, loaded from {target.name}")
            return saver.load(target)
        start, cpu_start = time.perf_counter(), time.process_time()
        value = compute()
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        self._write(value, target, saver, name)
        self.timings[name] = {"wall_s": wall, "cpu_s": cpu}
        if self._run_dir is not None:
            self._run_dir.log_metrics(stage=name, wall_s=wall, cpu_s=cpu)
        log(f"stage {name}: {wall:.1f}s wall, {cpu:.1f}s CPU")
        return value

    def _write(self, value: Any, target: Path, saver: Saver, name: str) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        if saver.suffix:
            try:
                with atomic_path(target, suffix=saver.suffix) as tmp:
                    saver.save(value, tmp)
            except (TypeError, ValueError) as exc:
                raise StageError(
                    f"stage {name!r}: the {saver.name} saver cannot write it: {exc}"
                ) from exc
            return
        # A folder: write beside the target, then rename into place.
        tmp = self.folder / f".{name}.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        try:
            saver.save(value, tmp)
            os.replace(tmp, target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

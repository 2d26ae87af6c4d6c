"""Run folders: one folder per run holding everything needed to read or resume it.

::

    <run>/config.json     the resolved config (profile + overrides)
    <run>/env.json        python, platform, package versions, seed, git commit, device
    <run>/metrics.jsonl   one JSON object per logged step (appended as the run goes)
    <run>/results.json    the final results (see icml26.shared.results), written last
    <run>/plots/*.png     figures
    <run>/checkpoints/    resumable state (see Checkpoints)

Running again into an existing folder with the *same* config resumes (the paper's code reads
its checkpoints); a *different* config is refused, so two runs never mix in one folder.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import os
import pickle
import platform
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

from icml26.shared.atomic import atomic_path, atomic_write_json
from icml26.shared.configs import config_to_dict

__all__ = ["Checkpoints", "ConfigMismatchError", "RunDir", "environment_info"]

#: Libraries whose versions are worth recording when installed (read from metadata, never imported).
TRACKED_DISTRIBUTIONS = (
    "numpy",
    "scipy",
    "torch",
    "jax",
    "jaxlib",
    "flax",
    "optax",
    "orbax-checkpoint",
    "transformers",
    "peft",
    "trl",
    "scikit-learn",
    "pot",
    "networkx",
    "matplotlib",
)


class ConfigMismatchError(RuntimeError):
    """The run folder already holds a run with another config."""


def _git_info(cwd: Path) -> dict[str, Any]:
    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(
                ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=5, check=True
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip()

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


def environment_info(*, seed: int | None = None, device: str | None = None) -> dict[str, Any]:
    """Facts about this process's environment, for ``env.json``."""
    versions: dict[str, str] = {}
    for dist in metadata.distributions():
        name = (dist.metadata["Name"] or "").lower()
        if name.startswith("icml26-") or name in TRACKED_DISTRIBUTIONS:
            versions[name] = dist.version
    return {
        "time": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "packages": dict(sorted(versions.items())),
        "seed": seed,
        "device": device or "cpu",
        "git": _git_info(Path.cwd()),
        "argv": sys.argv,
    }


class Checkpoints:
    """Atomic, resumable checkpoints in ``<run>/checkpoints``.

    ``save(step, state)`` pickles any picklable state (NumPy arrays, dicts of tensors moved
    to CPU, ...); ``latest()`` returns the newest ``(step, state)``. Frameworks with their own
    format use ``path(step, suffix)`` together with :func:`icml26.shared.atomic.atomic_path`
    (``torch.save``) or their own atomic writer (orbax).

    Args:
        folder: the checkpoint folder (created on the first save).
        keep: how many of the newest pickled checkpoints :meth:`save` keeps (at least 1).

    Raises:
        ValueError: ``keep < 1``.
    """

    _PATTERN = re.compile(r"^step_(\d{9})(\.[\w.]+)$")

    def __init__(self, folder: str | os.PathLike[str], *, keep: int = 2) -> None:
        if keep < 1:
            raise ValueError("keep must be at least 1")
        self.folder = Path(folder)
        self.keep = keep

    def path(self, step: int, suffix: str = ".pkl") -> Path:
        """The checkpoint file of ``step`` (it need not exist).

        Args:
            step: the training step, non-negative.
            suffix: the file's suffix (``.pkl`` for :meth:`save`; another for a framework's
                own format).

        Returns:
            ``<folder>/step_<step, 9 digits><suffix>``.

        Raises:
            ValueError: ``step`` is negative.
        """
        if step < 0:
            raise ValueError(f"step must be non-negative, got {step}")
        return self.folder / f"step_{step:09d}{suffix}"

    def steps(self, suffix: str = ".pkl") -> list[int]:
        """The steps that have a checkpoint file with ``suffix``.

        Args:
            suffix: the files' suffix.

        Returns:
            The steps, ascending (empty when the folder is missing or holds none).
        """
        if not self.folder.is_dir():
            return []
        found = []
        for p in self.folder.iterdir():
            match = self._PATTERN.match(p.name)
            if match and match.group(2) == suffix:
                found.append(int(match.group(1)))
        return sorted(found)

    def save(self, step: int, state: Any) -> Path:
        """Pickle ``state`` as the checkpoint of ``step``, atomically, and delete all but the
        newest ``keep`` checkpoints.

        Args:
            step: the training step, non-negative.
            state: any picklable object (move tensors to CPU first).

        Returns:
            The file written.
        """
        target = self.path(step)
        with atomic_path(target) as tmp, open(tmp, "wb") as fh:
            pickle.dump(state, fh, protocol=pickle.HIGHEST_PROTOCOL)
        for old in self.steps()[: -self.keep]:
            self.path(old).unlink(missing_ok=True)
        return target

    def latest(self) -> tuple[int, Any] | None:
        """The newest checkpoint, to resume from.

        Returns:
            ``(step, state)`` of the newest ``.pkl`` checkpoint, or None when there is none.
        """
        steps = self.steps()
        if not steps:
            return None
        with open(self.path(steps[-1]), "rb") as fh:
            return steps[-1], pickle.load(fh)


class RunDir:
    """A run folder (see the module docstring). Create with :meth:`new` or ``RunDir(path)``.

    Args:
        path: the folder (created by :meth:`prepare`; an existing one is resumed).

    Raises:
        NotADirectoryError: ``path`` exists and is not a folder.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if self.path.exists() and not self.path.is_dir():
            raise NotADirectoryError(f"run folder {self.path} exists and is not a folder")
        self.path.mkdir(parents=True, exist_ok=True)
        self.checkpoints = Checkpoints(self.path / "checkpoints")

    @classmethod
    def new(cls, root: str | os.PathLike[str], slug: str, *, kind: str, profile: str) -> RunDir:
        """A fresh folder ``<root>/<slug>/<YYYYmmdd-HHMMSS>-<kind>-<profile>[-N]``."""
        stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        base = Path(root) / slug / f"{stamp}-{kind}-{profile}"
        candidate, n = base, 1
        while candidate.exists():
            n += 1
            candidate = base.with_name(f"{base.name}-{n}")
        return cls(candidate)

    # -- fixed paths -------------------------------------------------------------------------
    @property
    def config_path(self) -> Path:
        return self.path / "config.json"

    @property
    def env_path(self) -> Path:
        return self.path / "env.json"

    @property
    def metrics_path(self) -> Path:
        return self.path / "metrics.jsonl"

    @property
    def results_path(self) -> Path:
        return self.path / "results.json"

    @property
    def plots_dir(self) -> Path:
        folder = self.path / "plots"
        folder.mkdir(exist_ok=True)
        return folder

    def plot_path(self, name: str) -> Path:
        """``<run>/plots/<name>.png`` (``name`` may carry its own suffix)."""
        path = self.plots_dir / name
        return path if path.suffix else path.with_suffix(".png")

    # -- writing -----------------------------------------------------------------------------
    def prepare(self, config: Any, *, device: str | None = None) -> bool:
        """Write ``config.json`` and ``env.json``; return True when resuming an earlier run.

        A config field declared with ``dataclasses.field(metadata={"resume": "extend"})`` (a
        list of work items run in order, e.g. the methods of a study) may grow between runs
        of one folder: the new value resumes the old when it starts with every old item, in
        order (the finished items load from their stages, the new ones run). Stages record
        no code version and ``env.json`` is rewritten at each leg: extend only with the same
        code and weights, and report every leg's commit. A field declared
        ``metadata={"resume": "per_leg"}`` (a setting of one leg that decides no stage's
        result, e.g. a wall-clock budget) may take any value in a later leg.

        Raises:
            ConfigMismatchError: the folder holds a run with a different config.
        """
        wanted = config_to_dict(config)
        resuming = False
        if self.config_path.exists():
            try:
                existing = json.loads(self.config_path.read_text(encoding="utf-8"))
            except json.JSONDecodeError:
                existing = None
            extendable = _resume_fields(config, "extend")
            per_leg = _resume_fields(config, "per_leg")
            diff = sorted(
                k
                for k in set(wanted) | set(existing or {})
                if (existing or {}).get(k) != wanted.get(k)
                and k not in per_leg
                and not (k in extendable and _extends((existing or {}).get(k), wanted.get(k)))
            )
            if existing is None or diff:
                raise ConfigMismatchError(
                    f"{self.path} already holds a run with another config (fields differing: "
                    f"{', '.join(diff) or 'unreadable config.json'}); choose another --out"
                )
            resuming = True
        atomic_write_json(self.config_path, wanted)
        seed = getattr(config, "seed", None)
        atomic_write_json(
            self.env_path,
            environment_info(seed=seed, device=device or getattr(config, "device", None)),
        )
        return resuming

    def update_env(self, **fields: Any) -> None:
        """Add or replace fields of ``env.json`` (e.g. the device a framework picked)."""
        env = (
            json.loads(self.env_path.read_text(encoding="utf-8")) if self.env_path.exists() else {}
        )
        env.update(fields)
        atomic_write_json(self.env_path, env)

    def log_metrics(self, step: int | None = None, **values: Any) -> None:
        """Append one line ``{"step": step, **values}`` to ``metrics.jsonl``."""
        record: dict[str, Any] = {} if step is None else {"step": step}
        for key, value in values.items():
            try:
                number = float(value)
                record[key] = number if number == number and abs(number) != float("inf") else None
            except (TypeError, ValueError):
                record[key] = value
        with open(self.metrics_path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")

    def read_metrics(self) -> list[dict[str, Any]]:
        """Every record of ``metrics.jsonl``, in the order written.

        Returns:
            The records (empty when the file is missing); a line cut by a kill is skipped.
        """
        if not self.metrics_path.exists():
            return []
        lines = self.metrics_path.read_text(encoding="utf-8").splitlines()
        records = []
        for line in lines:
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a line cut by a kill: skip it
        return records

    def write_json(self, name: str, obj: Mapping[str, Any] | list[Any]) -> Path:
        """Write an extra JSON artefact ``<run>/<name>`` atomically."""
        return atomic_write_json(self.path / name, obj)

    @contextmanager
    def artefact(self, name: str) -> Iterator[Path]:
        """Yield a temporary path that becomes ``<run>/<name>`` when the block succeeds."""
        target = self.path / name
        with atomic_path(target, suffix=target.suffix) as tmp:
            yield tmp


def _resume_fields(config: Any, kind: str) -> set[str]:
    """Names of ``config``'s fields marked ``metadata={"resume": kind}``."""
    if not dataclasses.is_dataclass(config):
        return set()
    return {f.name for f in dataclasses.fields(config) if f.metadata.get("resume") == kind}


def _extends(old: Any, new: Any) -> bool:
    """Whether list ``new`` starts with every item of list ``old``, in order."""
    return isinstance(old, list) and isinstance(new, list) and new[: len(old)] == old

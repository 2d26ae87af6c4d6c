"""Shared plumbing for the icml26 paper packages.

Framework-neutral on purpose: importing ``icml26.shared`` never imports torch or jax.
"""

from icml26.shared.atomic import (
    atomic_path,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
)
from icml26.shared.claims import Claim, RuleError, evaluate_rule, rule_keys
from icml26.shared.configs import OverrideError, apply_overrides, config_to_dict
from icml26.shared.paper import PROFILES, Paper
from icml26.shared.plotting import PALETTE, figure, save_figure
from icml26.shared.progress import log, progress
from icml26.shared.results import (
    ResultsError,
    build_results,
    flatten_metrics,
    load_results,
    validate_results,
)
from icml26.shared.rundir import Checkpoints, ConfigMismatchError, RunDir
from icml26.shared.runner import run_job
from icml26.shared.seeding import rng_for, seed_everything, seed_for
from icml26.shared.stages import JSON, NUMPY, ORBAX, PICKLE, TORCH, Saver, StageError, Stages

__all__ = [
    "JSON",
    "NUMPY",
    "ORBAX",
    "PALETTE",
    "PICKLE",
    "PROFILES",
    "TORCH",
    "Checkpoints",
    "Claim",
    "ConfigMismatchError",
    "OverrideError",
    "Paper",
    "ResultsError",
    "RuleError",
    "RunDir",
    "Saver",
    "StageError",
    "Stages",
    "apply_overrides",
    "atomic_path",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "build_results",
    "config_to_dict",
    "evaluate_rule",
    "figure",
    "flatten_metrics",
    "load_results",
    "log",
    "progress",
    "rng_for",
    "rule_keys",
    "run_job",
    "save_figure",
    "seed_everything",
    "seed_for",
    "validate_results",
]

from importlib.metadata import PackageNotFoundError as _NotFound
from importlib.metadata import version as _version

try:
    __version__ = _version("icml26-shared")
except _NotFound:  # running from a source tree
    __version__ = "0+unknown"

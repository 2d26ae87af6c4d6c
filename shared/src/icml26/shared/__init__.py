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
from icml26.shared.seeding import seed_everything

__all__ = [
    "PALETTE",
    "PROFILES",
    "Checkpoints",
    "Claim",
    "ConfigMismatchError",
    "OverrideError",
    "Paper",
    "ResultsError",
    "RuleError",
    "RunDir",
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
    "rule_keys",
    "run_job",
    "save_figure",
    "seed_everything",
    "validate_results",
]

from importlib.metadata import PackageNotFoundError as _NotFound
from importlib.metadata import version as _version

try:
    __version__ = _version("icml26-shared")
except _NotFound:  # running from a source tree
    __version__ = "0+unknown"

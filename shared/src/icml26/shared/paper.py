"""The plugin contract between a paper package and the umbrella ``icml26`` CLI.

A package registers one :class:`Paper` under the entry-point group ``icml26.papers``::

    [project.entry-points."icml26.papers"]
    ro-hnn = "icml26.ro_hnn.paper:PAPER"

The module holding ``PAPER`` must import quickly (no torch or jax at module level): the CLI
loads every paper for ``icml26 list``. ``run`` and ``bench`` may be given as
``"module:function"`` strings so the framework is imported only when a run starts.

``run(config, run_dir)`` trains/evaluates and returns a mapping of metrics (nested mappings
are flattened to dotted keys); the runner evaluates ``claims`` on them and writes
``results.json``. ``bench(config, run_dir)`` does the same for performance claims.

``icml26 reproduce`` runs several papers' ``run`` jobs at once. Two declarations shape that:

* ``timing_claims=True`` when a claim of ``run`` (not ``bench``) is a rule on measured time
  (latency, speed-up, seconds): the paper then runs alone, after the others, with every
  core's threads, so the other papers' load is not in its timings;
* ``extra={"resources": {"memory_gb": 6}}``: the ``run`` job's peak memory in GB (default
  2.5), so that no more papers run at once than the memory holds; ``num_cpus`` and
  ``num_gpus`` there are the request of a Ray task (see :mod:`icml26.shared.reproduce`).
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from icml26.shared.claims import Claim

__all__ = ["PROFILES", "Paper"]

PROFILES = ("smoke", "quick", "full")
"""The profiles every paper defines: ``smoke`` (seconds, tests), ``quick`` (minutes, used by
``icml26 reproduce``), ``full`` (the longer run)."""
_SLUG = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")

JobFn = Callable[[Any, Any], Mapping[str, Any]]


def _resolve(target: Callable[..., Any] | str) -> Callable[..., Any]:
    if callable(target):
        return target
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise ValueError(f"job {target!r} must be a callable or 'module:function'")
    fn = getattr(importlib.import_module(module_name), attr)
    if not callable(fn):
        raise TypeError(f"{target} is not callable")
    return fn


def _check_profiles(slug: str, what: str, profiles: Mapping[str, Any]) -> None:
    missing = [p for p in PROFILES if p not in profiles]
    if missing:
        raise ValueError(f"{slug}: {what} lack the profiles {', '.join(missing)}")
    types = {type(c) for c in profiles.values()}
    if len(types) != 1:
        raise ValueError(f"{slug}: all {what} must be instances of one config class")
    for name, cfg in profiles.items():
        if not dataclasses.is_dataclass(cfg) or isinstance(cfg, type):
            raise TypeError(f"{slug}: {what}[{name!r}] must be a dataclass instance")
        params = getattr(type(cfg), "__dataclass_params__", None)
        if params is None or not params.frozen:
            raise TypeError(f"{slug}: config class {type(cfg).__name__} must be a frozen dataclass")


@dataclass(frozen=True)
class Paper:
    """A paper package as the CLI sees it.

    Attributes:
        slug: the package slug (``ro-hnn``), also the CLI name.
        title: the paper's title.
        profiles: ``smoke``/``quick``/``full`` (and optionally more) config instances of one
            frozen dataclass for ``run``.
        run: ``run(config, run_dir) -> metrics`` or ``"module:function"``.
        claims: the paper's claims checked on ``run``'s metrics.
        bench: like ``run``, for the performance claims (optional).
        bench_profiles: configs for ``bench`` (default: ``profiles``).
        bench_claims: claims checked on ``bench``'s metrics.
        framework: ``"jax"``, ``"torch"`` or ``"numpy"`` (informational).
        summary: one line for ``icml26 list``.
        inputs: ``inputs(config)`` or ``"module:function"``: validates the config's input
            files (a user's data, a checkpoint folder) and raises ``ValueError`` naming the
            problem; run before the run folder is made, so a bad file fails in seconds, not
            after the first stages.
        extra: anything else; ``extra["resources"]`` is the job's request (CPUs, GPUs, peak
            memory; see :func:`icml26.shared.reproduce.resources_for`).
        readme_tables: ``tables(results) -> str`` or ``"module:function"``: the paper's own
            Markdown tables from a results object (e.g. a method x dataset grid), which
            ``icml26 readme`` places after the claims table, so no figure is typed by hand.
        timing_claims: some of ``claims`` are rules on measured time; ``icml26 reproduce``
            runs this paper alone, after the others, with every core's threads.
    """

    slug: str
    title: str
    profiles: Mapping[str, Any]
    run: JobFn | str
    claims: Sequence[Claim] = ()
    bench: JobFn | str | None = None
    bench_profiles: Mapping[str, Any] | None = None
    bench_claims: Sequence[Claim] = ()
    framework: str = ""
    summary: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    inputs: Callable[[Any], None] | str | None = None
    timing_claims: bool = False
    readme_tables: Callable[[Mapping[str, Any]], str] | str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.timing_claims, bool):
            raise TypeError(
                f"{self.slug}: timing_claims must be True or False, got {self.timing_claims!r}"
            )
        if not _SLUG.match(self.slug):
            raise ValueError(f"slug {self.slug!r} must be lower-case words joined by '-'")
        _check_profiles(self.slug, "profiles", self.profiles)
        if self.bench is not None:
            _check_profiles(self.slug, "bench profiles", self.bench_profiles or self.profiles)
        for claims in (self.claims, self.bench_claims):
            ids = [c.id for c in claims]
            if len(ids) != len(set(ids)):
                raise ValueError(f"{self.slug}: claim ids must be unique, got {ids}")

    @property
    def module(self) -> str:
        """The import name of the package: ``icml26.<slug with underscores>``."""
        return "icml26." + self.slug.replace("-", "_")

    def profiles_for(self, kind: str) -> Mapping[str, Any]:
        """The configs of ``kind`` (``"run"`` or ``"bench"``), without importing the job."""
        if kind == "run":
            return self.profiles
        if kind == "bench":
            if self.bench is None:
                raise LookupError(f"{self.slug} has no bench")
            return self.bench_profiles or self.profiles
        raise ValueError(f"kind must be 'run' or 'bench', got {kind!r}")

    def claims_for(self, kind: str) -> Sequence[Claim]:
        """The claims a job of ``kind`` decides.

        Args:
            kind: ``"run"`` or ``"bench"``.

        Returns:
            ``bench_claims`` for ``"bench"``, else ``claims``.
        """
        return self.bench_claims if kind == "bench" else self.claims

    def check_inputs(self, config: Any) -> None:
        """Run the paper's ``inputs`` check on ``config`` (nothing when it has none).

        Raises:
            ValueError: from the check, naming the bad input.
        """
        if self.inputs is not None:
            _resolve(self.inputs)(config)

    def tables_markdown(self, results: Mapping[str, Any]) -> str:
        """The paper's own Markdown tables for ``results`` (empty when it has none).

        Args:
            results: a results object (``results.json``) of this paper.

        Returns:
            Markdown text, or ``""``.
        """
        if self.readme_tables is None:
            return ""
        return str(_resolve(self.readme_tables)(results)).strip()

    def job(self, kind: str) -> JobFn:
        """The ``run`` or ``bench`` function (importing its module if given as a string)."""
        self.profiles_for(kind)  # validates kind
        target = self.bench if kind == "bench" else self.run
        assert target is not None
        return _resolve(target)

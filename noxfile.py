"""Nox sessions for the icml26 workspace, discovered from ``pyproject.toml`` (never listed by hand).

Per member ``<slug>`` (``shared`` or a folder of ``packages/``), tagged ``<slug>``:

* ``tests-<slug>``  sync that member alone from the lock into the session venv, with the extras
  its tests need (``[tool.icml26] test-extras`` in its pyproject, so those tests run instead of
  skipping), run its tests from its folder, ``slow`` marker excluded (default);
* ``slow-<slug>``   only the ``slow`` tests (same install);
* ``build-<slug>``  build wheel + sdist with ``--no-sources``, check them (twine,
  check-wheel-contents), install the wheel beside a freshly built ``icml26-shared`` wheel in a
  clean venv, import it, run ``icml26 list`` and the paper's ``smoke`` job from there (a pip
  user's install: whatever the job needs must be a runtime dependency);
* ``typecheck-<slug>``  mypy over the member's sources;
* ``lowest-<slug>``  the member's own direct dependencies (and its test group) resolved to
  their *lowest* allowed versions (``uv pip install --resolution lowest-direct``, into the
  session venv, not the lock), then its default tests: the floors in ``pyproject.toml`` hold.

Plus ``gpu`` (not default): every member's ``gpu``-marked tests and smoke jobs on CUDA, skipped
when no CUDA device is present; and ``lint`` (default), in a venv with the whole workspace
(every member, extra and test group: the two last checks inspect the installed packages):

* ruff (check + format), ``uv lock --check``, the GitHub workflows validated offline;
* import-linter, on contracts written here (to ``.nox/lint/tmp/importlinter.toml``):
  ``icml26.shared`` imports no paper package; no paper package imports another; and for each
  paper package *not* in ``UNMIGRATED`` (``icml26/shared/migration.py``, read with ``ast``, not
  imported) the job shape: layers ``experiment | bench`` > ``figures : tables`` > all other
  modules (the method modules) > ``paper`` > ``config``, exhaustive (a new module lands in the
  method layer; ``cli`` and ``__main__`` stay outside), nothing in the package (its
  ``__init__`` included) imports ``experiment``, and no import cycle between sibling modules at
  any depth (``acyclic_siblings``);
* deptry in each member's folder against that member's pyproject: missing (DEP001), unused
  (DEP002), transitive (DEP003) and misplaced dev (DEP004) dependencies; false positives are
  ignored per member in its ``[tool.deptry.per_rule_ignores]``, each with its reason;
* ``shared/tests/test_public_names.py`` with every member installed: each paper's ``__all__``
  after importing all its submodules (``tests-shared`` runs the source-only version).

And ``docs`` (default): every exported name's docstring checked (``tools/docs/exports.py``),
the site built with ``mkdocs build --strict`` into ``build/site``, then opened in headless
Chromium (``tools/docs/test_site.py``; skips where no browser is installed).

``uv run nox -s lint`` takes about 4 s of wall clock with its venv in place (reused) and about
5 s from an empty ``.nox/lint`` (uv cache warm), on the shared 2-core dev machine (measured).

The default test sessions fail when pytest takes longer than ``TEST_BUDGET_S`` (the
``icml26.shared`` pytest plugin enforces it), so slow tests move behind the ``slow`` marker.

Run everything that CI runs by default with ``uv run nox``; one package with ``nox -t <slug>``.
"""

from __future__ import annotations

import ast
import glob
import json
import os
import shutil
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

import nox
from packaging.requirements import Requirement

ROOT = Path(__file__).parent
# Test processes import torch and jax many times (CLI subprocesses, reproduce children): let
# Python cache their bytecode in the session venv instead of compiling them on every import.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
nox.options.default_venv_backend = "uv"
nox.needs_version = ">=2024.10.9"

# A default ``tests-<slug>`` session fails past this many seconds of pytest time (the target is
# 90 s on a 2-core machine; the margin absorbs a busy machine, not a slow test).
TEST_BUDGET_S = 120


@dataclass(frozen=True)
class Member:
    slug: str
    name: str  # distribution name
    folder: Path

    @property
    def module(self) -> str:
        return "icml26." + ("shared" if self.slug == "shared" else self.slug.replace("-", "_"))


def workspace_members() -> list[Member]:
    """Members from ``[tool.uv.workspace] members`` globs, in path order."""
    root_cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = root_cfg["tool"]["uv"]["workspace"]["members"]
    members = []
    for pattern in patterns:
        for folder in sorted(glob.glob(str(ROOT / pattern))):
            pyproject = Path(folder) / "pyproject.toml"
            if not pyproject.is_file():
                continue
            name = tomllib.loads(pyproject.read_text())["project"]["name"]
            slug = name.removeprefix("icml26-")
            members.append(Member(slug=slug, name=name, folder=Path(folder)))
    return members


MEMBERS = workspace_members()


def _sync(session: nox.Session, *args: str) -> None:
    """``uv sync --locked`` into this session's venv."""
    session.run_install(
        "uv",
        "sync",
        "--locked",
        "--no-default-groups",
        *args,
        env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location},
        silent=True,
    )


def _test_extras(member: Member) -> list[str]:
    """The extras the member's tests need (``[tool.icml26] test-extras``): installed by its
    ``tests-``/``slow-`` sessions, so tests that need an optional extra run instead of skipping."""
    cfg = _project(member)
    extras = list(cfg.get("tool", {}).get("icml26", {}).get("test-extras", []))
    unknown = set(extras) - set(cfg["project"].get("optional-dependencies", {}))
    if unknown:
        raise ValueError(
            f"{member.folder / 'pyproject.toml'}: [tool.icml26] test-extras names "
            f"{sorted(unknown)}, which are not in [project.optional-dependencies]"
        )
    return extras


def _pytest(session: nox.Session, member: Member, marker: str, *, sync: bool = True) -> None:
    if sync:
        extras = [a for extra in _test_extras(member) for a in ("--extra", extra)]
        _sync(session, "--package", member.name, "--group", "test", *extras)
    session.chdir(member.folder)
    # A member whose test group brings pytest-xdist (compile-bound JAX tests) gets every core.
    group = _project(member).get("dependency-groups", {}).get("test", [])
    # (--dist loadfile: a module's tests share one worker, so module fixtures are built once.)
    xdist = any(str(r).startswith("pytest-xdist") for r in group)
    workers = ["-n", "auto", "--dist", "loadfile"] if xdist else []
    # Exit code 5 = no tests collected: fine for slow-* on a package without slow tests.
    success = (0, 5) if marker in ("slow", "gpu") else (0,)
    # ICML26_TEST_BUDGET_S in the environment overrides the budget (e.g. on a loaded machine).
    budget = os.environ.get("ICML26_TEST_BUDGET_S", str(TEST_BUDGET_S))
    env = {"ICML26_TEST_BUDGET_S": budget} if marker == "not slow" else {}
    session.run(
        "pytest",
        "-m",
        marker,
        "--durations=5",
        *workers,
        *session.posargs,
        success_codes=success,
        env=env,
    )


MEMBERS_BY_NAME: dict[str, Member] = {}


def _project(member: Member) -> dict:
    return tomllib.loads((member.folder / "pyproject.toml").read_text())


def _direct_requirements(member: Member, extras: frozenset[str] = frozenset()) -> list[str]:
    """The member's runtime dependencies, plus those of ``extras``, as written."""
    cfg = _project(member)
    raw = list(cfg["project"].get("dependencies", []))
    for extra in sorted(extras):
        raw += cfg["project"].get("optional-dependencies", {}).get(extra, [])
    return raw


def _expand(raw: list[str], seen: set[str]) -> list[str]:
    """``raw`` with each workspace member replaced by its own requirements (recursively):
    members are installed from source, their floors are what a pip user gets."""
    out: list[str] = []
    for text in raw:
        req = Requirement(text)
        member = MEMBERS_BY_NAME.get(req.name)
        if member is None:
            out.append(text)
            continue
        key = f"{req.name}[{','.join(sorted(req.extras))}]"
        if key in seen:
            continue
        seen.add(key)
        out += _expand(_direct_requirements(member, frozenset(req.extras)), seen)
    return out


def _overrides(session: nox.Session) -> str:
    """The root's ``override-dependencies`` as a file for ``uv pip --override``."""
    lines = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["uv"].get(
        "override-dependencies", []
    )
    path = Path(session.create_tmp()).resolve() / "overrides.txt"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _make_member_sessions(member: Member) -> None:
    tags = [member.slug]

    @nox.session(name=f"tests-{member.slug}", tags=[*tags, "tests"], default=True)
    def tests(session: nox.Session) -> None:
        _pytest(session, member, "not slow")

    @nox.session(name=f"slow-{member.slug}", tags=tags, default=False)
    def slow(session: nox.Session) -> None:
        _pytest(session, member, "slow")

    @nox.session(name=f"lowest-{member.slug}", tags=[*tags, "lowest"], default=False)
    def lowest(session: nox.Session) -> None:
        group = [
            r
            for r in _project(member).get("dependency-groups", {}).get("test", [])
            if isinstance(r, str)
        ]
        requirements = sorted(set(_expand([*_direct_requirements(member), *group], set())))
        session.log("lowest-direct: " + ", ".join(requirements))
        python = str(Path(session.virtualenv.location) / "bin" / "python")
        base = ["uv", "pip", "install", "--python", python, "--override", _overrides(session)]
        session.run_install(
            *base, "--resolution", "lowest-direct", *requirements, external=True, silent=True
        )
        local = {m.folder for m in MEMBERS if m.name in _local_members(member)}
        session.run_install(
            *base, "--no-deps", *[a for f in sorted(local) for a in ("-e", str(f))], external=True
        )
        session.run("uv", "pip", "list", "--python", python, external=True, silent=False)
        _pytest(session, member, "not slow", sync=False)

    @nox.session(name=f"typecheck-{member.slug}", tags=[*tags, "typecheck"], default=False)
    def typecheck(session: nox.Session) -> None:
        _sync(session, "--package", member.name, "--group", "test")
        session.install("mypy>=1.13")
        session.chdir(member.folder)
        config = str(ROOT / "pyproject.toml")
        session.run("mypy", "-p", member.module, "--config-file", config, env={"MYPYPATH": "src"})

    @nox.session(name=f"build-{member.slug}", tags=[*tags, "build"], default=False)
    def build(session: nox.Session) -> None:
        """Build, check, install from the wheels, run the smoke job; ``-- DIR`` then copies
        this member's checked wheel and sdist to DIR (what the release job publishes)."""
        keep = Path(session.posargs[0]).resolve() if session.posargs else None
        dist = Path(session.create_tmp()).resolve() / "dist"
        shutil.rmtree(dist, ignore_errors=True)
        names = [member.name] if member.slug == "shared" else [member.name, "icml26-shared"]
        for name in names:
            session.run(
                "uv",
                "build",
                "--package",
                name,
                "--no-sources",
                "--out-dir",
                str(dist),
                external=True,
                silent=True,
            )
        _sync(session, "--only-group", "build")
        artefacts = sorted(str(p) for p in dist.iterdir() if p.suffix in {".whl", ".gz"})
        session.run("twine", "check", "--strict", *artefacts)
        session.run("check-wheel-contents", *[a for a in artefacts if a.endswith(".whl")])
        # A clean venv, outside the workspace: only the two wheels and their PyPI dependencies.
        venv = Path(session.create_tmp()).resolve() / "clean-venv"
        shutil.rmtree(venv, ignore_errors=True)
        session.run("uv", "venv", "--quiet", str(venv), external=True)
        python = str(venv / "bin" / "python")
        wheels = [a for a in artefacts if a.endswith(".whl")]
        session.run("uv", "pip", "install", "--quiet", "--python", python, *wheels, external=True)
        session.run(
            python, "-c", f"import {member.module}; print('{member.module} imports')", external=True
        )
        icml26 = str(venv / "bin" / "icml26")
        session.run(icml26, "list", external=True)
        if member.slug != "shared":
            session.run(icml26, "show", member.slug, "--profile", "smoke", external=True)
            # The main job as a pip user runs it: from the wheels, outside the workspace.
            out = Path(session.create_tmp()).resolve() / "smoke-run"
            shutil.rmtree(out, ignore_errors=True)
            session.chdir(session.create_tmp())
            session.run(
                icml26, "run", member.slug, "--profile", "smoke", "--out", str(out), external=True
            )
            results = out / "results.json"
            if not results.is_file():
                session.error(f"icml26 run {member.slug} --profile smoke wrote no {results}")
            claims = json.loads(results.read_text())["claims"]
            session.log(f"smoke run from the wheels: {results} ({len(claims)} claims)")
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            stem = member.name.replace("-", "_")
            own = [a for a in artefacts if Path(a).name.startswith(stem + "-")]
            for artefact in own:
                shutil.copy2(artefact, keep)
            session.log(f"kept the checked artefacts in {keep}: {[Path(a).name for a in own]}")


def _local_members(member: Member) -> set[str]:
    """The workspace members ``member`` needs (itself included), installed from source."""
    names = {member.name}
    cfg = _project(member)
    raw = list(cfg["project"].get("dependencies", []))
    raw += [r for r in cfg.get("dependency-groups", {}).get("test", []) if isinstance(r, str)]
    for text in raw:
        name = Requirement(text).name
        if name in MEMBERS_BY_NAME and name not in names:
            names |= _local_members(MEMBERS_BY_NAME[name])
    return names


for _member in MEMBERS:
    MEMBERS_BY_NAME[_member.name] = _member
for _member in MEMBERS:
    _make_member_sessions(_member)


_CUDA_PROBE = """
import importlib.util, sys
found = False
if importlib.util.find_spec("torch"):
    import torch
    found = torch.cuda.is_available()
if not found and importlib.util.find_spec("jax"):
    import jax
    found = any(d.platform == "gpu" for d in jax.devices())
sys.exit(0 if found else 3)
"""

_HAS_DEVICE_FIELD = """
import sys
from icml26.shared.registry import find
cfg = find(sys.argv[1]).load().profiles["smoke"]
sys.exit(0 if "device" in type(cfg).__dataclass_fields__ else 3)
"""


@nox.session(tags=["gpu"], default=False)
def gpu(session: nox.Session) -> None:
    """Every member's ``gpu``-marked tests, then each paper's smoke job with ``device=cuda``
    (papers whose config has a ``device`` field; JAX papers use JAX's default device).
    Skips, with a message, where no CUDA device is visible."""
    _sync(session, "--all-packages", "--group", "dev")
    python = str(Path(session.virtualenv.location) / "bin" / "python")

    def probe(script: str, *args: str) -> bool:
        return subprocess.run([python, "-c", script, *args], check=False).returncode == 0

    if shutil.which("nvidia-smi"):
        # The lock holds CPU-only jaxlib: add the CUDA plugin of the same JAX version, so the
        # JAX packages' gpu tests and smoke jobs run on the device instead of skipping.
        version = session.run("python", "-c", "import jax; print(jax.__version__)", silent=True)
        if isinstance(version, str) and version.strip():
            session.run_install(
                "uv",
                "pip",
                "install",
                "--python",
                python,
                f"jax[cuda12]=={version.strip()}",
                external=True,
            )
    if not probe(_CUDA_PROBE):
        session.skip("no CUDA device visible to torch or jax: nothing to run on a GPU here")
    out = Path(session.create_tmp()).resolve() / "gpu-smoke"
    shutil.rmtree(out, ignore_errors=True)
    for member in MEMBERS:
        _pytest(session, member, "gpu", sync=False)
        if member.slug == "shared":
            continue
        overrides = ["--set", "device=cuda"] if probe(_HAS_DEVICE_FIELD, member.slug) else []
        session.chdir(ROOT)
        session.run(
            "icml26",
            "run",
            member.slug,
            "--profile",
            "smoke",
            "--out",
            str(out / member.slug),
            *overrides,
        )


# --- docs: the documentation site ------------------------------------------------------------

SITE_DIR = ROOT / "build" / "site"


@nox.session(tags=["docs"])
def docs(session: nox.Session) -> None:
    """The documentation site, strictly: every exported name documented (Args/Returns, the
    rule in ``tools/docs/exports.py``), ``mkdocs build --strict`` into ``build/site``
    (git-ignored; a broken link, reference or missing page fails), then the tests of
    ``tools/docs``: the docstring rule on a small package (``test_exports.py``) and the built
    site in headless Chromium (``test_site.py``: pages render with no console error, search
    finds a function; skips where no browser is installed; screenshot in
    ``build/docs-artefacts``). Only the ``docs`` group is installed: the API pages come from
    the sources by static analysis (griffe), no paper package is imported."""
    _sync(session, "--only-group", "docs")
    session.run("python", "tools/docs/exports.py")
    session.run(
        "mkdocs", "build", "--strict", "--site-dir", str(SITE_DIR), env={"NO_MKDOCS_2_WARNING": "1"}
    )
    session.run(
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-rs",
        "-s",
        "tools/docs",
        env={"ICML26_SITE_DIR": str(SITE_DIR)},
    )


# --- lint: import layering (import-linter) and dependency hygiene (deptry) ---------------------

# The one exempt list of the job-shape issue; read from its syntax tree, never imported.
MIGRATION = ROOT / "shared" / "src" / "icml26" / "shared" / "migration.py"
# A paper package's layers, top to bottom. Run files on top (``experiment`` and ``bench``
# independent of each other), then the reporting modules (may import each other), then every
# other module as one layer of method modules (may import each other, never in a cycle: the
# acyclic contract), then ``paper``, then ``config`` at the bottom.
TOP_LAYER = ("experiment", "bench")
REPORT_LAYER = ("figures", "tables")
BOTTOM_LAYERS = ("paper", "config")
# Entry points outside the layers (they may import anything but ``experiment``).
ENTRY_POINTS = ("cli", "__main__")


def unmigrated() -> frozenset[str]:
    """``UNMIGRATED`` of ``icml26/shared/migration.py``: the string constants of the
    expression assigned to it, read with ``ast`` (the lint session does not import packages)."""
    tree = ast.parse(MIGRATION.read_text(), filename=str(MIGRATION))
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == "UNMIGRATED" for t in targets):
            return frozenset(
                n.value
                for n in ast.walk(value)
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            )
    raise ValueError(f"{MIGRATION}: no assignment to UNMIGRATED")


def _package_dir(member: Member) -> Path:
    return member.folder.joinpath("src", *member.module.split("."))


def _children(package: Path) -> list[str]:
    """The modules and subpackages directly inside a package folder."""
    names = []
    for path in sorted(package.iterdir()):
        if path.suffix == ".py" and path.stem != "__init__":
            names.append(path.stem)
        elif path.is_dir() and (path / "__init__.py").is_file():
            names.append(path.name)
    return names


def _modules(package: Path, name: str) -> list[str]:
    """``name`` and every module below it."""
    out = [name]
    for child in _children(package):
        path = package / child
        out += _modules(path, f"{name}.{child}") if path.is_dir() else [f"{name}.{child}"]
    return out


def _layering_contracts(member: Member) -> list[dict[str, object]]:
    """The job shape of a migrated paper package as import-linter contracts."""
    package, mod = _package_dir(member), member.module
    children = _children(package)
    fixed = {*TOP_LAYER, *REPORT_LAYER, *BOTTOM_LAYERS, *ENTRY_POINTS}
    top = [c for c in TOP_LAYER if c in children]
    report = [c for c in REPORT_LAYER if c in children]
    method = [c for c in children if c not in fixed]
    layers = [" | ".join(top), " : ".join(report), " : ".join(method)]
    layers += [c for c in BOTTOM_LAYERS if c in children]
    contracts: list[dict[str, object]] = [
        {
            "id": f"{member.slug}-layers",
            "name": f"{mod}: experiment | bench > figures : tables > method modules > paper > config",
            "type": "layers",
            "containers": [mod],
            "layers": [layer for layer in layers if layer],
            # every child is in a layer (or an entry point): a new module cannot escape
            "exhaustive": True,
            "exhaustive_ignores": [c for c in ENTRY_POINTS if c in children],
        },
        {
            "id": f"{member.slug}-acyclic",
            "name": f"{mod}: no import cycles between sibling modules (at any depth)",
            "type": "acyclic_siblings",
            "ancestors": [mod],
        },
    ]
    if "experiment" in children:
        # The layers keep every layered module off `experiment`; this also covers the package's
        # own __init__ and the entry points, which are in no layer.
        experiment = f"{mod}.experiment"
        contracts.append(
            {
                "id": f"{member.slug}-experiment-on-top",
                "name": f"nothing in {mod} imports {experiment}",
                "type": "forbidden",
                "source_modules": [
                    m
                    for m in _modules(package, mod)
                    if m != experiment and not m.startswith(experiment + ".")
                ],
                "forbidden_modules": [experiment],
                "as_packages": False,
            }
        )
    return contracts


def _import_linter_config(session: nox.Session) -> Path:
    """Write the import-linter contracts (TOML) for this checkout; return the file."""
    papers = [m for m in MEMBERS if m.slug != "shared"]
    exempt = unmigrated()
    unknown = exempt - {m.slug for m in papers}
    if unknown:
        session.error(f"{MIGRATION}: UNMIGRATED names no paper package: {sorted(unknown)}")
    contracts: list[dict[str, object]] = [
        {
            "id": "shared-imports-no-paper",
            "name": "icml26.shared imports no paper package",
            "type": "forbidden",
            "source_modules": ["icml26.shared"],
            "forbidden_modules": [m.module for m in papers],
        },
        {
            # deptry sees only the top-level `icml26`; this keeps the undeclared paper-to-paper
            # dependency out instead.
            "id": "papers-independent",
            "name": "paper packages import no other paper package",
            "type": "independence",
            "modules": [m.module for m in papers],
        },
    ]
    migrated = [m for m in papers if m.slug not in exempt]
    for member in migrated:
        contracts += _layering_contracts(member)
    session.log(
        f"layering contracts for {len(migrated)} migrated package(s)"
        f"{': ' + ', '.join(m.slug for m in migrated) if migrated else ''}; "
        f"{len(exempt)} exempt (UNMIGRATED in {MIGRATION.relative_to(ROOT)})"
    )
    # TOML written as JSON values (strings, lists of strings and booleans are valid TOML).
    lines = ["[tool.importlinter]", f"root_packages = {json.dumps([m.module for m in MEMBERS])}"]
    for contract in contracts:
        lines += ["", "[[tool.importlinter.contracts]]"]
        lines += [f"{key} = {json.dumps(value)}" for key, value in contract.items()]
    path = Path(session.create_tmp()).resolve() / "importlinter.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _deptry(session: nox.Session) -> list[str]:
    """deptry in each member's folder, against that member's own pyproject (its per-member
    ignores are in ``[tool.deptry.per_rule_ignores]`` there, each with its reason).

    deptry maps imports to distributions by *top-level* module, and every member ships the
    top-level ``icml26``: for a paper package ``icml26`` is the ``icml26-shared`` dependency, for
    ``shared`` it is first party. (Paper-to-paper imports, which this cannot tell apart, are
    the ``papers-independent`` import-linter contract.) Returns the slugs with findings."""
    failed = []
    for member in MEMBERS:
        session.chdir(member.folder)
        if member.slug == "shared":
            namespace = ["--known-first-party", "icml26"]
        else:
            namespace = ["--package-module-name-map", "icml26-shared=icml26"]
        try:
            session.run("deptry", "src", "--no-ansi", *namespace, silent=False)
        except nox.command.CommandFailed:
            failed.append(member.slug)
    session.chdir(ROOT)
    return failed


# reuse_venv: `uv sync` leaves the venv exactly as locked, and deleting ~300 installed packages
# before each run would cost ~20 s on a loaded 2-core machine (CI starts from scratch anyway).
@nox.session(tags=["lint"], reuse_venv=True)
def lint(session: nox.Session) -> None:
    """ruff (check + format), the lock is current, GitHub workflows valid (offline), the
    import layering (import-linter), each member's declared dependencies (deptry)."""
    # The whole workspace with every extra: import-linter builds the import graph of the
    # installed packages, and deptry reads installed metadata to map imports to distributions.
    _sync(session, "--all-packages", "--all-extras", "--group", "lint", "--group", "test")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("uv", "lock", "--check", external=True)
    workflows = sorted(str(p) for p in (ROOT / ".github" / "workflows").glob("*.yml"))
    session.run("check-jsonschema", "--builtin-schema", "vendor.github-workflows", *workflows)
    session.run("zizmor", "--offline", "--no-progress", str(ROOT / ".github" / "workflows"))
    # Both checks run to the end, so one lint run shows every finding.
    failed = []
    config = _import_linter_config(session)
    cache = Path(session.create_tmp()).resolve() / "import-linter-cache"
    try:
        session.run("lint-imports", "--no-logo", "--cache-dir", str(cache), str(config))
    except nox.command.CommandFailed:
        failed.append(f"import-linter (contracts in {config})")
    failed += [f"deptry in {slug}" for slug in _deptry(session)]
    # Every paper's ``__all__`` after importing all its submodules: each name is the object
    # the package means, not a submodule that shadowed it (``tests-shared`` runs the
    # source-only version; this one needs every member installed, as here).
    session.chdir(ROOT / "shared")
    try:
        session.run("pytest", "-q", "-p", "no:cacheprovider", "tests/test_public_names.py")
    except nox.command.CommandFailed:
        failed.append("public names (shared/tests/test_public_names.py)")
    session.chdir(ROOT)
    if failed:
        session.error("broken: " + "; ".join(failed))

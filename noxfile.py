"""Nox sessions for the icml26 workspace, discovered from ``pyproject.toml`` (never listed by hand).

Per member ``<slug>`` (``shared`` or a folder of ``packages/``), tagged ``<slug>``:

* ``tests-<slug>``  sync that member alone from the lock into the session venv, run its tests
  from its folder, ``slow`` marker excluded (default);
* ``slow-<slug>``   only the ``slow`` tests;
* ``build-<slug>``  build wheel + sdist with ``--no-sources``, check them (twine,
  check-wheel-contents), install the wheel beside a freshly built ``icml26-shared`` wheel in a
  clean venv, import it and run ``icml26 list``;
* ``typecheck-<slug>``  mypy over the member's sources.

Plus ``lint`` (default): ruff, ``uv lock --check``, and the GitHub workflows validated offline.

Run everything that CI runs by default with ``uv run nox``; one package with ``nox -t <slug>``.
"""

from __future__ import annotations

import glob
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

import nox

ROOT = Path(__file__).parent
nox.options.default_venv_backend = "uv"
nox.needs_version = ">=2024.10.9"


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


def _pytest(session: nox.Session, member: Member, marker: str) -> None:
    _sync(session, "--package", member.name, "--group", "test")
    session.chdir(member.folder)
    # Exit code 5 = no tests collected: fine for slow-* on a package without slow tests.
    success = (0, 5) if marker == "slow" else (0,)
    session.run("pytest", "-m", marker, *session.posargs, success_codes=success)


def _make_member_sessions(member: Member) -> None:
    tags = [member.slug]

    @nox.session(name=f"tests-{member.slug}", tags=[*tags, "tests"], default=True)
    def tests(session: nox.Session) -> None:
        _pytest(session, member, "not slow")

    @nox.session(name=f"slow-{member.slug}", tags=tags, default=False)
    def slow(session: nox.Session) -> None:
        _pytest(session, member, "slow")

    @nox.session(name=f"typecheck-{member.slug}", tags=[*tags, "typecheck"], default=False)
    def typecheck(session: nox.Session) -> None:
        _sync(session, "--package", member.name, "--group", "test")
        session.install("mypy>=1.13")
        session.chdir(member.folder)
        config = str(ROOT / "pyproject.toml")
        session.run("mypy", "-p", member.module, "--config-file", config, env={"MYPYPATH": "src"})

    @nox.session(name=f"build-{member.slug}", tags=[*tags, "build"], default=False)
    def build(session: nox.Session) -> None:
        dist = Path(session.create_tmp()) / "dist"
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
        venv = Path(session.create_tmp()) / "clean-venv"
        shutil.rmtree(venv, ignore_errors=True)
        session.run("uv", "venv", "--quiet", str(venv), external=True)
        python = str(venv / "bin" / "python")
        wheels = [a for a in artefacts if a.endswith(".whl")]
        session.run("uv", "pip", "install", "--quiet", "--python", python, *wheels, external=True)
        session.run(
            python, "-c", f"import {member.module}; print('{member.module} imports')", external=True
        )
        session.run(str(venv / "bin" / "icml26"), "list", external=True)
        if member.slug != "shared":
            session.run(
                str(venv / "bin" / "icml26"),
                "show",
                member.slug,
                "--profile",
                "smoke",
                external=True,
            )


for _member in MEMBERS:
    _make_member_sessions(_member)


@nox.session(tags=["lint"])
def lint(session: nox.Session) -> None:
    """ruff (check + format), the lock is current, GitHub workflows valid (offline)."""
    _sync(session, "--only-group", "lint")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("uv", "lock", "--check", external=True)
    workflows = sorted(str(p) for p in (ROOT / ".github" / "workflows").glob("*.yml"))
    session.run("check-jsonschema", "--builtin-schema", "vendor.github-workflows", *workflows)
    session.run("zizmor", "--offline", "--no-progress", str(ROOT / ".github" / "workflows"))

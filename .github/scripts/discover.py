"""Print the CI matrix: the workspace members whose files changed since ``--base``.

Every member is selected when something all of them depend on changed: ``shared/``, the lock,
the root ``pyproject.toml``, the noxfile or the workflows. Output (for ``$GITHUB_OUTPUT``)::

    packages=["ro-hnn", "shared"]

With ``--floors`` only the members whose dependency floors may have moved are selected (for
the ``lowest-<slug>`` sessions): those whose own ``pyproject.toml`` changed, and every member
when ``shared/pyproject.toml`` (whose requirements each member inherits) or the root one did.

Members come from the noxfile's discovery, so there is one list of members in the repo.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GLOBAL = ("shared/", "uv.lock", "pyproject.toml", "noxfile.py", ".github/", ".ci/")


def changed_files(base: str) -> list[str] | None:
    """Files changed between ``base`` and HEAD, or None when ``base`` is unknown (test all)."""
    if not base or set(base) == {"0"}:
        return None
    proc = subprocess.run(
        ["git", "diff", "--name-only", f"{base}...HEAD"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stdout.splitlines() if proc.returncode == 0 else None


def select(files: list[str] | None, members: dict[str, str]) -> list[str]:
    """Slugs to test given changed ``files`` and ``members`` (slug -> folder relative to ROOT)."""

    def is_global(path: str) -> bool:
        return any(path.startswith(g) if g.endswith("/") else path == g for g in GLOBAL)

    if files is None or any(is_global(f) for f in files):
        return sorted(members)
    return sorted(
        slug for slug, folder in members.items() if any(f.startswith(folder + "/") for f in files)
    )


def select_floors(files: list[str] | None, members: dict[str, str]) -> list[str]:
    """Slugs whose ``lowest-<slug>`` session must run given changed ``files``."""
    if files is None or any(f in ("pyproject.toml", "shared/pyproject.toml") for f in files):
        return sorted(members)
    return sorted(slug for slug, folder in members.items() if f"{folder}/pyproject.toml" in files)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base", default="", help="git ref to diff against (empty: all members)")
    parser.add_argument(
        "--floors", action="store_true", help="only members whose dependency floors may have moved"
    )
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from noxfile import MEMBERS

    members = {m.slug: m.folder.relative_to(ROOT).as_posix() for m in MEMBERS}
    chooser = select_floors if args.floors else select
    print(f"packages={json.dumps(chooser(changed_files(args.base), members))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

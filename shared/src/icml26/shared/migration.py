"""Which packages still have the old shape (the job-shape issue's exempt list).

One list, read by two checks:

* ``nox -s lint`` writes the import-linter layering contract for every paper package *not*
  listed here (the noxfile reads this file's syntax tree, it does not import it);
* :func:`icml26.shared.testing.check_paper` reports a comparative claim without a placebo, or
  an absolute claim without a floor, as a warning for a listed package and as an error for
  every other one.

Each paper issue removes its packages from this list when it migrates them.
"""

from __future__ import annotations

__all__ = ["UNMIGRATED"]

#: Paper slugs still exempt from the layering contract and the strict placebo check: none since
#: 2026-12-04 (every paper issue migrated its packages); kept so a new package can start here.
UNMIGRATED: frozenset[str] = frozenset()

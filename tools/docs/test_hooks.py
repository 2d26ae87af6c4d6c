"""The site's generated pages (``tools/docs/hooks.py``): the landing page's status column and
the links of a README shown at another place of the site."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, cast

import pytest
from mkdocs.structure.files import Files

sys.path.insert(0, str(Path(__file__).resolve().parent))

from exports import ROOT
from hooks import _rewrite_links, _status

# Summary lines exactly as ``icml26 readme`` writes them (``_summary_line`` in
# ``icml26/shared/readme.py``; its test checks every form matches ``SUMMARY_PATTERN``).
FORMS = {
    "Profile `quick`, 2026-12-04, commit `0123456789ab`, version 0.1.0: 41.2 s wall, "
    "38.0 s CPU. Claims: 2 held, 1 failed.": "quick 2026-12-04: 2 held, 1 failed",
    "Profile `quick` (bench job), 2026-12-03, commit unknown, version 1.2.3: 9.5 s wall. "
    "Claims: 1 held.": "quick (bench job) 2026-12-03: 1 held",
    "Profile `full`, 2026-12-02, commit `0123456789ab` (with uncommitted changes), version "
    "0.2.0: 100.0 s wall. Claims (decided again from the run's metrics with the current rules: "
    "`--redecide`): 3 undecided.": "full 2026-12-02: 3 undecided (decided again)",
    "Profile `smoke` (bench job), 2026-12-01, commit unknown, version 0.1.0: 1.0 s wall. "
    "Claims (decided again from the run's metrics with the current rules: `--redecide`): "
    "no claims.": "smoke (bench job) 2026-12-01: no claims (decided again)",
}


def _readme(line: str) -> str:
    return (
        "# paper\n\nProse.\n\n<!-- results:begin -->\n<!-- Generated ... -->\n\n"
        f"{line} History: [RESULTS.md](RESULTS.md).\n<!-- results:end -->\n"
    )


@pytest.mark.parametrize(("line", "status"), FORMS.items())
def test_status_reads_every_form_of_the_summary_line(line: str, status: str) -> None:
    assert _status(_readme(line)) == status


def test_status_without_a_block_says_so() -> None:
    assert _status("# paper\n\nNo results block.\n") == "no generated results yet"


def test_an_unreadable_summary_line_fails_the_build() -> None:
    with pytest.raises(ValueError, match=r"packages/x/README\.md.*summary line"):
        _status(_readme("Ran it on 2026-12-04; it went well."), "packages/x/README.md")


# No link below needs the config (it is used for repository links and copied files only).
CONFIG = cast(Any, None)


@pytest.mark.parametrize(
    ("folder", "page_dir", "link", "expected"),
    [
        # The root README's command section shown on the shared page: a same-page anchor.
        (ROOT, "shared", "[s](shared/README.md#icml26-reproduce)", "[s](#icml26-reproduce)"),
        (ROOT, "shared", "[s](shared/README.md)", "[s](index.md)"),
        (ROOT / "shared", "shared", "[r](../README.md)", "[r](../index.md)"),
        # A package README two folders down.
        (ROOT / "packages" / "x", "papers/x", "[r](../../README.md)", "[r](../../index.md)"),
        (
            ROOT / "packages" / "x",
            "papers/x",
            "[s](../../shared/README.md#claims)",
            "[s](../../shared/index.md#claims)",
        ),
    ],
)
def test_readme_links_are_relative_to_the_page(
    folder: Path, page_dir: str, link: str, expected: str
) -> None:
    assert _rewrite_links(link, folder, page_dir, CONFIG, Files([])) == expected

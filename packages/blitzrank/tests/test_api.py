"""The public API: a short ``__all__`` of documented objects, a version, no heavy imports."""

from __future__ import annotations

import inspect
import subprocess
import sys
import types

import icml26.blitzrank as pkg

SUBPACKAGES = {"baselines", "data", "oracles"}


def test_all_is_short_and_names_the_objects_meant() -> None:
    assert len(pkg.__all__) <= 15
    for name in pkg.__all__:
        obj = getattr(pkg, name)
        assert isinstance(obj, types.ModuleType) == (name in SUBPACKAGES), name
    assert isinstance(pkg.__version__, str)
    assert pkg.__version__


def test_every_export_is_documented_google_style() -> None:
    for name in pkg.__all__:
        obj = getattr(pkg, name)
        doc = inspect.getdoc(obj) or ""
        assert doc, f"{name} has no docstring"
        if isinstance(obj, types.ModuleType):
            continue
        if inspect.isfunction(obj):
            assert "Args:" in doc, name
            assert "Returns:" in doc, name
        else:  # a class: its fields or constructor arguments
            assert "Args:" in doc or "Attributes:" in doc, name
            for meth in ("rank", "arank"):
                if hasattr(obj, meth):
                    mdoc = inspect.getdoc(getattr(obj, meth)) or ""
                    assert "Args:" in mdoc, f"{name}.{meth}"
                    assert "Returns:" in mdoc, f"{name}.{meth}"


def test_import_pulls_no_framework() -> None:
    code = "import sys, icml26.blitzrank; print(sorted({'torch', 'transformers', 'openai'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

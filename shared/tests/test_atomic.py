from __future__ import annotations

import json
from pathlib import Path

import pytest

from icml26.shared.atomic import atomic_path, atomic_write_json, atomic_write_text


def test_atomic_write_replaces_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "f.txt"
    atomic_write_text(target, "one")
    atomic_write_text(target, "two")
    assert target.read_text() == "two"
    assert sorted(p.name for p in target.parent.iterdir()) == ["f.txt"]


def test_failed_write_leaves_old_content_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("old")

    def killed_writer() -> None:
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed")

    with pytest.raises(RuntimeError, match="killed"):
        killed_writer()
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_unserialisable_json_writes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    with pytest.raises(ValueError, match="Out of range"):
        atomic_write_json(target, {"x": float("nan")})
    with pytest.raises(TypeError):
        atomic_write_json(target, {"x": object()})
    assert list(tmp_path.iterdir()) == []
    atomic_write_json(target, {"x": 1})
    assert json.loads(target.read_text()) == {"x": 1}


def test_written_files_get_ordinary_permissions(tmp_path: Path) -> None:
    import os

    umask = os.umask(0o022)
    try:
        target = atomic_write_text(tmp_path / "r.txt", "x")
    finally:
        os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o644

"""The JSONL reader: malformed lines reported with their numbers, skipped or refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icml26.disempowerment.conversations import (
    MalformedLogError,
    parse_conversation,
    read_jsonl,
    write_jsonl,
)
from icml26.disempowerment.synthetic import generate_log


def _good(i: int) -> dict:
    return {
        "id": f"c{i}",
        "user_id": "u1",
        "timestamp": "2025-03-14T09:26:53Z",
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
        "feedback": "up",
    }


def test_round_trip(tmp_path: Path) -> None:
    log = generate_log(50, seed=0).conversations
    path = write_jsonl(tmp_path / "log.jsonl", log)
    back, report = read_jsonl(path)
    assert back == log
    assert report.malformed == []
    assert report.n_read == 50


def test_malformed_lines_reported_with_numbers(tmp_path: Path) -> None:
    lines = [
        json.dumps(_good(1)),
        "{not json",
        json.dumps({**_good(2), "messages": []}),
        "",
        json.dumps({**_good(3), "feedback": "meh"}),
        json.dumps(_good(1)),  # duplicate id
        json.dumps({k: v for k, v in _good(4).items() if k != "user_id"}),
        json.dumps({**_good(5), "timestamp": "yesterday"}),
        json.dumps(_good(6)),
    ]
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(lines) + "\n")
    convs, report = read_jsonl(path)
    assert [c.id for c in convs] == ["c1", "c6"]
    assert [n for n, _ in report.malformed] == [2, 3, 5, 7, 8]
    assert [n for n, _ in report.duplicates] == [6]
    assert "user_id" in dict(report.malformed)[7]
    with pytest.raises(MalformedLogError, match="line 2"):
        read_jsonl(path, on_error="refuse")


def test_bad_files(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no conversation log"):
        read_jsonl(tmp_path / "missing.jsonl")
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(b'{"id": "\xe9"}\n')
    with pytest.raises(ValueError, match="UTF-8"):
        read_jsonl(bad)
    with pytest.raises(ValueError, match="on_error"):
        read_jsonl(bad, on_error="ignore")


def test_parse_conversation_messages() -> None:
    with pytest.raises(ValueError, match="role"):
        parse_conversation({**_good(1), "messages": [{"role": "bot", "content": "x"}]})
    c = parse_conversation({**_good(1), "timestamp": "2025-03-14T10:26:53+01:00", "feedback": None})
    assert c.month == "2025-03"
    assert c.timestamp.hour == 9
    assert c.feedback is None

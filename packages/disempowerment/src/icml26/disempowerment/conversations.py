"""Conversation logs: the input schema and a JSONL reader that reports every malformed line.

One conversation per line::

    {"id": "c1", "user_id": "u7", "timestamp": "2025-03-14T09:26:53Z",
     "messages": [{"role": "user", "content": "..."}, {"role": "assistant", "content": "..."}],
     "feedback": "up"}            # optional: "up", "down" or null

``user_id`` is required: k-anonymity counts distinct users, not conversations.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "Conversation",
    "LogReadReport",
    "MalformedLogError",
    "parse_conversation",
    "read_jsonl",
    "write_jsonl",
]

_ROLES = frozenset({"system", "user", "assistant"})
_FEEDBACK = {"up": True, "down": False, None: None}


class MalformedLogError(ValueError):
    """A log with malformed lines read with ``on_error="refuse"``."""


@dataclass(frozen=True)
class Conversation:
    """One assistant conversation.

    Attributes:
        id: conversation id (unique in a log).
        user_id: pseudonymous account id; groups are k-anonymous over these.
        timestamp: UTC time of the conversation.
        messages: ``(role, content)`` pairs, roles ``system``/``user``/``assistant``.
        feedback: ``True`` (thumbs up), ``False`` (thumbs down) or ``None`` (no rating).
    """

    id: str
    user_id: str
    timestamp: _dt.datetime
    messages: tuple[tuple[str, str], ...]
    feedback: bool | None = None

    @property
    def month(self) -> str:
        """``"YYYY-MM"`` of the timestamp."""
        return f"{self.timestamp.year:04d}-{self.timestamp.month:02d}"

    def text(self) -> str:
        """The transcript as one string (``"user: ...\\nassistant: ..."``)."""
        return "\n".join(f"{role}: {content}" for role, content in self.messages)

    def to_json(self) -> dict[str, Any]:
        fb = {True: "up", False: "down", None: None}[self.feedback]
        return {
            "id": self.id,
            "user_id": self.user_id,
            "timestamp": self.timestamp.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "messages": [{"role": r, "content": c} for r, c in self.messages],
            "feedback": fb,
        }


def _parse_time(value: Any) -> _dt.datetime:
    if not isinstance(value, str):
        raise ValueError("timestamp must be an ISO 8601 string")
    try:
        ts = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"timestamp {value!r} is not ISO 8601") from None
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=_dt.UTC)
    return ts.astimezone(_dt.UTC)


def parse_conversation(obj: Any) -> Conversation:
    """A :class:`Conversation` from one decoded JSON object; ``ValueError`` says what is wrong."""
    if not isinstance(obj, dict):
        raise ValueError(f"a line must hold a JSON object, got {type(obj).__name__}")
    for key in ("id", "user_id", "timestamp", "messages"):
        if key not in obj:
            raise ValueError(f"missing field {key!r}")
    cid, uid = obj["id"], obj["user_id"]
    if not isinstance(cid, str | int) or isinstance(cid, bool) or str(cid) == "":
        raise ValueError("id must be a non-empty string or integer")
    if not isinstance(uid, str | int) or isinstance(uid, bool) or str(uid) == "":
        raise ValueError("user_id must be a non-empty string or integer")
    msgs = obj["messages"]
    if not isinstance(msgs, list) or not msgs:
        raise ValueError("messages must be a non-empty list")
    parsed = []
    for i, m in enumerate(msgs):
        if not isinstance(m, dict):
            raise ValueError(f"message {i} must be an object")
        role, content = m.get("role"), m.get("content")
        if role not in _ROLES:
            raise ValueError(f"message {i} has role {role!r}; expected one of {sorted(_ROLES)}")
        if not isinstance(content, str):
            raise ValueError(f"message {i} content must be a string")
        parsed.append((str(role), content))
    fb = obj.get("feedback")
    if fb not in _FEEDBACK:
        raise ValueError(f"feedback must be 'up', 'down' or null, got {fb!r}")
    return Conversation(
        id=str(cid),
        user_id=str(uid),
        timestamp=_parse_time(obj["timestamp"]),
        messages=tuple(parsed),
        feedback=_FEEDBACK[fb],
    )


@dataclass
class LogReadReport:
    """What reading a log found: line numbers (1-based) and reasons of malformed lines."""

    path: str
    n_lines: int = 0
    n_read: int = 0
    malformed: list[tuple[int, str]] = field(default_factory=list)
    duplicates: list[tuple[int, str]] = field(default_factory=list)

    def summary(self, limit: int = 10) -> str:
        rows = [f"line {n}: {why}" for n, why in (self.malformed + self.duplicates)[:limit]]
        more = len(self.malformed) + len(self.duplicates) - len(rows)
        tail = f"\n  ... and {more} more" if more > 0 else ""
        return (
            f"{self.path}: {len(self.malformed)} malformed and {len(self.duplicates)} duplicate "
            f"line(s) of {self.n_lines}:\n  " + "\n  ".join(rows) + tail
        )


def read_jsonl(
    path: str | os.PathLike[str], *, on_error: str = "skip"
) -> tuple[list[Conversation], LogReadReport]:
    """Read a conversation log.

    Args:
        path: a JSONL file, one conversation per line (blank lines are ignored).
        on_error: ``"skip"`` (drop malformed lines, listing each in the report) or
            ``"refuse"`` (raise :class:`MalformedLogError` naming them).

    Returns:
        ``(conversations, report)``; a duplicate ``id`` counts as malformed.

    Raises:
        FileNotFoundError: no file at ``path``.
        MalformedLogError: malformed or duplicate lines with ``on_error="refuse"``.
        ValueError: an unknown ``on_error``, or a file that is not UTF-8 text.
    """
    if on_error not in ("skip", "refuse"):
        raise ValueError(f"on_error must be 'skip' or 'refuse', got {on_error!r}")
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no conversation log at {p}")
    report = LogReadReport(path=str(p))
    out: list[Conversation] = []
    seen: set[str] = set()
    with open(p, encoding="utf-8", errors="strict") as fh:
        for n, line in enumerate(_lines(fh), start=1):
            report.n_lines = n
            if not line.strip():
                continue
            try:
                conv = parse_conversation(json.loads(line))
            except json.JSONDecodeError as exc:
                report.malformed.append((n, f"not JSON ({exc.msg})"))
                continue
            except ValueError as exc:
                report.malformed.append((n, str(exc)))
                continue
            if conv.id in seen:
                report.duplicates.append((n, f"duplicate id {conv.id!r}"))
                continue
            seen.add(conv.id)
            out.append(conv)
    report.n_read = len(out)
    if on_error == "refuse" and (report.malformed or report.duplicates):
        raise MalformedLogError(report.summary())
    return out, report


def _lines(fh: Iterable[str]) -> Iterator[str]:
    try:
        yield from fh
    except UnicodeDecodeError as exc:
        raise ValueError(f"the log is not UTF-8 text: {exc}") from None


def write_jsonl(path: str | os.PathLike[str], conversations: Sequence[Conversation]) -> Path:
    """Write ``conversations`` as a JSONL log (atomically)."""
    from icml26.shared import atomic_write_text

    text = "".join(json.dumps(c.to_json()) + "\n" for c in conversations)
    return atomic_write_text(Path(path), text)

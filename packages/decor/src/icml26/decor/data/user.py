"""A user's corpus and questions.

* corpus JSONL: one ``{"id": ..., "text": ...}`` per line (``"contents"`` is accepted for the
  text, as in Search-R1's / pyserini's ``wiki-18.jsonl``);
* questions JSONL: ``{"question": ..., "answers": [...], "gold": [passage ids]?, "hops":
  "hop1".."hop3"?}`` per line; a Search-R1 data file (``golden_answers``, or
  ``reward_model.ground_truth.target``; ``.jsonl`` or ``.parquet``) reads the same way.

Every problem is reported with the file and line: a passage without an id, a question with no
answer, a gold id that is not in the corpus.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from icml26.decor.data.types import HOPS, Passage, Question

__all__ = ["DataFileError", "load_corpus", "load_questions"]


class DataFileError(ValueError):
    """A corpus or question file that cannot be used (the message names file and line)."""


def _rows(path: Path) -> Iterator[tuple[int, Any]]:
    if not path.is_file():
        raise DataFileError(f"no such file: {path}")
    if path.suffix == ".parquet":
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover
            raise DataFileError(f"{path}: reading parquet needs pandas and pyarrow") from exc
        for i, row in enumerate(pd.read_parquet(path).to_dict("records"), 1):
            yield i, row
        return
    with path.open(encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield i, json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataFileError(f"{path}:{i}: not valid JSON ({exc.msg})") from None


def load_corpus(path: str | Path) -> list[Passage]:
    """Passages of a JSONL corpus (see the module docstring).

    Args:
        path: one ``{"id": ..., "text" | "contents": ...}`` object per line.

    Returns:
        The passages, in file order.

    Raises:
        DataFileError: a missing file, bad JSON, a passage without id or text, or a repeated
            id (the message names file and line).
    """
    path = Path(path)
    out, seen = [], set()
    for i, row in _rows(path):
        if not isinstance(row, dict):
            raise DataFileError(f"{path}:{i}: a passage must be a JSON object")
        pid = row.get("id")
        if pid is None or str(pid) == "":
            raise DataFileError(f"{path}:{i}: passage has no 'id'")
        text = row.get("text", row.get("contents"))
        if not isinstance(text, str) or not text.strip():
            raise DataFileError(f"{path}:{i}: passage {pid!r} has no 'text'")
        if str(pid) in seen:
            raise DataFileError(f"{path}:{i}: passage id {pid!r} repeats")
        seen.add(str(pid))
        out.append(Passage(str(pid), text))
    if not out:
        raise DataFileError(f"{path}: the corpus is empty")
    return out


def _answers(row: dict[str, Any]) -> Any:
    for key in ("answers", "golden_answers"):
        if key in row:
            return row[key]
    target = row.get("reward_model", {})
    if isinstance(target, dict):
        return target.get("ground_truth", {}).get("target")
    return None


def load_questions(path: str | Path, passages: Sequence[Passage] | None = None) -> list[Question]:
    """Questions of a JSONL (or Search-R1 parquet) file.

    Args:
        path: see the module docstring for the accepted fields.
        passages: the corpus, to check gold passage ids against (optional).

    Returns:
        The questions (``gold`` empty when the file has none: the intrinsic rewards then
        use the passages that contain an answer).

    Raises:
        DataFileError: a missing file, a question without text or answers, or a gold id
            not in ``passages`` (the message names file and line).
    """
    path = Path(path)
    known = {p.pid for p in passages} if passages is not None else None
    out = []
    for i, row in _rows(path):
        if not isinstance(row, dict):
            raise DataFileError(f"{path}:{i}: a question must be a JSON object")
        text = row.get("question")
        if not isinstance(text, str) or not text.strip():
            raise DataFileError(f"{path}:{i}: no 'question' text")
        answers = _answers(row)
        if isinstance(answers, str):
            answers = [answers]
        answers = [str(a) for a in (list(answers) if answers is not None else []) if str(a).strip()]
        if not answers:
            raise DataFileError(f"{path}:{i}: question {text[:40]!r} has no answers")
        gold = [str(g) for g in row.get("gold", []) or []]
        if known is not None and (missing := [g for g in gold if g not in known]):
            raise DataFileError(f"{path}:{i}: gold passage ids {missing[:3]} are not in the corpus")
        hops = row.get("hops", "hop1")
        if hops not in HOPS:
            raise DataFileError(f"{path}:{i}: hops must be one of {HOPS}, got {hops!r}")
        out.append(Question(str(row.get("id", f"q{i}")), text, tuple(answers), tuple(gold), hops))
    if not out:
        raise DataFileError(f"{path}: no questions")
    return out

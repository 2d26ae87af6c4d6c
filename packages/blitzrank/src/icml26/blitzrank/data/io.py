"""A user's own reranking data: a JSONL of queries with candidates, or TREC run + qrels.

JSONL, one query per line::

    {"qid": "q1", "query": "what is ...", "candidates": [
        {"id": "d3", "text": "...", "relevance": 2}, {"id": "d7", "text": "..."}]}

Candidates are in first-stage order; ``relevance`` defaults to 0. :func:`load_queries` keeps each
query's first ``depth`` candidates.

TREC: a run file (``qid Q0 docid rank score tag``), a qrels file (``qid 0 docid grade``), the
query texts (TSV ``qid<TAB>text``) and the passages (TSV ``docid<TAB>text`` or JSONL with
``id``/``text``). Each query's candidates are its run's top ``depth`` by rank.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from icml26.blitzrank.data.types import RerankQuery

__all__ = [
    "TrecHit",
    "load_jsonl_queries",
    "load_queries",
    "load_trec",
    "read_trec_run",
    "write_trec_run",
]


def _existing(path: str | os.PathLike[str]) -> Path:
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no such file: {p}")
    return p


def load_jsonl_queries(
    path: str | os.PathLike[str], *, depth: int | None = None
) -> list[RerankQuery]:
    """Queries from a JSONL file (see the module docstring), each cut to its first ``depth``
    candidates (first-stage order) when ``depth`` is given."""
    if depth is not None and depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    p = _existing(path)
    out = []
    for lineno, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{p}:{lineno}: not valid JSON ({exc.msg})") from exc
        if not isinstance(obj, dict) or "query" not in obj or "candidates" not in obj:
            raise ValueError(f"{p}:{lineno}: needs the keys 'query' and 'candidates'")
        cands = obj["candidates"]
        if not isinstance(cands, list) or any(
            not isinstance(c, dict) or "text" not in c for c in cands
        ):
            raise ValueError(f"{p}:{lineno}: every candidate needs a 'text'")
        cands = cands[:depth]
        out.append(
            RerankQuery(
                qid=str(obj.get("qid", f"q{lineno}")),
                query=str(obj["query"]),
                passages=tuple(str(c["text"]) for c in cands),
                doc_ids=tuple(str(c.get("id", i)) for i, c in enumerate(cands)),
                relevance=np.array([float(c.get("relevance", 0)) for c in cands]),
            )
        )
    if not out:
        raise ValueError(f"{p}: no queries found")
    return out


def _read_table(path: Path) -> dict[str, str]:
    table: dict[str, str] = {}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        if line.lstrip().startswith("{"):
            obj = json.loads(line)
            table[str(obj["id"])] = str(obj["text"])
            continue
        key, sep, text = line.partition("\t")
        if not sep:
            raise ValueError(f"{path}:{lineno}: expected 'id<TAB>text'")
        table[key] = text
    return table


def load_trec(
    run: str | os.PathLike[str],
    qrels: str | os.PathLike[str],
    queries: str | os.PathLike[str],
    passages: str | os.PathLike[str],
    *,
    depth: int = 100,
) -> list[RerankQuery]:
    """Queries from TREC run + qrels + query and passage tables (see the module docstring)."""
    run_p, qrels_p = _existing(run), _existing(qrels)
    texts, docs = _read_table(_existing(queries)), _read_table(_existing(passages))
    ranked: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for lineno, line in enumerate(run_p.read_text(encoding="utf-8").splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) < 4:
            raise ValueError(f"{run_p}:{lineno}: expected 'qid Q0 docid rank score tag'")
        ranked[parts[0]].append((int(parts[3]), parts[2]))
    grades: dict[str, dict[str, float]] = defaultdict(dict)
    for lineno, line in enumerate(qrels_p.read_text(encoding="utf-8").splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 4:
            raise ValueError(f"{qrels_p}:{lineno}: expected 'qid 0 docid grade'")
        grades[parts[0]][parts[2]] = float(parts[3])
    out = []
    for qid in sorted(ranked):
        if qid not in texts:
            raise ValueError(f"query {qid!r} of the run has no text in {queries}")
        ids = [d for _, d in sorted(ranked[qid])][:depth]
        missing = [d for d in ids if d not in docs]
        if missing:
            raise ValueError(f"query {qid!r}: passages {missing[:3]} not found in {passages}")
        out.append(
            RerankQuery(
                qid=qid,
                query=texts[qid],
                passages=tuple(docs[d] for d in ids),
                doc_ids=tuple(ids),
                relevance=np.array([max(0.0, grades[qid].get(d, 0.0)) for d in ids]),
            )
        )
    return out


def load_queries(path: str | os.PathLike[str], *, depth: int = 100) -> list[RerankQuery]:
    """A JSONL file, or a folder with ``run``, ``qrels``, ``queries.tsv`` and
    ``passages.tsv`` (or ``passages.jsonl``) for :func:`load_trec`; either way each query keeps
    its first ``depth`` candidates."""
    p = Path(path)
    if p.is_dir():
        passages = p / "passages.tsv"
        if not passages.is_file():
            passages = p / "passages.jsonl"
        return load_trec(p / "run", p / "qrels", p / "queries.tsv", passages, depth=depth)
    return load_jsonl_queries(p, depth=depth)


class TrecHit(NamedTuple):
    """One line of a TREC run: a document, its rank (1 = best) and its score."""

    doc_id: str
    rank: int
    score: float


def write_trec_run(
    runs: Mapping[str, Sequence[tuple[str, float]]] | Sequence[Any],
    path: str | os.PathLike[str],
    *,
    tag: str = "blitzrank",
) -> Path:
    """Write a TREC run file, ``qid Q0 docid rank score tag`` per line.

    Args:
        runs: qid -> ``(doc_id, score)`` pairs, best first (ranks follow this order), or
            what :func:`~icml26.blitzrank.rerank` returned (items with ``qid`` and ``hits``).
        path: the file to write (parents created).
        tag: the run's tag (no whitespace).

    Returns:
        The path written.

    Raises:
        ValueError: a tag, qid or doc id with whitespace, or a doc id twice in one query.
    """
    if not tag or any(c.isspace() for c in tag):
        raise ValueError(f"tag must be one word, got {tag!r}")
    if not isinstance(runs, Mapping):
        runs = {r.qid: list(r.hits) for r in runs}
    lines: list[str] = []
    for qid, hits in runs.items():
        if not qid or any(c.isspace() for c in qid):
            raise ValueError(f"qid must be one word, got {qid!r}")
        seen: set[str] = set()
        for rank, (doc, score) in enumerate(hits, 1):
            if not doc or any(c.isspace() for c in doc) or doc in seen:
                raise ValueError(f"query {qid!r}: doc id {doc!r} empty, spaced or repeated")
            seen.add(doc)
            lines.append(f"{qid} Q0 {doc} {rank} {float(score):.6g} {tag}")
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + ("\n" if lines else ""), encoding="utf-8")
    return out


def read_trec_run(path: str | os.PathLike[str]) -> dict[str, list[TrecHit]]:
    """Read a TREC run file into qid -> hits sorted by rank.

    Args:
        path: a file of ``qid Q0 docid rank score tag`` lines.

    Returns:
        qid -> :class:`TrecHit` list, best first.

    Raises:
        FileNotFoundError: no file.
        ValueError: a malformed line (named by its number).
    """
    p = _existing(path)
    runs: dict[str, list[TrecHit]] = defaultdict(list)
    for lineno, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 6:
            raise ValueError(f"{p}:{lineno}: expected 'qid Q0 docid rank score tag'")
        try:
            runs[parts[0]].append(TrecHit(parts[2], int(parts[3]), float(parts[4])))
        except ValueError as exc:
            raise ValueError(f"{p}:{lineno}: rank and score must be numbers ({exc})") from None
    return {q: sorted(h, key=lambda x: x.rank) for q, h in runs.items()}

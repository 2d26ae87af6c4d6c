"""nDCG against a hand computation; simulated, factbook and user data; bad files."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from icml26.blitzrank import ndcg_at_k
from icml26.blitzrank.data import load_jsonl_queries, load_trec, make_simulated_queries
from icml26.blitzrank.data.factbook import make_factbook_queries


def test_ndcg_matches_hand_computation() -> None:
    rel = [0, 3, 2, 0]
    ranking = [0, 2, 1, 3]
    dcg = 0 / math.log2(2) + 3 / math.log2(3) + 7 / math.log2(4)
    ideal = 7 / math.log2(2) + 3 / math.log2(3)
    assert ndcg_at_k(ranking, rel, 10) == pytest.approx(dcg / ideal)
    assert ndcg_at_k([1, 2, 0, 3], rel) == pytest.approx(1.0)
    assert ndcg_at_k([0, 1], [0, 0]) == 0.0


def test_ndcg_bad_input() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        ndcg_at_k([0, 0], [1, 0])
    with pytest.raises(ValueError, match="finite"):
        ndcg_at_k([0, 1], [np.nan, 1])
    with pytest.raises(ValueError, match="outside"):
        ndcg_at_k([5], [1, 0])


def test_simulated_queries_have_graded_truth_and_noisy_first_stage() -> None:
    qs = make_simulated_queries(5, 200, rho=0.5, seed=1)
    for q in qs:
        assert q.n == 200
        assert q.scores is not None
        assert np.all((q.relevance == 0) == (q.scores <= 1.0))
        assert np.all((q.relevance == 3) == (q.scores > 2.0))
    first = np.mean([ndcg_at_k(range(q.n), q.relevance) for q in qs])
    ideal = np.mean([ndcg_at_k(np.argsort(-q.scores), q.relevance) for q in qs])
    assert 0.05 < first < ideal == pytest.approx(1.0)


def test_factbook_queries_have_one_answer_passage() -> None:
    qs = make_factbook_queries(4, 15, seed=0)
    assert len(qs) == 4
    for q in qs:
        assert q.n == 15
        assert q.query.endswith("?")
        assert (q.relevance == 2).sum() <= 1
        answer = [d for d, r in zip(q.doc_ids, q.relevance, strict=True) if r == 2]
        assert all(":" in d for d in answer)


def test_jsonl_loader(tmp_path: Path) -> None:
    p = tmp_path / "q.jsonl"
    p.write_text(
        '{"qid": "a", "query": "x?", "candidates": [{"id": "d1", "text": "t1", "relevance": 2}, {"id": "d2", "text": "t2"}]}\n'
    )
    [q] = load_jsonl_queries(p)
    assert q.doc_ids == ("d1", "d2")
    assert q.relevance.tolist() == [2.0, 0.0]


@pytest.mark.parametrize(
    ("line", "match"),
    [
        ("not json", "not valid JSON"),
        ('{"query": "x"}', "candidates"),
        ('{"query": "x", "candidates": [{"id": 1}]}', "text"),
        (
            '{"query": "x", "candidates": [{"id": 1, "text": "a"}, {"id": 1, "text": "b"}]}',
            "duplicate",
        ),
    ],
)
def test_jsonl_loader_bad_files(tmp_path: Path, line: str, match: str) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text(line + "\n")
    with pytest.raises(ValueError, match=match):
        load_jsonl_queries(p)


def test_missing_file() -> None:
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_jsonl_queries("/nonexistent/q.jsonl")


def test_trec_loader(tmp_path: Path) -> None:
    (tmp_path / "run").write_text("q1 Q0 d2 1 9.0 bm25\nq1 Q0 d1 2 8.0 bm25\nq1 Q0 d3 3 1.0 bm25\n")
    (tmp_path / "qrels").write_text("q1 0 d1 2\nq1 0 d3 1\n")
    (tmp_path / "topics.tsv").write_text("q1\twhat is d1?\n")
    (tmp_path / "docs.tsv").write_text("d1\tone\nd2\ttwo\nd3\tthree\n")
    [q] = load_trec(
        tmp_path / "run",
        tmp_path / "qrels",
        tmp_path / "topics.tsv",
        tmp_path / "docs.tsv",
        depth=2,
    )
    assert q.doc_ids == ("d2", "d1")
    assert q.relevance.tolist() == [0.0, 2.0]
    (tmp_path / "docs.tsv").write_text("d1\tone\n")
    with pytest.raises(ValueError, match="not found"):
        load_trec(
            tmp_path / "run", tmp_path / "qrels", tmp_path / "topics.tsv", tmp_path / "docs.tsv"
        )


def test_load_queries_dispatches_on_folder_or_file(tmp_path: Path) -> None:
    from icml26.blitzrank.data import load_queries

    (tmp_path / "run").write_text("q1 Q0 d2 1 9.0 bm25\nq1 Q0 d1 2 8.0 bm25\n")
    (tmp_path / "qrels").write_text("q1 0 d1 1\n")
    (tmp_path / "queries.tsv").write_text("q1\tquestion\n")
    (tmp_path / "passages.jsonl").write_text(
        '{"id": "d1", "text": "one"}\n{"id": "d2", "text": "two"}\n'
    )
    [q] = load_queries(tmp_path)
    assert q.passages == ("two", "one")
    assert q.relevance.tolist() == [0.0, 1.0]
    with pytest.raises(FileNotFoundError, match="run"):
        load_queries(_empty(tmp_path))


def _empty(tmp_path: Path) -> Path:
    d = tmp_path / "empty"
    d.mkdir()
    return d


def test_load_queries_applies_depth_to_jsonl(tmp_path: Path) -> None:
    """``depth`` (the run's ``llm_n``) cuts a JSONL query to its first candidates, as for TREC."""
    import json

    from icml26.blitzrank.data import load_queries

    cands = [{"id": f"d{i}", "text": f"t{i}", "relevance": i % 2} for i in range(7)]
    p = tmp_path / "q.jsonl"
    p.write_text(json.dumps({"qid": "q", "query": "?", "candidates": cands}) + "\n")
    [q] = load_queries(p, depth=3)
    assert q.doc_ids == ("d0", "d1", "d2")
    assert q.passages == ("t0", "t1", "t2")
    assert q.relevance.tolist() == [0.0, 1.0, 0.0]
    [full] = load_queries(p, depth=100)
    assert len(full.passages) == 7

"""Bad input fails clearly: a corpus without ids, a question with no answers, an unreachable
search endpoint, bad config values (before anything is written)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icml26.decor.config import DecorConfig
from icml26.decor.data.types import Passage
from icml26.decor.data.user import DataFileError, load_corpus, load_questions
from icml26.decor.retrieval import BM25Search, EndpointSearch, SearchEndpointError
from icml26.shared.cli import main


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_corpus_without_ids_is_refused(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "c.jsonl", [{"id": "a", "text": "x"}, {"text": "no id here"}])
    with pytest.raises(DataFileError, match=r"c.jsonl:2: passage has no 'id'"):
        load_corpus(path)


def test_question_without_answers_is_refused(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "q.jsonl", [{"question": "Capital of France?", "answers": []}])
    with pytest.raises(DataFileError, match="has no answers"):
        load_questions(path)


def test_search_r1_fields_and_gold_checks(tmp_path: Path) -> None:
    corpus = load_corpus(
        _jsonl(tmp_path / "c.jsonl", [{"id": "1", "contents": "Paris is the capital of France"}])
    )
    qs = load_questions(
        _jsonl(
            tmp_path / "q.jsonl", [{"question": "Capital of France?", "golden_answers": ["Paris"]}]
        ),
        corpus,
    )
    assert qs[0].answers == ("Paris",)
    bad = _jsonl(tmp_path / "b.jsonl", [{"question": "Q?", "answers": ["a"], "gold": ["nope"]}])
    with pytest.raises(DataFileError, match="not in the corpus"):
        load_questions(bad, corpus)


def test_unreachable_endpoint_fails_clearly() -> None:
    with pytest.raises(SearchEndpointError, match="unreachable"):
        EndpointSearch("http://127.0.0.1:9/search", timeout=1.0)


def test_bm25_returns_the_subject_passage_first() -> None:
    s = BM25Search(
        [
            Passage("a", "France capital. The capital of France is Paris."),
            Passage("b", "Spain capital. The capital of Spain is Madrid."),
        ]
    )
    assert [p.pid for p in s.search(["Spain capital"], 1)[0]] == ["b"]
    with pytest.raises(ValueError, match="repeat"):
        BM25Search([Passage("a", "x y"), Passage("a", "y z")])


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"w": 1.5}, "w .the intrinsic weight. must be in"),
        ({"retriever": "endpoint"}, "retriever=endpoint searches a user's index"),
        ({"search_endpoint": "http://x"}, "only used with retriever=endpoint"),
        ({"corpus": "/nonexistent.jsonl", "questions": "/nonexistent.jsonl"}, "no such file"),
        ({"group_size": 1}, "group_size must be"),
    ],
)
def test_bad_config_values(override: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        DecorConfig(**override)


def test_cli_bad_value_exits_2_before_writing(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["run", "decor", "--profile", "smoke", "--set", "w=2", "--out", str(out)]) == 2
    assert not out.exists()

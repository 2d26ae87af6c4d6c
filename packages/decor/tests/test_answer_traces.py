"""SFT traces from question-answer pairs alone (`answer_traces`): the roles' turns, the
Filter's labels, the follow-up query, and questions no passage answers."""

from __future__ import annotations

import pytest

import icml26.decor as decor
from icml26.decor.data.types import Passage, Question
from icml26.decor.oracle import answer_traces, contains_answer, follow_up_query
from icml26.decor.prompts import DROP, KEEP, STOP
from icml26.decor.retrieval import BM25Search

CORPUS = [
    Passage("p0", "The Louvre is in Paris."),
    Passage("p1", "The Louvre collection is very large."),
    Passage("p2", "The Prado is in Madrid."),
    Passage("p3", "The Uffizi is in Florence."),
    Passage("p4", "The Arno river runs through Florence."),
    Passage("p5", "A Parisian cafe sells coffee."),
]


def _labels(conversation: list[dict[str, str]]) -> list[str]:
    return [m["content"] for m in conversation if m["role"] == "assistant"]


def test_one_search_roles_and_filter_labels() -> None:
    q = Question("q0", "Which city has the Louvre?", ("Paris",))
    search = BM25Search(CORPUS)
    hits = search.search([q.text], 2)[0]
    traces = answer_traces([q], search, k=2)
    assert traces.skipped == 0
    assert len(traces.planner) == len(traces.filter) == len(traces.answerer) == 1
    planner = traces.planner[0]
    assert [m["role"] for m in planner] == ["user", "assistant", "tool", "assistant"]
    assert _labels(planner) == [q.text, STOP]
    assert "The Louvre is in Paris." in planner[2]["content"]
    # the Filter keeps exactly the retrieved passages that contain the answer
    want = [KEEP if p.pid == "p0" else DROP for p in hits]
    assert _labels(traces.filter[0]) == want
    assert want.count(KEEP) == 1
    answerer = traces.answerer[0]
    assert answerer[-1] == {"role": "assistant", "content": "Paris"}
    assert "The Louvre is in Paris." in answerer[-2]["content"]
    assert "collection" not in answerer[-2]["content"]
    assert traces.monolithic[0][-1]["content"] == "answer Paris"


def test_follow_up_query_from_the_retrieved_entity() -> None:
    q = Question("q1", "Which river crosses the home city of the Uffizi?", ("Arno",))
    search = BM25Search(CORPUS)
    assert search.search([q.text], 1)[0][0].pid == "p3"  # no answer on the first search
    traces = answer_traces([q], search, k=1)
    assert traces.skipped == 0
    queries = _labels(traces.planner[0])[:-1]
    assert queries[0] == q.text
    assert queries[1].startswith("Florence")
    assert _labels(traces.filter[0]) == [DROP, KEEP]
    assert traces.answerer[0][-1]["content"] == "Arno"
    assert "The Uffizi is in Florence." not in traces.answerer[0][-2]["content"]


def test_unanswerable_question_is_skipped_and_counted() -> None:
    qs = [
        Question("q0", "Which city has the Louvre?", ("Paris",)),
        Question("q9", "Who painted the Mona Lisa?", ("Leonardo",)),
    ]
    traces = decor.answer_traces(qs, BM25Search(CORPUS), k=2)
    assert traces.skipped == 1
    assert traces.skipped_ids == ["q9"]
    assert len(traces.planner) == len(traces.filter) == len(traces.answerer) == 1


def test_answer_match_is_whole_words() -> None:
    assert contains_answer("A Parisian cafe sells coffee.", ("Paris",)) is None
    assert contains_answer("Off to PARIS, now.", ("Rome", "paris")) == "paris"
    assert follow_up_query("Where is it?", "nothing capitalised here") == "Where is it?"


def test_bad_k_is_refused() -> None:
    with pytest.raises(ValueError, match="k must be positive"):
        answer_traces([], BM25Search(CORPUS), k=0)


def test_filter_labels_match_answer_presence_on_the_factbook(factbook) -> None:  # type: ignore[no-untyped-def]
    """Answers only (chains and gold ids dropped): every keep/drop label is the answer test."""
    questions = [Question(q.qid, q.text, q.answers) for q in factbook.questions[::25]]
    traces = answer_traces(questions, BM25Search(factbook.passages), k=3)
    assert traces.skipped + len(traces.filter) == len(questions)
    assert len(traces.filter) > 0
    answered = [q for q in questions if q.qid not in traces.skipped_ids]
    for conv, q in zip(traces.filter, answered, strict=True):
        shown = [m["content"] for m in conv if m["role"] in ("user", "tool")]
        labels = _labels(conv)
        assert len(shown) == len(labels)
        for text, label in zip(shown, labels, strict=True):
            assert (label == KEEP) == (
                contains_answer(text.rsplit("passage: ", 1)[-1], q.answers) is not None
            )

"""Oracle traces for the SFT warm start (a random tiny model gets zero reward everywhere).

For a generated question the oracle knows the entity chain: it searches ``"<X> neighbours"``
for each hop and ``"<Z> capital"`` last, keeps exactly the gold passages that the retriever
returned, stops, and answers with the first accepted answer. A trace whose oracle queries
miss a gold passage is skipped (it would teach the Planner to name an entity it never saw).
Each role gets its own conversations; the monolithic agent gets the same search path with
every retrieved passage shown and the answer as its last turn.

:func:`answer_traces` builds the same conversations from question-answer pairs alone (no
entity chain, no gold passage ids): the Planner searches the question text, plus one
follow-up query when that search returns no passage containing an accepted answer; the Filter
keeps exactly the retrieved passages that contain an accepted answer; the Answerer answers
from that memory.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from icml26.decor.data.types import Question
from icml26.decor.prompts import (
    ANSWER_PREFIX,
    DROP,
    KEEP,
    STOP,
    answerer_messages,
    filter_messages,
    filter_observation,
    format_passages,
    question_messages,
)
from icml26.decor.retrieval import Search
from icml26.decor.scoring import normalize_answer

__all__ = ["OracleTraces", "answer_traces", "oracle_queries", "oracle_traces"]


def oracle_queries(question: Question) -> list[str]:
    """The oracle's search queries for a generated question (needs ``question.chain``)."""
    if not question.chain:
        raise ValueError(f"question {question.qid!r} has no entity chain: no oracle trace")
    *hops, last = question.chain
    return [f"{c} neighbours" for c in hops] + [f"{last} capital"]


@dataclass
class OracleTraces:
    """SFT conversations per role, from :func:`oracle_traces` or :func:`answer_traces`.

    Attributes:
        planner: The Planner's conversations (queries, then ``stop``).
        filter: The Filter's conversations (``keep`` / ``drop`` per passage).
        answerer: The Answerer's conversations (memory in, answer out).
        monolithic: The monolithic agent's conversations (same searches, answer last).
        skipped: Questions that got no trace.
        skipped_ids: Their ids (filled by :func:`answer_traces`).
    """

    planner: list[list[dict[str, str]]] = field(default_factory=list)
    filter: list[list[dict[str, str]]] = field(default_factory=list)
    answerer: list[list[dict[str, str]]] = field(default_factory=list)
    monolithic: list[list[dict[str, str]]] = field(default_factory=list)
    skipped: int = 0
    skipped_ids: list[str] = field(default_factory=list)


def oracle_traces(
    questions: Sequence[Question],
    search: Search,
    k: int,
    rng: np.random.Generator,
    *,
    closed_book_fraction: float = 0.15,
    noisy_memory_fraction: float = 0.5,
) -> OracleTraces:
    """Conversations for every question whose oracle search finds all of its gold passages.

    The Answerer also sees, in ``closed_book_fraction`` of its examples, an empty memory, and
    in ``noisy_memory_fraction``, the gold passages mixed with the distractors retrieved next
    to them, so one Answerer serves the closed-book and fixed-query baselines too.
    """
    out = OracleTraces()
    for q in questions:
        queries = oracle_queries(q)
        hits = search.search(queries, k)
        gold = set(q.gold)
        if not all(any(p.pid in gold for p in ps) for ps in hits):
            out.skipped += 1
            continue
        planner = question_messages(q.text)
        mono = question_messages(q.text)
        memory: list[str] = []
        distractors: list[str] = []
        filt: list[dict[str, str]] = []
        for query, passages in zip(queries, hits, strict=True):
            kept = [p.text for p in passages if p.pid in gold and p.text not in memory]
            memory += kept
            distractors += [p.text for p in passages if p.pid not in gold]
            planner += [
                {"role": "assistant", "content": query},
                {"role": "tool", "content": format_passages(kept)},
            ]
            mono += [
                {"role": "assistant", "content": query},
                {"role": "tool", "content": format_passages([p.text for p in passages])},
            ]
            for p in passages:
                if p.text in memory and p.pid in gold and p.text not in kept:
                    continue  # kept on an earlier search: not shown again
                filt += (
                    filter_messages(q.text, query, p.text)
                    if not filt
                    else [{"role": "tool", "content": filter_observation(query, p.text)}]
                )
                filt.append({"role": "assistant", "content": KEEP if p.pid in gold else DROP})
        out.filter.append(filt)
        planner.append({"role": "assistant", "content": STOP})
        mono.append({"role": "assistant", "content": ANSWER_PREFIX + q.answers[0]})
        out.planner.append(planner)
        out.monolithic.append(mono)
        u = rng.random()
        if u < closed_book_fraction:
            shown: list[str] = []
        elif u < closed_book_fraction + noisy_memory_fraction and distractors:
            n = int(rng.integers(1, len(distractors) + 1))
            pick = [distractors[int(i)] for i in rng.choice(len(distractors), n, replace=False)]
            shown = list(memory) + pick
            rng.shuffle(shown)
        else:
            shown = list(memory)
        out.answerer.append(
            [*answerer_messages(q.text, shown), {"role": "assistant", "content": q.answers[0]}]
        )
    return out


_ENTITY = re.compile(r"[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*")
_SMALL = frozenset({"a", "an", "the", "of", "in", "is", "which", "what", "who", "where", "when"})


def contains_answer(text: str, answers: Sequence[str]) -> str | None:
    """The first accepted answer that ``text`` contains as whole words (after SQuAD
    normalisation), or ``None``."""
    padded = f" {normalize_answer(text)} "
    for a in answers:
        norm = normalize_answer(a)
        if norm and f" {norm} " in padded:
            return a
    return None


def follow_up_query(question: str, passage: str) -> str:
    """The follow-up query after a search that found no answer: the first capitalised name in
    ``passage`` that the question does not mention (the entity the passage led to), followed
    by the question's content words the passage does not contain. Falls back to the question
    when the passage names no new entity."""
    q_words = set(normalize_answer(question).split())
    entity = ""
    for m in _ENTITY.finditer(passage):
        words = [w for w in m.group().split() if w.lower() not in _SMALL]
        if words and not set(normalize_answer(" ".join(words)).split()) <= q_words:
            entity = " ".join(words)
            break
    if not entity:
        return question
    p_words = set(normalize_answer(passage).split())
    rest = [w for w in normalize_answer(question).split() if w not in p_words | _SMALL]
    return " ".join([entity, *rest])


def answer_traces(questions: Sequence[Question], search: Search, k: int) -> OracleTraces:
    """SFT conversations for every role from question-answer pairs alone.

    For data without entity chains or gold passage ids (e.g. from
    :func:`icml26.decor.load_questions`), where :func:`oracle_traces` does not apply. Per
    question: the Planner searches the question text; when none of the top ``k`` passages
    contains an accepted answer (whole words, SQuAD-normalised), it issues one follow-up query
    (:func:`follow_up_query` on the top passage) and then stops. The Filter replies ``keep``
    to each retrieved passage that contains an accepted answer and ``drop`` to the others
    (a passage already kept is not shown again); the Answerer reads the kept passages and
    replies with the accepted answer they contain; the monolithic agent sees every retrieved
    passage and answers last. A question whose searches find no passage containing an answer
    gets no trace: it is counted in ``skipped`` and its id listed in ``skipped_ids``.

    Args:
        questions: Questions with their accepted answers (``gold`` and ``chain`` unused).
        search: The retriever the roles will use (e.g. :class:`icml26.decor.BM25Search`).
        k: Passages per search, as in the episodes.

    Returns:
        One :class:`OracleTraces`: a list of chat conversations (``role``/``content`` dicts)
        per role, ready for ``icml26.shared.llm.sft.sft``, and the skipped count.

    Raises:
        ValueError: If ``k`` is not positive.
    """
    if k < 1:
        raise ValueError(f"k must be positive, got {k}")
    out = OracleTraces()
    for q in questions:
        queries = [q.text]
        hits = search.search(queries, k)
        if hits[0] and not any(contains_answer(p.text, q.answers) for p in hits[0]):
            queries.append(follow_up_query(q.text, hits[0][0].text))
            hits += search.search(queries[1:], k)
        memory: list[str] = []
        planner, mono = question_messages(q.text), question_messages(q.text)
        filt: list[dict[str, str]] = []
        for query, passages in zip(queries, hits, strict=True):
            kept: list[str] = []
            for p in passages:
                if p.text in memory:
                    continue  # kept on an earlier search: not shown again
                keep = contains_answer(p.text, q.answers) is not None
                filt += (
                    filter_messages(q.text, query, p.text)
                    if not filt
                    else [{"role": "tool", "content": filter_observation(query, p.text)}]
                )
                filt.append({"role": "assistant", "content": KEEP if keep else DROP})
                if keep:
                    kept.append(p.text)
                    memory.append(p.text)
            planner += [
                {"role": "assistant", "content": query},
                {"role": "tool", "content": format_passages(kept)},
            ]
            mono += [
                {"role": "assistant", "content": query},
                {"role": "tool", "content": format_passages([p.text for p in passages])},
            ]
        answer = next((a for t in memory if (a := contains_answer(t, q.answers))), None)
        if answer is None:
            out.skipped += 1
            out.skipped_ids.append(q.qid)
            continue
        planner.append({"role": "assistant", "content": STOP})
        mono.append({"role": "assistant", "content": ANSWER_PREFIX + answer})
        out.planner.append(planner)
        out.filter.append(filt)
        out.monolithic.append(mono)
        out.answerer.append(
            [*answerer_messages(q.text, memory), {"role": "assistant", "content": answer}]
        )
    return out

"""Oracle traces for the SFT warm start (a random tiny model gets zero reward everywhere).

For a generated question the oracle knows the entity chain: it searches ``"<X> neighbours"``
for each hop and ``"<Z> capital"`` last, keeps exactly the gold passages that the retriever
returned, stops, and answers with the first accepted answer. A trace whose oracle queries
miss a gold passage is skipped (it would teach the Planner to name an entity it never saw).
Each role gets its own conversations; the monolithic agent gets the same search path with
every retrieved passage shown and the answer as its last turn.
"""

from __future__ import annotations

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

__all__ = ["OracleTraces", "oracle_queries", "oracle_traces"]


def oracle_queries(question: Question) -> list[str]:
    """The oracle's search queries for a generated question (needs ``question.chain``)."""
    if not question.chain:
        raise ValueError(f"question {question.qid!r} has no entity chain: no oracle trace")
    *hops, last = question.chain
    return [f"{c} neighbours" for c in hops] + [f"{last} capital"]


@dataclass
class OracleTraces:
    """SFT conversations per role."""

    planner: list[list[dict[str, str]]] = field(default_factory=list)
    filter: list[list[dict[str, str]]] = field(default_factory=list)
    answerer: list[list[dict[str, str]]] = field(default_factory=list)
    monolithic: list[list[dict[str, str]]] = field(default_factory=list)
    skipped: int = 0


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

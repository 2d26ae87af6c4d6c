"""Reranking data: simulated corpora, factbook questions, user files."""

from icml26.blitzrank.data.io import load_jsonl_queries, load_queries, load_trec
from icml26.blitzrank.data.simulated import make_simulated_queries
from icml26.blitzrank.data.types import RerankQuery

__all__ = [
    "RerankQuery",
    "load_jsonl_queries",
    "load_queries",
    "load_trec",
    "make_simulated_queries",
]

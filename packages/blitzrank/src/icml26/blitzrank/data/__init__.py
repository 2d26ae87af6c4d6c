"""Reranking data: simulated corpora, factbook questions, user files."""

from icml26.blitzrank.data.io import (
    TrecHit,
    load_jsonl_queries,
    load_queries,
    load_trec,
    read_trec_run,
    write_trec_run,
)
from icml26.blitzrank.data.simulated import make_simulated_queries
from icml26.blitzrank.data.types import RerankQuery

__all__ = [
    "RerankQuery",
    "TrecHit",
    "load_jsonl_queries",
    "load_queries",
    "load_trec",
    "make_simulated_queries",
    "read_trec_run",
    "write_trec_run",
]

"""DECOR: deep search as multi-agent RL with a Planner, a Filter and an Answerer.

The public API; see the README for a walk-through."""

from icml26.decor.config import BenchConfig, DecorConfig
from icml26.decor.data.factbook import build_factbook, load_countries, make_questions, resolve
from icml26.decor.data.types import HOPS, Passage, Question
from icml26.decor.data.user import DataFileError, load_corpus, load_questions
from icml26.decor.episodes import (
    Episode,
    EpisodeSettings,
    Turn,
    run_closed_book,
    run_monolithic,
    run_single_query,
    run_team,
)
from icml26.decor.policies import ROLES, RolePolicy, Sampling, make_lora_team, make_tiny_team
from icml26.decor.retrieval import BM25Search, DenseSearch, EndpointSearch, SearchEndpointError
from icml26.decor.rewards import hybrid_rewards, role_advantages
from icml26.decor.scoring import exact_match, kept_precision_recall, normalize_answer, token_f1

__all__ = [
    "HOPS",
    "ROLES",
    "BM25Search",
    "BenchConfig",
    "DataFileError",
    "DecorConfig",
    "DenseSearch",
    "EndpointSearch",
    "Episode",
    "EpisodeSettings",
    "Passage",
    "Question",
    "RolePolicy",
    "Sampling",
    "SearchEndpointError",
    "Turn",
    "build_factbook",
    "exact_match",
    "hybrid_rewards",
    "kept_precision_recall",
    "load_corpus",
    "load_countries",
    "load_questions",
    "make_lora_team",
    "make_questions",
    "make_tiny_team",
    "normalize_answer",
    "resolve",
    "role_advantages",
    "run_closed_book",
    "run_monolithic",
    "run_single_query",
    "run_team",
    "token_f1",
]

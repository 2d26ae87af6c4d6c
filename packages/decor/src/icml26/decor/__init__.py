"""DECOR: deep search as multi-agent RL with a Planner, a Filter and an Answerer.

The public API; see the README for a walk-through."""

from __future__ import annotations

from typing import TYPE_CHECKING

from icml26.shared.exports import lazy_exports

if TYPE_CHECKING:
    from .config import DecorConfig as DecorConfig
    from .data.factbook import build_factbook as build_factbook
    from .data.user import load_corpus as load_corpus
    from .data.user import load_questions as load_questions
    from .episodes import EpisodeSettings as EpisodeSettings
    from .episodes import run_team as run_team
    from .joint import TrainSettings as TrainSettings
    from .joint import train_decor as train_decor
    from .joint import train_monolithic as train_monolithic
    from .oracle import OracleTraces as OracleTraces
    from .oracle import answer_traces as answer_traces
    from .policies import ROLES as ROLES
    from .policies import Sampling as Sampling
    from .policies import load_team as load_team
    from .policies import make_lora_team as make_lora_team
    from .policies import make_tiny_team as make_tiny_team
    from .policies import save_team as save_team
    from .retrieval import BM25Search as BM25Search
    from .retrieval import DenseSearch as DenseSearch
    from .retrieval import EndpointSearch as EndpointSearch

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "DecorConfig": ".config",
        "build_factbook": ".data.factbook",
        "load_corpus": ".data.user",
        "load_questions": ".data.user",
        "EpisodeSettings": ".episodes",
        "run_team": ".episodes",
        "TrainSettings": ".joint",
        "train_decor": ".joint",
        "train_monolithic": ".joint",
        "OracleTraces": ".oracle",
        "answer_traces": ".oracle",
        "ROLES": ".policies",
        "Sampling": ".policies",
        "load_team": ".policies",
        "make_lora_team": ".policies",
        "make_tiny_team": ".policies",
        "save_team": ".policies",
        "BM25Search": ".retrieval",
        "DenseSearch": ".retrieval",
        "EndpointSearch": ".retrieval",
    },
    submodules=["data"],
)

"""Oracles: simulated (perfect, Plackett-Luce, Bradley-Terry, persistent, cyclic), a real
model's fixed scores with position effects (``ScoreOracle``, MiniLM), and LLM listwise."""

from icml26.blitzrank.oracles.base import BaseOracle, Comparison, Oracle, OracleError, Usage
from icml26.blitzrank.oracles.llm import LLMOracle
from icml26.blitzrank.oracles.prompts import ParsedRanking, listwise_messages, parse_ranking
from icml26.blitzrank.oracles.scored import ScoreOracle
from icml26.blitzrank.oracles.simulated import (
    BradleyTerryOracle,
    CyclicOracle,
    PerfectOracle,
    PersistentOracle,
    PlackettLuceOracle,
    PromptTokens,
    TokenModel,
    make_oracle,
)

__all__ = [
    "BaseOracle",
    "BradleyTerryOracle",
    "Comparison",
    "CyclicOracle",
    "LLMOracle",
    "Oracle",
    "OracleError",
    "ParsedRanking",
    "PerfectOracle",
    "PersistentOracle",
    "PlackettLuceOracle",
    "PromptTokens",
    "ScoreOracle",
    "TokenModel",
    "Usage",
    "listwise_messages",
    "make_oracle",
    "parse_ranking",
]

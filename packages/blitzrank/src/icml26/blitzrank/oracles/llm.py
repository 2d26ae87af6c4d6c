"""A listwise LLM oracle: the RankGPT prompt over a chat back end, parsed robustly.

The back end is anything with ``complete(conversations, *, max_tokens, temperature)``
returning one reply per conversation with ``text``, ``prompt_tokens`` and
``completion_tokens``: :class:`icml26.blitzrank.oracles.backends.LocalChat` (a transformers
causal LM, the bundled SmolLM2-135M-Instruct by default), :class:`...backends.EndpointChat`
(an OpenAI-compatible ``/v1/chat/completions`` endpoint), or a test double. Token counts are
the back end's own (tokenizer / the endpoint's ``usage``), so the accounting is real.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from icml26.blitzrank.oracles.base import BaseOracle, OracleError
from icml26.blitzrank.oracles.prompts import listwise_messages, parse_ranking

__all__ = ["ChatBackend", "LLMOracle"]


class ChatBackend(Protocol):
    def complete(
        self, conversations: Sequence[Sequence[dict[str, str]]], *, max_tokens: int = ..., temperature: float = ...
    ) -> list[Any]: ...


class LLMOracle(BaseOracle):
    """Orders passages of one query with a chat model (listwise; ``top=1`` is setwise).

    Args:
        backend: the chat back end.
        query: the query text.
        passages: candidate passages (ids ``0..n-1``).
        k: the prompt window (most passages per call).
        tokens_per_id: output budget per identifier (``max_tokens = 8 + tokens_per_id * q``).
    """

    blocking = True

    def __init__(
        self,
        backend: ChatBackend,
        query: str,
        passages: Sequence[str],
        k: int,
        *,
        tokens_per_id: int = 6,
    ) -> None:
        if not passages or any(not isinstance(p, str) for p in passages):
            raise ValueError("passages must be a non-empty list of strings")
        super().__init__(len(passages), k)
        if not hasattr(backend, "complete"):
            raise TypeError("backend needs a complete(conversations, max_tokens=..., temperature=...) method")
        self.backend = backend
        self.query = query
        self.passages = list(passages)
        self.tokens_per_id = tokens_per_id

    def _answer(self, items: tuple[int, ...], top: int | None) -> tuple[list[int], dict[str, Any]]:
        q = len(items) if top is None else top
        messages = listwise_messages(self.query, [self.passages[i] for i in items], top)
        try:
            [reply] = self.backend.complete(
                [messages], max_tokens=8 + self.tokens_per_id * q, temperature=0.0
            )
        except OracleError:
            raise
        except Exception as exc:  # surface back end failures as oracle failures, with the cause
            raise OracleError(f"the LLM back end failed: {type(exc).__name__}: {exc}") from exc
        parsed = parse_ranking(getattr(reply, "text", ""), len(items), top)
        stats = {
            "input_tokens": int(getattr(reply, "prompt_tokens", 0)),
            "output_tokens": int(getattr(reply, "completion_tokens", 0)),
            "repaired_calls": int(parsed.repaired),
            "missing_ids": parsed.missing,
            "duplicate_ids": parsed.duplicates,
            "unknown_ids": parsed.unknown,
        }
        return [items[p] for p in parsed.order], stats

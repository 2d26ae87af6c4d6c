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
from icml26.blitzrank.oracles.prompts import (
    LETTERS,
    listwise_messages,
    parse_ranking,
    truncate_passage,
)

__all__ = ["ChatBackend", "LLMOracle"]


class ChatBackend(Protocol):
    def complete(
        self,
        conversations: Sequence[Sequence[dict[str, str]]],
        *,
        max_tokens: int = ...,
        temperature: float = ...,
    ) -> list[Any]: ...


class LLMOracle(BaseOracle):
    """Orders passages of one query with a chat model (listwise; ``top=1`` is setwise).

    Args:
        backend: the chat back end.
        query: the query text.
        passages: candidate passages (ids ``0..n-1``).
        k: the prompt window (most passages per call).
        tokens_per_id: output budget per identifier (``max_tokens = 8 + tokens_per_id * q``).
        mode: ``"generate"`` (the model writes ``[2] > [1] > ...``, parsed robustly) or
            ``"first_token"`` (one forward pass: passages labelled ``[A]``, ``[B]``, ...,
            ordered by the logit of each label as the first token of the answer, as in
            FIRST, Reddy et al. 2024; needs a back end with ``first_token_logits``, and
            counts one output token per call).
        max_words: each passage cut to its first ``max_words`` words (RankGPT-style
            truncation; None keeps them whole).

    Raises:
        ValueError: no passages, an unknown mode, or ``k > 26`` in ``first_token`` mode.
        TypeError: a back end without ``complete`` (or, in ``first_token`` mode, without
            ``first_token_logits``).
        OracleError: from :meth:`compare`, when the back end fails (an endpoint unreachable
            after its retries).
    """

    blocking = True

    def __init__(
        self,
        backend: ChatBackend,
        query: str,
        passages: Sequence[str],
        k: int,
        *,
        tokens_per_id: int = 5,
        mode: str = "generate",
        max_words: int | None = 300,
    ) -> None:
        if not passages or any(not isinstance(p, str) for p in passages):
            raise ValueError("passages must be a non-empty list of strings")
        if max_words is not None and (isinstance(max_words, bool) or max_words < 1):
            raise ValueError(f"max_words must be a positive integer or None, got {max_words!r}")
        super().__init__(len(passages), k)
        if not hasattr(backend, "complete"):
            raise TypeError(
                "backend needs a complete(conversations, max_tokens=..., temperature=...) method"
            )
        self.backend = backend
        self.query = query
        self.passages = [truncate_passage(p, max_words) for p in passages]
        self.tokens_per_id = tokens_per_id
        if mode not in ("generate", "first_token"):
            raise ValueError(f"mode must be 'generate' or 'first_token', got {mode!r}")
        if mode == "first_token":
            if not hasattr(backend, "first_token_logits"):
                raise TypeError(
                    "mode='first_token' needs a back end with first_token_logits (a local model)"
                )
            if k > len(LETTERS):
                raise ValueError(
                    f"mode='first_token' labels passages A..Z: k must be <= 26, got {k}"
                )
        self.mode = mode

    def _answer(self, items: tuple[int, ...], top: int | None) -> tuple[list[int], dict[str, Any]]:
        if self.mode == "first_token":
            messages = listwise_messages(
                self.query, [self.passages[i] for i in items], top, letters=True
            )
            try:
                logits, prompt_tokens = self.backend.first_token_logits(  # type: ignore[attr-defined]
                    messages, [LETTERS[j] for j in range(len(items))], prefix="["
                )
            except Exception as exc:
                raise OracleError(f"the LLM back end failed: {type(exc).__name__}: {exc}") from exc
            order = sorted(range(len(items)), key=lambda j: (-float(logits[j]), j))
            return [items[j] for j in order], {"input_tokens": prompt_tokens, "output_tokens": 1}
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
            # only the named ids have a known order: the rest go to Comparison.rest
            "ranked": len(parsed.order),
        }
        return [items[p] for p in parsed.full], stats

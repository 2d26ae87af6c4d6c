"""The oracle protocol: k items in, their order (or the best few) out; calls and tokens counted.

An oracle is bound to one candidate list (items ``0..n-1``: documents of one query, players of
one tournament). ``compare(items, top=None)`` returns a :class:`Comparison`: the full order of
``items`` best first, or with ``top=q`` only the best ``q`` in order and the rest below them
unordered (a setwise "which is best" prompt is ``top=1``). ``acompare`` is the same as a
coroutine, so rankers can send a round of disjoint queries concurrently.

Every oracle keeps a :class:`Usage`: calls, input/output tokens, items shown, and for LLM
oracles how often the model's answer had to be repaired (missing, duplicate or unknown ids).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["BaseOracle", "Comparison", "Oracle", "OracleError", "Usage"]


class OracleError(RuntimeError):
    """An oracle could not answer (endpoint unreachable after retries, model failure)."""


@dataclass(frozen=True)
class Comparison:
    """One answer: ``order`` best first, then ``rest`` below it in no known order."""

    order: tuple[int, ...]
    rest: tuple[int, ...] = ()

    @property
    def items(self) -> tuple[int, ...]:
        return self.order + self.rest

    def pairs(self) -> Iterator[tuple[int, int]]:
        """Every induced preference ``(winner, loser)``."""
        for i, u in enumerate(self.order):
            for v in self.order[i + 1 :]:
                yield u, v
            for v in self.rest:
                yield u, v


@dataclass
class Usage:
    """What an oracle consumed. Thread-safe updates through :meth:`record`."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    items_shown: int = 0
    repaired_calls: int = 0
    missing_ids: int = 0
    duplicate_ids: int = 0
    unknown_ids: int = 0
    retries: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def record(self, **deltas: int) -> None:
        with self._lock:
            for key, value in deltas.items():
                setattr(self, key, getattr(self, key) + int(value))

    def as_dict(self) -> dict[str, int]:
        return {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "tokens": self.tokens,
            "items_shown": self.items_shown,
            "repaired_calls": self.repaired_calls,
            "missing_ids": self.missing_ids,
            "duplicate_ids": self.duplicate_ids,
            "unknown_ids": self.unknown_ids,
            "retries": self.retries,
        }


@runtime_checkable
class Oracle(Protocol):
    """What rankers need from an oracle: k items in, their order (or the best few) out.

    Attributes:
        n: the items the oracle knows (ids ``0..n-1``).
        k: the most items one call may hold.
        usage: calls and tokens consumed so far.

    Subclass :class:`BaseOracle` (implement ``_answer``) to get the validation and the
    bookkeeping; ``compare(items, top=None)`` returns a :class:`Comparison` and raises
    ``ValueError`` for bad items (too many, duplicates, unknown ids) and
    :class:`OracleError` when the oracle cannot answer.
    """

    n: int
    k: int
    usage: Usage

    def compare(self, items: Sequence[int], top: int | None = None) -> Comparison:
        """Order ``items`` best first; with ``top=q`` only the best ``q``.

        Args:
            items: distinct item ids (``0..n-1``), at most ``k`` of them.
            top: how many leading items to order (None: all).

        Returns:
            The :class:`Comparison`: ``order`` best first, ``rest`` the items left unordered.

        Raises:
            ValueError: bad items (too many, duplicates, unknown ids) or ``top``.
            OracleError: the oracle cannot answer.
        """
        ...

    async def acompare(self, items: Sequence[int], top: int | None = None) -> Comparison:
        """:meth:`compare`, awaitable (a blocking oracle runs in a worker thread).

        Args:
            items: distinct item ids (``0..n-1``), at most ``k`` of them.
            top: how many leading items to order (None: all).

        Returns:
            The :class:`Comparison`, as :meth:`compare`.

        Raises:
            ValueError: bad items (too many, duplicates, unknown ids) or ``top``.
            OracleError: the oracle cannot answer.
        """
        ...


class BaseOracle:
    """Validation and bookkeeping shared by every oracle; subclasses implement ``_answer``.

    Args:
        n: number of items the oracle knows (ids ``0..n-1``).
        k: the most items one call may hold (the prompt's window), at least 2.
    """

    #: Subclasses doing I/O set this so :meth:`acompare` runs them in a worker thread.
    blocking: bool = False

    def __init__(self, n: int, k: int) -> None:
        if isinstance(n, bool) or not isinstance(n, int) or n < 2:
            raise ValueError(f"an oracle needs at least 2 items, got n={n!r}")
        if isinstance(k, bool) or not isinstance(k, int) or k < 2:
            raise ValueError(f"k (items per comparison) must be an integer >= 2, got {k!r}")
        self.n = n
        self.k = k
        self.usage = Usage()

    def _validate(self, items: Sequence[int], top: int | None) -> tuple[int, ...]:
        ids = tuple(int(i) for i in items)
        if len(ids) < 2:
            raise ValueError(f"a comparison needs at least 2 items, got {len(ids)}")
        if len(ids) > self.k:
            raise ValueError(f"a comparison holds at most k={self.k} items, got {len(ids)}")
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate item ids in a comparison: {ids}")
        bad = [i for i in ids if not 0 <= i < self.n]
        if bad:
            raise ValueError(f"item ids {bad} are outside 0..{self.n - 1}")
        if top is not None and not 1 <= top <= len(ids):
            raise ValueError(f"top must be in 1..{len(ids)}, got {top}")
        return ids

    def compare(self, items: Sequence[int], top: int | None = None) -> Comparison:
        """Order ``items`` (best first); with ``top=q`` only the best ``q``."""
        ids = self._validate(items, top)
        order, stats = self._answer(ids, top)
        q = len(ids) if top is None else top
        # ``ranked``: how many leading items of ``order`` have a known order (an LLM answer
        # that left ids out); the others go to ``rest`` unordered, never in an invented order.
        q = min(q, int(stats.pop("ranked", q)))
        if sorted(order) != sorted(ids):
            raise OracleError(f"{type(self).__name__} returned {order} for items {ids}")
        self.usage.record(calls=1, items_shown=len(ids), **stats)
        return Comparison(order=tuple(order[:q]), rest=tuple(order[q:]))

    async def acompare(self, items: Sequence[int], top: int | None = None) -> Comparison:
        """:meth:`compare`, awaitable (a blocking oracle runs in a worker thread).

        Args:
            items: distinct item ids (``0..n-1``), at most ``k`` of them.
            top: how many leading items to order (None: all).

        Returns:
            The :class:`Comparison`, as :meth:`compare`.

        Raises:
            ValueError: bad items (too many, duplicates, unknown ids) or ``top``.
            OracleError: the oracle cannot answer.
        """
        if self.blocking:
            return await asyncio.to_thread(self.compare, items, top)
        return self.compare(items, top)

    def _answer(self, items: tuple[int, ...], top: int | None) -> tuple[list[int], dict[str, Any]]:
        """A full order of ``items`` best first (only its first ``top`` are used), and usage
        deltas (``input_tokens``, ``output_tokens``, repair counts; an optional ``ranked``:
        only that many leading items have a known order, the rest go to
        :attr:`Comparison.rest`). Abstract hook."""
        raise NotImplementedError(f"{type(self).__name__} must define _answer (abstract hook)")

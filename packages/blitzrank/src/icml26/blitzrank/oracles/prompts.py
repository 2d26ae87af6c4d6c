"""Listwise / setwise prompts (RankGPT style) and a robust parser of the model's answer.

The prompt lists passages as ``[1] ...``, ``[2] ...`` and asks for the identifiers in
decreasing relevance (``[2] > [1] > [3]``), or for the best one only (setwise, ``top=1``).

Models answer imperfectly: ids missing, repeated, out of range, prose around them.
:func:`parse_ranking` keeps the first mention of each valid id in order, drops repeats and
unknown ids, and appends the ids never mentioned in their presented order (RankGPT's
repair), reporting what it had to fix so the oracle can count it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["LETTERS", "ParsedRanking", "label", "listwise_messages", "parse_ranking"]

_ID = re.compile(r"\[\s*(\d+)\s*\]|\b(\d+)\b")

SYSTEM = (
    "You are RankGPT, an intelligent assistant that ranks passages by their relevance to a "
    "search query."
)


LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def label(i: int, letters: bool = False) -> str:
    """The identifier of the ``i``-th presented passage (0-based): ``1, 2, ...`` or ``A, B, ...``."""
    return LETTERS[i] if letters else str(i + 1)


def listwise_messages(
    query: str, passages: Sequence[str], top: int | None = None, *, letters: bool = False
) -> list[dict[str, str]]:
    """Chat messages asking to order ``passages`` (or pick the best ``top``) for ``query``.

    ``letters=True`` labels passages ``[A]``, ``[B]``, ... (one token each in common BPE
    vocabularies: what single-token "first-token" scoring needs; at most 26 passages).
    """
    k = len(passages)
    if k < 2:
        raise ValueError("a listwise prompt needs at least 2 passages")
    if letters and k > len(LETTERS):
        raise ValueError(f"letter labels allow at most {len(LETTERS)} passages, got {k}")
    lines = [f"[{label(i, letters)}] {p.strip()}" for i, p in enumerate(passages)]
    ex = " > ".join(f"[{label(i, letters)}]" for i in (1, 0, 2)[: min(3, k)])
    if top is None or top >= k:
        ask = (
            f"Rank the {k} passages above by relevance to the query. Answer only with the "
            f"identifiers in descending order of relevance, like {ex}. "
            f"List all {k} identifiers once."
        )
    elif top == 1:
        ask = f"Which passage above is the most relevant to the query? Answer only with its identifier, like [{label(1, letters)}]."
    else:
        ask = (
            f"Select the {top} passages above most relevant to the query. Answer only with "
            f"their identifiers in descending order of relevance, like {ex}."
        )
    user = f"Query: {query.strip()}\n\n" + "\n".join(lines) + f"\n\nQuery: {query.strip()}\n{ask}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


@dataclass(frozen=True)
class ParsedRanking:
    """Positions (0-based, into the presented list) best first, and what had to be repaired."""

    order: tuple[int, ...]
    missing: int
    duplicates: int
    unknown: int

    @property
    def repaired(self) -> bool:
        return bool(self.missing or self.duplicates or self.unknown)


def parse_ranking(text: str, k: int, top: int | None = None) -> ParsedRanking:
    """Parse ``"[2] > [1] > [3]"``-like text into a full order of ``0..k-1``.

    Bracketed ids are preferred; bare numbers are read only when no bracketed id appears.
    With ``top=q`` only the first ``q`` ids are expected, so fewer are not "missing".
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    text = text if isinstance(text, str) else ""
    bracketed = [int(m.group(1)) for m in _ID.finditer(text) if m.group(1) is not None]
    raw = bracketed if bracketed else [int(m.group(2)) for m in _ID.finditer(text) if m.group(2)]
    seen: list[int] = []
    duplicates = unknown = 0
    for r in raw:
        pos = r - 1
        if not 0 <= pos < k:
            unknown += 1
        elif pos in seen:
            duplicates += 1
        else:
            seen.append(pos)
    expected = k if top is None else min(top, k)
    missing = max(0, expected - len(seen))
    order = seen + [i for i in range(k) if i not in seen]
    return ParsedRanking(
        order=tuple(order), missing=missing, duplicates=duplicates, unknown=unknown
    )

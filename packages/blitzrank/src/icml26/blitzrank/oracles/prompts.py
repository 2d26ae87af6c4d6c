"""Listwise / setwise prompts (RankGPT style) and a robust parser of the model's answer.

The prompt lists passages as ``[1] ...``, ``[2] ...`` and asks for the identifiers in
decreasing relevance (``[2] > [1] > [3]``), or for the best one only (setwise, ``top=1``).

Models answer imperfectly: ids missing, repeated, out of range, prose around them.
:func:`parse_ranking` keeps the first mention of each valid id in order and drops repeats and
unknown ids; the ids never mentioned go to ``rest`` with no order among them (placed below
the named ones, as RankGPT does, but never given an invented order), and it reports what it
had to fix so the oracle can count it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "LETTERS",
    "ParsedRanking",
    "label",
    "listwise_messages",
    "parse_ranking",
    "truncate_passage",
]

#: A bracketed identifier, ``[3]`` (the format the prompt asks for).
_BRACKETED = re.compile(r"\[\s*(\d+)\s*\]")
#: An answer made only of bare identifiers and separators (``2 > 1 > 3``, ``2, 1, 3``,
#: ``Passage 2``): the one case where bare numbers are read as ids. Numbers in prose
#: (``"the 2 passages from 1998"``) are never ids.
_BARE_LIST = re.compile(
    r"^\s*(?:passage\s*)?\d+(?:\s*(?:>|,|;|\s)\s*(?:passage\s*)?\d+)*\s*\.?\s*$", re.I
)
_NUMBER = re.compile(r"\d+")

SYSTEM = (
    "You are RankGPT, an intelligent assistant that ranks passages by their relevance to a "
    "search query."
)


LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def truncate_passage(text: str, max_words: int | None) -> str:
    """The first ``max_words`` words of a passage (RankGPT and the authors truncate passages
    so that a window fits the context); the text unchanged when ``max_words`` is None.

    Args:
        text: the passage.
        max_words: words kept (None: all).

    Returns:
        The passage, cut at a word boundary.
    """
    if max_words is None:
        return text
    words = text.split()
    return text if len(words) <= max_words else " ".join(words[:max_words])


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
    """Positions (0-based, into the presented list) the model named, best first; the
    positions it never named (``rest``, in presented order, no order known among them); and
    what had to be repaired."""

    order: tuple[int, ...]
    missing: int
    duplicates: int
    unknown: int
    rest: tuple[int, ...] = ()

    @property
    def full(self) -> tuple[int, ...]:
        """``order`` then ``rest``: every presented position once."""
        return self.order + self.rest

    @property
    def repaired(self) -> bool:
        return bool(self.missing or self.duplicates or self.unknown)


def parse_ranking(text: str, k: int, top: int | None = None) -> ParsedRanking:
    """Parse ``"[2] > [1] > [3]"``-like text into a full order of ``0..k-1``.

    Bracketed ids are read wherever they appear; without any, bare numbers are read only
    when the whole answer is a list of them (``"2 > 1 > 3"``), never from prose, so a year
    or a count in an explanation is not taken for a passage. With ``top=q`` only the first
    ``q`` ids are expected, so fewer are not "missing".

    Args:
        text: the model's answer.
        k: passages shown.
        top: ids expected (None: all ``k``).

    Returns:
        The :class:`ParsedRanking`: the named ids in ``order``, the others in ``rest``.

    Raises:
        ValueError: ``k < 1``.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    text = text if isinstance(text, str) else ""
    raw = [int(m.group(1)) for m in _BRACKETED.finditer(text)]
    if not raw and _BARE_LIST.match(text):
        raw = [int(m.group(0)) for m in _NUMBER.finditer(text)]
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
    rest = tuple(i for i in range(k) if i not in seen)
    return ParsedRanking(
        order=tuple(seen), missing=missing, duplicates=duplicates, unknown=unknown, rest=rest
    )

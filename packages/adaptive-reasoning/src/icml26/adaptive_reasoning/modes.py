"""The two reasoning modes and how a reply is written and read.

The first generated token is the mode (Thinkless-style control tokens), so the mode of a reply
is measurable (its first token) and controllable (force it into the prompt):

* think: ``<think>5+3=8,8-2=6,</think>6`` then end of turn: explicit steps, then the answer;
* no-think: ``<no_think>6`` then end of turn: the answer alone.

:func:`parse_reply` reads a decoded reply (special tokens kept) without ever raising: a reply
that starts with neither token has mode ``None``, a think reply that never closes its
``</think>``, or an empty answer, has answer ``None`` (scored wrong). The answer is the text
after the mode block up to the first line break, stripped; an
:class:`~icml26.adaptive_reasoning.answers.AnswerChecker` compares it with the gold answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "MODE_TOKENS",
    "NO_THINK",
    "THINK",
    "THINK_END",
    "Mode",
    "ParsedReply",
    "direct_target",
    "parse_reply",
    "think_target",
]

THINK = "<think>"
THINK_END = "</think>"
NO_THINK = "<no_think>"
#: The special tokens a tokenizer must have (one id each).
MODE_TOKENS = (THINK, THINK_END, NO_THINK)

Mode = Literal["think", "no_think"]


@dataclass(frozen=True)
class ParsedReply:
    """A reply read back.

    Attributes:
        mode: ``"think"``, ``"no_think"``, or ``None`` (starts with neither token).
        answer: the answer text, or ``None`` (missing, unclosed reasoning).
        reasoning: the text between ``<think>`` and ``</think>`` (``""`` without it).
    """

    mode: Mode | None
    answer: str | None
    reasoning: str = ""


def think_target(trace: str, answer: int | str) -> str:
    """The SFT target of a complex problem."""
    return f"{THINK}{trace}{THINK_END}{answer}"


def direct_target(answer: int | str) -> str:
    """The SFT target of a simple problem."""
    return f"{NO_THINK}{answer}"


def _answer(text: str) -> str | None:
    lines = text.strip().splitlines()
    first = lines[0].strip() if lines else ""
    return first or None


def parse_reply(text: str) -> ParsedReply:
    """Mode and answer of a decoded reply (see the module docstring).

    Args:
        text: the reply decoded with its special tokens.

    Returns:
        The mode, the answer text and the reasoning; never raises on malformed text.
    """
    if not isinstance(text, str):
        return ParsedReply(None, None)
    body = text.strip()
    if body.startswith(THINK):
        rest = body[len(THINK) :]
        end = rest.find(THINK_END)
        if end < 0:
            return ParsedReply("think", None, rest)
        return ParsedReply("think", _answer(rest[end + len(THINK_END) :]), rest[:end])
    if body.startswith(NO_THINK):
        after = body[len(NO_THINK) :]
        if THINK in after or THINK_END in after:
            return ParsedReply("no_think", None)
        return ParsedReply("no_think", _answer(after))
    return ParsedReply(None, None)

"""What each role reads and writes, as chat messages (the same for tiny models, SmolLM2 and
endpoints), and the parsers of their replies.

* Planner: the question; each reply is a search query or ``stop``; each observation (a
  ``tool`` turn, masked out of the loss) is what the Filter newly kept.
* Filter: one conversation per episode: the question, the current query and the first
  retrieved passage, then each later passage (with its query) as a ``tool`` turn; it replies
  ``keep`` or ``drop`` to each.
* Answerer: the question and the memory (kept passages, or ``none``); replies the answer.
* Monolithic agent (Search-R1 style): like the Planner, but each observation is every
  retrieved passage and its last reply is ``answer <text>``.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "ANSWER_PREFIX",
    "NOTHING_NEW",
    "STOP",
    "answerer_messages",
    "filter_messages",
    "filter_observation",
    "format_passages",
    "parse_filter",
    "parse_monolithic",
    "parse_planner",
    "question_messages",
]

STOP = "stop"
ANSWER_PREFIX = "answer "
NOTHING_NEW = "nothing new"
KEEP, DROP = "keep", "drop"
_SEP = " | "


def format_passages(texts: Sequence[str]) -> str:
    """Passages as one observation (``nothing new`` when there are none)."""
    return _SEP.join(texts) if texts else NOTHING_NEW


def question_messages(question: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": question}]


def filter_messages(question: str, query: str, passage: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"{question}\nsearch: {query}\npassage: {passage}"}]


def filter_observation(query: str, passage: str) -> str:
    """A later passage in the Filter's conversation of an episode (a ``tool`` turn)."""
    return f"search: {query}\npassage: {passage}"


def answerer_messages(question: str, memory: Sequence[str]) -> list[dict[str, str]]:
    body = _SEP.join(memory) if memory else "none"
    return [{"role": "user", "content": f"{question}\nmemory: {body}"}]


def parse_planner(text: str) -> str | None:
    """The query, or ``None`` for ``stop`` (or an empty reply)."""
    text = " ".join(text.split())
    if not text or text.lower() == STOP:
        return None
    return text


def parse_filter(text: str) -> bool:
    """Keep the passage? Anything but a reply starting with ``keep`` drops it."""
    return text.strip().lower().startswith(KEEP)


def parse_monolithic(text: str) -> tuple[str, str]:
    """``("answer", text)`` or ``("search", query)``."""
    text = " ".join(text.split())
    if text.lower().startswith(ANSWER_PREFIX.strip()):
        return "answer", text[len(ANSWER_PREFIX.strip()) :].strip()
    return "search", text

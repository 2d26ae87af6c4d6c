"""Records of the deep-search environment: passages and questions (no framework imports)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["HOPS", "Passage", "Question"]

#: Hop labels used in metric keys (a key segment must not start with a digit).
HOPS: tuple[str, ...] = ("hop1", "hop2", "hop3")


@dataclass(frozen=True)
class Passage:
    """One retrievable passage: a corpus-unique ``pid`` and its text."""

    pid: str
    text: str

    def __post_init__(self) -> None:
        if not isinstance(self.pid, str) or not self.pid:
            raise ValueError(f"a passage needs a non-empty string id, got {self.pid!r}")
        if not isinstance(self.text, str) or not self.text.strip():
            raise ValueError(f"passage {self.pid!r} has no text")


@dataclass(frozen=True)
class Question:
    """A question with its accepted answers, the gold evidence passage ids (may be empty for
    user data without them), a hop label and, for generated questions, the entity chain."""

    qid: str
    text: str
    answers: tuple[str, ...]
    gold: tuple[str, ...] = ()
    hops: str = "hop1"
    chain: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.text.strip():
            raise ValueError(f"question {self.qid!r} has no text")
        if not self.answers or not all(isinstance(a, str) and a.strip() for a in self.answers):
            raise ValueError(f"question {self.qid!r} has no answers (need at least one non-empty)")
        if self.hops not in HOPS:
            raise ValueError(
                f"question {self.qid!r}: hops must be one of {HOPS}, got {self.hops!r}"
            )

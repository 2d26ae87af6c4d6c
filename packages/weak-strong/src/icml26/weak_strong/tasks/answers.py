"""Generated math problems, the prompt sent for them, and reading a reply's final number.

Shared by the sampler (:mod:`~icml26.weak_strong.tasks.math`) and the shipped stream file
(:mod:`~icml26.weak_strong.tasks.math_file`), which import it; it imports neither.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "DEMONSTRATIONS",
    "INSTRUCTION",
    "Problem",
    "agreement_scores",
    "conversation",
    "extract_answer",
    "make_problems",
]

INSTRUCTION = (
    "Solve the problem. Write the calculation in one line, then end with 'The answer is <number>.'"
)
#: Worked examples sent before every problem (one user / assistant turn each), so that a small
#: model follows the answer format. Their numbers (30 and above) and names lie outside what
#: :func:`make_problems` generates, so no demonstration is an evaluation item (tested).
DEMONSTRATIONS = (
    ("What is 41 + 36?", "41 + 36 = 77. The answer is 77."),
    (
        "Kim has 34 shells. Kim gets 52 more and then gives away 31. "
        "How many shells does Kim have now?",
        "34 + 52 - 31 = 55. The answer is 55.",
    ),
)
_NUMBER = re.compile(r"-?\d[\d,]*")
_ANSWER_IS = re.compile(r"answer is\s*:?\s*\$?(-?\d[\d,]*)", re.IGNORECASE)


@dataclass(frozen=True)
class Problem:
    """A generated problem and its exact answer."""

    question: str
    answer: int
    kind: str


_NAMES = ("Tom", "Ana", "Lee", "Maya", "Sam", "Ravi", "Zoe", "Omar")
_THINGS = ("apples", "books", "coins", "pencils", "stickers", "marbles")


def make_problems(n: int, seed: int = 0) -> list[Problem]:
    """``n`` problems mixing one-step sums and differences, products, two-step expressions and
    word problems (answers are integers, mostly small)."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    rng = np.random.default_rng(seed)
    out: list[Problem] = []
    for _ in range(n):
        kind = ("add", "sub", "mul", "two_step", "word")[int(rng.integers(5))]
        a, b, c = (int(v) for v in rng.integers(2, 30, size=3))
        if kind == "add":
            out.append(Problem(f"What is {a} + {b}?", a + b, kind))
        elif kind == "sub":
            hi, lo = max(a, b), min(a, b)
            out.append(Problem(f"What is {hi} - {lo}?", hi - lo, kind))
        elif kind == "mul":
            a, b = a % 12 + 2, b % 10 + 2
            out.append(Problem(f"What is {a} * {b}?", a * b, kind))
        elif kind == "two_step":
            c = c % 9 + 2
            out.append(Problem(f"What is {a} + {b} * {c}?", a + b * c, kind))
        else:
            name = _NAMES[int(rng.integers(len(_NAMES)))]
            thing = _THINGS[int(rng.integers(len(_THINGS)))]
            lo = min(a, b)
            q = (
                f"{name} has {a} {thing}. {name} gets {b} more and then gives away {lo}. "
                f"How many {thing} does {name} have now?"
            )
            out.append(Problem(q, a + b - lo, kind))
    return out


def extract_answer(text: str) -> int | None:
    """The final number of a reply: the number after the last ``answer is`` (the format the
    prompt asks for, ``"... The answer is 1,234."`` -> 1234); else the first integer after
    the last ``=`` (``"6 * 5 = 30, so"`` -> 30); else the last integer; None when the reply
    holds no number."""
    stated = _ANSWER_IS.findall(text)
    if stated:
        return int(stated[-1].replace(",", ""))
    tail = text.rsplit("=", 1)[1] if "=" in text else text
    found = _NUMBER.findall(tail)
    if not found:
        return None
    pick = found[0] if "=" in text else found[-1]
    try:
        return int(pick.replace(",", ""))
    except ValueError:
        return None


def agreement_scores(answers: Sequence[int | None]) -> list[float]:
    """Self-consistency: for each sample, the share of samples with the same answer."""
    if not answers:
        raise ValueError("agreement_scores needs at least one answer")
    counts = Counter(a for a in answers if a is not None)
    k = len(answers)
    return [0.0 if a is None else counts[a] / k for a in answers]


def conversation(question: str) -> list[dict[str, str]]:
    """The chat sent for one problem: the worked :data:`DEMONSTRATIONS`, then the
    instruction and the problem."""
    chat: list[dict[str, str]] = []
    for demo_q, demo_a in DEMONSTRATIONS:
        chat.append({"role": "user", "content": f"{INSTRUCTION}\n\nProblem: {demo_q}"})
        chat.append({"role": "assistant", "content": demo_a})
    chat.append({"role": "user", "content": f"{INSTRUCTION}\n\nProblem: {question}"})
    return chat

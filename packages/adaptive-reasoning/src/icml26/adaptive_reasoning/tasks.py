"""Arithmetic word problems whose *true* complexity is independent of their wording.

A problem is a program: a start value ``a_0`` and ``k`` operations ``(op_j, n_j)`` (add or take
away a number), whose answer is ``a_k`` with ``a_j = a_{j-1} op_j n_j``. Its complexity is the
operation count ``k``: ``k = 1`` is *simple* (one step, answered directly), ``k >= 3`` is
*complex* (a chain a direct answer rarely gets right). The same program can be worded

* **concisely**: one short clause per operation, nothing else;
* **verbosely** (:func:`verbose`): long, complex-sounding sentences with no numbers and no
  effect on the answer around the same clauses (the "costume" of the paper's title).

:func:`verbose` and :func:`concise` only change the words: the answer and the operation count
are those of the program (a property test holds them to it). Splits: ``simple_concise``,
``simple_verbose``, ``complex_concise``, ``complex_verbose`` (training wording) and ``ood``
(held-out names, objects, verbs and filler sentences, simple and complex, concise and
verbose). A user's own problems come from a JSONL file (:func:`load_problems`).

Numbers stay small (start 2..29, operands 1..9, every intermediate value in 0..29) so that a
tiny model trained from scratch can learn the one-step lookups a think trace is made of.

**Train and evaluation programs are disjoint by construction**: a program is *held out*
(:func:`is_heldout`) when a hash of its content falls in one quarter; training pools draw
only the other programs, evaluation splits only held-out ones, so no evaluation program (and
hence no evaluation text) occurs in training. Simple programs number 431 (324 training, 107
held out; :func:`program_counts`). The arithmetic facts are not disjoint: the one step of a
held-out simple item (``"11-2=9,"``) does appear inside the think traces of training complex
items, so simple accuracy can draw on steps seen in training, only not on the item itself.
"""

from __future__ import annotations

import json
import math
import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import numpy as np

__all__ = [
    "SPLITS",
    "TRAIN_SPLITS",
    "Problem",
    "ProblemError",
    "Wording",
    "concise",
    "is_heldout",
    "load_problems",
    "make_split",
    "mixture",
    "program_counts",
    "sample_program",
    "think_trace",
    "verbose",
]

#: Evaluation splits, in reporting order.
TRAIN_SPLITS = ("simple_concise", "simple_verbose", "complex_concise", "complex_verbose")
SPLITS = (*TRAIN_SPLITS, "ood")

MAX_VALUE = 29
MAX_OPERAND = 9
#: One program in this many (by a content hash) is held out for evaluation.
HELDOUT_EVERY = 4
Op = tuple[Literal["+", "-"], int]


class ProblemError(ValueError):
    """A malformed problem (no answer, a wrong complexity label, an unknown split)."""


@dataclass(frozen=True)
class Wording:
    """The vocabulary one family of templates draws from (training or held-out)."""

    names: tuple[str, ...]
    objects: tuple[str, ...]
    add: tuple[str, ...]  # "{name} gets {n} more"
    sub: tuple[str, ...]  # "{name} gives away {n}"
    fillers: tuple[str, ...]  # number-free sentences
    questions: tuple[str, ...]  # "How many {obj} does {name} have?"
    verbose_add: tuple[str, ...]
    verbose_sub: tuple[str, ...]


TRAIN_WORDING = Wording(
    names=("Tom", "Ana", "Lee", "Mia", "Sam", "Kai", "Zoe", "Ben"),
    objects=("apples", "coins", "books", "shells", "cards", "pens"),
    add=("{name} gets {n} more", "{name} finds {n}", "{name} buys {n}"),
    sub=("{name} gives away {n}", "{name} loses {n}", "{name} sells {n}"),
    fillers=(
        "It was a long and unusually complicated week in the old town by the river.",
        "Everyone agreed that the situation required careful and thorough consideration.",
        "Many different factors and circumstances seemed to be involved at the same time.",
        "The weather was grey, the market was busy, and the streets were full of noise.",
        "After a great deal of thought and a rather lengthy discussion with friends,",
        "Considering all of the various details of this intricate and subtle scenario,",
        "Although the whole matter appeared quite difficult and demanding at first,",
    ),
    questions=("How many {obj} does {name} have?", "How many {obj} now?"),
    verbose_add=(
        "after much deliberation {name} eventually decides to get {n} more",
        "following a long and winding journey {name} happens to find {n}",
    ),
    verbose_sub=(
        "after weighing every possible consequence {name} chooses to give away {n}",
        "through a complicated series of unfortunate events {name} loses {n}",
    ),
)

#: Held-out wording: none of these names, objects, verbs or sentences occur in training.
OOD_WORDING = Wording(
    names=("Ivo", "Uma", "Rex", "Ada"),
    objects=("stamps", "marbles", "tickets"),
    add=("{name} wins {n}", "{name} collects {n}"),
    sub=("{name} drops {n}", "{name} spends {n}"),
    fillers=(
        "In a distant kingdom famous for its elaborate rituals and endless ceremonies,",
        "The council debated the question for hours without reaching any firm conclusion.",
        "Historians would later describe this moment as remarkably intricate and profound.",
    ),
    questions=("What is the number of {obj} {name} holds?",),
    verbose_add=("in a surprising and much celebrated turn of fortune {name} wins {n}",),
    verbose_sub=("with considerable reluctance and after long reflection {name} drops {n}",),
)


@dataclass(frozen=True)
class Problem:
    """One word problem.

    Attributes:
        text: the problem as the model reads it.
        answer: the exact answer: an integer for generated problems, a string (or number)
            for a user's problems, compared by an
            :class:`~icml26.adaptive_reasoning.answers.AnswerChecker`.
        ops: the number of operations (true complexity; 0 when unknown).
        complex: whether the right mode is *think* (``ops >= 3`` for generated problems;
            ``None`` when unknown: a user's problems need no label, it is only reported).
        split: the split it belongs to (``""`` for training data).
        start, program: the program (empty for a user's problems, which need no trace).
        verbose: whether it is worded verbosely.
        reasoning: a worked solution (a user's problem's think target; generated problems
            derive theirs from the program).
    """

    text: str
    answer: int | str
    ops: int
    complex: bool | None
    split: str = ""
    start: int | None = None
    program: tuple[Op, ...] = field(default=())
    verbose: bool = False
    reasoning: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not self.text.strip():
            raise ProblemError("a problem needs a non-empty text")
        if isinstance(self.answer, bool) or not isinstance(self.answer, int | str):
            raise ProblemError(f"problem {self.text[:40]!r}: the answer must be an int or a string")
        if isinstance(self.answer, str) and not self.answer.strip():
            raise ProblemError(f"problem {self.text[:40]!r}: the answer is empty")
        if isinstance(self.ops, bool) or not isinstance(self.ops, int) or self.ops < 0:
            raise ProblemError(f"problem {self.text[:40]!r}: ops must be an integer >= 0")
        if self.program:
            if len(self.program) != self.ops or self.start is None:
                raise ProblemError("a program needs a start value and exactly `ops` operations")
            if evaluate(self.start, self.program)[-1] != self.answer:
                raise ProblemError(f"problem {self.text[:40]!r}: answer disagrees with its program")

    def as_dict(self) -> dict[str, object]:
        """The problem as a JSON-ready record.

        Returns:
            ``text``, ``answer``, ``ops``, ``complex`` and ``split``.
        """
        return {
            "text": self.text,
            "answer": self.answer,
            "ops": self.ops,
            "complex": self.complex,
            "split": self.split,
        }


def evaluate(start: int, program: Sequence[Op]) -> list[int]:
    """The running values ``a_0, a_1, ..., a_k`` of a program."""
    values = [start]
    for op, n in program:
        values.append(values[-1] + n if op == "+" else values[-1] - n)
    return values


def is_heldout(start: int, program: Sequence[Op]) -> bool:
    """Whether a program belongs to the evaluation side (a hash of its content)."""
    key = f"{start}" + "".join(f"{op}{n}" for op, n in program)
    return zlib.crc32(key.encode()) % HELDOUT_EVERY == 0


def program_counts() -> dict[str, int]:
    """Distinct simple (one-operation) programs on each side of the split."""
    heldout = train = 0
    for start in range(2, MAX_VALUE + 1):
        for n in range(1, MAX_OPERAND + 1):
            for op in ("+", "-"):
                if 0 <= (start + n if op == "+" else start - n) <= MAX_VALUE:
                    if is_heldout(start, [(op, n)]):
                        heldout += 1
                    else:
                        train += 1
    return {"simple_train": train, "simple_heldout": heldout}


def sample_program(
    k: int, rng: np.random.Generator, *, heldout: bool | None = None
) -> tuple[int, tuple[Op, ...]]:
    """A start value and ``k`` operations whose running values stay in ``0..MAX_VALUE``;
    ``heldout`` (``True``/``False``) restricts it to the evaluation or the training side."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    while True:
        start, program = _draw_program(k, rng)
        if heldout is None or is_heldout(start, program) == heldout:
            return start, program


def _draw_program(k: int, rng: np.random.Generator) -> tuple[int, tuple[Op, ...]]:
    start = int(rng.integers(2, MAX_VALUE + 1))
    value, program = start, []
    for _ in range(k):
        choices: list[Op] = [("+", n) for n in range(1, MAX_OPERAND + 1) if value + n <= MAX_VALUE]
        choices += [("-", n) for n in range(1, MAX_OPERAND + 1) if value - n >= 0]
        op = choices[int(rng.integers(len(choices)))]
        program.append(op)
        value = evaluate(value, [op])[-1]
    return start, tuple(program)


def _clause(w: Wording, op: Op, name: str, rng: np.random.Generator, wordy: bool) -> str:
    sign, n = op
    pool = (
        (w.verbose_add if sign == "+" else w.verbose_sub)
        if wordy
        else (w.add if sign == "+" else w.sub)
    )
    return pool[int(rng.integers(len(pool)))].format(name=name, n=n)


def _pick(pool: Sequence[str], rng: np.random.Generator) -> str:
    return pool[int(rng.integers(len(pool)))]


def render(
    start: int,
    program: Sequence[Op],
    *,
    wordy: bool,
    rng: np.random.Generator,
    wording: Wording = TRAIN_WORDING,
) -> str:
    """The text of a program: concise (one clause per operation), or verbose (number-free
    filler sentences before, between and after the same clauses, and wordier verbs)."""
    name, obj = _pick(wording.names, rng), _pick(wording.objects, rng)
    question = _pick(wording.questions, rng).format(name=name, obj=obj)
    first = f"{name} has {start} {obj}."
    clauses = [_clause(wording, op, name, rng, wordy) + "." for op in program]
    if not wordy:
        return " ".join([first, *clauses, question])
    n_fill = 2
    fillers = [str(s) for s in rng.choice(wording.fillers, size=n_fill, replace=False)]
    parts = [fillers[0], first, *clauses[:1], *fillers[1:], *clauses[1:], question]
    return " ".join(parts)


def _problem(
    start: int,
    program: tuple[Op, ...],
    *,
    wordy: bool,
    rng: np.random.Generator,
    wording: Wording,
    split: str = "",
    complex_from: int = 3,
) -> Problem:
    return Problem(
        text=render(start, program, wordy=wordy, rng=rng, wording=wording),
        answer=evaluate(start, program)[-1],
        ops=len(program),
        complex=len(program) >= complex_from,
        split=split,
        start=start,
        program=program,
        verbose=wordy,
    )


def verbose(
    problem: Problem, rng: np.random.Generator, wording: Wording = TRAIN_WORDING
) -> Problem:
    """The same program worded verbosely (answer and operation count unchanged)."""
    if not problem.program or problem.start is None:
        raise ProblemError("only a generated problem (with its program) can be re-worded")
    text = render(problem.start, problem.program, wordy=True, rng=rng, wording=wording)
    return replace(problem, text=text, verbose=True)


def concise(
    problem: Problem, rng: np.random.Generator, wording: Wording = TRAIN_WORDING
) -> Problem:
    """The same program stated concisely (answer and operation count unchanged)."""
    if not problem.program or problem.start is None:
        raise ProblemError("only a generated problem (with its program) can be re-worded")
    text = render(problem.start, problem.program, wordy=False, rng=rng, wording=wording)
    return replace(problem, text=text, verbose=False)


def think_trace(problem: Problem) -> str:
    """The step-by-step reasoning generated from the program: ``"5+3=8,8-2=6,"`` (a user's
    problem: its ``reasoning``)."""
    if problem.reasoning:
        return problem.reasoning
    if not problem.program or problem.start is None:
        raise ProblemError("a think trace needs the problem's program or its reasoning")
    values = evaluate(problem.start, problem.program)
    return "".join(
        f"{a}{op}{n}={b},"
        for a, (op, n), b in zip(values[:-1], problem.program, values[1:], strict=True)
    )


COMPLEX_OPS = (3, 4)


def make_split(split: str, n: int, rng: np.random.Generator) -> list[Problem]:
    """``n`` problems of one evaluation split, every program held out from training.

    Args:
        split: one of :data:`SPLITS`.
        n: how many problems.
        rng: the random stream.

    Returns:
        The problems, ``split`` set on each.

    Raises:
        ProblemError: an unknown split.
    """
    if split not in SPLITS:
        raise ProblemError(f"unknown split {split!r}; choose from {list(SPLITS)}")
    out = []
    for i in range(n):
        if split == "ood":
            kind, wordy, wording = ("simple", "complex")[i % 2], bool((i // 2) % 2), OOD_WORDING
        else:
            kind, form = split.split("_")
            wordy, wording = form == "verbose", TRAIN_WORDING
        k = 1 if kind == "simple" else int(rng.choice(COMPLEX_OPS))
        start, program = sample_program(k, rng, heldout=True)
        out.append(_problem(start, program, wordy=wordy, rng=rng, wording=wording, split=split))
    return out


def mixture(
    n: int,
    rng: np.random.Generator,
    *,
    complex_share: float = 0.5,
    verbose_if_simple: float,
    verbose_if_complex: float,
) -> list[Problem]:
    """``n`` training problems: complex with probability ``complex_share``, worded verbosely
    with a probability that depends on the complexity. Real data has long prompts for hard
    problems (``verbose_if_complex > verbose_if_simple``): that correlation is the shortcut a
    reasoner trained without augmentation learns."""
    for name, p in (
        ("complex_share", complex_share),
        ("verbose_if_simple", verbose_if_simple),
        ("verbose_if_complex", verbose_if_complex),
    ):
        if not 0 <= p <= 1:
            raise ValueError(f"{name} must be in [0, 1], got {p}")
    out = []
    for _ in range(n):
        is_complex = bool(rng.random() < complex_share)
        k = int(rng.choice(COMPLEX_OPS)) if is_complex else 1
        wordy = bool(rng.random() < (verbose_if_complex if is_complex else verbose_if_simple))
        start, program = sample_program(k, rng, heldout=False)
        out.append(_problem(start, program, wordy=wordy, rng=rng, wording=TRAIN_WORDING))
    return out


_GSM8K_MARK = "####"
_SPLIT_NAME = re.compile(r"^[A-Za-z0-9_]+$")


def load_problems(path: str | Path) -> list[Problem]:
    """Problems from a JSONL file, one object a line, GSM8K's shape or ours.

    Fields: ``"question"`` or ``"text"`` (the problem); ``"answer"`` (a string or a number;
    GSM8K's ``"worked solution #### 18"`` is split at its one ``####`` into the reasoning and
    the final answer ``"18"``; NaN and infinities are refused); optional ``"reasoning"`` (a
    worked solution, the think target), ``"complex"`` (a JSON bool, only reported: no label reaches training after SFT), ``"ops"`` and ``"split"``
    (letters, digits, ``_``; default ``"user"``).

    Args:
        path: the JSONL file.

    Returns:
        One :class:`Problem` per line, in file order.

    Raises:
        FileNotFoundError: no such file.
        ProblemError: a line that is not a JSON object, lacks the question or the answer, has
            an empty or non-finite answer (nothing after ``####``, NaN, Infinity), more than
            one ``####``, a
            ``"complex"`` that is not a bool or a bad split name (the message names the line).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"problems file {str(path)!r} does not exist")
    out = []
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ProblemError(f"{path}:{i}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise ProblemError(f"{path}:{i}: expected a JSON object")
        text = row.get("question", row.get("text"))
        if text is None or "answer" not in row:
            raise ProblemError(
                f"{path}:{i}: a problem needs 'question' (or 'text') and 'answer', has {sorted(row)}"
            )
        answer, reasoning = row["answer"], str(row.get("reasoning", ""))
        if isinstance(answer, bool) or not isinstance(answer, str | int | float):
            raise ProblemError(f"{path}:{i}: answer must be a string or a number, got {answer!r}")
        if isinstance(answer, float) and not math.isfinite(answer):
            raise ProblemError(f"{path}:{i}: answer must be a finite number, got {answer!r}")
        answer = str(answer)
        if answer.count(_GSM8K_MARK) > 1:
            raise ProblemError(
                f"{path}:{i}: answer has {answer.count(_GSM8K_MARK)} '####' marks, GSM8K has "
                "one (before the final answer): which is the answer is ambiguous"
            )
        if _GSM8K_MARK in answer:
            head, _, answer = answer.partition(_GSM8K_MARK)
            reasoning = reasoning or head.strip()
            if not answer.strip():
                raise ProblemError(f"{path}:{i}: nothing after '####' (the final answer)")
        if _is_non_finite(answer):
            raise ProblemError(
                f"{path}:{i}: answer must be a finite number, got {answer.strip()!r}"
            )
        split = str(row.get("split", "user"))
        if not _SPLIT_NAME.match(split):
            raise ProblemError(f"{path}:{i}: split {split!r} must be letters, digits or '_'")
        is_complex = row.get("complex")
        if is_complex is not None and not isinstance(is_complex, bool):
            raise ProblemError(
                f"{path}:{i}: 'complex' must be true or false (a JSON bool), got {is_complex!r}"
            )
        try:
            out.append(
                Problem(
                    text=str(text),
                    answer=answer.strip(),
                    ops=int(row.get("ops", 0)),
                    complex=is_complex,
                    split=split,
                    verbose=bool(row.get("verbose", False)),
                    reasoning=reasoning,
                )
            )
        except (ProblemError, ValueError) as exc:
            raise ProblemError(f"{path}:{i}: {exc}") from None
    if not out:
        raise ProblemError(f"{path}: no problems")
    return out


def _is_non_finite(text: str) -> bool:
    """Whether ``text`` reads as NaN or an infinity (``"nan"``, ``"-Infinity"``, ``"1e999"``)."""
    try:
        return not math.isfinite(float(text.strip().replace(",", "")))
    except ValueError:
        return False


def length_complexity_correlation(problems: Iterable[Problem], lengths: Iterable[int]) -> float:
    """Pearson correlation between prompt length and the complexity label (point-biserial):
    how much a length shortcut could tell."""
    y = np.array([float(p.complex) for p in problems])
    x = np.array(list(lengths), dtype=float)
    if len(x) != len(y) or len(x) < 2 or x.std() == 0 or y.std() == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])

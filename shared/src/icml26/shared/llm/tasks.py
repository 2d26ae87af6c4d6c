"""A toy task a tiny model learns on the CPU in minutes: reverse a digit string.

``"reverse 4071"`` -> ``"1704"``. It has a graded reward (the share of digits in the right
place) and an exact one, so SFT can stop at partial competence and GRPO has a signal to climb.
Used by the tests, the benchmark and the README examples of :mod:`icml26.shared.llm`.

A two-turn variant exercises multi-turn rollouts: the policy first calls a ``lookup`` tool,
then answers. The same environment comes in TRL's shape (:class:`LookupTool`, for
``environment_factory``: TRL's own tool loop) and in ours (:class:`LookupEnv`, for
:func:`icml26.shared.llm.rollouts.multi_turn_rollout`); both show the same tokens, so the
benchmark compares the two loops on one workload.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml26.shared.llm.grpo import completion_text

__all__ = [
    "LOOKUP_CALL",
    "LookupEnv",
    "LookupTool",
    "ReverseDigits",
    "digit_accuracy",
    "exact_match",
    "final_answer_accuracy",
    "lookup_conversations",
    "proposer_conversations",
    "proposer_solver_roles",
]


@dataclass(frozen=True)
class ReverseDigits:
    """Prompts ``"reverse <digits>"`` with ``min_len..max_len`` digits; the answer is the
    digits reversed."""

    min_len: int = 3
    max_len: int = 6

    def __post_init__(self) -> None:
        if not 1 <= self.min_len <= self.max_len:
            raise ValueError(f"need 1 <= min_len <= max_len, got {self.min_len}, {self.max_len}")

    def sample(self, n: int, rng: np.random.Generator) -> list[str]:
        """``n`` random digit strings."""
        lengths = rng.integers(self.min_len, self.max_len + 1, size=n)
        return ["".join(str(d) for d in rng.integers(0, 10, size=k)) for k in lengths]

    @staticmethod
    def prompt(digits: str) -> list[dict[str, str]]:
        return [{"role": "user", "content": f"reverse {digits}"}]

    @staticmethod
    def answer(digits: str) -> str:
        return digits[::-1]

    def conversations(self, n: int, rng: np.random.Generator) -> list[list[dict[str, str]]]:
        """``n`` solved examples for SFT."""
        return [
            [*self.prompt(d), {"role": "assistant", "content": self.answer(d)}]
            for d in self.sample(n, rng)
        ]

    def dataset(self, n: int, rng: np.random.Generator) -> list[dict[str, Any]]:
        """``n`` GRPO rows: ``{"prompt": messages, "answer": reversed}``."""
        return [{"prompt": self.prompt(d), "answer": self.answer(d)} for d in self.sample(n, rng)]

    def corpus(self, rng: np.random.Generator, n: int = 400) -> list[str]:
        """Text to train a tiny tokenizer on."""
        return [f"reverse {d} {d[::-1]}" for d in self.sample(n, rng)]


def digit_accuracy(
    prompts: Sequence[Any], completions: Sequence[Any], answer: Sequence[str], **_: Any
) -> list[float]:
    """Share of the answer's positions holding the right digit; a wrong length costs the
    missing or extra positions (so ``"170"`` for ``"1704"`` scores 0.75, ``"17044"`` 0.8)."""
    out = []
    for completion, target in zip(completions, answer, strict=True):
        text = completion_text(completion).strip()
        hits = sum(a == b for a, b in zip(text, target, strict=False))
        out.append(hits / max(len(text), len(target), 1))
    return out


def exact_match(
    prompts: Sequence[Any], completions: Sequence[Any], answer: Sequence[str], **_: Any
) -> list[float]:
    """1 when the completion is exactly the answer (whitespace stripped), else 0."""
    return [
        float(completion_text(c).strip() == target)
        for c, target in zip(completions, answer, strict=True)
    ]


def propose_prompt(length: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"propose {length}"}]


def proposer_conversations(
    n: int, rng: np.random.Generator, task: ReverseDigits
) -> list[list[dict[str, str]]]:
    """``"propose <k>"`` -> ``k`` random digits: SFT data for a proposer role."""
    out = []
    for digits in task.sample(n, rng):
        out.append([*propose_prompt(len(digits)), {"role": "assistant", "content": digits}])
    return out


def proposer_solver_roles(task: ReverseDigits, settings: Any) -> list[Any]:
    """Two roles on one task: a *proposer* asked for ``k`` digits (reward 1 when it returns
    exactly ``k`` digits) and a *solver* that reverses the proposer's valid proposals (reward
    :func:`digit_accuracy`; random digits until the proposer has made enough). The proposer's
    outputs are the solver's inputs."""
    from icml26.shared.llm.roles import Role

    pool: list[str] = []

    def proposer_prompts(rng: np.random.Generator) -> list[dict[str, Any]]:
        lengths = rng.integers(task.min_len, task.max_len + 1, size=settings.prompts_per_step)
        return [{"prompt": propose_prompt(int(k)), "length": int(k)} for k in lengths]

    def well_formed(
        prompts: Sequence[Any], completions: Sequence[Any], length: Sequence[int], **_: Any
    ) -> list[float]:
        out = []
        for completion, k in zip(completions, length, strict=True):
            text = completion_text(completion).strip()
            ok = text.isdigit() and len(text) == k
            if ok:
                pool.append(text)
            out.append(float(ok))
        del pool[:-1000]
        return out

    def solver_prompts(rng: np.random.Generator) -> list[dict[str, Any]]:
        n = settings.prompts_per_step
        src = (
            [pool[i] for i in rng.integers(0, len(pool), size=n)]
            if len(pool) >= n
            else task.sample(n, rng)
        )
        return [{"prompt": task.prompt(d), "answer": task.answer(d)} for d in src]

    return [
        Role("proposer", [well_formed], proposer_prompts, settings),
        Role("solver", [digit_accuracy], solver_prompts, settings),
    ]


#: The assistant's first turn in the lookup variant (rendered as TRL renders a tool call).
LOOKUP_CALL = '<tool_call>{"name": "lookup", "arguments": {}}</tool_call>'


def lookup_conversations(
    n: int, rng: np.random.Generator, task: ReverseDigits
) -> list[list[dict[str, str]]]:
    """``n`` solved two-turn episodes for SFT: call ``lookup``, read the digits it returns
    (a ``tool`` turn), answer them reversed."""
    return [
        [
            *task.prompt(d),
            {"role": "assistant", "content": LOOKUP_CALL},
            {"role": "tool", "content": d},
            {"role": "assistant", "content": task.answer(d)},
        ]
        for d in task.sample(n, rng)
    ]


class LookupTool:
    """The lookup environment in TRL's shape (``environment_factory``): ``reset(**row)`` and
    one tool method."""

    def reset(self, **row: Any) -> None:
        self.digits = str(row["prompt"][-1]["content"]).split()[-1]

    def lookup(self) -> str:
        """Look up the digits of this episode.

        Returns:
            The digits to reverse.
        """
        return self.digits


class LookupEnv:
    """The lookup environment in our shape (:class:`icml26.shared.llm.rollouts.Environment`):
    a first turn that calls ``lookup`` gets the digits as a ``tool`` observation; any other
    first turn, or the second, ends the episode (reward 1 for the exact reversal)."""

    def reset(self, prompt: Any) -> None:
        self.digits = str(prompt[-1]["content"]).split()[-1]
        self.turn = 0

    def step(self, text: str) -> tuple[str | None, float, bool]:
        self.turn += 1
        if self.turn == 1 and '"lookup"' in text:
            return self.digits, 0.0, False
        return None, float(text.strip() == self.digits[::-1]), True


def final_answer_accuracy(
    prompts: Sequence[Any], completions: Sequence[Any], **_: Any
) -> list[float]:
    """1 when the last assistant message of an episode (TRL's tool-loop completion: a list of
    messages) is the prompt's digits reversed, else 0."""
    out = []
    for prompt, completion in zip(prompts, completions, strict=True):
        digits = str(prompt[-1]["content"]).split()[-1]
        last = completion[-1] if completion else {}
        text = str(last.get("content", "")) if last.get("role") == "assistant" else ""
        out.append(float(text.strip() == digits[::-1]))
    return out

"""LLM policies: a text prompt per decision, the model's reasoning, then a parsed action.

Works with any :class:`icml26.shared.llm.ChatBackend`: a local model (``LocalChatModel``,
fine-tunable with LoRA) or an OpenAI-compatible endpoint (``ChatClient``, e.g. GPT-4o mini).

Each round the model sees the task (a *scenario*: the abstract ``buttons`` game, or the
``restaurants`` story, the natural-language-described scenario) and a summary of its own
history (per-option counts and average rewards, the format that helps LLMs most in bandit
studies), is asked for one sentence of reasoning and a last line ``Action: <number>`` (with
a one-line example of the format: small models follow examples better than instructions).
A reply is a *valid* decision only in the requested form, a line ``Action: <n>`` with ``n``
in range (:func:`parse_action`, ``parse="strict"``, the default); the ``"lenient"`` parse,
which also reads ``button 3`` or a lone number anywhere in the reply, is an ablation: it
takes non-decisions ("The game has a 3-game mode.") for choices. On an invalid reply a
uniformly random option is played instead and the step is counted in
``invalid_action_rate``. The full reply (reasoning and action) is kept in
:attr:`LLMPolicy.records`, because RMFT fine-tunes on the model's own reasoning text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml26.rmft.envs import EnvSpec

__all__ = ["PARSE_MODES", "SCENARIOS", "LLMPolicy", "Scenario", "build_messages", "parse_action"]

#: How a reply is read (:func:`parse_action`): the requested form only, or any recoverable choice.
PARSE_MODES = ("strict", "lenient")


@dataclass(frozen=True)
class Scenario:
    """How a Bernoulli bandit is put into words."""

    name: str
    option: str  # "button"
    system: str  # format fields: {k}, {t}, {option}
    round_word: str  # "Round"
    pulled: str  # "pressed"
    reward_word: str  # "average reward"


SCENARIOS: dict[str, Scenario] = {
    "buttons": Scenario(
        name="buttons",
        option="button",
        system=(
            "You are playing a game with {k} buttons, numbered 1 to {k}, for {t} rounds. Each "
            "round you press one button. Each button pays a reward of 1 with its own fixed but "
            "unknown probability, and 0 otherwise. Your goal is to collect as much total reward "
            "as possible over all {t} rounds."
        ),
        round_word="Round",
        pulled="pressed",
        reward_word="average reward",
    ),
    "restaurants": Scenario(
        name="restaurants",
        option="restaurant",
        system=(
            "You are spending {t} evenings in a new town that has {k} restaurants, numbered 1 to "
            "{k}. Every evening you have dinner at one of them. At each restaurant there is a "
            "fixed but unknown chance that you enjoy the meal (score 1) rather than not (score "
            "0). You want to enjoy as many dinners as possible over the {t} evenings."
        ),
        round_word="Evening",
        pulled="visited",
        reward_word="share of meals enjoyed",
    ),
}


def build_messages(
    scenario: Scenario, spec: EnvSpec, t: int, counts: np.ndarray, sums: np.ndarray
) -> list[dict[str, str]]:
    """The conversation for step ``t`` (0-based) of one episode; ``counts``/``sums`` ``(K,)``."""
    k, horizon = spec.n_arms, spec.horizon
    opt = scenario.option
    lines = [f"{scenario.round_word} {t + 1} of {horizon}. Your results so far:"]
    for arm in range(k):
        n = int(counts[arm])
        if n == 0:
            lines.append(f"- {opt.capitalize()} {arm + 1}: never {scenario.pulled}")
        else:
            lines.append(
                f"- {opt.capitalize()} {arm + 1}: {scenario.pulled} {n} time{'s' * (n != 1)}, "
                f"{scenario.reward_word} {sums[arm] / n:.2f}"
            )
    lines.append(f"Total reward so far: {sums.sum():g}.")
    lines.append(
        f"Which {opt} do you choose now? Give one short sentence of reasoning, then a last "
        f"line 'Action: <{opt} number from 1 to {k}>'. The format (the number is yours to "
        f"choose):\n<one sentence of reasoning>\nAction: <number>"
    )
    return [
        {"role": "system", "content": scenario.system.format(k=k, t=horizon, option=opt)},
        {"role": "user", "content": "\n".join(lines)},
    ]


_ACTION = re.compile(
    r"action\s*[:=\-]?\s*\**\s*(?:button|arm|restaurant|option|number)?\s*(?:no\.?|#)?\s*(\d+)",
    re.IGNORECASE,
)
_MENTION = re.compile(r"(?:button|arm|restaurant|option)\s*(?:no\.?|#)?\s*(\d+)", re.IGNORECASE)
_ORDINAL_WORDS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
}
_ORDINAL = re.compile(
    r"\b(?:(\d+)(?:st|nd|rd|th)|(" + "|".join(_ORDINAL_WORDS) + r"))\s+"
    r"(?:button|arm|restaurant|option|one)\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?![\d])")


def _mentioned(text: str) -> set[int]:
    """Option numbers named in ``text``: ``button 3``, ``#3``, ``the 3rd button``, ``third one``."""
    named = {int(m) for m in _MENTION.findall(text)}
    for digits, word in _ORDINAL.findall(text):
        named.add(int(digits) if digits else _ORDINAL_WORDS[word.lower()])
    return named


#: A line in the requested form: ``Action: <n>`` (``**Action:** 3``, ``Action: 2.`` and a
#: trailing remark after the number are accepted; ``Action: button 2`` or ``Action: 1.5`` not).
_STRICT_LINE = re.compile(r"^[\s*_]*action[*_]*\s*:[\s*_]*(\d+)(?![\d.]*\d)(?![\w])", re.IGNORECASE)


def _parse_strict(text: str) -> int | None:
    """The number of the reply's last ``Action: <n>`` line; None without such a line or when
    the reply's ``Action`` mentions name different numbers (it changed its mind)."""
    lines = [m.group(1) for line in text.splitlines() if (m := _STRICT_LINE.match(line))]
    if not lines or len({int(n) for n in _ACTION.findall(text)}) != 1:
        return None
    return int(lines[-1])


def _parse_lenient(text: str) -> int | None:
    found = _ACTION.findall(text)
    if found:
        return int(found[-1])
    if mentions := _mentioned(text):
        return mentions.pop() if len(mentions) == 1 else None
    numbers = set(_NUMBER.findall(text))
    if len(numbers) != 1:
        return None
    only = numbers.pop()
    return None if "." in only else int(only)


def parse_action(text: str, n_arms: int, parse: str = "strict") -> int | None:
    """The 0-based option a reply chose, or ``None`` when it made no valid decision.

    Args:
        text: the model's reply.
        n_arms: the number of options (``>= 2``).
        parse: ``"strict"`` (the default): only the form the prompt asks for, a line
            ``Action: <n>`` (markdown bold, a final period or a remark after the number
            allowed); the last such line counts, and the reply is invalid when its
            ``Action`` mentions disagree. ``"lenient"`` (an ablation): the last ``Action: <n>``
            anywhere (also ``action = button 3``); otherwise a reply whose every mention of an
            option (``button 3``, ``the 3rd button``, ``the third one``) names the same number;
            otherwise a reply holding exactly one number (``I pick 2.``). The lenient parse
            reads non-decisions as choices ("The game has a 3-game mode." -> 3).

    Returns:
        The option index in ``0..n_arms-1``, or ``None`` (a number outside ``1..n_arms`` is
        invalid too).

    Raises:
        ValueError: ``n_arms < 2`` or an unknown ``parse``.
    """
    if parse not in PARSE_MODES:
        raise ValueError(f"parse must be one of {PARSE_MODES}, got {parse!r}")
    if n_arms < 2:
        raise ValueError(f"n_arms must be >= 2, got {n_arms}")
    if not isinstance(text, str):
        return None
    choice = _parse_strict(text) if parse == "strict" else _parse_lenient(text)
    return choice - 1 if choice is not None and 1 <= choice <= n_arms else None


class LLMPolicy:
    """A :class:`~icml26.rmft.rollouts.Policy` backed by a chat model.

    Args:
        backend: a ``ChatBackend`` (local model or endpoint).
        scenario: ``"buttons"`` or ``"restaurants"`` (or a :class:`Scenario`).
        max_tokens: reply length cap (reasoning plus action).
        temperature: sampling temperature (``0``: greedy).
        name: the metric name (``llm_base``, ``llm_rmft_iter1``).
        parse: how replies are read (:data:`PARSE_MODES`, :func:`parse_action`): ``"strict"``
            (the requested ``Action: <n>`` line) or ``"lenient"`` (an ablation).

    Raises:
        ValueError: an unknown scenario or parse mode, or ``max_tokens < 1``; at ``reset``,
            an environment that is not a Bernoulli bandit with bandit feedback.

    Attributes (after a rollout):
        invalid: ``(n, T)`` True where the reply made no valid decision.
        invalid_lenient: ``(n, T)`` True where the lenient parse too finds no choice in the
            reply (the ablation's validity, read from the same replies).
        truncated: ``(n, T)`` True where the reply hit ``max_tokens``.
        records: per episode, per step: ``{"messages", "reply", "action", "valid",
            "valid_lenient", "truncated"}``.
    """

    def __init__(
        self,
        backend: Any,
        *,
        scenario: str | Scenario = "buttons",
        max_tokens: int = 64,
        temperature: float = 0.7,
        name: str = "llm",
        parse: str = "strict",
    ) -> None:
        if isinstance(scenario, str):
            if scenario not in SCENARIOS:
                raise ValueError(
                    f"unknown scenario {scenario!r}; expected one of {sorted(SCENARIOS)}"
                )
            scenario = SCENARIOS[scenario]
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        if parse not in PARSE_MODES:
            raise ValueError(f"parse must be one of {PARSE_MODES}, got {parse!r}")
        self.backend, self.scenario, self.parse = backend, scenario, parse
        self.max_tokens, self.temperature, self.name = max_tokens, temperature, name

    def reset(self, spec: EnvSpec, n: int, rng: np.random.Generator) -> None:
        if spec.full_information or not spec.binary_rewards:
            raise ValueError(
                f"LLM policies play Bernoulli bandits with bandit feedback, not {spec.name}"
            )
        self.spec, self.n, self.rng = spec, n, rng
        self.counts = np.zeros((n, spec.n_arms))
        self.sums = np.zeros((n, spec.n_arms))
        self.invalid = np.zeros((n, spec.horizon), dtype=bool)
        self.invalid_lenient = np.zeros((n, spec.horizon), dtype=bool)
        self.truncated = np.zeros((n, spec.horizon), dtype=bool)
        self.records: list[list[dict[str, Any]]] = [[] for _ in range(n)]

    def conversations(self, t: int) -> list[list[dict[str, str]]]:
        return [
            build_messages(self.scenario, self.spec, t, self.counts[i], self.sums[i])
            for i in range(self.n)
        ]

    def act(self, t: int) -> np.ndarray:
        convs = self.conversations(t)
        seed = int(self.rng.integers(0, 2**31 - 1))
        replies = self.backend.complete(
            convs, max_tokens=self.max_tokens, temperature=self.temperature, seed=seed
        )
        actions = np.zeros(self.n, dtype=np.int64)
        for i, (conv, reply) in enumerate(zip(convs, replies, strict=True)):
            parsed = parse_action(reply.text, self.spec.n_arms, self.parse)
            valid = parsed is not None
            actions[i] = parsed if valid else self.rng.integers(0, self.spec.n_arms)
            self.invalid[i, t] = not valid
            self.invalid_lenient[i, t] = (
                parse_action(reply.text, self.spec.n_arms, "lenient") is None
            )
            self.truncated[i, t] = getattr(reply, "finish_reason", "stop") == "length"
            self.records[i].append(
                {
                    "messages": conv,
                    "reply": reply.text,
                    "action": int(actions[i]),
                    "valid": valid,
                    "valid_lenient": not self.invalid_lenient[i, t],
                    "truncated": bool(self.truncated[i, t]),
                }
            )
        return actions

    def update(
        self, t: int, actions: np.ndarray, rewards: np.ndarray, full: np.ndarray | None
    ) -> None:
        rows = np.arange(self.n)
        self.counts[rows, actions] += 1
        self.sums[rows, actions] += rewards


def transcripts(
    records: Sequence[Sequence[dict[str, Any]]],
) -> list[tuple[list[dict[str, str]], str]]:
    """``(messages, reply)`` pairs of every step of the given episodes (the RMFT training set
    of the LLM path: the model's own reasoning and action)."""
    return [(step["messages"], step["reply"]) for episode in records for step in episode]

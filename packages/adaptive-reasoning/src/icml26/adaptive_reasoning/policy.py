"""A causal LM as an adaptive reasoner: prompts, sampling with an optional forced mode, the
mode distribution, and per-token log-probabilities for GRPO.

Works with any Hugging Face causal LM whose tokenizer has a chat template and the three mode
tokens (:data:`~icml26.adaptive_reasoning.modes.MODE_TOKENS`, one id each): the shared tiny
Llama (:mod:`icml26.shared.llm.tiny`) or a pretrained checkpoint with LoRA
(:mod:`icml26.adaptive_reasoning.models`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from icml26.adaptive_reasoning.modes import NO_THINK, THINK, THINK_END, Mode, parse_reply
from icml26.adaptive_reasoning.tasks import Problem

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["Policy", "Reply", "binary_entropy"]


@dataclass(frozen=True)
class Reply:
    """One generated reply: its token ids (the mode token first, end-of-turn included when
    generated), decoded text, parsed mode and answer, and the reasoning-token count."""

    ids: tuple[int, ...]
    text: str
    mode: Mode | None
    answer: str | None
    reasoning_tokens: int

    @property
    def tokens(self) -> int:
        return len(self.ids)


def binary_entropy(p: float) -> float:
    """``H(p)`` in bits (0 at 0 and 1, 1 at 1/2)."""
    if p <= 0 or p >= 1:
        return 0.0
    return -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


class Policy:
    """A causal LM as an adaptive reasoner: ``model`` and ``tokenizer`` with the ids of the
    mode tokens (:meth:`generate`, :meth:`read`, :meth:`think_probability`).

    Args:
        model: a Hugging Face causal LM.
        tokenizer: its tokenizer, with a chat template and the three mode tokens.
        max_prompt_tokens: prompts are cut to their last this many tokens.

    Raises:
        ValueError: the tokenizer lacks a chat template or a mode token is not one id.
    """

    def __init__(self, model: Any, tokenizer: Any, *, max_prompt_tokens: int = 384) -> None:
        if not getattr(tokenizer, "chat_template", None):
            raise ValueError("the tokenizer needs a chat template")
        self.model, self.tokenizer = model, tokenizer
        ids = {}
        for tok in (THINK, THINK_END, NO_THINK):
            enc = tokenizer.encode(tok, add_special_tokens=False)
            if len(enc) != 1:
                raise ValueError(f"mode token {tok!r} must be one token id, is {enc}")
            ids[tok] = enc[0]
        self.think_id, self.end_think_id, self.no_think_id = (
            ids[THINK],
            ids[THINK_END],
            ids[NO_THINK],
        )
        self.eos_id = int(tokenizer.eos_token_id)
        self.pad_id = int(
            tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.eos_id
        )
        self.max_prompt_tokens = max_prompt_tokens
        self._cache: dict[str, list[int]] = {}

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    # ----------------------------------------------------------------------------- prompts
    def prompt_ids(self, problem: Problem | str) -> list[int]:
        """The chat-formatted prompt (user turn, then the assistant header), token ids."""
        text = problem if isinstance(problem, str) else problem.text
        if text not in self._cache:
            out = self.tokenizer.apply_chat_template(
                [{"role": "user", "content": text}],
                tokenize=True,
                add_generation_prompt=True,
                return_dict=True,
            )
            self._cache[text] = list(out["input_ids"])[-self.max_prompt_tokens :]
        return self._cache[text]

    def prompt_length(self, problem: Problem | str) -> int:
        """Tokens in the problem's text alone (what a length router sees)."""
        text = problem if isinstance(problem, str) else problem.text
        return len(self.tokenizer.encode(text, add_special_tokens=False))

    def _left_pad(self, rows: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        import torch

        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        att = torch.zeros((len(rows), width), dtype=torch.long)
        for i, r in enumerate(rows):
            ids[i, width - len(r) :] = torch.tensor(list(r), dtype=torch.long)
            att[i, width - len(r) :] = 1
        return ids.to(self.device), att.to(self.device)

    # ---------------------------------------------------------------------------- sampling
    def read(self, ids: Sequence[int]) -> Reply:
        """A generated token sequence read back as a :class:`Reply` (cut after end-of-turn)."""
        return self._reply(list(ids))

    def _reply(self, ids: list[int]) -> Reply:
        if self.eos_id in ids:
            ids = ids[: ids.index(self.eos_id) + 1]
        text = self.tokenizer.decode(
            [t for t in ids if t not in (self.eos_id, self.pad_id)], skip_special_tokens=False
        )
        parsed = parse_reply(text)
        reasoning = 0
        if ids and ids[0] == self.think_id:
            end = ids.index(self.end_think_id) if self.end_think_id in ids else len(ids)
            reasoning = max(end - 1, 0)
        return Reply(tuple(ids), text, parsed.mode, parsed.answer, reasoning)

    def generate(
        self,
        problems: Sequence[Problem | str],
        *,
        force: Sequence[Mode | None] | Mode | None = None,
        max_new_tokens: int = 48,
        temperature: float = 0.0,
        batch_size: int = 256,
        seed: int | None = None,
    ) -> list[Reply]:
        """Replies to ``problems``; greedy at ``temperature == 0``.

        Args:
            problems: problems (or their texts).
            force: a mode per problem (or one for all): its token is placed as the first
                reply token and the rest is generated after it; ``None`` lets the model choose
                between the two mode tokens (its two-way distribution at the first reply
                position: the likelier one when greedy, a draw when sampling).
            max_new_tokens: reply tokens at most (the mode token included).
            temperature: 0 for greedy decoding.
            batch_size: problems per generation batch.
            seed: seeds torch's generator first (``None``: as it is).

        Returns:
            One :class:`Reply` per problem.

        Raises:
            ValueError: a negative temperature, an unknown mode or a wrong number of them.
        """
        import torch

        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        n = len(problems)
        modes = [force] * n if force is None or isinstance(force, str) else list(force)
        if len(modes) != n:
            raise ValueError(f"{len(modes)} forced modes for {n} problems")
        for m in modes:
            if m not in (None, "think", "no_think"):
                raise ValueError(f"unknown mode {m!r}: 'think', 'no_think' or None")
        if seed is not None:
            torch.manual_seed(seed)
        free = [i for i, m in enumerate(modes) if m is None]
        if free:
            # the mode is chosen among the two mode tokens only (greedy: the likelier one;
            # sampled: by the two-way distribution), so every reply has a mode
            p_think = self.think_probability([problems[i] for i in free], batch_size)
            for i, p in zip(free, p_think, strict=True):
                pick = p >= 0.5 if temperature == 0 else bool(torch.rand(()).item() < p)
                modes[i] = "think" if pick else "no_think"
        sampling: dict[str, Any] = (
            {"do_sample": True, "temperature": float(temperature), "top_k": 0, "top_p": 1.0}
            if temperature > 0
            else {"do_sample": False, "temperature": None, "top_p": None, "top_k": None}
        )
        was_training = self.model.training
        self.model.eval()
        out: list[Reply] = []
        for start in range(0, n, batch_size):
            chunk = range(start, min(start + batch_size, n))
            heads = [
                []
                if modes[i] is None
                else [self.think_id if modes[i] == "think" else self.no_think_id]
                for i in chunk
            ]
            rows = [self.prompt_ids(problems[i]) + h for i, h in zip(chunk, heads, strict=True)]
            ids, att = self._left_pad(rows)
            with torch.inference_mode():
                seqs = self.model.generate(
                    input_ids=ids,
                    attention_mask=att,
                    max_new_tokens=max(max_new_tokens - 1, 1),
                    pad_token_id=self.pad_id,
                    eos_token_id=self.eos_id,
                    **sampling,
                )
            for head, row in zip(heads, seqs[:, ids.shape[1] :].tolist(), strict=True):
                out.append(self._reply(head + row))
        if was_training:
            self.model.train()
        return out

    # ------------------------------------------------------------------------------ scoring
    def think_probability(
        self, problems: Sequence[Problem | str], batch_size: int = 256
    ) -> list[float]:
        """``P(think) / (P(think) + P(no_think))`` at the first reply position, per problem."""
        import torch

        out: list[float] = []
        with torch.inference_mode():
            for start in range(0, len(problems), batch_size):
                ids, att = self._left_pad(
                    [self.prompt_ids(p) for p in problems[start : start + batch_size]]
                )
                logits = self.model(input_ids=ids, attention_mask=att).logits[:, -1].float()
                pair = logits[:, [self.think_id, self.no_think_id]]
                out += torch.softmax(pair, dim=-1)[:, 0].tolist()
        return out

    def token_logps(
        self, prompts: Sequence[Sequence[int]], completions: Sequence[Sequence[int]]
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Per-token log-probabilities of ``completions`` given ``prompts`` (with gradient).

        Returns:
            ``(logps, mask, mode_logits)``: ``(B, T)`` log-probabilities, the ``(B, T)`` 0/1
            mask of real completion tokens (right-padded), and the ``(B, 2)`` logits of
            ``(think, no_think)`` at the first reply position.
        """
        import torch

        width_p = max(len(p) for p in prompts)
        width_c = max(len(c) for c in completions)
        b = len(prompts)
        ids = torch.full((b, width_p + width_c), self.pad_id, dtype=torch.long)
        att = torch.zeros_like(ids)
        mask = torch.zeros((b, width_c), dtype=torch.float32)
        for i, (p, c) in enumerate(zip(prompts, completions, strict=True)):
            ids[i, width_p - len(p) : width_p] = torch.tensor(list(p))
            ids[i, width_p : width_p + len(c)] = torch.tensor(list(c))
            att[i, width_p - len(p) : width_p + len(c)] = 1
            mask[i, : len(c)] = 1
        ids, att, mask = ids.to(self.device), att.to(self.device), mask.to(self.device)
        logits = self.model(input_ids=ids, attention_mask=att).logits[:, width_p - 1 : -1].float()
        logp = torch.log_softmax(logits, dim=-1)
        picked = logp.gather(-1, ids[:, width_p:].unsqueeze(-1)).squeeze(-1)
        mode_logits = logits[:, 0][:, [self.think_id, self.no_think_id]]
        return picked, mask, mode_logits

"""Fast local sampling for the math stream: one shared prompt prefix, rows that stop early.

Every math prompt starts with the same tokens (the chat template's system turn, the worked
examples and the instruction); only the problem differs. :class:`PrefixCachedChat` runs that
common prefix through the model once, copies its key/value cache into each batch, and feeds
only the problem tokens (padded *between* prefix and problem, with matching position ids).
Decoding drops a row from the batch as soon as it ends its turn or has stated its answer
(``"... answer is <number>."``), so a batch costs the tokens its rows write, not batch size
times the longest reply. On a 2-core CPU this is several times faster than plain
``generate`` on these prompts; greedy replies equal plain ``generate``'s in float32 (tested).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["ANSWER_STATED", "PrefixCachedChat", "Reply"]

#: A reply has stated its answer: the format's ``answer is <number>.`` followed by a space or
#: the end (so ``3.5`` is not cut at ``3.``).
ANSWER_STATED = re.compile(r"answer is\s*:?\s*\$?-?\d[\d,]*\.(\s|$)", re.IGNORECASE)


@dataclass(frozen=True)
class Reply:
    """One reply: its text, new tokens written, and why it ended (``stop``, ``answer``,
    ``length``)."""

    text: str
    completion_tokens: int
    finish: str


class PrefixCachedChat:
    """A chat backend (``complete(conversations, max_tokens, temperature, seed)``) over a
    local causal LM that shares the prompts' common prefix and drops finished rows.

    Args:
        model: a ``transformers`` causal LM whose forward takes ``past_key_values``,
            ``attention_mask`` and ``position_ids`` (Llama-style models do).
        tokenizer: its tokenizer, with a chat template (or any ``format_chat`` fallback).
        batch_size: rows decoded together (a call's conversations are split into batches).
        stop_at_answer: end a row once its text matches :data:`ANSWER_STATED`.
    """

    def __init__(
        self, model: Any, tokenizer: Any, *, batch_size: int = 64, stop_at_answer: bool = True
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.model = model
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.stop_at_answer = stop_at_answer

    def complete(
        self,
        conversations: Sequence[Sequence[dict[str, str]]],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None = None,
    ) -> list[Reply]:
        """One reply per conversation; greedy when ``temperature == 0``, else sampled from
        ``softmax(logits / temperature)`` with a generator seeded by ``seed``."""
        import torch

        from icml26.shared.llm import format_chat

        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        if not temperature >= 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        ids = [
            self.tokenizer(format_chat(self.tokenizer, c), add_special_tokens=False)["input_ids"]
            for c in conversations
        ]
        if not ids:
            return []
        n_prefix = _common_prefix(ids)
        device = next(self.model.parameters()).device
        with torch.inference_mode():
            prefix = torch.tensor([ids[0][:n_prefix]], device=device)
            base = self.model(input_ids=prefix, use_cache=True).past_key_values
        gen = torch.Generator(device=device).manual_seed(int(seed or 0))
        out: list[Reply] = []
        for start in range(0, len(ids), self.batch_size):
            tails = [x[n_prefix:] for x in ids[start : start + self.batch_size]]
            out.extend(self._batch(base, n_prefix, tails, max_tokens, temperature, gen))
        return out

    def _batch(
        self,
        base: Any,
        n_prefix: int,
        tails: list[list[int]],
        max_tokens: int,
        temperature: float,
        gen: Any,
    ) -> list[Reply]:
        import torch

        tok = self.tokenizer
        eos = tok.eos_token_id
        pad = tok.pad_token_id if tok.pad_token_id is not None else eos
        n, width = len(tails), max(len(t) for t in tails)
        inp = torch.full((n, width), int(pad))
        mask = torch.zeros((n, n_prefix + width), dtype=torch.long)
        mask[:, :n_prefix] = 1
        pos = torch.ones((n, width), dtype=torch.long)
        for i, t in enumerate(tails):  # pad between the shared prefix and each problem
            inp[i, width - len(t) :] = torch.tensor(t)
            mask[i, n_prefix + width - len(t) :] = 1
            pos[i, width - len(t) :] = torch.arange(n_prefix, n_prefix + len(t))
        device = next(self.model.parameters()).device
        inp, mask, pos = inp.to(device), mask.to(device), pos.to(device)
        cache = copy.deepcopy(base)
        cache.batch_repeat_interleave(n)
        next_pos = torch.tensor([n_prefix + len(t) for t in tails], device=device)
        rows = list(range(n))
        new: list[list[int]] = [[] for _ in range(n)]
        finish = ["length"] * n
        with torch.inference_mode():
            logits = self.model(
                input_ids=inp,
                attention_mask=mask,
                position_ids=pos,
                past_key_values=cache,
                use_cache=True,
                logits_to_keep=1,
            ).logits[:, -1]
            for step in range(max_tokens):
                token = _pick(logits, temperature, gen)
                picked = token.tolist()
                keep: list[int] = []
                for j, r in enumerate(rows):
                    t = int(picked[j])
                    if t == eos:
                        finish[r] = "stop"
                        continue
                    new[r].append(t)
                    if self.stop_at_answer and ANSWER_STATED.search(tok.decode(new[r][-12:])):
                        finish[r] = "answer"
                        continue
                    keep.append(j)
                if not keep or step == max_tokens - 1:
                    break
                if len(keep) < len(rows):
                    idx = torch.tensor(keep, device=device)
                    cache.batch_select_indices(idx)
                    mask, next_pos, token = mask[idx], next_pos[idx], token[idx]
                    rows = [rows[j] for j in keep]
                ones = torch.ones((len(rows), 1), dtype=torch.long, device=device)
                mask = torch.cat([mask, ones], dim=1)
                logits = self.model(
                    input_ids=token[:, None],
                    attention_mask=mask,
                    position_ids=next_pos[:, None],
                    past_key_values=cache,
                    use_cache=True,
                ).logits[:, -1]
                next_pos = next_pos + 1
        return [
            Reply(str(tok.decode(new[r], skip_special_tokens=True)), len(new[r]), finish[r])
            for r in range(n)
        ]


def _common_prefix(ids: list[list[int]]) -> int:
    """Length of the token prefix all prompts share, leaving each at least one own token."""
    n = min(len(x) for x in ids) - 1
    first = ids[0]
    for i in range(max(n, 0)):
        if any(x[i] != first[i] for x in ids):
            return i
    return max(n, 0)


def _pick(logits: Any, temperature: float, gen: Any) -> Any:
    import torch

    if temperature == 0:
        return logits.argmax(dim=-1)
    probs = torch.softmax(logits.float() / temperature, dim=-1)
    return torch.multinomial(probs, 1, generator=gen)[:, 0]

"""Chat generation with a local causal LM: prompt formatting, batched sampling, token counts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from icml26.shared.llm.types import Completion, Message, TokenUsage, check_messages

if TYPE_CHECKING:  # pragma: no cover
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

__all__ = ["LocalChatModel", "format_chat", "generate"]


def format_chat(
    tokenizer: PreTrainedTokenizerBase,
    messages: Sequence[Message],
    *,
    add_generation_prompt: bool = True,
) -> str:
    """The prompt text for one conversation.

    Uses the tokenizer's chat template when it has one; otherwise a plain
    ``"<role>: <content>"`` transcript ending in ``"assistant:"`` (base models, tiny test
    models).
    """
    msgs = check_messages(messages)
    if getattr(tokenizer, "chat_template", None):
        text = tokenizer.apply_chat_template(
            msgs, tokenize=False, add_generation_prompt=add_generation_prompt
        )
        return str(text)
    lines = [f"{m['role']}: {m['content']}" for m in msgs]
    if add_generation_prompt:
        lines.append("assistant:")
    return "\n".join(lines)


def _check_sampling(max_tokens: int, temperature: float, top_p: float) -> None:
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive integer, got {max_tokens!r}")
    if not temperature >= 0:
        raise ValueError(f"temperature must be >= 0, got {temperature!r}")
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {top_p!r}")


def generate(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    prompts: Sequence[str],
    *,
    max_tokens: int = 256,
    temperature: float = 0.0,
    top_p: float = 1.0,
    seed: int | None = None,
    batch_size: int = 8,
) -> list[Completion]:
    """Continue each prompt text (already formatted) in batches; greedy when
    ``temperature == 0``.

    Args:
        prompts: prompt strings (see :func:`format_chat`).
        max_tokens: new tokens per prompt at most.
        temperature, top_p: sampling parameters (``temperature == 0`` means greedy).
        seed: seeds torch's global generator before sampling, for reproducible samples.
        batch_size: prompts per forward batch (left-padded).
    """
    import torch

    _check_sampling(max_tokens, temperature, top_p)
    if isinstance(prompts, str):
        raise ValueError("prompts must be a list of strings, not one string")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if seed is not None:
        torch.manual_seed(seed)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    device = next(model.parameters()).device
    eos = tokenizer.eos_token_id
    out: list[Completion] = []
    for start in range(0, len(prompts), batch_size):
        chunk = list(prompts[start : start + batch_size])
        # No token_type_ids: decoder-only models take none, and transformers < 5 refuses
        # unused generate() kwargs.
        enc = tokenizer(
            chunk,
            return_tensors="pt",
            padding=True,
            add_special_tokens=False,
            return_token_type_ids=False,
        )
        enc = {k: v.to(device) for k, v in enc.items()}
        sampling: dict[str, Any] = (
            {"do_sample": True, "temperature": float(temperature), "top_p": float(top_p)}
            if temperature > 0
            else {"do_sample": False, "temperature": None, "top_p": None, "top_k": None}
        )
        with torch.inference_mode():
            seqs = model.generate(  # type: ignore[operator]
                **enc,
                max_new_tokens=max_tokens,
                pad_token_id=tokenizer.pad_token_id,
                **sampling,
            )
        width = enc["input_ids"].shape[1]
        prompt_lens = enc["attention_mask"].sum(dim=1).tolist()
        for row, n_prompt in zip(seqs[:, width:].tolist(), prompt_lens, strict=True):
            # Cut at the first end-of-sequence (generate pads finished rows with pad == eos).
            n_new, finish = len(row), "length"
            if eos is not None and eos in row:
                n_new, finish = row.index(eos) + 1, "stop"
            text = str(tokenizer.decode(row[:n_new], skip_special_tokens=True))
            out.append(Completion(text, int(n_prompt), n_new, finish))
    return out


class LocalChatModel:
    """A local ``(model, tokenizer)`` behind the :class:`~icml26.shared.llm.ChatBackend`
    interface, counting tokens in :attr:`usage`."""

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        *,
        batch_size: int = 8,
        system_prompt: str | None = None,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.system_prompt = system_prompt
        self.usage = TokenUsage()

    @classmethod
    def from_spec(cls, spec: str, **kwargs: Any) -> LocalChatModel:
        """``LocalChatModel(*load_causal_lm(spec, device=..., dtype=..., ...))``: the loader's
        keyword arguments go to :func:`~icml26.shared.llm.load_causal_lm`, the rest here."""
        from icml26.shared.llm.loader import load_causal_lm

        names = (
            "device",
            "dtype",
            "device_map",
            "attn_implementation",
            "quantization",
            "offline",
            "cache",
        )
        load_kw = {k: kwargs.pop(k) for k in names if k in kwargs}
        return cls(*load_causal_lm(spec, **load_kw), **kwargs)

    def prompt(self, messages: Sequence[Message]) -> str:
        """The formatted prompt for one conversation (with :attr:`system_prompt` prepended)."""
        msgs = list(messages)
        if self.system_prompt and not (msgs and msgs[0].get("role") == "system"):
            msgs = [{"role": "system", "content": self.system_prompt}, *msgs]
        return format_chat(self.tokenizer, msgs)

    def complete(
        self,
        conversations: Sequence[Sequence[Message]],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        top_p: float = 1.0,
        seed: int | None = None,
        **kwargs: Any,
    ) -> list[Completion]:
        """One reply per conversation."""
        if kwargs:
            raise TypeError(f"unexpected arguments {sorted(kwargs)}")
        prompts = [self.prompt(c) for c in conversations]
        replies = generate(
            self.model,
            self.tokenizer,
            prompts,
            max_tokens=max_tokens,
            temperature=temperature,
            top_p=top_p,
            seed=seed,
            batch_size=self.batch_size,
        )
        for reply in replies:
            self.usage.add(reply)
        return replies

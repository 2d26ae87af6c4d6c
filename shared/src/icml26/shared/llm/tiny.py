"""Tiny language models for tests and ``quick`` profiles: a BPE tokenizer trained on local text
in well under a second, and a small Llama or Qwen2 built from a config (nothing downloaded).

The pair behaves like any Hugging Face checkpoint: ``generate``, peft adapters, TRL's trainers,
``save_pretrained`` / :func:`~icml26.shared.llm.load_causal_lm` round trips. It knows no
language until it is trained; packages fine-tune it on a toy task (see
:mod:`icml26.shared.llm.tasks`) to exercise a training path end to end in seconds.

The chat template marks each assistant turn with ``{% generation %}`` so that
``apply_chat_template(..., return_assistant_tokens_mask=True)`` (and TRL's
``assistant_only_loss``) can tell the trained tokens from the context. The end-of-turn token
``<|end|>`` is also the end-of-sequence token, so generation stops where a turn ends.

Example::

    from icml26.shared.llm.tiny import make_tiny_lm
    model, tokenizer = make_tiny_lm(["reverse 123 -> 321"], special_tokens=["<think>"])
    ids = tokenizer.apply_chat_template([{"role": "user", "content": "hi"}],
                                        add_generation_prompt=True, return_tensors="pt")
    model.generate(ids, max_new_tokens=4)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # pragma: no cover
    from transformers import PreTrainedModel, PreTrainedTokenizerFast

__all__ = [
    "BASE_SPECIAL_TOKENS",
    "TINY_CHAT_TEMPLATE",
    "TINY_TOOL_CHAT_TEMPLATE",
    "TINY_TOOL_RESPONSE_TEMPLATE",
    "TOOL_CALL_TOKENS",
    "TinyModelConfig",
    "make_tiny_lm",
    "make_tiny_model",
    "save_tiny_lm",
    "train_tokenizer",
    "with_tool_calls",
]

#: Special tokens every tiny tokenizer has: unknown, padding, one header per chat role, and the
#: end-of-turn token (which is also end-of-sequence).
BASE_SPECIAL_TOKENS: tuple[str, ...] = (
    "<unk>",
    "<pad>",
    "<|end|>",
    "<|system|>",
    "<|user|>",
    "<|assistant|>",
    "<|tool|>",
)

#: ``<|role|>content<|end|>`` per message; the assistant's content and its ``<|end|>`` are inside
#: ``{% generation %}`` (the tokens an assistant-only loss trains on).
TINY_CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{%- if message['role'] == 'assistant' -%}"
    "<|assistant|>{% generation %}{{ message['content'] }}<|end|>{% endgeneration %}"
    "{%- elif message['role'] in ['system', 'user', 'tool'] -%}"
    "<|{{ message['role'] }}|>{{ message['content'] }}<|end|>"
    "{%- else -%}"
    "{{ raise_exception('unknown chat role ' + message['role']) }}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}<|assistant|>{%- endif -%}"
)

#: :data:`TINY_CHAT_TEMPLATE` plus tool calls: an assistant message's ``tool_calls`` render as
#: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` inside its turn, so TRL's own
#: tool loop (``environment_factory``, ``tools``) runs on a tiny model. Tool schemas are not
#: rendered (a prompt says what to call), so a prompt renders the same with or without tools.
TINY_TOOL_CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{%- if message['role'] == 'assistant' -%}"
    "<|assistant|>{% generation %}{{ message['content'] or '' }}"
    "{%- if message.tool_calls -%}{%- for call in message.tool_calls -%}"
    "{%- set f = call.function if call.function is defined else call -%}"
    '<tool_call>{"name": "{{ f.name }}", "arguments": {{ f.arguments | tojson }}}</tool_call>'
    "{%- endfor -%}{%- endif -%}<|end|>{% endgeneration %}"
    "{%- elif message['role'] in ['system', 'user', 'tool'] -%}"
    "<|{{ message['role'] }}|>{{ message['content'] }}<|end|>"
    "{%- else -%}"
    "{{ raise_exception('unknown chat role ' + message['role']) }}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}<|assistant|>{%- endif -%}"
)

#: How transformers' ``parse_response`` reads a reply of :data:`TINY_TOOL_CHAT_TEMPLATE`
#: (transformers' ``response_template`` format): tool calls as JSON, the rest as content.
TINY_TOOL_RESPONSE_TEMPLATE: dict[str, Any] = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|assistant|>",
    "fields": {
        "tool_calls": {
            "open": "<tool_call>",
            "close_pattern": r"</tool_call>",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close_pattern": r"<\|end\|>", "content": "text"},
    },
}

#: The special tokens a tiny tokenizer needs for :data:`TINY_TOOL_CHAT_TEMPLATE`.
TOOL_CALL_TOKENS: tuple[str, ...] = ("<tool_call>", "</tool_call>")


def with_tool_calls(tokenizer: PreTrainedTokenizerFast) -> PreTrainedTokenizerFast:
    """Give a tiny tokenizer :data:`TINY_TOOL_CHAT_TEMPLATE` and its response template (in
    place; returned for chaining).

    Raises:
        ValueError: the tokenizer lacks the :data:`TOOL_CALL_TOKENS` as single tokens.
    """
    for t in TOOL_CALL_TOKENS:
        if len(tokenizer(t, add_special_tokens=False)["input_ids"]) != 1:
            raise ValueError(
                f"{t!r} is not one token: train the tokenizer with special_tokens={TOOL_CALL_TOKENS}"
            )
    tokenizer.chat_template = TINY_TOOL_CHAT_TEMPLATE
    tokenizer.response_template = TINY_TOOL_RESPONSE_TEMPLATE
    return tokenizer


def train_tokenizer(
    texts: Iterable[str],
    *,
    vocab_size: int = 512,
    special_tokens: Sequence[str] = (),
    chat_template: str = TINY_CHAT_TEMPLATE,
    split_digits: bool = True,
) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer trained on ``texts`` (``tokenizers``; well under a second for
    a few thousand short strings), with the chat template and the special tokens a package asks
    for (``"<think>"``, ``"</think>"``, tool-call markers), each a single token id.

    Byte-level means any string encodes (no unknown tokens); a small ``vocab_size`` keeps the
    embedding table tiny. Padding is on the left (what batched generation and TRL want).
    ``split_digits`` makes every digit its own token (arithmetic and digit tasks learn far
    faster when ``"1704"`` is four tokens, not whatever merges BPE found).

    Raises:
        ValueError: no text, a ``vocab_size`` smaller than the byte alphabet plus the special
            tokens, or a special token that is empty or repeated.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    corpus = [t for t in texts if t]
    if not corpus:
        raise ValueError("train_tokenizer needs at least one non-empty text")
    extra = [t for t in special_tokens if t not in BASE_SPECIAL_TOKENS]
    if any(not isinstance(t, str) or not t.strip() for t in extra):
        raise ValueError(f"special tokens must be non-empty strings, got {list(special_tokens)!r}")
    if len(set(extra)) != len(extra):
        raise ValueError(f"special tokens repeat: {list(special_tokens)!r}")
    specials = [*BASE_SPECIAL_TOKENS, *extra]
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    if vocab_size < len(alphabet) + len(specials):
        raise ValueError(
            f"vocab_size={vocab_size} is below the {len(alphabet)} byte symbols plus "
            f"{len(specials)} special tokens"
        )
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.pre_tokenizer = (
        pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level])
        if split_digits
        else byte_level
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=specials,
        initial_alphabet=alphabet,
        show_progress=False,
    )
    tok.train_from_iterator(corpus, trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="<unk>",
        pad_token="<pad>",
        eos_token="<|end|>",
        padding_side="left",
        # no token_type_ids: decoder-only models take none (transformers 4.x generate refuses them)
        model_input_names=["input_ids", "attention_mask"],
        additional_special_tokens=[t for t in specials if t not in ("<unk>", "<pad>", "<|end|>")],
    )
    tokenizer.chat_template = chat_template
    return tokenizer


@dataclass(frozen=True)
class TinyModelConfig:
    """Sizes of a tiny causal LM (defaults: about 0.1M parameters besides the embeddings).

    Attributes:
        arch: ``"llama"`` or ``"qwen2"``.
        hidden_size, intermediate_size, num_layers, num_heads, num_kv_heads: the usual.
        max_positions: the longest sequence.
        tie_word_embeddings: share the input embedding and the output layer (a token the
            model only ever read can still be produced: copying tasks learn far faster).
    """

    arch: Literal["llama", "qwen2"] = "llama"
    hidden_size: int = 64
    intermediate_size: int = 128
    num_layers: int = 2
    num_heads: int = 4
    num_kv_heads: int = 2
    max_positions: int = 512
    tie_word_embeddings: bool = False

    def __post_init__(self) -> None:
        if self.arch not in ("llama", "qwen2"):
            raise ValueError(f"arch must be 'llama' or 'qwen2', got {self.arch!r}")
        for name in (
            "hidden_size",
            "intermediate_size",
            "num_layers",
            "num_heads",
            "num_kv_heads",
            "max_positions",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.hidden_size % self.num_heads or self.num_heads % self.num_kv_heads:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) must divide by num_heads ({self.num_heads}), "
                f"and num_heads by num_kv_heads ({self.num_kv_heads})"
            )


def make_tiny_model(
    tokenizer: PreTrainedTokenizerFast,
    config: TinyModelConfig | None = None,
    *,
    seed: int = 0,
) -> PreTrainedModel:
    """A randomly initialised ``LlamaForCausalLM`` or ``Qwen2ForCausalLM`` sized for
    ``tokenizer`` (float32, eval mode), with its special-token ids in the config and the
    generation config."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

    cfg = config or TinyModelConfig()
    common: dict[str, Any] = {
        "vocab_size": len(tokenizer),
        "hidden_size": cfg.hidden_size,
        "intermediate_size": cfg.intermediate_size,
        "num_hidden_layers": cfg.num_layers,
        "num_attention_heads": cfg.num_heads,
        "num_key_value_heads": cfg.num_kv_heads,
        "max_position_embeddings": cfg.max_positions,
        "eos_token_id": tokenizer.eos_token_id,
        "bos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id,
        "tie_word_embeddings": cfg.tie_word_embeddings,
    }
    torch.manual_seed(seed)
    if cfg.arch == "llama":
        model: PreTrainedModel = LlamaForCausalLM(LlamaConfig(**common))
    else:
        model = Qwen2ForCausalLM(Qwen2Config(**common))
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.bos_token_id = tokenizer.eos_token_id
    return model.eval()


def make_tiny_lm(
    texts: Iterable[str],
    *,
    special_tokens: Sequence[str] = (),
    vocab_size: int = 512,
    config: TinyModelConfig | None = None,
    seed: int = 0,
    split_digits: bool = True,
) -> tuple[PreTrainedModel, PreTrainedTokenizerFast]:
    """``(model, tokenizer)``: :func:`train_tokenizer` on ``texts``, then
    :func:`make_tiny_model` for it."""
    tokenizer = train_tokenizer(
        texts, vocab_size=vocab_size, special_tokens=special_tokens, split_digits=split_digits
    )
    return make_tiny_model(tokenizer, config, seed=seed), tokenizer


def save_tiny_lm(
    model: PreTrainedModel, tokenizer: PreTrainedTokenizerFast, folder: str | Path
) -> Path:
    """``save_pretrained`` both into ``folder`` (loadable with
    :func:`~icml26.shared.llm.load_causal_lm`); returns the folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder

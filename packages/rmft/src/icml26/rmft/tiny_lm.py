"""A tiny random Llama with a BPE tokenizer trained on the prompts' words, built offline.

For smoke runs and tests of the LLM path: it exercises prompting, generation, parsing,
LoRA fine-tuning and evaluation end to end in seconds. A few supervised steps on replies of
the form ``Action: <n>`` (random ``n``) warm-start it, so that some of its replies parse and
RMFT has transcripts to select; it knows no language and says nothing about the paper's
claims. Load it like any model folder (``load_causal_lm(path)``).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["TINY_SPEC", "make_tiny_lm"]

#: The model spec that :func:`icml26.rmft.experiment.run` turns into a tiny random model.
TINY_SPEC = "tiny-random"

_CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def _corpus() -> list[str]:
    import numpy as np

    from icml26.rmft.envs import EnvSpec
    from icml26.rmft.llm_policy import SCENARIOS, build_messages

    texts = ["Action: 1", "Action: 2", "Action: 3", "I choose button 2 because it pays more."]
    spec = EnvSpec("bernoulli", 5, 20)
    counts, sums = np.array([1, 0, 3, 2, 1]), np.array([1, 0, 2, 1, 0])
    for scenario in SCENARIOS.values():
        texts += [m["content"] for m in build_messages(scenario, spec, 3, counts, sums)]
    return texts * 10


def make_tiny_lm(folder: str | Path, *, seed: int = 0, warm_start_steps: int = 40) -> Path:
    """Save a random 2-layer Llama (d = 32), warm-started on ``Action: <n>`` replies, and its
    tokenizer to ``folder``; return it (an existing folder is reused)."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder = Path(folder)
    if (folder / "config.json").is_file() and (folder / "tokenizer.json").is_file():
        return folder
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<unk>", "<eos>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(_corpus(), trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>", unk_token="<unk>")
    tokenizer.chat_template = _CHAT_TEMPLATE
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.eos_token_id,
    )
    model = LlamaForCausalLM(config)
    if warm_start_steps:
        _warm_start(model, tokenizer, warm_start_steps, seed)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _warm_start(model: object, tokenizer: object, steps: int, seed: int) -> None:
    import numpy as np

    from icml26.rmft.envs import EnvSpec
    from icml26.rmft.llm_policy import SCENARIOS, build_messages
    from icml26.rmft.llm_train import encode_examples, lora_sft

    rng = np.random.default_rng(seed)
    pairs = []
    for k in (3, 4, 5):
        spec = EnvSpec("bernoulli", k, 10)
        for scenario in SCENARIOS.values():
            for t in range(3):
                counts = rng.integers(0, 3, size=k)
                sums = np.minimum(counts, rng.integers(0, 3, size=k))
                msgs = build_messages(scenario, spec, t, counts, sums)
                pairs.append((msgs, f"Action: {rng.integers(1, k + 1)}"))
    examples = encode_examples(tokenizer, pairs)
    lora_sft(model, tokenizer, examples, steps=steps, lr=3e-3, batch_size=8, rng=rng)

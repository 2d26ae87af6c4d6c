"""The prefix-cached sampler against plain ``generate`` (a tiny random Llama built here), its
early stop at the stated answer, and resumable shards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icml26.weak_strong.tasks import math as wmath
from icml26.weak_strong.tasks.sampler import ANSWER_STATED, PrefixCachedChat

pytest.importorskip("transformers")


def _tiny() -> tuple[object, object]:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320,
        special_tokens=["<unk>", "<eos>", "<|user|>", "<|assistant|>", "<|end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(["Problem: 12 + 7 = ? The answer is 19."] * 20, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>", unk_token="<unk>")
    fast.chat_template = (
        "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        eos_token_id=fast.eos_token_id,
        bos_token_id=fast.eos_token_id,
    )
    return LlamaForCausalLM(config).eval(), fast


def test_greedy_replies_equal_plain_generate() -> None:
    """Sharing the prefix cache and padding between prefix and problem changes nothing: the
    greedy replies are plain ``generate``'s, token for token (float32)."""
    from icml26.shared.llm import LocalChatModel

    model, tok = _tiny()
    convs = [wmath.conversation(p.question) for p in wmath.make_problems(7, seed=3)]
    plain = LocalChatModel(model, tok, batch_size=3).complete(convs, max_tokens=12)
    fast = PrefixCachedChat(model, tok, batch_size=4, stop_at_answer=False)
    ours = fast.complete(convs, max_tokens=12, temperature=0.0)
    assert [r.text for r in ours] == [r.text for r in plain]
    assert all(r.completion_tokens <= 12 for r in ours)


def test_sampling_is_seeded_and_rows_differ() -> None:
    model, tok = _tiny()
    convs = [wmath.conversation("What is 2 + 3?")] * 6
    chat = PrefixCachedChat(model, tok, batch_size=4)
    a = [r.text for r in chat.complete(convs, max_tokens=8, temperature=1.0, seed=1)]
    b = [r.text for r in chat.complete(convs, max_tokens=8, temperature=1.0, seed=1)]
    c = [r.text for r in chat.complete(convs, max_tokens=8, temperature=1.0, seed=2)]
    assert a == b
    assert a != c
    assert len(set(a)) > 1  # copies of one prompt get their own samples
    with pytest.raises(ValueError, match="max_tokens"):
        chat.complete(convs, max_tokens=0, temperature=1.0)


def test_answer_stated_pattern() -> None:
    assert ANSWER_STATED.search("4 + 5 = 9. The answer is 9.")
    assert ANSWER_STATED.search("so the answer is 1,234. ")
    assert not ANSWER_STATED.search("The answer is 3.5")  # not cut inside a decimal
    assert not ANSWER_STATED.search("The answer is 3")


class _Counting:
    """A fake backend that counts calls and answers every conversation with its index."""

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, convs, *, max_tokens, temperature, seed):  # type: ignore[no-untyped-def]
        self.calls += 1

        class R:
            def __init__(self, text: str) -> None:
                self.text = text

        return [R(f"The answer is {seed % 97 + i}.") for i in range(len(convs))]


def test_shards_resume_and_do_not_depend_on_the_problem_count(tmp_path: Path) -> None:
    problems = wmath.make_problems(10, seed=0)
    kw = {"k": 3, "temperature": 0.7, "max_tokens": 8, "seed": 4, "shard_problems": 4}
    backend = _Counting()
    full, _ = wmath.sample_answers_sharded(backend, problems, shard_dir=tmp_path, **kw)  # type: ignore[arg-type]
    assert backend.calls == 3
    assert len(full) == 10
    assert all(len(r) == 3 for r in full)
    again = _Counting()
    resumed, _ = wmath.sample_answers_sharded(again, problems, shard_dir=tmp_path, **kw)  # type: ignore[arg-type]
    assert again.calls == 0
    assert resumed == full
    # A shorter run reuses the complete shards (its first problems are the same problems).
    short = _Counting()
    head, _ = wmath.sample_answers_sharded(short, problems[:8], shard_dir=tmp_path, **kw)  # type: ignore[arg-type]
    assert short.calls == 0
    assert head == full[:8]
    shard = json.loads((tmp_path / "shard-000004.json").read_text())
    assert shard["questions"] == [p.question for p in problems[4:8]]
    assert wmath.make_problems(8, seed=0) == problems[:8]  # the generator is prefix-stable

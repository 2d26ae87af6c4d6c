"""What of weak-strong runs on a GPU, and the device setting it does not have.

The method (the online thresholds, the baselines, the guarantees, the metrics) is NumPy over
streams of scores: a decision costs microseconds and there is nothing to put on a GPU. The one
torch path is the ``math`` stream's sampler: a local chat model loaded by
``icml26.shared.llm`` on the best device it finds (CUDA when present), which these tests run on
CUDA with a tiny random Llama built here (no download; skipped without CUDA; ``nox -s gpu``
runs them on a GPU machine). Sampled texts come from argmax/sampling decisions that differ
between devices, so they are checked for shape and validity, not equality with the CPU.

The config has no ``device`` field, so ``nox -s gpu`` runs the smoke job unchanged; asking for
one is a usage error (exit 2, nothing written), tested here on every machine.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from icml26.shared.cli import main
from icml26.weak_strong.tasks import math as math_task

gpu = pytest.mark.gpu


def _save_tiny_llama(folder: Path) -> Path:
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
    tok.train_from_iterator(["Problem: 12 + 7 = ? Answer: 19", "the answer is 42"] * 20, trainer)
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
        max_position_embeddings=512,
        eos_token_id=fast.eos_token_id,
        bos_token_id=fast.eos_token_id,
    )
    LlamaForCausalLM(config).save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


@gpu
def test_math_sampler_runs_its_local_model_on_cuda(cuda_device, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("transformers")
    tiny = _save_tiny_llama(tmp_path / "tiny")
    backend = math_task._backend(str(tiny), batch_size=4)
    assert next(backend.model.parameters()).device.type == "cuda"  # the loader's default
    problems = math_task.make_problems(3, seed=0)
    replies = math_task.sample_answers(
        backend, problems, k=2, temperature=0.8, max_tokens=6, seed=0
    )
    assert [len(r) for r in replies] == [2, 2, 2]
    assert all(isinstance(t, str) for r in replies for t in r)
    record = {
        "model": str(tiny),
        "k": 2,
        "problems": [
            {"question": p.question, "answer": p.answer, "kind": p.kind, "replies": r}
            for p, r in zip(problems, replies, strict=True)
        ],
    }
    stream = math_task.stream_from_samples(record)
    assert stream.scores.shape == (6,)
    assert np.all((stream.scores >= 0) & (stream.scores <= 1))


@gpu
def test_cached_samples_from_a_cuda_model_are_reused(cuda_device, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("transformers")
    tiny = _save_tiny_llama(tmp_path / "tiny")
    problems = math_task.make_problems(2, seed=1)
    kw = {"model": str(tiny), "k": 2, "temperature": 0.8, "max_tokens": 4, "seed": 0}
    first = math_task.cached_samples(problems, cache=tmp_path / "cache", batch_size=2, **kw)  # type: ignore[arg-type]
    again = math_task.cached_samples(problems, cache=tmp_path / "cache", batch_size=2, **kw)  # type: ignore[arg-type]
    assert again == first
    assert len(list((tmp_path / "cache").rglob("math-*.json"))) == 1


def test_a_device_setting_is_a_usage_error(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", "weak-strong", "--profile", "smoke", "--set", "device=cuda", "--out", str(out)]
    assert main(args) == 2
    assert not out.exists()

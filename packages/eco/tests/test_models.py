"""Workload models and data: shapes, causality, MoE routing against a direct computation."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from icml26.eco.data import load_text
from icml26.eco.models import LMConfig, TinyLM


def test_lm_shapes_and_causality() -> None:
    cfg = LMConfig(seq_len=16, d_model=32, n_heads=2, n_layers=2, d_ff=64)
    model = TinyLM(cfg).eval()
    idx = torch.randint(0, 256, (3, 16))
    logits, loss = model(idx, idx)
    assert logits.shape == (3, 16, 256)
    assert loss is not None
    assert loss.dim() == 0
    changed = idx.clone()
    changed[:, 10:] = (changed[:, 10:] + 1) % 256
    with torch.no_grad():
        a, _ = model(idx)
        b, _ = model(changed)
    torch.testing.assert_close(a[:, :10], b[:, :10])  # the future does not leak
    assert not torch.allclose(a[:, 10:], b[:, 10:])


def test_moe_layer_matches_a_direct_per_token_computation() -> None:
    cfg = LMConfig(seq_len=8, d_model=16, n_heads=2, n_layers=1, d_ff=32, n_experts=4, top_k=2)
    moe = TinyLM(cfg).blocks[0].ffn
    x = torch.randn(2, 5, 16)
    out, aux = moe(x)
    tokens = x.reshape(-1, 16)
    probs = F.softmax(tokens @ moe.router.weight.T, dim=-1)
    expected = torch.zeros_like(tokens)
    for i, tok in enumerate(tokens):
        top = probs[i].topk(2)
        gates = top.values / top.values.sum()
        for g, e in zip(gates, top.indices, strict=True):
            expected[i] += g * (F.gelu(tok @ moe.w_up[e]) @ moe.w_down[e])
    torch.testing.assert_close(out.reshape(-1, 16), expected, rtol=1e-5, atol=1e-6)
    assert aux.item() >= 1.0 - 1e-6  # Switch balance loss is >= 1, equality when balanced


def test_bad_model_configs_and_inputs() -> None:
    with pytest.raises(ValueError, match="n_heads 3 must divide d_model 32"):
        LMConfig(d_model=32, n_heads=3)
    with pytest.raises(ValueError, match="top_k"):
        LMConfig(n_experts=2, top_k=3)
    model = TinyLM(LMConfig(seq_len=8, d_model=16, n_heads=2, n_layers=1, d_ff=16))
    with pytest.raises(ValueError, match="exceeds the model's seq_len 8"):
        model(torch.zeros(1, 9, dtype=torch.long))
    with pytest.raises(ValueError, match="batch, time"):
        model(torch.zeros(9, dtype=torch.long))


def test_text_data_from_a_user_file(tmp_path: Path) -> None:
    path = tmp_path / "corpus.txt"
    path.write_text("hello world, quantized weights. " * 400)
    data = load_text(path, n_bytes=10_000)
    assert data.train.numel() + data.val.numel() == 10_000
    x, y = data.batch("train", 4, 16, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (4, 16)
    torch.testing.assert_close(x[:, 1:], y[:, :-1])
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_text(tmp_path / "missing.txt", 10_000)
    short = tmp_path / "short.txt"
    short.write_text("tiny")
    with pytest.raises(ValueError, match="too short"):
        load_text(short, 10_000)

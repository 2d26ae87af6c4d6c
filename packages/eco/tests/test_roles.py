"""Parameter roles: norms, biases, embeddings and routers found by module type and name, on
our models and on Hugging Face ones; the groups keep them in float32 unless quantize_all."""

from __future__ import annotations

import pytest
from torch import nn

from icml26.eco import parameter_roles, role_groups
from icml26.eco.models import LMConfig, TinyLM


def test_tiny_moe_lm_roles() -> None:
    lm = TinyLM(LMConfig(seq_len=8, d_model=16, n_layers=1, n_heads=2, d_ff=32, n_experts=4))
    roles = parameter_roles(lm)
    assert roles["tok.weight"] == roles["pos.weight"] == "embedding"
    assert roles["blocks.0.ln1.weight"] == roles["ln_f.bias"] == "norm"
    assert roles["blocks.0.ffn.router.weight"] == "router"
    assert roles["blocks.0.ffn.w_up"] == roles["blocks.0.attn.qkv.weight"] == "weight"
    assert roles["head.weight"] == "weight"


def test_groups_keep_high_precision_roles_unless_quantize_all() -> None:
    model = nn.Sequential(nn.Embedding(10, 8), nn.Linear(8, 8), nn.LayerNorm(8))
    groups = {g["role"]: g for g in role_groups(model, weight_decay=0.1)}
    assert set(groups) == {"weight", "norm", "embedding", "bias"}
    assert "fmt" not in groups["weight"]
    assert groups["weight"]["weight_decay"] == 0.1
    for role in ("norm", "embedding", "bias"):
        assert groups[role]["fmt"] is None
    assert groups["norm"]["weight_decay"] == groups["bias"]["weight_decay"] == 0.0
    everything = {g["role"]: g for g in role_groups(model, quantize_all=True)}
    assert all("fmt" not in g for g in everything.values())
    assert everything["norm"]["group_size"] is None  # vectors: one scale per tensor
    frozen = nn.Linear(4, 4)
    frozen.weight.requires_grad_(False)
    assert [g["role"] for g in role_groups(frozen)] == ["bias"]


def test_tied_head_is_an_embedding_and_hf_names_are_recognised() -> None:
    transformers = pytest.importorskip("transformers")
    cfg = transformers.MixtralConfig(
        vocab_size=32,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        num_local_experts=4,
        num_experts_per_tok=2,
        tie_word_embeddings=True,
    )
    model = transformers.MixtralForCausalLM(cfg)
    roles = parameter_roles(model)
    assert roles["model.embed_tokens.weight"] == "embedding"
    assert "lm_head.weight" not in roles or roles["lm_head.weight"] == "embedding"  # tied
    routers = [n for n, r in roles.items() if r == "router"]
    assert routers
    assert all(".gate" in n for n in routers)
    norms = [n for n, r in roles.items() if r == "norm"]
    assert any("input_layernorm" in n for n in norms)
    assert "model.norm.weight" in norms
    llama = transformers.LlamaForCausalLM(
        transformers.LlamaConfig(
            vocab_size=32,
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=2,
        )
    )
    assert parameter_roles(llama)["model.layers.0.mlp.gate_proj.weight"] == "weight"

"""Causal masking, KV caching and the incremental == batch equivalence."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.inctnp import KVCache, ModelConfig, build_model, load_model, save_model

TOL = dict(rtol=1e-5, atol=1e-5)


def _model(causal: bool = True, dim_x: int = 1, seed: int = 0):
    torch.manual_seed(seed)
    return build_model(ModelConfig(dim_x=dim_x, width=32, layers=3, heads=4, causal=causal)).eval()


def _data(b: int, n: int, dim_x: int = 1, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(b, n, dim_x, generator=g),
        torch.randn(b, n, 1, generator=g),
        torch.randn(b, 5, dim_x, generator=g),
    )


@settings(max_examples=15, deadline=None)
@given(chunks=st.lists(st.integers(1, 6), min_size=1, max_size=5), dim_x=st.integers(1, 3))
def test_update_then_predict_equals_condition_then_predict(chunks: list[int], dim_x: int) -> None:
    model = _model(dim_x=dim_x)
    n = sum(chunks)
    x, y, xt = _data(2, n, dim_x)
    batch_mean, batch_std = model.stream().condition(x, y).predict(xt)
    stream, start = model.stream(), 0
    for size in chunks:
        stream.update(x[:, start : start + size], y[:, start : start + size])
        start += size
    mean, std = stream.predict(xt)
    torch.testing.assert_close(mean, batch_mean, **TOL)
    torch.testing.assert_close(std, batch_std, **TOL)
    # ... and both equal the training-time forward pass with the causal mask.
    with torch.no_grad():
        fwd_mean, fwd_std = model(x, y, xt)
    torch.testing.assert_close(mean, fwd_mean, **TOL)
    torch.testing.assert_close(std, fwd_std, **TOL)


def test_earlier_context_is_untouched_by_later_points() -> None:
    model = _model()
    x, y, _ = _data(1, 12)
    short = model.extend_cache(KVCache(3), x[:, :7], y[:, :7])
    long = model.extend_cache(KVCache(3), x, y)
    for layer in range(3):
        k_short, v_short = short.get(layer)
        k_long, v_long = long.get(layer)
        torch.testing.assert_close(k_long[:, :, :7], k_short, **TOL)
        torch.testing.assert_close(v_long[:, :, :7], v_short, **TOL)


def test_tnp_d_is_order_free_and_inctnp_is_causal() -> None:
    x, y, xt = _data(1, 10)
    perm = torch.randperm(10)
    tnp, inc = _model(causal=False), _model(causal=True)
    with torch.no_grad():
        torch.testing.assert_close(tnp(x, y, xt)[0], tnp(x[:, perm], y[:, perm], xt)[0], **TOL)
        # Changing the last point changes nothing about the earlier points' keys.
        y2 = y.clone()
        y2[:, -1] += 5.0
        a = inc.extend_cache(KVCache(3), x, y)
        b = inc.extend_cache(KVCache(3), x, y2)
        torch.testing.assert_close(a.get(2)[0][:, :, :-1], b.get(2)[0][:, :, :-1])
        assert not torch.allclose(a.get(2)[0][:, :, -1], b.get(2)[0][:, :, -1])


def test_prefix_targets_see_only_earlier_points() -> None:
    model = _model()
    x, y, _ = _data(2, 9)
    with torch.no_grad():
        mean, std = model(x, y, x, prefix_targets=True)
        for j in (1, 4, 8):
            m, s = model(x[:, :j], y[:, :j], x[:, j : j + 1])
            torch.testing.assert_close(mean[:, j : j + 1], m, **TOL)
            torch.testing.assert_close(std[:, j : j + 1], s, **TOL)


def test_target_prefix_masks_each_target_to_its_own_prefix() -> None:
    model = _model()
    x, y, xt = _data(2, 9)
    prefix = torch.tensor([1, 3, 9, 5, 2])
    with torch.no_grad():
        mean, std = model(x, y, xt, target_prefix=prefix)
        for j, c in enumerate(prefix.tolist()):
            m, s = model(x[:, :c], y[:, :c], xt[:, j : j + 1])
            torch.testing.assert_close(mean[:, j : j + 1], m, **TOL)
            torch.testing.assert_close(std[:, j : j + 1], s, **TOL)
        with pytest.raises(ValueError, match="target_prefix must hold 5 lengths"):
            model(x, y, xt, target_prefix=torch.tensor([0, 1, 2, 3, 4]))
        with pytest.raises(ValueError, match="causal"):
            _model(causal=False)(x, y, xt, target_prefix=prefix)


def test_cache_memory_is_linear_in_n() -> None:
    model = _model()
    for n in (5, 17, 40):
        x, y, _ = _data(2, n)
        cache = model.extend_cache(KVCache(3), x, y)
        assert (
            cache.nbytes == 2 * 3 * 2 * n * 32 * 4
        )  # keys+values x layers x batch x N x width x fp32


def test_cache_allocation_stays_within_twice_its_use_while_streaming() -> None:
    """The forced part of 'linear memory' (a test, not a claim): with capacity doubling the
    allocated bytes stay between the used bytes and twice them (past the 16-token minimum),
    and the recorded peak is the doubled buffers plus the one old buffer still alive while
    the last of them grows (the per-layer key/value buffers grow one at a time)."""
    model = _model()
    x, y, _ = _data(1, 80)
    cache = model.extend_cache(KVCache(3), x[:, :20], y[:, :20])
    per_token = 2 * 3 * 1 * 32 * 4  # keys+values x layers x batch x width x fp32
    assert cache.allocated_bytes == cache.nbytes == 20 * per_token
    for n in range(21, 81):
        model.extend_cache(cache, x[:, n - 1 : n], y[:, n - 1 : n])
        assert cache.nbytes == n * per_token
        assert cache.nbytes <= cache.allocated_bytes <= 2 * cache.nbytes
    assert cache.allocated_bytes == 80 * per_token  # 20 -> 40 -> 80
    one_buffer_per_token = 32 * 4  # batch 1 x width x fp32
    assert cache.peak_bytes == 80 * per_token + 40 * one_buffer_per_token


def test_bad_input_is_named() -> None:
    model = _model()
    x, y, xt = _data(1, 4)
    with pytest.raises(ValueError, match=r"context x must have shape \[batch, points, 1\]"):
        model(x[0], y, xt)
    with pytest.raises(ValueError, match="context y must have shape"):
        model(x, y[:, :3], xt)
    with pytest.raises(ValueError, match="NaN"):
        model(x, y.masked_fill(torch.ones_like(y, dtype=torch.bool), float("nan")), xt)
    with pytest.raises(ValueError, match="target x must have shape"):
        model(x, y, torch.zeros(1, 3, 2))
    with pytest.raises(ValueError, match="empty"):
        model.stream().predict(xt)
    with pytest.raises(ValueError, match="empty"):
        model(x[:, :0], y[:, :0], xt)
    with pytest.raises(ValueError, match="divisible"):
        ModelConfig(width=30, heads=4)
    with pytest.raises(TypeError, match="causal"):
        _model(causal=False).extend_cache(KVCache(3), x, y)


def test_checkpoint_round_trip(tmp_path: Path) -> None:
    model = _model()
    x, y, xt = _data(1, 6)
    path = save_model(model, tmp_path / "m.safetensors")
    loaded = load_model(path)
    assert loaded.config == model.config
    torch.testing.assert_close(
        loaded.stream().condition(x, y).predict(xt)[0],
        model.stream().condition(x, y).predict(xt)[0],
    )
    with pytest.raises(FileNotFoundError):
        load_model(tmp_path / "missing.safetensors")
    from safetensors.torch import save_file

    save_file({"w": torch.zeros(1)}, str(tmp_path / "other.safetensors"))
    with pytest.raises(ValueError, match="not an icml26-inctnp model"):
        load_model(tmp_path / "other.safetensors")

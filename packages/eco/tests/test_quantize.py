"""Quantize/dequantize: grid membership, error bounds, unbiased stochastic rounding, packing."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.eco.quantize import QuantFormat, stochastic_round_fp8

# Every finite float8_e4m3fn value, enumerated from the 256 bit patterns (independent reference).
_ALL = torch.arange(256, dtype=torch.uint8).view(torch.float8_e4m3fn).float()
E4M3_GRID = np.unique(_ALL[torch.isfinite(_ALL)].numpy().astype(np.float64))


def _nearest_on_grid(y: np.ndarray) -> np.ndarray:
    idx = np.clip(np.searchsorted(E4M3_GRID, y), 1, len(E4M3_GRID) - 1)
    lo, hi = E4M3_GRID[idx - 1], E4M3_GRID[idx]
    return np.where(np.abs(y - lo) <= np.abs(hi - y), lo, hi), lo, hi


arrays = st.lists(
    st.floats(-1e3, 1e3, allow_nan=False, allow_subnormal=False, width=32), min_size=8, max_size=64
).map(lambda xs: torch.tensor(xs[: len(xs) // 8 * 8], dtype=torch.float32).reshape(-1, 8))


@settings(max_examples=60, deadline=None)
@given(arrays)
def test_fp8_rtn_is_the_nearest_e4m3_value(x: torch.Tensor) -> None:
    fmt = QuantFormat("fp8", None, "rtn")
    q = fmt.quantize(x)
    scale = float(q.scale)
    y = (x / scale).double().numpy().clip(-448, 448)
    nearest, lo, hi = _nearest_on_grid(y)
    got = q.data.view(torch.float8_e4m3fn).double().numpy().reshape(y.shape)
    # ties may go either way (torch rounds ties to even); otherwise exactly the nearest
    tie = np.isclose(np.abs(y - lo), np.abs(hi - y), rtol=0, atol=1e-12)
    assert np.all((got == nearest) | (tie & ((got == lo) | (got == hi))))
    # relative error bound of round-to-nearest e4m3: half a step, 2**-4 relative in normals
    err = np.abs(fmt.dequantize(q).double().numpy() - x.double().numpy())
    bound = 2.0**-4 * np.abs(x.double().numpy()) + scale * 2.0**-10 + 1e-6 * scale
    assert np.all(err <= bound)


@settings(max_examples=60, deadline=None)
@given(arrays, st.sampled_from([None, 8]))
def test_int4_error_is_at_most_half_a_step(x: torch.Tensor, group: int | None) -> None:
    fmt = QuantFormat("int4", group, "rtn")
    q = fmt.quantize(x)
    xr = fmt.dequantize(q)
    groups = x.reshape(q.scale.numel(), -1)
    err = (xr.reshape_as(groups) - groups).abs()
    assert torch.all(err <= q.scale.reshape(-1, 1) / 2 * (1 + 1e-5))
    codes = xr.reshape_as(groups) / q.scale.reshape(-1, 1)
    assert torch.allclose(codes, codes.round(), atol=1e-4)
    # the codes are read back as dequantized / scale, so compare their nearest integers
    # (131 / (131 / 7) * ... is 7.0000005 in float32, a rounding of the check, not a bad code)
    assert codes.round().min() >= -8
    assert codes.round().max() <= 7
    assert q.data.dtype == torch.uint8
    assert q.data.numel() == math.ceil(x.numel() / 2)


@pytest.mark.parametrize("kind", ["fp8", "int4"])
def test_sr_outputs_are_neighbouring_grid_points(kind: str) -> None:
    x = torch.randn(64, 32)
    fmt_sr, fmt_rtn = QuantFormat(kind, 16, "sr"), QuantFormat(kind, 16, "rtn")
    q = fmt_sr.quantize(x, generator=torch.Generator().manual_seed(0))
    y = (x.reshape(-1, 16) / q.scale.reshape(-1, 1)).double().numpy()
    if kind == "fp8":
        got = q.data.view(torch.float8_e4m3fn).double().numpy().reshape(y.shape)
        _, lo, hi = _nearest_on_grid(y.clip(-448, 448))
        assert np.all((np.isclose(got, lo)) | np.isclose(got, hi) | np.isclose(got, y))
    else:
        got = (fmt_sr.dequantize(q).reshape(-1, 16) / q.scale.reshape(-1, 1)).double().numpy()
        assert np.all((np.abs(got - np.floor(y)) < 1e-4) | (np.abs(got - np.ceil(y)) < 1e-4))
    assert fmt_rtn.quantize(x).scale.shape == q.scale.shape


@pytest.mark.parametrize("kind", ["fp8", "int4"])
def test_stochastic_rounding_is_unbiased(kind: str) -> None:
    """Mean of N draws within 5 standard errors of x, the SE bounded by step/(2 sqrt N)."""
    n = 4000
    base = torch.tensor([0.3, -1.37, 0.051, 2.9, -0.0123, 5.5, 7.0, 0.77])  # amax 7 → scale known
    x = base.repeat(n, 1)  # each row quantized as one group of 8: same scale for all rows
    fmt = QuantFormat(kind, 8, "sr")
    q = fmt.quantize(x, generator=torch.Generator().manual_seed(1234))
    scale = float(q.scale[0])
    mean = fmt.dequantize(q).double().mean(dim=0)
    y = base.double() / scale
    if kind == "fp8":
        ys = y.numpy()
        _, lo, hi = _nearest_on_grid(ys)
        step = torch.from_numpy(hi - lo) * scale
    else:
        step = torch.full_like(y, scale)
    se = step / (2 * math.sqrt(n))
    assert torch.all((mean - base.double()).abs() <= 5 * se + 1e-7)
    # and RTN is biased on the same inputs (the test can fail)
    rtn = (
        QuantFormat(kind, 8, "rtn")
        .dequantize(QuantFormat(kind, 8, "rtn").quantize(x))
        .double()
        .mean(0)
    )
    assert (rtn - base.double()).abs().max() > 10 * se.max()


def test_stochastic_round_fp8_subnormals_are_unbiased() -> None:
    y = torch.full((200_000,), 0.0035)  # below 2**-6: subnormal spacing 2**-9
    u = torch.rand(y.shape, generator=torch.Generator().manual_seed(3))
    r = stochastic_round_fp8(y, u)
    assert set(r.unique().tolist()) <= {2 * 2.0**-9, 1 * 2.0**-9}
    assert abs(r.double().mean().item() - 0.0035) < 5 * 2.0**-9 / (2 * math.sqrt(y.numel()))


def test_storage_bytes_and_roundtrip_shapes() -> None:
    for fmt, shape in [
        (QuantFormat("fp8", None, "rtn"), (3, 5)),
        (QuantFormat("fp8", 4, "sr"), (2, 3, 8)),
        (QuantFormat("int4", None, "rtn"), (7,)),
        (QuantFormat("int4", 6, "rtn"), (5, 12)),
    ]:
        x = torch.randn(shape)
        q = fmt.quantize(x, generator=torch.Generator().manual_seed(0))
        assert q.nbytes == fmt.storage_bytes(shape)
        assert fmt.dequantize(q).shape == x.shape
        assert fmt.dequantize(q, torch.bfloat16).dtype == torch.bfloat16


def test_zero_tensor_and_bf16_input() -> None:
    fmt = QuantFormat("int4", 4, "rtn")
    assert torch.equal(fmt.roundtrip(torch.zeros(2, 8)), torch.zeros(2, 8))
    x = torch.randn(4, 8, dtype=torch.bfloat16)
    assert fmt.roundtrip(x).dtype == torch.float32


def test_bad_inputs_raise_clear_errors() -> None:
    with pytest.raises(ValueError, match="unsupported weight format"):
        QuantFormat("fp4")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="rounding"):
        QuantFormat("fp8", None, "floor")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="even"):
        QuantFormat("int4", 5)
    with pytest.raises(ValueError, match="positive integer"):
        QuantFormat("fp8", 0)
    with pytest.raises(ValueError, match="does not divide the last dimension 10"):
        QuantFormat("fp8", 4).quantize(torch.randn(3, 10))
    with pytest.raises(ValueError, match="NaN"):
        QuantFormat("fp8").quantize(torch.tensor([1.0, float("nan")]))
    with pytest.raises(TypeError, match="floating-point"):
        QuantFormat("fp8").quantize(torch.arange(4))


def test_fp8_table_lookup_equals_the_float8_cast_for_every_byte() -> None:
    """Dequantization reads e4m3 bytes through a 256-entry table: same values as the cast
    (NaN bytes included)."""
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    cast = codes.view(torch.float8_e4m3fn).float()
    table = QuantFormat("fp8").grid_values(codes, 256)
    assert torch.equal(torch.isnan(table), torch.isnan(cast))
    assert torch.equal(table[~torch.isnan(cast)], cast[~torch.isnan(cast)])


def test_quantize_refuses_infinity_anywhere_and_can_skip_the_check() -> None:
    x = torch.ones(4, 8)
    x[2, 5] = -float("inf")
    with pytest.raises(ValueError, match="NaN or infinity"):
        QuantFormat("int4", 8).quantize(x)
    QuantFormat("int4", 8).quantize(torch.ones(4, 8), check_finite=False)


def test_fp8_grid_step_is_the_gap_to_the_next_e4m3_value() -> None:
    """At every non-negative e4m3 value below 448 (subnormals included), the step is the
    distance to the next e4m3 value, and it is constant inside each binade."""
    from icml26.eco.quantize import fp8_grid_step

    values = torch.arange(128, dtype=torch.int32).to(torch.uint8).view(torch.float8_e4m3fn)
    values = values.float()
    values = values[torch.isfinite(values)].sort().values  # 0 ... 448
    gaps = values[1:] - values[:-1]
    assert torch.equal(fp8_grid_step(values[:-1]), gaps)
    inside = values[:-1] + 0.25 * gaps  # strictly between neighbours: same spacing
    assert torch.equal(fp8_grid_step(inside), gaps)
    assert torch.equal(fp8_grid_step(-values[:-1]), gaps)

"""Device consistency on CUDA (skipped without one; ``nox -s gpu`` runs them on a GPU machine),
and the ``device`` setting's validation (runs everywhere).

On CUDA the quantized storage, the optimizer state (except torch's CPU ``step`` counter) and
the dequantized weights must live on CUDA, and the results must equal the CPU's:

* round-to-nearest quantization is elementwise IEEE arithmetic plus a max: bit-identical;
* one optimizer step: the float32 AdamW/SGD update may differ by an ulp between devices
  (fused multiply-adds), which can move an element that sits on a rounding boundary to the
  neighbouring grid point; so at most 1% of the weights may differ, each by at most one grid
  step, and the rest must be equal;
* a few training steps of the run's workloads: losses equal to ``rtol=1e-3`` (float32 matmuls
  in different orders, plus the rare grid flip above);
* stochastic rounding draws from a CUDA generator on CUDA (a different stream than the CPU's),
  so it is checked by its definition: every value is one of the two grid neighbours.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch
from torch import nn

from icml26.eco import ECOSGD, ECOAdamW, MasterWeightAdamW, QuantFormat
from icml26.eco.config import RunConfig
from icml26.eco.data import TextData
from icml26.eco.models import LMConfig, TinyLM
from icml26.eco.quantize import fp8_grid_step
from icml26.eco.train import LMWorkload, TrainSpec, train
from icml26.shared.cli import main

gpu = pytest.mark.gpu
no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the machine without CUDA")


def _on(t: torch.Tensor, device: torch.device) -> None:
    assert t.device.type == device.type, f"tensor on {t.device}, expected {device}"


FORMATS = [QuantFormat("fp8"), QuantFormat("fp8", 16), QuantFormat("int4", 16)]


@gpu
@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_rtn_quantization_on_cuda_is_bit_identical(fmt: QuantFormat, cuda_device) -> None:  # type: ignore[no-untyped-def]
    x = torch.randn(8, 32, generator=torch.Generator().manual_seed(0)) * 3.0
    qg, qc = fmt.quantize(x.to(cuda_device)), fmt.quantize(x)
    _on(qg.data, cuda_device)
    _on(qg.scale, cuda_device)
    assert qg.data.dtype == torch.uint8
    assert torch.equal(qg.data.cpu(), qc.data)
    assert torch.equal(qg.scale.cpu(), qc.scale)
    deq = fmt.dequantize(qg)
    _on(deq, cuda_device)
    assert torch.equal(deq.cpu(), fmt.dequantize(qc))


@gpu
@pytest.mark.parametrize("kind", ["fp8", "int4"])
def test_stochastic_rounding_on_cuda_picks_a_grid_neighbour(kind: str, cuda_device) -> None:  # type: ignore[no-untyped-def]
    fmt = QuantFormat(kind, 16, "sr")  # type: ignore[arg-type]
    x = torch.randn(16, 64, generator=torch.Generator().manual_seed(1)).to(cuda_device)
    gen = torch.Generator(device=cuda_device).manual_seed(3)
    q = fmt.quantize(x, generator=gen)
    out = fmt.dequantize(q)
    _on(out, cuda_device)
    scale = q.scale.reshape(-1, 1)
    y = (x.reshape(-1, 16) / scale).clamp(-fmt.qmax, fmt.qmax)
    code = out.reshape(-1, 16) / scale
    step = fp8_grid_step(y) if kind == "fp8" else torch.ones_like(y)
    lo = torch.floor(y / step) * step
    # code = out / scale is the e4m3 / int4 value up to the float32 rounding of that division
    hit = torch.isclose(code, lo, rtol=1e-5, atol=1e-6) | torch.isclose(
        code, lo + step, rtol=1e-5, atol=1e-6
    )
    assert bool(hit.all())
    again = fmt.dequantize(
        fmt.quantize(x, generator=torch.Generator(device=cuda_device).manual_seed(3))
    )
    assert torch.equal(again, out)  # the seed fixes the draws on CUDA too


def _one_step(make, device: torch.device | str) -> tuple[torch.Tensor, dict]:  # type: ignore[no-untyped-def]
    g = torch.Generator().manual_seed(2)
    w0 = torch.randn(16, 32, generator=g)
    grad = torch.randn(16, 32, generator=g)
    model = nn.Linear(32, 16, bias=False).to(device)
    with torch.no_grad():
        model.weight.copy_(w0)
    opt = make(model)  # the weight becomes a QuantizedWeight on the device
    p = model.weight
    for _ in range(3):
        p.grad = grad.to(device)
        opt.step()
    assert p.codes.device.type == torch.device(device).type
    return opt.dequantized(p), opt.state[p]


OPTIMIZERS = {
    "eco_adamw_fp8": lambda ps: ECOAdamW(ps, lr=1e-2, fmt="fp8", group_size=16),
    "eco_adamw_int4": lambda ps: ECOAdamW(ps, lr=1e-2, fmt="int4", group_size=16),
    "master_adamw_fp8": lambda ps: MasterWeightAdamW(ps, lr=1e-2, fmt="fp8", group_size=16),
    "eco_sgd_int4": lambda ps: ECOSGD(ps, lr=1e-2, momentum=0.9, fmt="int4", group_size=16),
}


@gpu
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_steps_on_cuda_match_cpu(name: str, cuda_device) -> None:  # type: ignore[no-untyped-def]
    wg, state = _one_step(OPTIMIZERS[name], cuda_device)
    wc, _ = _one_step(OPTIMIZERS[name], "cpu")
    _on(wg, cuda_device)
    for key, value in state.items():
        if isinstance(value, torch.Tensor) and key != "step":
            _on(value, cuda_device)
    wg = wg.cpu()
    differ = wg != wc
    assert differ.float().mean() <= 0.01
    # one grid step of the coarsest group bounds any flip (int4: the scale; fp8: 2**-3 relative)
    bound = wc.abs().max() / (7.0 if "int4" in name else 8.0)
    assert float((wg - wc).abs().max()) <= float(bound)


def _text() -> TextData:
    g = torch.Generator().manual_seed(0)
    return TextData(
        torch.randint(97, 123, (4000,), generator=g, dtype=torch.uint8),
        torch.randint(97, 123, (1000,), generator=g, dtype=torch.uint8),
        "random letters",
    )


@gpu
@pytest.mark.parametrize("scheme", ["fp32", "master_fp8_rtn", "eco_fp8_rtn", "eco_int4_rtn"])
@pytest.mark.parametrize("n_experts", [0, 4])
def test_training_on_cuda_matches_cpu(scheme: str, n_experts: int, cuda_device) -> None:  # type: ignore[no-untyped-def]
    """The run's LM workload (dense and MoE) trained a few steps on both devices."""
    cfg = LMConfig(seq_len=16, d_model=32, n_layers=1, n_heads=2, d_ff=64, n_experts=n_experts)
    spec = TrainSpec(steps=4, lr=3e-3)
    data = _text()
    rg = train(
        LMWorkload("lm", data, cfg, 4, val_batches=2, device=str(cuda_device)), scheme, spec, 0
    )
    rc = train(LMWorkload("lm", data, cfg, 4, val_batches=2, device="cpu"), scheme, spec, 0)
    assert rg.losses == pytest.approx(rc.losses, rel=1e-3)
    assert rg.val_loss == pytest.approx(rc.val_loss, rel=1e-3)
    assert rg.memory == rc.memory  # the same storage on either device
    train(
        LMWorkload("lm", data, cfg, 4, val_batches=2, device=str(cuda_device)),
        scheme,
        spec,
        0,
        measure_peak=True,
    )
    peak = train(
        LMWorkload("lm", data, cfg, 4, val_batches=2, device=str(cuda_device)),
        scheme,
        spec,
        0,
        measure_peak=True,
    ).peak
    assert peak is not None
    assert peak["transient"] > 0  # torch.cuda's allocator on CUDA


@gpu
def test_tiny_lm_forward_on_cuda_matches_cpu(cuda_device) -> None:  # type: ignore[no-untyped-def]
    torch.manual_seed(0)
    model = TinyLM(LMConfig(seq_len=16, d_model=32, n_layers=2, n_heads=2, d_ff=64, n_experts=4))
    x = torch.randint(0, 256, (3, 16), generator=torch.Generator().manual_seed(1))
    logits_c, loss_c = model(x, x)
    logits_g, loss_g = copy.deepcopy(model).to(cuda_device)(x.to(cuda_device), x.to(cuda_device))
    _on(logits_g, cuda_device)
    torch.testing.assert_close(logits_g.cpu(), logits_c, rtol=1e-4, atol=1e-4)
    assert float(loss_g.detach()) == pytest.approx(float(loss_c.detach()), rel=1e-4)


@gpu
def test_config_accepts_cuda(cuda_device) -> None:  # type: ignore[no-untyped-def]
    assert RunConfig(device="cuda").device == "cuda"
    assert RunConfig(device="cuda:0").device == "cuda:0"


def test_device_setting_is_validated() -> None:
    with pytest.raises(ValueError, match="device must be 'cpu', 'cuda' or 'cuda:N'"):
        RunConfig(device="gpu")
    with pytest.raises(ValueError, match="device must be"):
        RunConfig(device="cuda:x")


@no_cuda
def test_cuda_without_cuda_is_a_usage_error_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no CUDA device is visible"):
        RunConfig(device="cuda")
    out = tmp_path / "run"
    code = main(["run", "eco", "--profile", "smoke", "--set", "device=cuda", "--out", str(out)])
    assert code == 2
    assert not out.exists()

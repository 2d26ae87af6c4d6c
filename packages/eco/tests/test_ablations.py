"""The ablation switches: exact error feedback equals master weights, the scale orders do what
they say, ``ablated_spec`` changes one thing, and the stage's statistics."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from icml26.eco import ECOAdamW, MasterWeightAdamW, QuantFormat, static_memory
from icml26.eco.ablations import ablated_spec
from icml26.eco.config import ABLATIONS, RunConfig
from icml26.eco.optim import QuantizedOptimizer
from icml26.eco.study import mean_se
from icml26.eco.train import TrainSpec


def _grads(n: int, shape: tuple[int, ...]) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(1)
    return [torch.randn(shape, generator=gen) for _ in range(n)]


@pytest.mark.parametrize("fmt", ["fp8", "int4"])
def test_error_buffer_follows_master_weights(fmt: str) -> None:
    """ŵ + e is the master iterate: with the same gradients the stored weights stay those of
    MasterWeightAdamW (float rounding may flip a rare tie), and memory is master's. Both start
    on the grid: master weights keep the initial quantization error, which ECO (and this
    ablation of it) never sees."""
    w0 = torch.randn(16, 32, generator=torch.Generator().manual_seed(0)) * 0.1
    w0 = QuantFormat(fmt, 16).roundtrip(w0)  # type: ignore[arg-type]
    a, b = nn.Parameter(w0.clone()), nn.Parameter(w0.clone())
    kw = {"lr": 3e-3, "betas": (0.9, 0.95), "fmt": fmt, "group_size": 16}
    eco = ECOAdamW([a], error_buffer=True, **kw)  # type: ignore[arg-type]
    master = MasterWeightAdamW([b], **kw)  # type: ignore[arg-type]
    for g in _grads(40, (16, 32)):
        a.grad, b.grad = g.clone(), g.clone()
        eco.step()
        master.step()
    same = (eco.dequantized(a) == master.dequantized(b)).float().mean().item()
    assert same > 0.99
    assert static_memory([a], eco).total == static_memory([b], master).total
    assert "exp_avg" in eco.state[a]  # the momentum is the plain AdamW one: nothing injected


def test_plain_eco_is_not_master_weights_so_the_test_above_can_fail() -> None:
    w0 = torch.randn(16, 32, generator=torch.Generator().manual_seed(0)) * 0.1
    a, b = nn.Parameter(w0.clone()), nn.Parameter(w0.clone())
    kw = {"lr": 3e-3, "betas": (0.9, 0.95), "fmt": "int4", "group_size": 16}
    eco = ECOAdamW([a], **kw)  # type: ignore[arg-type]
    master = MasterWeightAdamW([b], **kw)  # type: ignore[arg-type]
    for g in _grads(40, (16, 32)):
        a.grad, b.grad = g.clone(), g.clone()
        eco.step()
        master.step()
    assert (eco.dequantized(a) == master.dequantized(b)).float().mean().item() < 0.99


def test_delayed_scale_clips_to_the_previous_range_and_injects_the_clipped_part() -> None:
    """A step pushing the largest weight past the range: the current-scale order stores it,
    the delayed order clips it to the old amax and moves the excess into the momentum."""
    w0 = torch.tensor([1.0, 0.5, -0.25, 0.125])
    grad = torch.tensor([-1.0, 0.0, 0.0, 0.0])  # Adam's first step moves element 0 by +lr
    lr = 0.5
    out = {}
    for order in ("current", "delayed"):
        p = nn.Parameter(w0.clone())
        opt = ECOAdamW(
            [p], lr=lr, betas=(0.9, 0.99), fmt="fp8", scale_order=order, injection_scale="injection"
        )
        p.grad = grad.clone()
        opt.step()
        out[order] = (opt.dequantized(p), opt.state[p]["exp_avg"].clone())
    assert out["current"][0][0].item() == pytest.approx(1.5, rel=1e-6)
    assert out["delayed"][0][0].item() == pytest.approx(1.0, rel=1e-6)  # clipped to old amax
    # the excess 0.5 is injected: m = (1-β1) g + (1-1/β1)(1-β1) (|g|+ε)/η · e with e = +0.5
    m0 = (1 - 0.9) * -1.0 + (1 - 1 / 0.9) * (1 - 0.9) * (1.0 + 1e-8) / lr * 0.5
    assert out["delayed"][1][0].item() == pytest.approx(m0, rel=1e-5)


def test_inject_then_rescale_loses_the_second_rounding() -> None:
    """The error injected is the one on the old scale; the stored weights are re-rounded on the
    new scale, so w̃ − q(w̃) differs from what was injected."""
    w0 = torch.randn(64, generator=torch.Generator().manual_seed(3))
    grad = torch.zeros(64)
    grad[int(w0.abs().argmax())] = -float(torch.sign(w0[w0.abs().argmax()]))  # grow amax
    fmt = QuantFormat("int4")
    p = nn.Parameter(w0.clone())
    opt = ECOAdamW(
        [p],
        lr=0.3,
        betas=(0.9, 0.99),
        fmt="int4",
        group_size=None,
        scale_order="inject_then_rescale",
        injection_scale="injection",  # the paper's coefficient, as written below
    )
    w_hat0 = opt.dequantized(p).clone()
    p.grad = grad.clone()
    opt.step()
    w_tilde = w_hat0.clone()
    w_tilde[grad != 0] -= 0.3 * torch.sign(grad[grad != 0])  # Adam's first step: ±lr
    on_old = fmt.dequantize(fmt.quantize(w_tilde, scale=fmt.scale_for(w_hat0)))
    injected = w_tilde - on_old
    m = opt.state[p]["exp_avg"]
    denom = grad.abs() + 1e-8
    expected = 0.1 * grad + (1 - 1 / 0.9) * 0.1 * denom / 0.3 * injected
    torch.testing.assert_close(m, expected, rtol=1e-5, atol=1e-6)
    stored = opt.dequantized(p)
    torch.testing.assert_close(
        stored, fmt.dequantize(fmt.quantize(on_old, scale=fmt.scale_for(w_tilde)))
    )
    assert not torch.equal(stored, on_old)  # the rescale moved weights: that error is lost


def test_ablation_switches_refuse_what_they_do_not_apply_to() -> None:
    p = nn.Parameter(torch.ones(4))
    with pytest.raises(ValueError, match="scale_order must be one of"):
        ECOAdamW([p], scale_order="later")  # type: ignore[arg-type]
    group = {"lr": 1.0, "fmt": None, "group_size": None, "rounding": "rtn"}
    with pytest.raises(ValueError, match="injection_scale must be one of"):
        ECOAdamW([p], injection_scale="later")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not master weights"):
        QuantizedOptimizer([p], group, mode="master", scale_order="delayed")
    with pytest.raises(ValueError, match="needs mode 'eco'"):
        ECOAdamW([nn.Parameter(torch.ones(4))], error_feedback=False, error_buffer=True)
    with pytest.raises(ValueError, match="scale has 2 values; this tensor has 1 groups"):
        QuantFormat("fp8").quantize(torch.ones(4), scale=torch.ones(2))


def test_ablated_spec_changes_one_thing_and_says_whether_master_retrains() -> None:
    base = TrainSpec(steps=100, lr=1e-3, fp8_group_size=None, int4_group_size=16)
    assert ablated_spec("per_tensor", base, "fp8") is None  # FP8's default
    assert ablated_spec("per_group", base, "int4") is None  # INT4's default
    nd = ablated_spec("no_decay", base, "fp8")
    assert nd is not None
    assert nd.affects_master
    assert [nd.eco.lr_factor(t) for t in (10, 50, 99)] == [1.0, 1.0, 1.0]
    assert base.lr_factor(99) < 0.11
    zero = ablated_spec("decay_to_zero", base, "int4")
    assert zero is not None
    assert zero.eco.lr_factor(99) < 1e-3
    eb = ablated_spec("error_buffer", base, "fp8")
    assert eb is not None
    assert not eb.affects_master
    assert eb.master == base
    assert dict(eb.eco.eco_options) == {"error_buffer": True}
    b = ablated_spec("beta1_095", base, "fp8")
    assert b is not None
    assert b.eco.betas == (0.95, 0.95)
    assert b.master.betas == (0.95, 0.95)
    s4 = ablated_spec("steps_x4", base, "fp8")
    assert s4 is not None
    assert s4.master.steps == 400
    g = ablated_spec("per_group", base, "fp8")
    assert g is not None
    assert g.master.fp8_group_size == 16
    with pytest.raises(ValueError, match="unknown ablation"):
        ablated_spec("warp", base, "fp8")
    inj = ablated_spec("scale_at_injection", base, "fp8")
    assert inj is not None
    assert not inj.affects_master
    assert dict(inj.eco.eco_options) == {"injection_scale": "injection"}
    qa = ablated_spec("quantize_all", base, "int4")
    assert qa is not None
    assert qa.affects_master
    assert qa.master.quantize_all
    assert qa.eco.quantize_all
    for name in ABLATIONS:  # every registered name is applied somewhere
        assert ablated_spec(name, base, "fp8") is not None or ablated_spec(name, base, "int4")


def test_config_validates_ablations() -> None:
    with pytest.raises(ValueError, match="unknown"):
        RunConfig(ablations=("warp",))
    with pytest.raises(ValueError, match="eco_"):
        RunConfig(ablation_schemes=("master_fp8_rtn",))
    with pytest.raises(ValueError, match="distinct"):
        RunConfig(ablation_seeds=(1, 1))
    RunConfig(ablations=(), ablation_seeds=())  # no ablation stage: nothing else checked


def test_mean_se_is_the_standard_error_of_the_mean() -> None:
    xs = [1.0, 2.0, 4.0, 7.0]
    mean, se = mean_se(xs)
    assert mean == pytest.approx(3.5)
    assert se == pytest.approx(np.std(xs, ddof=1) / 2.0)
    assert math.isnan(mean_se([1.0])[1])

"""The optimizers: ECO's momentum injection (scaled at replay or at injection), baselines
against torch.optim, convergence on a quadratic, storage-only weights, memory accounting,
checkpoints and bad input."""

from __future__ import annotations

import gc
import io
import math
import warnings

import numpy as np
import pytest
import torch
from torch import nn

from icml26.eco import (
    ECOSGD,
    ECOAdamW,
    MasterWeightAdamW,
    MasterWeightSGD,
    NonFiniteGradientError,
    QuantFormat,
    QuantizedWeight,
    static_memory,
)
from icml26.eco.optim import injection_coefficient


def _int4_per_tensor(x: np.ndarray) -> np.ndarray:
    """Independent INT4 round-to-nearest with one symmetric scale amax/7 (numpy, float64)."""
    scale = np.abs(x).max() / 7.0
    return np.clip(np.round(x / scale), -8, 7) * scale


def test_eco_sgd_injection_matches_the_formula_by_hand() -> None:
    w0 = torch.tensor([0.7, -0.32, 0.0, 0.1])
    g = np.array([0.5, 0.2, -0.3, 0.04])
    lr, beta = 0.1, 0.5
    p = nn.Parameter(w0.clone())
    opt = ECOSGD(
        [p], lr=lr, momentum=beta, fmt="int4", group_size=None, rounding="rtn"
    )  # dense working copy
    p.grad = torch.tensor(g, dtype=torch.float32)
    opt.step()
    # by hand: ŵ0 = [0.7, -0.3, 0, 0.1]; w̃ = ŵ0 - lr g = [0.65, -0.32, 0.03, 0.096]
    w_hat0 = np.array([0.7, -0.3, 0.0, 0.1])
    w_tilde = w_hat0 - lr * g
    np.testing.assert_allclose(w_tilde, [0.65, -0.32, 0.03, 0.096], atol=1e-12)
    q = _int4_per_tensor(w_tilde)  # scale 0.65/7; codes [7, -3, 0, 1]
    np.testing.assert_allclose(q / (0.65 / 7), [7, -3, 0, 1], atol=1e-9)
    e = w_tilde - q
    # first step: b ← b − e / (β η) (no earlier injection to take out; the next step's
    # β b η then re-applies e in full)
    expected_b = g - e / (beta * lr)
    np.testing.assert_allclose(
        expected_b,
        [0.5, 0.2 - 20 * (-0.32 + 3 * 0.65 / 7), -0.9, 0.04 - 20 * (0.096 - 0.65 / 7)],
        atol=1e-9,
    )
    np.testing.assert_allclose(opt.state[p]["momentum_buffer"].numpy(), expected_b, atol=1e-5)
    np.testing.assert_allclose(opt.dequantized(p).numpy(), q, atol=1e-6)
    np.testing.assert_allclose(p.detach().numpy(), q, atol=1e-6)  # working buffer = storage


@pytest.mark.parametrize("scale", ["replay", "injection"])
@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
def test_eco_adamw_injection_matches_the_formula_by_hand(weight_decay: float, scale: str) -> None:
    w0 = np.array([0.7, -0.32, 0.0, 0.1, 0.43, -0.2])
    g1 = np.array([0.5, 0.2, -0.3, 0.04, -1e-3, 0.0])
    g2 = np.array([0.1, -0.4, 0.2, 0.3, 0.05, 0.01])
    lr, b1, b2, eps = 0.02, 0.9, 0.99, 1e-8
    next_lr = 0.5 * lr  # the rate of the step that replays each error
    p = nn.Parameter(torch.tensor(w0, dtype=torch.float32))
    opt = ECOAdamW(
        [p],
        lr=lr,
        betas=(b1, b2),
        eps=eps,
        weight_decay=weight_decay,
        fmt="int4",
        group_size=None,
        injection_scale=scale,  # type: ignore[arg-type]
    )
    w_hat, m, v = _int4_per_tensor(w0), np.zeros(6), np.zeros(6)
    for t, g in enumerate((g1, g2), start=1):
        p.grad = torch.tensor(g, dtype=torch.float32)
        opt.param_groups[0]["next_lr"] = next_lr
        opt.step()
        assert "next_lr" not in opt.param_groups[0]  # consumed: a rate for one step only
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        denom = np.sqrt(v / (1 - b2**t)) + eps
        w_tilde = w_hat * (1 - lr * weight_decay) - lr * (m / (1 - b1**t)) / denom
        w_hat = _int4_per_tensor(w_tilde)
        e = w_tilde - w_hat
        c_now, c_next = 1 - b1**t, 1 - b1 ** (t + 1)
        if scale == "injection":  # the paper's formula: this step's rate and bias correction
            k = (1 - lr * weight_decay) * (1 - 1 / b1) * c_now / lr
        else:  # the replaying step's: ECO's momentum then holds (1-η'λ) c' d e / η' at t+1;
            # the first step's momentum holds no earlier injection to take out
            k = (1 - next_lr * weight_decay) * c_now / next_lr if t > 1 else 0.0
            k -= (1 - next_lr * weight_decay) * c_next / (b1 * next_lr)
        m = m + k * denom * e
        np.testing.assert_allclose(opt.dequantized(p).numpy(), w_hat, atol=1e-6)
        np.testing.assert_allclose(opt.state[p]["exp_avg"].numpy(), m, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(opt.state[p]["exp_avg_sq"].numpy(), v, rtol=1e-5, atol=1e-12)


def test_injection_coefficient_reduces_to_the_papers_formula_at_a_constant_rate() -> None:
    """Scaled at replay with an unchanged rate, the coefficient differs from the paper's only
    by the bias correction's growth, which vanishes as t grows; a decaying rate asks for a
    larger injection magnitude (the replaying step is slower)."""
    kw = {"lr": 1e-3, "beta1": 0.9, "weight_decay": 0.1}
    paper = injection_coefficient(next_lr=1e-3, step=500, scale="injection", **kw)
    replay = injection_coefficient(next_lr=1e-3, step=500, **kw)
    assert replay == pytest.approx(paper, rel=1e-12)
    early = injection_coefficient(next_lr=1e-3, step=1, **kw)
    assert abs(early) > 5 * abs(
        injection_coefficient(next_lr=1e-3, step=1, scale="injection", **kw)
    )
    decaying = injection_coefficient(next_lr=0.9e-3, step=500, **kw)
    assert decaying < paper < 0  # both negative: m loses (1/β - 1) of e's worth, more if slower
    sgd = injection_coefficient(lr=0.1, next_lr=0.1, beta1=0.5, step=7, bias_correction=False)
    assert sgd == pytest.approx((1 - 1 / 0.5) / 0.1)
    with pytest.raises(ValueError, match="injection_scale must be one of"):
        injection_coefficient(lr=1.0, next_lr=1.0, beta1=0.9, step=1, scale="later")  # type: ignore[arg-type]


def _linear_problem(n: int = 32) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return torch.randn(n, 16, generator=gen) * 0.1, torch.randn(n, 16, generator=gen)


@pytest.mark.parametrize(
    ("ours", "ref", "kw"),
    [
        (MasterWeightAdamW, torch.optim.AdamW, {"betas": (0.9, 0.99), "weight_decay": 0.05}),
        (
            MasterWeightSGD,
            torch.optim.SGD,
            {"momentum": 0.8, "weight_decay": 0.01, "dampening": 0.1},
        ),
    ],
)
def test_master_weights_follow_torch_optim_exactly(ours: type, ref: type, kw: dict) -> None:
    """With a constant gradient (a linear loss) the master copy must equal torch's iterate
    (up to float rounding: the denominator's bias correction is moved into the step size)."""
    w0, grad = _linear_problem()
    a, b = nn.Parameter(w0.clone()), nn.Parameter(w0.clone())
    opt_a = ours([a], lr=3e-3, fmt="fp8", **kw)
    opt_b = ref([b], lr=3e-3, **kw)
    for _ in range(25):
        a.grad, b.grad = grad.clone(), grad.clone()
        opt_a.step()
        opt_b.step()
    torch.testing.assert_close(opt_a.state[a]["master"], b.detach(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(opt_a.dequantized(a), QuantFormat("fp8").roundtrip(b.detach()))


def test_eco_tracks_master_weights_where_naive_removal_stalls() -> None:
    """Constant gradients, updates far below the FP8 grid step: naive removal never moves, ECO
    follows the AdamW trajectory to within a few grid steps (its constant-radius neighbourhood)."""
    w0, grad = _linear_problem()
    lr, steps = 2e-4, 300
    ref = nn.Parameter(w0.clone())
    opt_ref = torch.optim.AdamW([ref], lr=lr, betas=(0.9, 0.99), weight_decay=0.0)
    eco_p, naive_p = nn.Parameter(w0.clone()), nn.Parameter(w0.clone())
    eco = ECOAdamW([eco_p], lr=lr, betas=(0.9, 0.99), fmt="fp8")
    naive = ECOAdamW([naive_p], lr=lr, betas=(0.9, 0.99), fmt="fp8", error_feedback=False)
    start = QuantFormat("fp8").roundtrip(w0)
    for _ in range(steps):
        for p, o in ((ref, opt_ref), (eco_p, eco), (naive_p, naive)):
            p.grad = grad.clone()
            o.step()
    moved = (ref.detach() - w0).abs()
    assert moved.min() > 0.9 * lr * steps  # AdamW moves ~lr per step per weight
    # naive removal: updates below half a grid step vanish; only the amax element (which sets
    # the scale and is never rounded) and the grid it rescales move
    naive_err = (naive.dequantized(naive_p) - ref.detach()).abs()
    assert naive_err.mean() > 0.8 * moved.mean()
    # ECO: within β/(1−β) = 9 local grid steps of AdamW (e4m3 step ≤ 2^-3 |w|)
    grid = torch.maximum(start.abs(), ref.detach().abs()) * 2.0**-3
    eco_err = (eco.dequantized(eco_p) - ref.detach()).abs()
    assert (eco_err / grid).max() <= 9.0
    assert eco_err.mean() < 0.6 * naive_err.mean()


def _quadratic(lr: float, error_feedback: bool, steps: int = 400) -> float:
    gen = torch.Generator().manual_seed(0)
    n = 32
    target = torch.rand(n, generator=gen) * 10 - 5
    target[0] = 7.0  # pins the per-tensor INT4 scale to 1: grid step 1
    curv = torch.rand(n, generator=gen) + 0.5
    w = nn.Parameter(torch.zeros(n))
    w.data[0] = 7.0
    opt = ECOSGD(
        [w], lr=lr, momentum=0.9, fmt="int4", group_size=None, error_feedback=error_feedback
    )
    for _ in range(steps):
        w.grad = curv * (w.detach() - target)
        opt.step()
    return float((opt.dequantized(w) - target).abs().mean())


def test_quadratic_eco_neighbourhood_is_lr_independent_naive_error_grows_like_inverse_lr() -> None:
    lrs = (0.1, 0.03, 0.01)
    eco = [_quadratic(lr, True) for lr in lrs]
    naive = [_quadratic(lr, False) for lr in lrs]
    # naive: stalls where lr·a·|w − w*|/(1 − β) < Δ/2, i.e. error ≈ Δ(1−β)/(2 lr a): ∝ 1/lr
    assert naive[1] > 2.0 * naive[0]
    assert naive[2] > 2.0 * naive[1]
    # ECO: a neighbourhood of radius O(Δ) = O(1) whatever the learning rate
    assert max(eco) < 0.5
    assert max(eco) < 1.5 * min(eco)
    assert eco[-1] < naive[-1] / 4


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))


def _live_tensors() -> list[torch.Tensor]:
    gc.collect()
    with warnings.catch_warnings():  # gc.get_objects() also sees deprecated torch aliases
        warnings.simplefilter("ignore", FutureWarning)
        return [
            o
            for o in gc.get_objects()
            if isinstance(o, torch.Tensor) and not isinstance(o, QuantizedWeight)
        ]


def test_no_fp32_copy_of_a_quantized_weight_survives_a_step_and_memory_matches() -> None:
    earlier = {id(t) for t in _live_tensors()}  # other tests' tensors are not this one's copies
    model = _model()
    shapes = {name: p.shape for name, p in model.named_parameters()}
    n = sum(p.numel() for p in model.parameters())
    opt = ECOAdamW(model, lr=1e-3, fmt="fp8", quantize_all=True)
    params = list(model.parameters())
    assert all(isinstance(p, QuantizedWeight) for p in params)
    model(torch.randn(5, 8)).square().mean().backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    assert sum(p.numel() for p in model.parameters()) == n  # the logical sizes, whole
    assert all("master" not in opt.state[p] for p in params)
    alive = [t for t in _live_tensors() if id(t) not in earlier]
    for p, shape in zip(params, shapes.values(), strict=True):
        same_size_fp32 = [
            o for o in alive if o.dtype == torch.float32 and o.numel() == shape.numel()
        ]
        held = {id(opt.state[p]["exp_avg"]), id(opt.state[p]["exp_avg_sq"])}
        extra = [o for o in same_size_fp32 if id(o) not in held]
        assert not extra, f"an fp32 copy of a {tuple(shape)} weight is alive"
    mem = static_memory(params, opt)
    assert mem.n_params == n
    assert mem.master == 0
    assert mem.weights == n * 1 + 4 * len(params)  # fp8 codes + one fp32 scale per tensor
    assert mem.optimizer_states == 8 * n + 4 * len(params)  # m, v + step counters
    master_model = _model()
    master = MasterWeightAdamW(master_model, lr=1e-3, fmt="fp8", quantize_all=True)
    m2 = static_memory(master_model.parameters(), master)
    assert m2.master == 4 * n
    assert m2.weights == mem.weights
    plain_model = _model()
    plain = torch.optim.AdamW(plain_model.parameters())
    for p in plain_model.parameters():
        p.grad = torch.ones_like(p)
    plain.step()
    m3 = static_memory(plain_model.parameters(), plain)
    assert m3.weights == 4 * n
    assert m3.master == 0


def test_roles_keep_biases_in_float32_and_int4_groups_count_their_scales() -> None:
    lin = nn.Linear(32, 6)
    before = lin.weight.detach().clone()
    opt = ECOAdamW(lin, fmt="int4", group_size=8)
    assert isinstance(lin.weight, QuantizedWeight)
    assert type(lin.bias) is nn.Parameter  # a bias stays float32 by default
    mem = static_memory([lin.weight], opt)
    assert mem.weights == 32 * 6 // 2 + 4 * (32 * 6 // 8)
    out = lin(torch.eye(32)) - lin.bias.detach()  # no hook: the forward reads the codes
    torch.testing.assert_close(out.T, QuantFormat("int4", 8).roundtrip(before))


def _train_steps(
    model: nn.Module, opt: torch.optim.Optimizer, steps: int, seed: int
) -> list[float]:
    gen = torch.Generator().manual_seed(seed)
    losses = []
    for _ in range(steps):
        x = torch.randn(6, 8, generator=gen)
        loss = (model(x) - 1.0).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("cls", [ECOAdamW, MasterWeightAdamW, ECOSGD])
@pytest.mark.parametrize("whole_model", [True, False])
def test_state_dict_round_trip_gives_bit_identical_next_steps(cls: type, whole_model: bool) -> None:
    kw = {"fmt": "int4", "group_size": None, "rounding": "sr", "seed": 3, "quantize_all": True}
    if not whole_model:
        kw.pop("quantize_all")

    def build() -> tuple[nn.Module, torch.optim.Optimizer]:
        model = _model()
        return model, cls(model if whole_model else model.parameters(), lr=1e-2, **kw)

    model, opt = build()
    _train_steps(model, opt, 3, seed=0)
    buf = io.BytesIO()
    torch.save({"model": model.state_dict(), "opt": opt.state_dict()}, buf)
    buf.seek(0)
    loaded = torch.load(buf, weights_only=True)  # plain tensors/str/int: safe loading works
    model2, opt2 = build()  # fresh weights until the state is loaded
    model2.load_state_dict(loaded["model"])
    opt2.load_state_dict(loaded["opt"])
    a = _train_steps(model, opt, 2, seed=1)
    b = _train_steps(model2, opt2, 2, seed=1)
    assert a == b
    for p, q in zip(model.parameters(), model2.parameters(), strict=True):
        assert torch.equal(opt.qtensor(p).data, opt2.qtensor(q).data)
        assert torch.equal(opt.qtensor(p).scale, opt2.qtensor(q).scale)
        assert opt2.qtensor(q).scale.dtype == torch.float32


def test_bf16_parameters_keep_fp32_state_and_scales() -> None:
    p = nn.Parameter(torch.randn(4, 8, dtype=torch.bfloat16))
    opt = ECOAdamW([p], fmt="fp8")
    p.grad = torch.randn(4, 8, dtype=torch.bfloat16)
    opt.step()
    assert opt.state[p]["exp_avg"].dtype == torch.float32
    assert p.dtype == torch.bfloat16
    torch.testing.assert_close(p.detach().float(), opt.dequantized(p), rtol=1e-2, atol=0)
    opt.load_state_dict(opt.state_dict())
    assert opt.state[p]["qscale"].dtype == torch.float32
    model = nn.Linear(8, 4).to(torch.bfloat16)
    ECOAdamW(model, fmt="fp8")
    assert model.weight.dtype == torch.bfloat16
    assert model(torch.randn(2, 8, dtype=torch.bfloat16)).dtype == torch.bfloat16


def test_full_precision_group_is_left_unquantized() -> None:
    a, b = nn.Parameter(torch.randn(4, 8)), nn.Parameter(torch.randn(3))
    opt = ECOAdamW([{"params": [a]}, {"params": [b], "fmt": None}], lr=0.1)
    b0 = b.detach().clone()
    a.grad, b.grad = torch.ones(4, 8), torch.ones(3)
    opt.step()
    assert "qdata" in opt.state[a]
    assert "qdata" not in opt.state[b]
    torch.testing.assert_close(b.detach(), b0 - 0.1, atol=1e-4, rtol=0)


def test_bad_input_raises_clear_errors() -> None:
    with pytest.raises(TypeError, match=r"unsupported parameter dtype torch\.float64"):
        ECOAdamW([nn.Parameter(torch.randn(4, 8, dtype=torch.float64))])
    with pytest.raises(ValueError, match="does not divide the last dimension 10"):
        ECOAdamW([nn.Parameter(torch.randn(4, 10))], fmt="int4", group_size=4)
    with pytest.raises(ValueError, match="unsupported weight format"):
        ECOAdamW([nn.Parameter(torch.randn(4))], fmt="nf4")
    with pytest.raises(ValueError, match="momentum"):
        ECOSGD([nn.Parameter(torch.randn(4))], momentum=0.0)
    with pytest.raises(ValueError, match="betas"):
        ECOAdamW([nn.Parameter(torch.randn(4))], betas=(0.0, 0.99))
    with pytest.raises(ValueError, match="learning rate"):
        ECOAdamW([nn.Parameter(torch.randn(4))], lr=-1e-3)
    with pytest.raises(ValueError, match="quantize_all decides the groups by role"):
        ECOAdamW([nn.Parameter(torch.randn(4, 8))], quantize_all=True)
    model = _model()
    ECOAdamW(model)
    with pytest.raises(ValueError, match="already a QuantizedWeight"):
        ECOAdamW(model)
    p = nn.Parameter(torch.randn(4, 8))
    q = nn.Parameter(torch.randn(4, 8))
    opt = ECOAdamW([p, q], fmt="fp8")
    before = [opt.state[t]["qdata"].clone() for t in (p, q)]
    p.grad = torch.ones(4, 8)
    q.grad = torch.ones(4, 8)
    q.grad[1, 2] = float("nan")
    with pytest.raises(NonFiniteGradientError, match=r"shape \(4, 8\) at index 1"):
        opt.step()
    assert all(torch.equal(opt.state[t]["qdata"], b) for t, b in zip((p, q), before, strict=True))


@pytest.mark.parametrize("fmt", ["fp8", "int4"])
def test_sr_steps_equal_a_reference_update_with_a_fresh_generator_per_parameter_and_step(
    fmt: str,
) -> None:
    """The step (one reused generator per device, no host reads of the step counter) gives
    bit-identical weights and moments to a plain reference: AdamW + ECO's injection, with
    stochastic rounding drawn from a new generator seeded ``sr_seed(seed, index, step)``."""
    from icml26.eco.optim import sr_seed

    seed, lr, b1, b2, eps, wd = 7, 0.01, 0.9, 0.95, 1e-8, 0.05
    gen = torch.Generator().manual_seed(0)
    shapes = [(8, 16), (16, 16), (4, 32)]
    w0 = [torch.randn(s, generator=gen) for s in shapes]
    grads = [[torch.randn(s, generator=gen) for s in shapes] for _ in range(4)]
    params = [nn.Parameter(w.clone()) for w in w0]
    opt = ECOAdamW(
        params,
        lr=lr,
        betas=(b1, b2),
        eps=eps,
        weight_decay=wd,
        fmt=fmt,
        group_size=16 if fmt == "int4" else None,
        rounding="sr",
        seed=seed,
        foreach=False,  # the per-parameter step (the batched one is held to it elsewhere)
    )
    qf = QuantFormat(fmt, 16 if fmt == "int4" else None, "sr")

    def fresh(index: int, step: int) -> torch.Generator:
        return torch.Generator().manual_seed(sr_seed(seed, index, step))

    w = [qf.dequantize(qf.quantize(x, generator=fresh(i, 0))) for i, x in enumerate(w0)]
    m = [torch.zeros(s) for s in shapes]
    v = [torch.zeros(s) for s in shapes]
    for t, step_grads in enumerate(grads, start=1):
        opt.zero_grad()
        for p, g in zip(params, step_grads, strict=True):
            p.grad = g.clone()
        opt.step()
        for i, g in enumerate(step_grads):
            m[i].lerp_(g, 1.0 - b1)
            v[i].mul_(b2).addcmul_(g, g, value=1.0 - b2)
            bc1, r2 = 1.0 - b1**t, math.sqrt(1.0 - b2**t)
            denom = v[i].sqrt().add_(eps * r2)  # √(1-β2^t) (√v̂ + ε)
            target = torch.addcdiv(w[i] * (1.0 - lr * wd), m[i], denom, value=-lr * r2 / bc1)
            w[i] = qf.dequantize(qf.quantize(target, generator=fresh(i, t)))
            # replay at the same rate; at t = 1 nothing earlier to take out
            held = (1.0 - lr * wd) * bc1 / lr if t > 1 else 0.0
            coef = held - (1.0 - lr * wd) * (1.0 - b1 ** (t + 1)) / lr / b1
            m[i].addcmul_(denom, target - w[i], value=coef / r2)
            assert torch.equal(opt.dequantized(params[i]), w[i])
            assert torch.equal(opt.state[params[i]]["exp_avg"], m[i])
            assert torch.equal(opt.state[params[i]]["exp_avg_sq"], v[i])
            assert float(opt.state[params[i]]["step"]) == t

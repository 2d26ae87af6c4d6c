"""ECO's injection against master weights on trajectories where it must be exact, rates of
0, changing rates (the warning, ``follow``), the INT4 default grouping, named errors."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

from icml26.eco import ECOAdamW, MasterWeightAdamW

# one element pins the per-tensor FP8 scale at 1 (448 is e4m3's largest value; its gradient
# is 0, so Adam never moves it); the others live in [8, 16), where the e4m3 grid step is 1
W0 = [448.0, 15.0, 8.0, 14.0]
GRAD = [0.0, 1.0, -1.0, 1.0]  # constant: every Adam step moves an element by exactly lr
# first step 0.3 grid steps, then whole grid steps (the error e = ±0.3 stays constant, the
# case where ECO's e_{t-1} ≈ e_t is exact), then 0.3 again (naive removal loses it)
RATES = [0.3, 1.0, 1.0, 1.0, 1.0, 1.0, 0.3]


def _trajectory(make: type, follow: bool = True, **kw: object) -> list[list[float]]:
    p = nn.Parameter(torch.tensor([W0]))
    opt = make([p], lr=1.0, betas=(0.9, 0.999), eps=1e-12, fmt="fp8", **kw)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: RATES[min(s, len(RATES) - 1)])
    if follow and isinstance(opt, ECOAdamW):
        opt.follow(sched)
    out = []
    for _ in RATES:
        p.grad = torch.tensor([GRAD])
        opt.step()
        sched.step()
        out.append(opt.dequantized(p)[0].tolist())
    return out


@pytest.mark.parametrize("foreach", [True, False])
def test_eco_stores_the_master_weight_trajectory_when_the_error_is_constant(
    foreach: bool,
) -> None:
    """Independent of the injection formula: with the same gradients, a fixed scale and a
    constant quantization error, ECO's stored weights must equal those master weights store
    at every step (the master iterates are 15 → 14.7 → 13.7 → … → 9.4). A first injection
    that also takes out a (non-existent) earlier one breaks this at step 2; naive removal
    ends a grid step off."""
    master = _trajectory(MasterWeightAdamW, foreach=foreach)
    eco = _trajectory(ECOAdamW, foreach=foreach)
    naive = _trajectory(ECOAdamW, error_feedback=False, foreach=foreach)
    assert master[-1] == [448.0, 9.0, 14.0, 8.0]  # 15 - 5.6, 8 + 5.6, 14 - 5.6, rounded
    assert eco == master
    assert naive[-1] != master[-1]


def test_a_rate_change_without_next_lr_replays_at_the_wrong_scale_and_warns_once() -> None:
    master = _trajectory(MasterWeightAdamW)
    with pytest.warns(UserWarning, match="learning rate changed") as record:
        eco = _trajectory(ECOAdamW, follow=False)
    assert sum("learning rate changed" in str(w.message) for w in record) == 1
    assert eco != master  # the warning is about a real difference


def test_follow_restores_the_scheduler_and_the_rates() -> None:
    p = nn.Parameter(torch.randn(4, 8))
    opt = ECOAdamW([p], lr=1e-2)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0 / (s + 1))
    opt.follow(sched)
    for s in range(3):
        p.grad = torch.randn(4, 8)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            opt.step()
        assert opt.param_groups[0]["lr"] == pytest.approx(1e-2 / (s + 1))
        assert sched.last_epoch == s
        sched.step()
    one_cycle = ECOAdamW([q := nn.Parameter(torch.randn(4, 8))], lr=1e-2)
    cycle = torch.optim.lr_scheduler.OneCycleLR(one_cycle, max_lr=1e-2, total_steps=3)
    one_cycle.follow(cycle)
    for _ in range(4):  # past its end OneCycleLR cannot be read ahead (it raises): no next_lr
        q.grad = torch.randn(4, 8)
        one_cycle.step()
        if cycle.last_epoch < 3:
            cycle.step()
    with pytest.raises(TypeError, match="built on this optimizer"):
        ECOAdamW([nn.Parameter(torch.randn(4, 8))]).follow(sched)
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt)
    with pytest.raises(TypeError, match="ReduceLROnPlateau"):
        opt.follow(plateau)


@pytest.mark.parametrize("foreach", [True, False])
def test_a_warm_up_from_zero_moves_nothing_and_injects_nothing(foreach: bool) -> None:
    """A schedule starting at 0 (``LambdaLR(opt, lambda s: s / 10)``) used to divide by the
    rate; now the step at 0 leaves the weights and the injection alone, and the run goes on."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = ECOAdamW(model, lr=1e-2, foreach=foreach)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: s / 10)
    opt.follow(sched)
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    for step in range(4):
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        sched.step()
        state = model.state_dict()
        if step == 0:
            assert all(torch.equal(state[k], before[k]) for k in before)
        assert all(torch.isfinite(v).all() for v in state.values())
        for s in opt.state.values():
            assert torch.isfinite(s["exp_avg"]).all()
    assert any(not torch.equal(state[k], before[k]) for k in before)


def test_a_broken_schedule_is_refused_before_any_state_changes() -> None:
    p = nn.Parameter(torch.randn(4, 8))
    opt = ECOAdamW([p], lr=1e-2)
    p.grad = torch.randn(4, 8)
    opt.param_groups[0]["lr"] = -1e-3
    with pytest.raises(ValueError, match="param group 0: lr must be a finite float >= 0"):
        opt.step()
    assert opt.state[p].get("_step", 0) == 0
    opt.param_groups[0]["lr"] = 1e-3
    opt.param_groups[0]["next_lr"] = float("nan")
    with pytest.raises(ValueError, match=r"next_lr .*check the learning-rate schedule"):
        opt.step()


def test_int4_defaults_to_groups_of_16_and_per_tensor_only_when_asked() -> None:
    p = nn.Parameter(torch.randn(4, 32))
    auto = ECOAdamW([p], fmt="int4")
    assert auto.qtensor(auto.param_groups[0]["params"][0]).scale.numel() == 4 * 32 // 16
    q = nn.Parameter(torch.randn(4, 32))
    tensor = ECOAdamW([q], fmt="int4", group_size=None)
    assert tensor.qtensor(q).scale.numel() == 1
    r = nn.Parameter(torch.randn(4, 32))
    fp8 = ECOAdamW([r], fmt="fp8")
    assert fp8.qtensor(r).scale.numel() == 1


def test_nan_weights_are_refused_naming_the_parameter() -> None:
    model = nn.Sequential(nn.Linear(8, 16), nn.Linear(16, 4))
    with torch.no_grad():
        model[1].weight[0, 0] = float("nan")
    with pytest.raises(ValueError, match=r"parameter '1\.weight'.*NaN"):
        ECOAdamW(model)
    p = nn.Parameter(torch.full((4, 8), float("inf")))
    with pytest.raises(ValueError, match=r"parameter 0 \(shape \(4, 8\)\).*NaN"):
        ECOAdamW([p])

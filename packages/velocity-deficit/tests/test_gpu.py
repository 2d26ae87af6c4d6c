"""Device consistency on CUDA (skipped without one; ``nox -s gpu`` runs them on a GPU machine),
and the ``device`` setting's validation (runs everywhere).

The same weights, noise and data on the CPU and on CUDA: every tensor result must live on
CUDA and equal the CPU's. Networks are float32 (different summation orders): ``rtol=1e-4`` for
forward passes and ODE solves, ``1e-3`` after tens of Adam steps. The GMM oracle is float64:
``1e-10``. Noise and batch indices come from CPU generators and are moved, as the trainer does,
so both devices see the same draws. NumPy appears only at the metric boundary (``log_prob``,
the FD features) and for POT's assignment (``ot_coupling``), whose permutation comes back to
the inputs' device.
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import torch

from icml26.shared.cli import main
from icml26.velocity_deficit.config import BenchConfig, RunConfig
from icml26.velocity_deficit.diagnostics import velocity_ratio
from icml26.velocity_deficit.flow import fm_loss, linear_path, mafm_loss, ot_coupling
from icml26.velocity_deficit.gmm import random_gmm
from icml26.velocity_deficit.metrics import FeatureClassifier
from icml26.velocity_deficit.model import VelocityMLP
from icml26.velocity_deficit.samplers import integrate
from icml26.velocity_deficit.ssc import ScaleSchedule, corrected
from icml26.velocity_deficit.train import TrainSettings, train_velocity_model

gpu = pytest.mark.gpu
no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the machine without CUDA")
RTOL = 1e-4


def _on(t: torch.Tensor, device: torch.device) -> None:
    assert t.device.type == device.type, f"tensor on {t.device}, expected {device}"


def _close(a: torch.Tensor, b: torch.Tensor, rtol: float = RTOL) -> None:
    a, b = a.detach().cpu().double(), b.detach().double()
    torch.testing.assert_close(a, b, rtol=rtol, atol=rtol * (float(b.abs().max()) or 1.0))


def _model(n_classes: int = 0) -> VelocityMLP:
    torch.manual_seed(0)
    model = VelocityMLP(3, 32, 2, n_classes).eval()
    with torch.no_grad():  # a non-zero skip gate, so that path is exercised too
        model.skip_gate[-1].bias.fill_(0.3)  # type: ignore[index]
    return model


def _x(n: int = 40, d: int = 3, seed: int = 1) -> torch.Tensor:
    return torch.randn(n, d, generator=torch.Generator().manual_seed(seed))


@gpu
@pytest.mark.parametrize("n_classes", [0, 4])
def test_velocity_model_on_cuda_matches_cpu(n_classes: int, cuda_device: torch.device) -> None:
    cpu = _model(n_classes)
    dev = copy.deepcopy(cpu).to(cuda_device)
    x, t = _x(), torch.rand(40, generator=torch.Generator().manual_seed(2))
    y = torch.arange(40) % 4 if n_classes else None
    with torch.no_grad():
        want = cpu(x, t, y)
        got = dev(x.to(cuda_device), t.to(cuda_device), None if y is None else y.to(cuda_device))
        got_scalar_t = dev(x.to(cuda_device), 0.25, None if y is None else y.to(cuda_device))
    _on(got, cuda_device)
    _close(got, want)
    _close(got_scalar_t, cpu(x, 0.25, y).detach())


@gpu
def test_flow_losses_and_ot_coupling_on_cuda_match_cpu(cuda_device: torch.device) -> None:
    x0, x1 = _x(seed=3), _x(seed=4)
    t = torch.rand(40, generator=torch.Generator().manual_seed(5))
    xt, u = linear_path(x0, x1, t)
    xg, ug = linear_path(x0.to(cuda_device), x1.to(cuda_device), t.to(cuda_device))
    _on(xg, cuda_device)
    _close(xg, xt)
    v = 0.8 * u
    assert float(fm_loss(v.to(cuda_device), ug)) == pytest.approx(float(fm_loss(v, u)), rel=RTOL)
    for lam, power in ((1.0, 1.0), (0.5, 2.0), (2.0, 0.0)):
        lg = mafm_loss(v.to(cuda_device), ug, t.to(cuda_device), lam=lam, power=power)
        _on(lg, cuda_device)
        assert float(lg) == pytest.approx(float(mafm_loss(v, u, t, lam=lam, power=power)), rel=RTOL)
    paired = ot_coupling(x0.to(cuda_device), x1.to(cuda_device))
    _on(paired, cuda_device)
    assert torch.equal(paired.cpu(), ot_coupling(x0, x1))  # same inputs, same assignment


@gpu
@pytest.mark.parametrize("method", ["euler", "heun", "midpoint"])
def test_sampling_on_cuda_matches_cpu(method: str, cuda_device: torch.device) -> None:
    cpu = _model()
    dev = copy.deepcopy(cpu).to(cuda_device)
    x0 = _x(seed=6)
    schedule = ScaleSchedule("power", alpha=0.2, beta=2.0)
    for wrap in (lambda f: f, lambda f: corrected(f, schedule)):
        got = integrate(wrap(dev), x0.to(cuda_device), steps=8, method=method)  # type: ignore[arg-type]
        want = integrate(wrap(cpu), x0, steps=8, method=method)  # type: ignore[arg-type]
        _on(got, cuda_device)  # type: ignore[arg-type]
        _close(got, want)  # type: ignore[arg-type]


@gpu
def test_gmm_oracle_on_cuda_matches_cpu(cuda_device: torch.device) -> None:
    gmm = random_gmm(3, 5, seed=0)
    x = _x(seed=7).double()
    for t in (0.0, 0.3, 0.9):
        got = gmm.optimal_velocity(x.to(cuda_device), t)
        _on(got, cuda_device)
        _close(got, gmm.optimal_velocity(x, t), rtol=1e-10)
    per_row_t = torch.linspace(0, 1, 40, dtype=torch.float64)
    _close(
        gmm.optimal_velocity(x.to(cuda_device), per_row_t.to(cuda_device)),
        gmm.optimal_velocity(x, per_row_t),
        rtol=1e-10,
    )
    lp = gmm.log_prob(x.to(cuda_device))  # a CUDA tensor in, NumPy (a metric) out
    np.testing.assert_allclose(lp, gmm.log_prob(x.numpy()), rtol=1e-10)


@gpu
def test_velocity_ratio_on_cuda_matches_cpu(cuda_device: torch.device) -> None:
    cpu = _model()
    dev = copy.deepcopy(cpu).to(cuda_device)
    data = _x(200, seed=8)
    times = (0.0, 0.5, 0.9)
    got = velocity_ratio(
        dev, data.to(cuda_device), times, n=64, generator=torch.Generator().manual_seed(0)
    )
    want = velocity_ratio(cpu, data, times, n=64, generator=torch.Generator().manual_seed(0))
    assert got.keys() == want.keys()
    for t in times:
        assert got[t] == pytest.approx(want[t], rel=RTOL)


@gpu
@pytest.mark.parametrize(
    "settings",
    [
        TrainSettings(steps=50, batch_size=32, width=32),
        TrainSettings(steps=50, batch_size=32, width=32, objective="mafm", coupling="ot"),
    ],
    ids=["fm", "mafm_ot"],
)
def test_training_on_cuda_matches_cpu(settings: TrainSettings, cuda_device: torch.device) -> None:
    x = _x(120, seed=9).numpy()
    y = np.arange(120) % 3
    ema_g, losses_g = train_velocity_model(x, y, settings, seed=0, device=str(cuda_device))
    ema_c, losses_c = train_velocity_model(x, y, settings, seed=0, device="cpu")
    _on(next(ema_g.parameters()), cuda_device)
    assert losses_g == pytest.approx(losses_c, rel=1e-3)
    xs, ts, ys = torch.as_tensor(x[:10]), torch.full((10,), 0.5), torch.as_tensor(y[:10])
    with torch.no_grad():
        _close(
            ema_g(xs.to(cuda_device), ts.to(cuda_device), ys.to(cuda_device)),
            ema_c(xs, ts, ys),
            rtol=1e-3,
        )


@gpu
def test_training_resumes_on_cuda(cuda_device: torch.device, tmp_path: Path) -> None:
    """A run killed after its first checkpoint resumes on CUDA to the uninterrupted weights."""
    from icml26.shared import Checkpoints

    x = _x(120, seed=11).numpy()
    s = TrainSettings(steps=20, batch_size=16, width=8, depth=1, checkpoint_every=10)
    straight, _ = train_velocity_model(x, None, s, seed=1, device=str(cuda_device))
    ck = Checkpoints(tmp_path / "ck")
    train_velocity_model(x, None, s, seed=1, device=str(cuda_device), checkpoints=ck)
    ck.path(20).unlink()  # as if killed after step 10
    resumed, _ = train_velocity_model(x, None, s, seed=1, device=str(cuda_device), checkpoints=ck)
    for a, b in zip(straight.state_dict().values(), resumed.state_dict().values(), strict=True):
        _on(b, cuda_device)
        torch.testing.assert_close(b, a)


@gpu
def test_feature_classifier_on_cuda_matches_cpu(cuda_device: torch.device) -> None:
    x = _x(150, seed=10).numpy()
    y = (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0)
    torch.manual_seed(0)
    cpu = FeatureClassifier(3, 3, width=32, feat_dim=8)
    dev = copy.deepcopy(cpu).to(cuda_device)
    kw = {"steps": 30, "batch_size": 32, "x_val": x[:40], "y_val": y[:40]}
    cpu.fit(x, y, **kw)  # type: ignore[arg-type]
    dev.fit(x, y, **kw)  # type: ignore[arg-type]
    f_cpu = cpu.features(x[:20])
    np.testing.assert_allclose(
        dev.features(x[:20]), f_cpu, rtol=1e-3, atol=1e-3 * np.abs(f_cpu).max()
    )
    from_tensor = dev.features(torch.as_tensor(x[:20]).to(cuda_device))  # a CUDA tensor is fine
    np.testing.assert_allclose(from_tensor, dev.features(x[:20]), rtol=1e-6)


@gpu
def test_configs_accept_cuda(cuda_device: torch.device) -> None:
    assert RunConfig(device="cuda").device == "cuda"
    assert BenchConfig(device="cuda:0").device == "cuda:0"


def test_device_setting_is_validated() -> None:
    for bad in ("gpu", "cuda:x", "cudaa"):
        with pytest.raises(ValueError, match="device must be 'cpu', 'cuda' or 'cuda:N'"):
            RunConfig(device=bad)


@no_cuda
def test_cuda_without_cuda_is_a_usage_error_before_anything_is_written(tmp_path: Path) -> None:
    for cls in (RunConfig, BenchConfig):
        with pytest.raises(ValueError, match="no CUDA device is visible"):
            cls(device="cuda")
    out = tmp_path / "run"
    args = [
        "run",
        "velocity-deficit",
        "--profile",
        "smoke",
        "--set",
        "device=cuda",
        "--out",
        str(out),
    ]
    assert main(args) == 2
    assert not out.exists()

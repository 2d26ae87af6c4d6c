"""Device consistency on CUDA (skipped without one; ``nox -s gpu`` runs them on a GPU machine).

Each posterior is fitted twice on the same network and data, once on the CPU and once on
CUDA. On CUDA every output tensor must live on CUDA (no hidden ``.numpy()`` of a CUDA tensor,
no CPU-made tensor mixed in), and the results must equal the CPU's. The networks run in
float32 on both devices (different summation orders: relative differences ~1e-6 in the
features), the posterior algebra in float64, so predictions agree to ``rtol=1e-4``.

The type-II ML search picks (α, σ²) on a grid whose last spacing is ~4e-4 in log space, so a
1e-6 perturbation can move it by a grid point: the hyperparameters are compared at
``rtol=1e-2``, and the predictions are compared with the CUDA fit's hyperparameters given to
the CPU fit, which makes the two fits the same computation.
"""

from __future__ import annotations

import copy

import pytest
import torch

from icml26.bll_ntk.bll import BLL, NTKBLL
from icml26.bll_ntk.data import ClassificationTask, RegressionSplit
from icml26.bll_ntk.evaluate import MethodSettings, evaluate_classification, evaluate_regression
from icml26.bll_ntk.glm import predictive_probs
from icml26.bll_ntk.jacobians import jacobian, ntk_projection
from icml26.bll_ntk.laplace import LastLayerLaplace, LinearisedLaplace
from icml26.bll_ntk.network import LastLayerModel, make_mlp
from icml26.bll_ntk.train import TrainSpec, train_classifier, train_regressor

pytestmark = pytest.mark.gpu

RTOL = 1e-4  # float32 networks on two devices, float64 posterior algebra
HYPER_RTOL = 1e-2  # a grid step of the evidence search (see the module docstring)


def _close(a: torch.Tensor, b: torch.Tensor, rtol: float = RTOL) -> None:
    """``a`` (from CUDA) equals ``b`` (CPU) to ``rtol`` relative to the scale of ``b``."""
    a = a.detach().cpu().double()
    b = b.detach().double()
    scale = float(b.abs().max()) or 1.0
    torch.testing.assert_close(a, b, rtol=rtol, atol=rtol * scale)


def _on(t: torch.Tensor, device: torch.device) -> None:
    assert t.device.type == device.type, f"output on {t.device}, expected {device}"


def _regression(n: int = 60, d_in: int = 3, d_out: int = 1, seed: int = 0):  # type: ignore[no-untyped-def]
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d_in, generator=g)
    y = torch.sin(x @ torch.randn(d_in, d_out, generator=g)) + 0.1 * torch.randn(
        n, d_out, generator=g
    )
    torch.manual_seed(seed)
    model = make_mlp(d_in, d_out, (16, 8))
    train_regressor(model, x, y, TrainSpec(steps=40, lr=1e-2, batch_size=32), seed=seed)
    return model, x, y


def _classification(n: int = 80, d_in: int = 4, classes: int = 3, seed: int = 0):  # type: ignore[no-untyped-def]
    g = torch.Generator().manual_seed(seed)
    centres = 2.0 * torch.randn(classes, d_in, generator=g)
    y = torch.arange(n) % classes
    x = centres[y] + torch.randn(n, d_in, generator=g)
    torch.manual_seed(seed)
    model = make_mlp(d_in, classes, (12, 6))
    return model, x, y


def _pair(model: torch.nn.Module, device: torch.device) -> tuple[torch.nn.Module, torch.nn.Module]:
    """The same weights on the CPU and on ``device``."""
    return model, copy.deepcopy(model).to(device)


REGRESSION_POSTERIORS = {
    "bll": lambda m, **kw: BLL(m, **kw),
    "ntk_bll_shared": lambda m, **kw: NTKBLL(m, hyperparameters="bll", **kw),
    "ntk_bll_own": lambda m, **kw: NTKBLL(m, hyperparameters="own", **kw),
    "ntk_bll_sub": lambda m, **kw: NTKBLL(m, subsample=20, posterior_subsample=30, seed=3, **kw),
    "ll_laplace": lambda m, **kw: LastLayerLaplace(m, **kw),
    "lla": lambda m, **kw: LinearisedLaplace(m, chunk=16, **kw),
}


@pytest.mark.parametrize("name", sorted(REGRESSION_POSTERIORS))
def test_regression_posterior_on_cuda_matches_cpu(name: str, cuda_device: torch.device) -> None:
    model, x, y = _regression()
    cpu_model, gpu_model = _pair(model, cuda_device)
    make = REGRESSION_POSTERIORS[name]
    x_test = torch.randn(25, x.shape[1], generator=torch.Generator().manual_seed(9))

    gpu = make(gpu_model).fit(x.to(cuda_device), y.to(cuda_device))
    pred = gpu.predict(x_test.to(cuda_device))
    _on(pred.mean, cuda_device)
    _on(pred.var, cuda_device)
    assert torch.isfinite(pred.var).all()
    assert (pred.var >= 0).all()

    own = make(cpu_model).fit(x, y)  # the CPU's own type-II ML
    assert gpu.alpha_ == pytest.approx(own.alpha_, rel=HYPER_RTOL)
    assert gpu.noise_ == pytest.approx(own.noise_, rel=HYPER_RTOL)

    ref = make(cpu_model, alpha=gpu.alpha_, noise=gpu.noise_).fit(x, y).predict(x_test)
    _close(pred.mean, ref.mean)
    _close(pred.var, ref.var)
    assert pred.noise == pytest.approx(ref.noise, rel=1e-12)


def test_masked_multi_output_regression_on_cuda(cuda_device: torch.device) -> None:
    """The bandit's case: 3 outputs, one observed per row; mask and targets given on the CPU
    while the network and inputs are on CUDA (they are moved to the inputs' device)."""
    model, x, y = _regression(n=45, d_out=3)
    mask = torch.zeros(45, 3, dtype=torch.bool)
    mask[torch.arange(45), torch.arange(45) % 3] = True
    cpu_model, gpu_model = _pair(model, cuda_device)
    for make in (
        lambda m: NTKBLL(m, alpha=0.7, noise=0.05),
        lambda m: BLL(m, alpha=0.7, noise=0.05),
    ):
        gpu = make(gpu_model).fit(x.to(cuda_device), y, mask=mask)
        ref = make(cpu_model).fit(x, y, mask=mask)
        pred, want = gpu.predict(x.to(cuda_device)), ref.predict(x)
        _on(pred.mean, cuda_device)
        _close(pred.mean, want.mean)
        _close(pred.var, want.var)


@pytest.mark.parametrize("name", ["bll", "ntk_bll", "ll_laplace", "lla", "bll_refit"])
def test_classification_posterior_on_cuda_matches_cpu(name: str, cuda_device: torch.device) -> None:
    model, x, y = _classification()
    train_classifier(model, x, y, TrainSpec(steps=60, lr=1e-2, batch_size=40), seed=1)
    cpu_model, gpu_model = _pair(model, cuda_device)
    makers = {
        "bll": lambda m, **kw: BLL(m, likelihood="classification", **kw),
        "bll_refit": lambda m, **kw: BLL(m, likelihood="classification", refit=True, **kw),
        "ntk_bll": lambda m, **kw: NTKBLL(m, likelihood="classification", **kw),
        "ll_laplace": lambda m, **kw: LastLayerLaplace(m, likelihood="classification", **kw),
        "lla": lambda m, **kw: LinearisedLaplace(m, likelihood="classification", chunk=32, **kw),
    }
    make = makers[name]
    gpu = make(gpu_model).fit(x.to(cuda_device), y.to(cuda_device))
    pred = gpu.predict(x.to(cuda_device))
    _on(pred.probs, cuda_device)
    _on(pred.logit_var, cuda_device)
    torch.testing.assert_close(
        pred.probs.sum(1).cpu(), torch.ones(x.shape[0], dtype=pred.probs.dtype)
    )
    own = make(cpu_model).fit(x, y)
    if name != "bll_refit":  # the refit picks α from a fixed list (exact comparison below)
        assert gpu.alpha_ == pytest.approx(own.alpha_, rel=HYPER_RTOL)
    ref = make(cpu_model, alpha=gpu.alpha_).fit(x, y).predict(x)
    _close(pred.probs, ref.probs)
    _close(pred.logit_var, ref.logit_var)


def test_thompson_samples_on_cuda_match_cpu(cuda_device: torch.device) -> None:
    """A CPU generator with one seed gives the same posterior function samples on both."""
    model, x, y = _regression(d_out=2)
    cpu_model, gpu_model = _pair(model, cuda_device)
    gpu = NTKBLL(gpu_model, alpha=1.3, noise=0.02).fit(x.to(cuda_device), y.to(cuda_device))
    cpu = NTKBLL(cpu_model, alpha=1.3, noise=0.02).fit(x, y)
    s_gpu = gpu.sample_functions(x[:7].to(cuda_device), 5, torch.Generator().manual_seed(4))
    s_cpu = cpu.sample_functions(x[:7], 5, torch.Generator().manual_seed(4))
    _on(s_gpu, cuda_device)
    assert s_gpu.shape == (5, 7, 2)
    _close(s_gpu, s_cpu)


def test_jacobians_and_projection_on_cuda_match_cpu(cuda_device: torch.device) -> None:
    model, x, _ = _regression(d_out=2)
    cpu_model, gpu_model = _pair(model, cuda_device)
    cpu_net, gpu_net = LastLayerModel(cpu_model), LastLayerModel(gpu_model)
    xg = x.to(cuda_device)
    for part in ("all", "body", "head"):
        jg = jacobian(gpu_net, xg, part=part, chunk=16)
        _on(jg, cuda_device)
        _close(jg, jacobian(cpu_net, x, part=part, chunk=16))
    for sub in (None, 25):
        pg = ntk_projection(gpu_net, xg, subsample=sub, generator=torch.Generator().manual_seed(2))
        pc = ntk_projection(cpu_net, x, subsample=sub, generator=torch.Generator().manual_seed(2))
        _on(pg.M, cuda_device)
        _on(pg.prior_factor(), cuda_device)
        _close(pg.M, pc.M)
        assert pg.n_points == pc.n_points


def test_mc_predictive_on_cuda_matches_cpu(cuda_device: torch.device) -> None:
    g = torch.Generator().manual_seed(0)
    mean = torch.randn(6, 3, generator=g, dtype=torch.float64)
    a = torch.randn(6, 3, 3, generator=g, dtype=torch.float64)
    cov = a @ a.transpose(1, 2) + 0.1 * torch.eye(3, dtype=torch.float64)
    kw = {"method": "mc", "n_samples": 64}
    pg = predictive_probs(
        mean.to(cuda_device), cov.to(cuda_device), generator=torch.Generator().manual_seed(5), **kw
    )
    pc = predictive_probs(mean, cov, generator=torch.Generator().manual_seed(5), **kw)
    _on(pg, cuda_device)
    _close(pg, pc, rtol=1e-10)  # float64 throughout, the same normal draws


def test_training_on_cuda_matches_cpu(cuda_device: torch.device) -> None:
    """Mini-batch indices come from the CPU generator, so both devices see the same batches."""
    x, y = torch.randn(70, 2), torch.randn(70, 1)
    torch.manual_seed(0)
    model = make_mlp(2, 1, (8,))
    cpu_model, gpu_model = _pair(model, cuda_device)
    spec = TrainSpec(steps=20, lr=1e-2, batch_size=16)
    train_regressor(gpu_model, x.to(cuda_device), y.to(cuda_device), spec, seed=7)
    train_regressor(cpu_model, x, y, spec, seed=7)
    for pg, pc in zip(gpu_model.parameters(), cpu_model.parameters(), strict=True):
        _on(pg, cuda_device)
        _close(pg, pc, rtol=1e-3)  # 20 float32 Adam steps on two devices


def _settings() -> MethodSettings:
    return MethodSettings(
        hidden=(8,),
        activation="tanh",
        spec=TrainSpec(steps=30, lr=1e-2, batch_size=32),
        subsample=16,
        ensemble_size=2,
        methods=("bll", "ntk_bll", "ntk_bll_sub", "ll_laplace", "lla", "ensemble"),
    )


def test_evaluate_regression_on_cuda_data(cuda_device: torch.device) -> None:
    """The run's evaluation stage on a CUDA split: networks built on the data's device,
    metrics (NumPy, at the boundary) equal to the CPU run's. MC dropout is left out: its
    masks come from each device's own RNG."""
    g = torch.Generator().manual_seed(1)
    xs, ys = torch.randn(90, 3, generator=g), torch.randn(90, generator=g)
    cpu_split = RegressionSplit(xs[:70], ys[:70], xs[70:], ys[70:], 0.5, 2.0)
    gpu_split = RegressionSplit(
        *(t.to(cuda_device) for t in (xs[:70], ys[:70], xs[70:], ys[70:])), 0.5, 2.0
    )
    rec_gpu = evaluate_regression(gpu_split, _settings())
    res_gpu, res_cpu = rec_gpu["metrics"], evaluate_regression(cpu_split, _settings())["metrics"]
    fitted = rec_gpu["_fitted"]
    _on(next(fitted.base.parameters()), cuda_device)
    for model in fitted.models.values():
        if hasattr(model, "predict"):
            _on(model.predict(gpu_split.x_test).mean, cuda_device)
    assert set(res_gpu) == set(res_cpu)
    for name in res_cpu:  # continuous metrics only: a coverage count could flip one point
        for key in ("rmse", "nll"):
            assert res_gpu[name][key] == pytest.approx(res_cpu[name][key], rel=1e-2)


def test_evaluate_classification_on_cuda_data(cuda_device: torch.device) -> None:
    _, x, y = _classification(n=90)
    ood = {"noise": torch.randn(20, x.shape[1], generator=torch.Generator().manual_seed(3))}

    def task(dev: torch.device | str) -> ClassificationTask:
        return ClassificationTask(
            "toy",
            x[:60].to(dev),
            y[:60].to(dev),
            x[60:].to(dev),
            y[60:].to(dev),
            3,
            {k: v.to(dev) for k, v in ood.items()},
        )

    rec_gpu = evaluate_classification(task(cuda_device), _settings())
    res_gpu = rec_gpu["metrics"]
    res_cpu = evaluate_classification(task("cpu"), _settings())["metrics"]
    ntk = rec_gpu["_fitted"].models["ntk_bll"]
    _on(ntk.predict(x[60:].to(cuda_device)).probs, cuda_device)
    _on(ntk.predict(ood["noise"].to(cuda_device)).logit_var, cuda_device)
    assert set(res_gpu) == set(res_cpu)
    for name in res_cpu:  # continuous metrics only: an argmax could flip on a near tie
        for key in ("nll", "brier"):
            assert res_gpu[name][key] == pytest.approx(res_cpu[name][key], rel=1e-2)


@pytest.mark.parametrize("likelihood", ["regression", "classification"])
def test_validation_grid_and_loader_on_cuda_match_cpu(
    likelihood: str, cuda_device: torch.device
) -> None:
    """The validation grid search and a CPU DataLoader feeding a CUDA network: the same α (σ²)
    and predictions as the CPU fit."""
    from torch.utils.data import DataLoader, TensorDataset

    if likelihood == "regression":
        model, x, y = _regression()
    else:
        model, x, y = _classification()
    cpu_model, gpu_model = _pair(model, cuda_device)
    val = (x[:20] + 0.2, y[:20])
    loader = DataLoader(TensorDataset(x, y), batch_size=16)
    gpu = NTKBLL(gpu_model, likelihood=likelihood, subsample=30).fit(loader, val=val)
    cpu = NTKBLL(cpu_model, likelihood=likelihood, subsample=30).fit(x, y, val=val)
    assert gpu.alpha_ == pytest.approx(cpu.alpha_, rel=HYPER_RTOL)
    pg, pc = gpu.predict(x.to(cuda_device)), cpu.predict(x)
    if likelihood == "regression":
        _on(pg.var, cuda_device)
        _close(pg.mean, pc.mean, rtol=1e-3)
    else:
        _on(pg.probs, cuda_device)
        _close(pg.probs, pc.probs, rtol=1e-3)


def test_kron_head_on_cuda_matches_cpu(cuda_device: torch.device) -> None:
    model, x, y = _classification(classes=3)
    train_classifier(model, x, y, TrainSpec(steps=40, lr=1e-2, batch_size=40), seed=2)
    cpu_model, gpu_model = _pair(model, cuda_device)
    kw = {"likelihood": "classification", "structure": "kron", "alpha": 0.5}
    gpu = NTKBLL(gpu_model, output_subsample=2, **kw).fit(x.to(cuda_device), y)
    cpu = NTKBLL(cpu_model, output_subsample=2, **kw).fit(x, y)
    pg, pc = gpu.predict(x.to(cuda_device)), cpu.predict(x)
    _on(pg.probs, cuda_device)
    _close(pg.probs, pc.probs)
    _close(pg.logit_var, pc.logit_var)

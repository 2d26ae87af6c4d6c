"""Device consistency on CUDA (skipped without one; ``nox -s gpu`` runs them on a GPU machine),
and the ``device`` setting's validation (runs everywhere).

The same weights and tasks on the CPU and on CUDA: outputs (predictions, KV caches, GP
oracle, losses) must live on CUDA and equal the CPU's. The networks are float32 (matmuls and
attention summed in different orders on the two devices): ``rtol=1e-4`` on predictions,
``1e-3`` on a few training steps (AdamW compounds the differences a little). The GP oracle is
float64: ``1e-10``. Tasks are drawn from CPU generators and moved, as the trainer does.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch

from icml26.inctnp.checkpoint import load_model, save_model
from icml26.inctnp.config import BenchConfig, RunConfig
from icml26.inctnp.data import GPSource, TaskBatch
from icml26.inctnp.evaluation import (
    incremental_loglik,
    model_predictor,
    predictive_scores,
    sequential_loglik,
    update_latency,
)
from icml26.inctnp.gp import GPKernel, gp_log_marginal, gp_predict
from icml26.inctnp.model import ModelConfig, NeuralProcess, build_model
from icml26.inctnp.training import TrainConfig, train
from icml26.shared.cli import main

gpu = pytest.mark.gpu
no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the machine without CUDA")
RTOL = 1e-4


def _on(t: torch.Tensor, device: torch.device) -> None:
    assert t.device.type == device.type, f"tensor on {t.device}, expected {device}"


def _close(a: torch.Tensor, b: torch.Tensor, rtol: float = RTOL) -> None:
    a, b = a.detach().cpu().double(), b.detach().double()
    torch.testing.assert_close(a, b, rtol=rtol, atol=rtol * (float(b.abs().max()) or 1.0))


def _model(causal: bool) -> NeuralProcess:
    torch.manual_seed(0)
    return build_model(ModelConfig(width=32, layers=2, heads=4, causal=causal)).eval()


def _tasks(n: int = 24, batch: int = 3) -> TaskBatch:
    return GPSource("mix").sample(batch, n, torch.Generator().manual_seed(1))


def _moved(tb: TaskBatch, device: torch.device) -> TaskBatch:
    return TaskBatch(tb.x.to(device), tb.y.to(device), tb.kernels, tb.noise_std)


@gpu
@pytest.mark.parametrize("causal", [False, True], ids=["tnp", "inctnp"])
def test_forward_on_cuda_matches_cpu(causal: bool, cuda_device: torch.device) -> None:
    cpu = _model(causal)
    dev = copy.deepcopy(cpu).to(cuda_device)
    tb = _tasks()
    x, y = tb.x, tb.y
    with torch.no_grad():
        mc, sc = cpu(x[:, :10], y[:, :10], x[:, 10:])
        mg, sg = dev(
            x[:, :10].to(cuda_device), y[:, :10].to(cuda_device), x[:, 10:].to(cuda_device)
        )
    _on(mg, cuda_device)
    _on(sg, cuda_device)
    _close(mg, mc)
    _close(sg, sc)
    if causal:  # the training masks build on the inputs' device
        with torch.no_grad():
            prefix = torch.arange(1, x.shape[1])
            pc = cpu(x, y, x[:, 1:], target_prefix=prefix)[0]
            xg, yg = x.to(cuda_device), y.to(cuda_device)
            pg = dev(xg, yg, xg[:, 1:], target_prefix=prefix)[0]
            mask = (
                torch.arange(x.shape[1]).unsqueeze(0)
                < torch.tensor([[5], [12], [20]])[: x.shape[0]]
            )
            rc = cpu(x, y, x[:, :4], context_mask=mask)[0]
            rg = dev(xg, yg, xg[:, :4], context_mask=mask.to(cuda_device))[0]
        _close(pg, pc)
        _close(rg, rc)  # ragged contexts: the padding mask on CUDA
        draws = dev.sample_joint(
            xg[:, :5], yg[:, :5], xg[:, 5:9], 3, torch.Generator().manual_seed(1)
        )
        _on(draws, cuda_device)
        _close(
            draws,
            cpu.sample_joint(x[:, :5], y[:, :5], x[:, 5:9], 3, torch.Generator().manual_seed(1)),
        )


@gpu
def test_streaming_cache_on_cuda_matches_cpu(cuda_device: torch.device) -> None:
    """incTNP's cached updates on CUDA: the cache lives there and gives the CPU's predictions
    (and the same predictions as one full forward pass on CUDA)."""
    cpu = _model(True)
    dev = copy.deepcopy(cpu).to(cuda_device)
    tb = _tasks(n=40)
    xg, yg = tb.x.to(cuda_device), tb.y.to(cuda_device)
    sc, sg = cpu.stream(), dev.stream()
    sc.condition(tb.x[:, :5], tb.y[:, :5])
    sg.condition(xg[:, :5], yg[:, :5])
    for start in (5, 6, 20):  # one point, then 14, then 20 (the cache regrows)
        stop = {5: 6, 6: 20, 20: 40}[start]
        sc.update(tb.x[:, start:stop], tb.y[:, start:stop])
        sg.update(xg[:, start:stop], yg[:, start:stop])
        mc, stc = sc.predict(tb.x[:, :3])
        mg, stg = sg.predict(xg[:, :3])
        _on(mg, cuda_device)
        _close(mg, mc)
        _close(stg, stc)
    for buf in (*sg.cache.keys, *sg.cache.values):
        assert buf is not None
        _on(buf, cuda_device)
    assert sg.cache.nbytes == sc.cache.nbytes
    with torch.no_grad():
        full = dev(xg, yg, xg[:, :3])[0]
    _close(mg, full.cpu())


@gpu
def test_gp_oracle_on_cuda_matches_cpu(cuda_device: torch.device) -> None:
    g = torch.Generator().manual_seed(2)
    xc, yc, xt = (
        torch.randn(2, 12, 1, generator=g),
        torch.randn(2, 12, 1, generator=g),
        torch.randn(2, 5, 1, generator=g),
    )
    for kernel in (
        GPKernel("rbf", 0.7),
        GPKernel("matern52", 0.5),
        GPKernel("periodic", 0.8, period=1.2),
    ):
        mg, sg = gp_predict(kernel, 0.1, xc.to(cuda_device), yc.to(cuda_device), xt.to(cuda_device))
        mc, sc = gp_predict(kernel, 0.1, xc, yc, xt)
        _on(mg, cuda_device)
        _close(mg, mc, rtol=1e-6)  # float64 algebra, cast back to the inputs' float32
        _close(sg, sc, rtol=1e-6)
        lg = gp_log_marginal(kernel, 0.1, xc.to(cuda_device), yc.to(cuda_device))
        _on(lg, cuda_device)
        _close(lg, gp_log_marginal(kernel, 0.1, xc, yc), rtol=1e-10)


@gpu
def test_evaluation_on_cuda_matches_cpu(cuda_device: torch.device) -> None:
    tnp_c, inc_c = _model(False), _model(True)
    tnp_g, inc_g = copy.deepcopy(tnp_c).to(cuda_device), copy.deepcopy(inc_c).to(cuda_device)
    tb = _tasks()
    tbg = _moved(tb, cuda_device)
    for mc, mg in ((tnp_c, tnp_g), (inc_c, inc_g)):
        nll_c, rmse_c = predictive_scores(model_predictor(mc), [tb], 8)
        nll_g, rmse_g = predictive_scores(model_predictor(mg), [tbg], 8)
        assert nll_g == pytest.approx(nll_c, rel=RTOL, abs=RTOL)
        assert rmse_g == pytest.approx(rmse_c, rel=RTOL)
    seq_g = sequential_loglik(model_predictor(inc_g), tbg, 4)
    _on(seq_g, cuda_device)
    _close(seq_g, sequential_loglik(model_predictor(inc_c), tb, 4))
    inc = incremental_loglik(inc_g, tbg, 4)
    _on(inc, cuda_device)
    _close(inc, seq_g.cpu())  # one causal pass = the one-at-a-time stream, on CUDA too


@gpu
@pytest.mark.parametrize("causal", [False, True], ids=["tnp", "inctnp"])
def test_training_on_cuda_matches_cpu(
    causal: bool, cuda_device: torch.device, tmp_path: Path
) -> None:
    cfg = TrainConfig(max_steps=4, batch_size=4, n_points=16, warmup=1, checkpoint_every=2)
    strategy = "autoregressive" if causal else "split"
    cpu, dev = _model(causal), _model(causal)
    lc = train(cpu, GPSource("rbf"), cfg, strategy=strategy, seed=0).losses
    lg = train(
        dev,
        GPSource("rbf"),
        cfg,
        strategy=strategy,
        seed=0,
        device=str(cuda_device),
        checkpoint_dir=tmp_path,
        tag="t",
    ).losses
    assert lg == pytest.approx(lc, rel=1e-3)
    _on(next(dev.parameters()), cuda_device)
    # resume from the CUDA checkpoint on CUDA: nothing left to do, same losses back
    again = train(
        _model(causal),
        GPSource("rbf"),
        cfg,
        strategy=strategy,
        seed=0,
        device=str(cuda_device),
        checkpoint_dir=tmp_path,
        tag="t",
    ).losses
    assert again == lg
    save_model(dev.cpu(), tmp_path / "m.safetensors")
    back = load_model(tmp_path / "m.safetensors", device=str(cuda_device))
    _on(next(back.parameters()), cuda_device)


@gpu
@pytest.mark.parametrize("causal", [False, True], ids=["tnp", "inctnp"])
def test_update_latency_runs_on_cuda(causal: bool, cuda_device: torch.device) -> None:
    model = _model(causal)
    lat = update_latency(model, 64, 3, device=str(cuda_device))
    ms, nbytes = lat.median, lat.cache_allocated
    assert next(model.parameters()).device.type == "cpu"  # the run plots it on the CPU after
    cpu_lat = update_latency(_model(causal), 64, 3, device="cpu")
    ms_cpu, nbytes_cpu = cpu_lat.median, cpu_lat.cache_allocated
    assert ms > 0
    assert nbytes == nbytes_cpu
    assert (nbytes > 0) == causal
    assert ms_cpu > 0


@gpu
def test_configs_accept_cuda(cuda_device: torch.device) -> None:
    assert RunConfig(device="cuda").device == "cuda"
    assert BenchConfig(device="cuda:0").device == "cuda:0"


def test_device_setting_is_validated() -> None:
    for bad in ("gpu", "cuda:x", "CUDA"):
        with pytest.raises(ValueError, match="device must be 'cpu', 'cuda' or 'cuda:N'"):
            RunConfig(device=bad)


@no_cuda
def test_cuda_without_cuda_is_a_usage_error_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no CUDA device is visible"):
        RunConfig(device="cuda")
    with pytest.raises(ValueError, match="no CUDA device is visible"):
        BenchConfig(device="cuda")
    out = tmp_path / "run"
    code = main(["run", "inctnp", "--profile", "smoke", "--set", "device=cuda", "--out", str(out)])
    assert code == 2
    assert not out.exists()

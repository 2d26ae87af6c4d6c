"""Jacobians against autograd/finite differences; the projection against least squares."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.autograd.functional import jacobian as autograd_jacobian

from icml26.bll_ntk.jacobians import jacobian, ntk_projection, projected_body_jacobian
from icml26.bll_ntk.network import LastLayerModel, make_mlp


def _net(
    d_in: int = 3, d_out: int = 2, hidden: tuple[int, ...] = (6, 5), seed: int = 0
) -> LastLayerModel:
    torch.manual_seed(seed)
    model = make_mlp(d_in, d_out, hidden).double()
    model.eval()
    return LastLayerModel(model)


def test_jacobian_matches_autograd_and_finite_differences() -> None:
    net = _net()
    x = torch.randn(4, 3, dtype=torch.float64)
    J = jacobian(net, x, chunk=3)  # (N, C, P): chunking must not matter
    params = [p for p in net.model.parameters()]
    flat = torch.cat([p.detach().reshape(-1) for p in params])

    def f(theta: torch.Tensor) -> torch.Tensor:
        chunks, i = {}, 0
        for name, p in net.model.named_parameters():
            chunks[name] = theta[i : i + p.numel()].reshape(p.shape)
            i += p.numel()
        return torch.func.functional_call(net.model, chunks, (x,))

    ref = autograd_jacobian(f, flat)  # (N, C, P)
    torch.testing.assert_close(J, ref, rtol=1e-10, atol=1e-12)
    eps = 1e-6
    for k in [0, 7, len(flat) - 1]:
        e = torch.zeros_like(flat)
        e[k] = eps
        fd = (f(flat + e) - f(flat - e)) / (2 * eps)
        torch.testing.assert_close(J[:, :, k], fd, rtol=1e-6, atol=1e-8)
    body = jacobian(net, x, part="body")
    head = jacobian(net, x, part="head")
    torch.testing.assert_close(torch.cat([body, head], 2), J)
    # the head block is e_c ⊗ φ̃(x)
    phi, _ = net.features(x)
    torch.testing.assert_close(head[:, 0, : phi.shape[1] - 1], phi[:, :-1])


def test_projected_features_equal_least_squares_projection() -> None:
    net = _net()
    x = torch.randn(30, 3, dtype=torch.float64)
    Jp = projected_body_jacobian(net, x, x, ridge=0.0)
    phi, _ = net.features(x)
    Jb = jacobian(net, x, part="body")
    for c in range(2):
        coef, *_ = np.linalg.lstsq(phi.numpy(), Jb[:, c].numpy(), rcond=None)
        np.testing.assert_allclose(Jp[:, c].numpy(), phi.numpy() @ coef, rtol=1e-6, atol=1e-8)


def test_prior_correction_is_AAt() -> None:
    net = _net()
    x = torch.randn(25, 3, dtype=torch.float64)
    proj = ntk_projection(net, x, ridge=0.5)
    phi, _ = net.features(x)
    Jb = jacobian(net, x, part="body")
    S = phi.T @ phi + 0.5 * torch.eye(phi.shape[1], dtype=torch.float64)
    A = torch.cat([torch.linalg.solve(S, phi.T @ Jb[:, c]) for c in range(2)])  # (C·d, P)
    torch.testing.assert_close(proj.M, A @ A.T, rtol=1e-8, atol=1e-10)
    assert torch.linalg.eigvalsh(proj.M).min() > -1e-8


def test_subsampled_projection_converges_to_exact() -> None:
    net = _net(hidden=(8, 6))
    x = torch.randn(400, 3, dtype=torch.float64)
    exact = ntk_projection(net, x).M
    full = ntk_projection(net, x, subsample=400).M
    torch.testing.assert_close(full, exact)
    errs = []
    for m in (20, 80, 320):
        e = [
            float(
                torch.linalg.norm(
                    ntk_projection(
                        net, x, subsample=m, generator=torch.Generator().manual_seed(r)
                    ).M
                    - exact
                )
                / torch.linalg.norm(exact)
            )
            for r in range(4)
        ]
        errs.append(np.mean(e))
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 0.2


def test_bad_projection_inputs() -> None:
    net = _net()
    x = torch.randn(3, 3, dtype=torch.float64)  # fewer points than features, no ridge
    with pytest.raises(ValueError, match="singular"):
        ntk_projection(net, x, ridge=0.0)
    with pytest.raises(ValueError, match="ridge"):
        ntk_projection(net, x, ridge=-1.0)
    with pytest.raises(ValueError, match="subsample"):
        ntk_projection(net, x, subsample=0)
    with pytest.raises(ValueError, match="part"):
        jacobian(net, x, part="tail")

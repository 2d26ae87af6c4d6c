"""Jacobian (NTK) features with ``torch.func`` and their projection onto the last-layer span.

For a network ``f(x) = W̃ φ̃(x; θ)`` the NTK features of output ``c`` are the rows of the
Jacobian ``J(x) = [J_θ(x), J_W̃(x)]``; the head block is ``J_W̃,c(x) = e_cᵀ ⊗ φ̃(x)ᵀ``.
The projected-NTK BLL regresses each body Jacobian row onto the last-layer features
(ridge ``λ``, closed form, over the training inputs ``Φ̃ ∈ R^{N×d}``)::

    A_c = (Φ̃ᵀΦ̃ + λ I)⁻¹ Φ̃ᵀ J_θ,c        (d × P)        J_θ,c(x) ≈ φ̃(x)ᵀ A_c

so the linearised network ``f_c(x) ≈ φ̃(x)ᵀ (w_c + A_c δθ)`` stays linear in the last-layer
features; with the isotropic prior ``δθ, w ~ N(0, α⁻¹ I)`` the effective last-layer weights
have prior covariance ``α⁻¹ (I + M)``, ``M[c, c'] = A_c A_c'ᵀ``. Only ``M`` (Cd × Cd) is kept:
every later step is last-layer-sized linear algebra.

Memory: ``Uc = Φ̃ᵀ J_θ,c`` is accumulated over chunks of per-example Jacobians, so at most
``chunk × C × P`` Jacobian entries exist at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.func import functional_call, jacrev, vmap

from icml26.bll_ntk.network import LastLayerModel

__all__ = ["NTKProjection", "jacobian", "ntk_projection"]


def jacobian(
    net: LastLayerModel,
    x: torch.Tensor,
    *,
    part: str = "all",
    chunk: int = 256,
) -> torch.Tensor:
    """Per-example Jacobians of the outputs with respect to the parameters.

    Args:
        net: the wrapped network (put in eval mode by the caller).
        x: inputs ``(N, ...)``.
        part: ``"body"`` (θ only), ``"head"`` (W̃ only) or ``"all"`` (θ then W̃), each
            flattened in ``named_parameters`` order.
        chunk: examples per vmapped call.

    Returns:
        ``(N, C, P)`` tensor in the dtype of the parameters.
    """
    if part not in {"all", "body", "head"}:
        raise ValueError(f"part must be 'all', 'body' or 'head', got {part!r}")
    model = net.model
    params = {n: p.detach() for n, p in model.named_parameters()}
    buffers = {n: b.detach() for n, b in model.named_buffers()}
    if part == "body":
        wrt = {n: p for n, p in params.items() if n not in net.head_names}
    elif part == "head":
        wrt = {n: p for n, p in params.items() if n in net.head_names}
    else:
        wrt = params
    if not wrt:
        raise ValueError(f"the network has no {part} parameters to differentiate")
    fixed = {n: p for n, p in params.items() if n not in wrt}

    def f_single(w: dict[str, torch.Tensor], xi: torch.Tensor) -> torch.Tensor:
        out = functional_call(model, ({**fixed, **w}, buffers), (xi[None],))
        return out.reshape(-1)

    jac_fn = vmap(jacrev(f_single), in_dims=(None, 0))
    blocks = []
    for start in range(0, x.shape[0], chunk):
        jd = jac_fn(wrt, x[start : start + chunk])
        blocks.append(torch.cat([jd[n].flatten(2) for n in wrt], dim=2))
    return torch.cat(blocks, dim=0)


@dataclass(frozen=True)
class NTKProjection:
    """The projected-NTK prior correction (see the module docstring).

    Attributes:
        M: ``(C·d, C·d)`` PSD matrix ``[A_c A_c'ᵀ]``; the NTK-BLL prior covariance of the
            output-major vector of last-layer weights is ``α⁻¹ (I + M)``.
        n_points: number of data points used to estimate it.
        ridge: the ridge ``λ`` used (after rescaling for a subsample).
    """

    M: torch.Tensor
    n_points: int
    ridge: float

    def prior_factor(self) -> torch.Tensor:
        """``I + M`` (float64)."""
        eye = torch.eye(self.M.shape[0], dtype=self.M.dtype, device=self.M.device)
        return eye + self.M


def _coefficients(
    net: LastLayerModel, x: torch.Tensor, phi: torch.Tensor, ridge: float, chunk: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(S, U)`` with ``S = Φ̃ᵀΦ̃ + λI`` (d×d) and ``U = [Φ̃ᵀ J_θ,c]_c`` (C, d, P), float64."""
    d = phi.shape[1]
    U: torch.Tensor | None = None
    for start in range(0, x.shape[0], chunk):
        jb = jacobian(net, x[start : start + chunk], part="body", chunk=chunk).double()
        contrib = torch.einsum("nk,ncp->ckp", phi[start : start + chunk].double(), jb)
        U = contrib if U is None else U + contrib
    assert U is not None
    S = phi.double().T @ phi.double() + ridge * torch.eye(d, dtype=torch.float64, device=phi.device)
    return S, U


def ntk_projection(
    net: LastLayerModel,
    x: torch.Tensor,
    *,
    ridge: float = 1.0,
    subsample: int | None = None,
    n_total: int | None = None,
    generator: torch.Generator | None = None,
    chunk: int = 128,
) -> NTKProjection:
    """Estimate the projected-NTK correction ``M`` from inputs ``x``.

    Args:
        net: the wrapped trained network.
        x: training inputs ``(N, ...)``.
        ridge: ``λ`` of the least-squares projection for the full data set.
        subsample: if given, estimate ``A`` from this many points drawn uniformly without
            replacement; the ridge is scaled by ``m / N`` so that the subsampled normal
            equations estimate the same ``A``.
        n_total: the ``N`` the ridge refers to (defaults to ``len(x)``).
        generator: torch RNG for the subsample (a CPU generator: the indices are drawn on the
            CPU and moved to ``x``'s device, so a seed picks the same points everywhere).
        chunk: examples per Jacobian chunk (memory ``chunk × C × P``).
    """
    if ridge < 0:
        raise ValueError(f"ridge must be >= 0, got {ridge}")
    n = x.shape[0]
    n_total = n if n_total is None else n_total
    lam = ridge
    if subsample is not None:
        if subsample < 1:
            raise ValueError(f"subsample must be >= 1, got {subsample}")
        if subsample < n:
            idx = torch.randperm(n, generator=generator)[:subsample]
            x = x[idx.to(x.device)]
            lam = ridge * subsample / n_total
    phi, _ = net.features(x)
    S, U = _coefficients(net, x, phi, lam, chunk)
    C, d, P = U.shape
    try:
        chol = torch.linalg.cholesky(S)
    except torch.linalg.LinAlgError as exc:
        raise ValueError(
            "the last-layer feature Gram matrix Φ̃ᵀΦ̃ + λI is singular: use ridge > 0 "
            "or more data points than features"
        ) from exc
    # A_c = S⁻¹ U_c ; M = [A_c A_c'ᵀ]: solve once for all outputs.
    A = torch.cholesky_solve(U.permute(1, 0, 2).reshape(d, C * P), chol)  # (d, C·P)
    A = A.reshape(d, C, P).permute(1, 0, 2).reshape(C * d, P)
    M = A @ A.T
    M = 0.5 * (M + M.T)
    return NTKProjection(M=M, n_points=int(x.shape[0]), ridge=float(lam))


def projected_body_jacobian(
    net: LastLayerModel, x_train: torch.Tensor, x: torch.Tensor, *, ridge: float = 1.0
) -> torch.Tensor:
    """``φ̃(x)ᵀ A_c`` for every output: the projected body Jacobian ``(N, C, P)``.

    Materialises ``A`` (C·d × P); meant for checks and small models, not for inference.
    """
    phi_tr, _ = net.features(x_train)
    S, U = _coefficients(net, x_train, phi_tr, ridge, 128)
    C, d, P = U.shape
    A = torch.linalg.solve(S, U.permute(1, 0, 2).reshape(d, C * P)).reshape(d, C, P)
    phi, _ = net.features(x)
    return torch.einsum("nk,kcp->ncp", phi.double(), A)

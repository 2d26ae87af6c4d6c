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

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import torch
from torch.func import functional_call, jacrev, vmap

from icml26.bll_ntk.batches import Data, count, iter_batches
from icml26.bll_ntk.network import LastLayerModel

__all__ = ["NTKProjection", "jacobian", "ntk_projection"]


def jacobian(
    net: LastLayerModel,
    x: torch.Tensor,
    *,
    part: str = "all",
    chunk: int = 256,
    outputs: torch.Tensor | None = None,
) -> torch.Tensor:
    """Per-example Jacobians of the outputs with respect to the parameters.

    Args:
        net: the wrapped network (put in eval mode by the caller).
        x: inputs ``(N, ...)``.
        part: ``"body"`` (θ only), ``"head"`` (W̃ only) or ``"all"`` (θ then W̃), each
            flattened in ``named_parameters`` order.
        chunk: examples per vmapped call.
        outputs: indices of the outputs to differentiate (all ``C`` by default): a large
            head's projection can be estimated from a subset of its outputs.

    Returns:
        ``(N, C', P)`` tensor in the dtype of the parameters (``C'`` outputs).

    Raises:
        ValueError: an unknown ``part``, bad inputs, or no parameters in that part.
    """
    if part not in {"all", "body", "head"}:
        raise ValueError(f"part must be 'all', 'body' or 'head', got {part!r}")
    x = net.check_inputs(x)
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

    sel = None if outputs is None else outputs.to(x.device)

    def f_single(w: dict[str, torch.Tensor], xi: torch.Tensor) -> torch.Tensor:
        out = functional_call(model, ({**fixed, **w}, buffers), (xi[None],)).reshape(-1)
        return out if sel is None else out[sel]

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
        outputs: the outputs it covers (``None``: all ``C``; else a subset, so ``M`` is
            ``(C'·d, C'·d)`` and only :meth:`shared_block` is meaningful for the whole head).
    """

    M: torch.Tensor
    n_points: int
    ridge: float
    outputs: tuple[int, ...] | None = None

    def prior_factor(self) -> torch.Tensor:
        """``I + M`` (float64).

        Returns:
            The ``(C·d, C·d)`` prior factor of the NTK-projected BLL.
        """
        eye = torch.eye(self.M.shape[0], dtype=self.M.dtype, device=self.M.device)
        return eye + self.M

    def shared_block(self, d: int) -> torch.Tensor:
        """``M̄``: the mean of the per-output diagonal blocks ``A_c A_cᵀ`` (d × d), the shared
        factor ``I + M̄`` of a Kronecker-factored prior ``I_C ⊗ (I + M̄)``.

        Args:
            d: the feature dimension (``d = r + 1`` with a bias).

        Returns:
            The ``(d, d)`` mean block.
        """
        k = self.M.shape[0] // d
        blocks = self.M.reshape(k, d, k, d).diagonal(dim1=0, dim2=2)  # (d, d, k)
        return blocks.mean(-1)

    @property
    def trace_ratio(self) -> float:
        """``tr M / D``: the mean prior variance the projection adds per weight, relative to
        BLL's 1 (``D = C·d``). Near 0 the NTK-BLL prior is BLL's."""
        return float(torch.diagonal(self.M).mean())


def _coefficients(
    net: LastLayerModel,
    batches: Iterable[torch.Tensor],
    ridge: float,
    chunk: int,
    outputs: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor, int]:
    """``(S, U, n)`` with ``S = Φ̃ᵀΦ̃ + λI`` (d×d), ``U = [Φ̃ᵀ J_θ,c]_c`` (C', d, P), float64,
    accumulated over input batches (each cut into ``chunk``-sized Jacobian calls)."""
    U: torch.Tensor | None = None
    S: torch.Tensor | None = None
    n = 0
    for xb in batches:
        for start in range(0, xb.shape[0], chunk):
            xc = xb[start : start + chunk]
            phi, _ = net.features(xc)
            phi = phi.double()
            jb = jacobian(net, xc, part="body", chunk=chunk, outputs=outputs).double()
            contrib = torch.einsum("nk,ncp->ckp", phi, jb)
            U = contrib if U is None else U + contrib
            S = phi.T @ phi if S is None else S + phi.T @ phi
            n += xc.shape[0]
    if U is None or S is None:
        raise ValueError("no inputs to estimate the NTK projection from")
    d = S.shape[0]
    S = S + ridge * torch.eye(d, dtype=torch.float64, device=S.device)
    return S, U, n


def _rows(data: Data, keep: torch.Tensor | None) -> Iterator[torch.Tensor]:
    """Input batches of ``data``, restricted to the global row indices ``keep`` (sorted)."""
    offset = 0
    for xb, _, _ in iter_batches(data, where="ntk_projection"):
        b = xb.shape[0]
        if keep is None:
            yield xb
        else:
            lo, hi = torch.searchsorted(keep, torch.tensor([offset, offset + b]))
            if hi > lo:
                yield xb[(keep[lo:hi] - offset).to(xb.device)]
        offset += b


def ntk_projection(
    net: LastLayerModel,
    x: Data,
    *,
    ridge: float = 1.0,
    subsample: int | None = None,
    n_total: int | None = None,
    generator: torch.Generator | None = None,
    chunk: int = 128,
    outputs: torch.Tensor | None = None,
) -> NTKProjection:
    """Estimate the projected-NTK correction ``M`` from inputs ``x``.

    Args:
        net: the wrapped trained network.
        x: training inputs ``(N, ...)`` or a loader of batches (``x`` or ``(x, ...)``);
            a loader is read once (twice with ``subsample`` and no ``n_total``).
        ridge: ``λ`` of the least-squares projection for the full data set.
        subsample: if given, estimate ``A`` from this many points drawn uniformly without
            replacement; the ridge is scaled by ``m / N`` so that the subsampled normal
            equations estimate the same ``A``.
        n_total: the ``N`` of ``x`` (counted when not given).
        generator: torch RNG for the subsample (a CPU generator: the indices are drawn on the
            CPU, so a seed picks the same points on every device).
        chunk: examples per Jacobian call (memory ``chunk × C × P``).
        outputs: differentiate only these outputs (a large head: ``M`` then covers them
            only, see :meth:`NTKProjection.shared_block`).

    Returns:
        The projection.

    Raises:
        ValueError: a negative ridge, a subsample below 1, no inputs, or a singular
            feature Gram with ridge 0.
    """
    if ridge < 0:
        raise ValueError(f"ridge must be >= 0, got {ridge}")
    if subsample is not None and subsample < 1:
        raise ValueError(f"subsample must be >= 1, got {subsample}")
    keep = None
    lam = ridge
    if subsample is not None:
        n = count(x) if n_total is None else n_total
        if subsample < n:
            keep = torch.sort(torch.randperm(n, generator=generator)[:subsample]).values
            lam = ridge * subsample / n
    S, U, n_used = _coefficients(net, _rows(x, keep), lam, chunk, outputs)
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
    out = None if outputs is None else tuple(int(o) for o in outputs)
    return NTKProjection(M=M, n_points=n_used, ridge=float(lam), outputs=out)


def projected_body_jacobian(
    net: LastLayerModel, x_train: torch.Tensor, x: torch.Tensor, *, ridge: float = 1.0
) -> torch.Tensor:
    """``φ̃(x)ᵀ A_c`` for every output: the projected body Jacobian ``(N, C, P)``.

    Materialises ``A`` (C·d × P); meant for checks and small models, not for inference.
    """
    S, U, _ = _coefficients(net, [x_train], ridge, 128)
    C, d, P = U.shape
    A = torch.linalg.solve(S, U.permute(1, 0, 2).reshape(d, C * P)).reshape(d, C, P)
    phi, _ = net.features(x)
    return torch.einsum("nk,kcp->ncp", phi.double(), A)

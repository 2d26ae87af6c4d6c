"""The learned perturbation distribution of NPPR: a K-component Gaussian mixture in a latent
space, decoded to the input and squashed into the L-inf ball.

Generative model for one input ``x`` with label ``y`` (form ``c`` decides what conditions it)::

    h         = trunk_c(x, y)                           condition vector
    π(h)      = softmax(W_π h)                          mixture weights   [K]
    μ_k(h)    = W_μ h,   log σ_k(h) = clamp(W_σ h, lo, hi)                [K, D]
    k ~ Cat(π),  z = μ_k + σ_k ⊙ ξ,  ξ ~ N(0, I_D)      latent sample     [D]
    δ = eps · tanh(decode(z))                           perturbation in the ball

Forms (the paper's four scenarios): ``none`` (input-independent: one mixture for all inputs),
``x`` (an MLP over the input: a 7x7-pooled copy of it and, when ``feature_dim > 0``, features
from a frozen extractor such as the classifier's own log-probabilities, as the official code
conditions on a frozen backbone), ``y`` (a label embedding), ``xy`` (both, concatenated).
``decode`` is a fixed, parameter-free upsampling of a low-resolution latent image (or the
identity when the latent has the input's shape), so ``D`` can be much smaller than the input.

Fitting needs gradients through the sampling: component choice is relaxed by Gumbel-softmax
(weights ``w = softmax((log π + g) / τ)``, ``g`` Gumbel noise, ``z = Σ_k w_k (μ_k + σ_k ξ_k)``)
and the Gaussian draw is reparameterised. Evaluation samples the mixture *exactly* (a hard
component index), so the reported NPPR is the PR of a true GMM distribution.

What keeps the mixture a distribution and not a point attack:

* ``log σ`` clamped to ``[lo, hi]``: each component keeps a minimum spread in latent space;
* a **floor on the mixture weights**, ``π = φ/K + (1 - φ) softmax(W_π h)`` with ``φ =
  weight_floor``: every component keeps at least ``φ/K`` of the mass, so the mixture cannot
  collapse onto one component (:func:`effective_components` reports ``exp H(π)``);
* an entropy regulariser ``1 - H(π)/log K`` against collapse onto one component;
* a mean-diversity regulariser ``-log det(G)/K`` on the Gram matrix ``G`` of the unit-normed
  component means (zero when they are orthogonal), against K copies of one mode;
* hard component sampling at evaluation, on inputs held out from fitting.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from icml26.nppr.validation import check_budget

__all__ = [
    "FORMS",
    "MixtureParams",
    "PerturbationGMM",
    "decode_latent",
    "effective_components",
    "floor_minimum_components",
    "gumbel_softmax_weights",
]

FORMS = ("none", "x", "y", "xy")


@dataclass
class MixtureParams:
    """The mixture for a batch: ``logits`` [B, K] (``log π``), ``mu`` and ``log_std`` [B, K, D]."""

    logits: torch.Tensor
    mu: torch.Tensor
    log_std: torch.Tensor

    @property
    def weights(self) -> torch.Tensor:
        """The mixture weights π, ``[B, K]``."""
        return self.logits.softmax(-1)


def effective_components(weights: torch.Tensor) -> float:
    """The effective number of mixture components, ``exp H(π)``, averaged over inputs.

    1 for a mixture on one component (a point-like perturbation when that component is
    narrow), ``K`` for equal weights.

    Args:
        weights: ``[B, K]`` mixture weights (rows sum to 1).

    Returns:
        The mean over the batch of ``exp(-Σ_k π_k log π_k)``.
    """
    p = weights.detach().clamp_min(1e-12)
    return float(torch.exp(-(p * p.log()).sum(-1)).mean())


def floor_minimum_components(k: int, weight_floor: float) -> float:
    """The fewest effective components a floored mixture can have: ``exp H(π)`` of the weights
    ``(φ/K + 1 - φ, φ/K, ..., φ/K)`` (all the free mass on one component).

    A fitted mixture at this value has collapsed as far as the floor lets it: its
    ``effective_components`` above this minimum is what the fit chose, not what the floor forced.

    Args:
        k: the number of components.
        weight_floor: ``φ`` in ``[0, 1)``.

    Returns:
        1 for ``φ = 0`` or ``k = 1``; 2.93 for ``k = 4, φ = 0.5``.

    Raises:
        ValueError: ``k < 1`` or ``φ`` outside ``[0, 1)``.
    """
    if k < 1 or not 0.0 <= weight_floor < 1.0:
        raise ValueError(f"need k >= 1 and weight_floor in [0, 1), got {k}, {weight_floor}")
    w = torch.full((1, k), weight_floor / k, dtype=torch.float64)
    w[0, 0] += 1.0 - weight_floor
    return effective_components(w)


def decode_latent(u: torch.Tensor, input_shape: tuple[int, ...], eps: float) -> torch.Tensor:
    """The fixed decoder: a latent image upsampled to the input and squashed into the ball.

    Args:
        u: ``[N, C, h, w]`` (or ``[N, C, l]``) latent images.
        input_shape: ``(C, H, W)`` or ``(C, L)``.
        eps: the L-inf budget.

    Returns:
        ``eps * tanh(upsample(u))``, ``[N, *input_shape]``: bilinear (linear for signals)
        upsampling, the identity when the latent has the input's size.
    """
    if tuple(u.shape[1:]) != tuple(input_shape):
        mode = "bilinear" if len(input_shape) == 3 else "linear"
        u = F.interpolate(u, size=tuple(input_shape[1:]), mode=mode, align_corners=False)
    return eps * torch.tanh(u)


def gumbel_softmax_weights(
    logits: torch.Tensor, n: int, tau: float, generator: torch.Generator | None = None
) -> torch.Tensor:
    """``n`` relaxed one-hot draws ``softmax((logits + g) / τ)``, ``g ~ Gumbel(0, 1)``:
    ``[n, *logits.shape]``, differentiable in ``logits``."""
    if tau <= 0:
        raise ValueError(f"Gumbel-softmax temperature must be positive, got {tau}")
    u = torch.rand(
        (n, *logits.shape), generator=generator, device=logits.device, dtype=logits.dtype
    )
    g = -torch.log(-torch.log(u.clamp(1e-10, 1 - 1e-10)))
    return ((logits.unsqueeze(0) + g) / tau).softmax(-1)


class PerturbationGMM(nn.Module):
    """A conditional K-component Gaussian mixture over L-inf-bounded perturbations.

    Args:
        input_shape: the classifier's input shape without the batch, ``(C, H, W)`` or ``(C, L)``.
        n_classes: number of labels (for the ``y`` and ``xy`` forms).
        eps: the L-inf budget.
        form: ``none``, ``x``, ``y`` or ``xy``.
        k: number of mixture components.
        latent_size: side of the latent grid (``H = W = latent_size``, or ``L``); ``None`` uses
            the input's own size (no decoder).
        hidden: width of the condition networks.
        logstd_bounds: ``(lo, hi)`` clamp of the latent log standard deviations.
        feature_dim: size of the frozen features the ``x``/``xy`` forms also see (0: none);
            attach the extractor with :meth:`set_feature_extractor`, or pass it here.
        feature_extractor: frozen ``fn(x) -> [B, feature_dim]`` for the ``x``/``xy`` forms,
            e.g. ``lambda x: model(x).log_softmax(-1)`` (not saved, not trained).
        weight_floor: ``φ`` in ``[0, 1)``: each component keeps at least ``φ/K`` of the
            weight (0: no floor; default 0.5, as ``icml26 run nppr``). The floor keeps the
            *weights* spread, not the fit: :func:`floor_minimum_components` is the least
            ``exp H(π)`` it allows, and a fit at that minimum has collapsed as far as it can.

    Raises:
        ValueError: an unknown form, non-positive sizes, bad bounds, a floor outside [0, 1).
    """

    def __init__(
        self,
        input_shape: tuple[int, ...],
        n_classes: int,
        eps: float,
        *,
        form: str = "none",
        k: int = 4,
        latent_size: int | None = None,
        hidden: int = 128,
        logstd_bounds: tuple[float, float] = (-2.0, 1.0),
        feature_dim: int = 0,
        feature_extractor: Callable[[torch.Tensor], torch.Tensor] | None = None,
        weight_floor: float = 0.5,
    ) -> None:
        super().__init__()
        if form not in FORMS:
            raise ValueError(f"form must be one of {FORMS}, got {form!r}")
        if k < 1 or hidden < 1 or n_classes < 2:
            raise ValueError("k and hidden must be >= 1, n_classes >= 2")
        if len(input_shape) not in (2, 3):
            raise ValueError(f"input_shape must be (C, L) or (C, H, W), got {input_shape}")
        lo, hi = logstd_bounds
        if not lo < hi:
            raise ValueError(f"logstd_bounds must satisfy lo < hi, got {logstd_bounds}")
        self.input_shape = tuple(input_shape)
        self.eps = check_budget(eps)
        self.form, self.k, self.n_classes = form, k, n_classes
        self.logstd_bounds = (float(lo), float(hi))
        c, spatial = input_shape[0], input_shape[1:]
        size = latent_size if latent_size is not None else spatial[0]
        if size < 1 or any(size > s for s in spatial):
            raise ValueError(f"latent_size must be in [1, {min(spatial)}], got {size}")
        self.latent_shape = (c, *([size] * len(spatial)))
        self.d = math.prod(self.latent_shape)
        if form == "none":
            self.h0 = nn.Parameter(torch.zeros(hidden))
        if feature_dim < 0:
            raise ValueError("feature_dim must be >= 0")
        self.feature_dim = feature_dim
        self._features: Callable[[torch.Tensor], torch.Tensor] | None = feature_extractor
        if not 0.0 <= weight_floor < 1.0:
            raise ValueError(f"weight_floor must be in [0, 1), got {weight_floor}")
        self.weight_floor = float(weight_floor)
        if form in ("x", "xy"):
            self.pool_size = tuple(min(7, s) for s in spatial)
            pooled = c * math.prod(self.pool_size)
            self.x_net = nn.Sequential(
                nn.Linear(pooled + feature_dim, hidden),
                nn.ReLU(),
                nn.Linear(hidden, hidden),
                nn.ReLU(),
            )
        if form in ("y", "xy"):
            self.y_emb = nn.Embedding(n_classes, hidden)
        if form == "xy":
            self.mix = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.ReLU())
        self.pi_head = nn.Linear(hidden, k)
        self.mu_head = nn.Linear(hidden, k * self.d)
        self.logstd_head = nn.Linear(hidden, k * self.d)
        with torch.no_grad():  # start spread over the ball, components distinct, weights equal
            self.pi_head.weight.mul_(0.01)
            self.pi_head.bias.zero_()
            self.mu_head.weight.mul_(0.01)
            self.mu_head.bias.normal_(0.0, 0.5)
            self.logstd_head.weight.mul_(0.01)
            self.logstd_head.bias.zero_()

    # -- the distribution ---------------------------------------------------------------------
    def set_feature_extractor(self, fn: Callable[[torch.Tensor], torch.Tensor]) -> None:
        """Attach the frozen features of the ``x``/``xy`` forms (not saved, not trained).

        Args:
            fn: ``fn(x) -> [B, feature_dim]``.
        """
        self._features = fn

    def _x_input(self, x: torch.Tensor) -> torch.Tensor:
        if len(self.input_shape) == 3:
            pooled = F.adaptive_avg_pool2d(x, (self.pool_size[0], self.pool_size[1]))
        else:
            pooled = F.adaptive_avg_pool1d(x, self.pool_size[0])
        parts = [pooled.flatten(1)]
        if self.feature_dim:
            if self._features is None:
                raise RuntimeError(
                    "this GMM conditions on features: call set_feature_extractor first"
                )
            with torch.no_grad():
                feats = self._features(x).flatten(1)
            if feats.shape[1] != self.feature_dim:
                raise ValueError(
                    f"the feature extractor gave {feats.shape[1]} features, expected {self.feature_dim}"
                )
            parts.append(feats)
        return torch.cat(parts, 1)

    def condition(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """The condition vector ``h`` of each input, ``[B, hidden]``."""
        if self.form == "none":
            return self.h0.expand(x.shape[0], -1)
        if self.form == "x":
            return self.x_net(self._x_input(x))
        if self.form == "y":
            return self.y_emb(y)
        return self.mix(torch.cat([self.x_net(self._x_input(x)), self.y_emb(y)], -1))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> MixtureParams:
        """The mixture's parameters for each input of the batch.

        Args:
            x: inputs ``[B, *input_shape]``.
            y: labels ``[B]``.

        Returns:
            :class:`MixtureParams` (``logits`` are ``log π`` with the weight floor applied).

        Raises:
            ValueError: inputs of the wrong shape or one label per input missing.
        """
        if x.shape[1:] != self.input_shape:
            raise ValueError(
                f"inputs of shape {tuple(x.shape[1:])} given to a GMM built for {self.input_shape}"
            )
        if y.shape != x.shape[:1]:
            raise ValueError("one label per input is needed")
        h = self.condition(x, y)
        b = x.shape[0]
        mu = self.mu_head(h).view(b, self.k, self.d)
        log_std = self.logstd_head(h).view(b, self.k, self.d).clamp(*self.logstd_bounds)
        raw = self.pi_head(h)
        if self.weight_floor > 0:
            pi = self.weight_floor / self.k + (1 - self.weight_floor) * raw.softmax(-1)
            return MixtureParams(pi.log(), mu, log_std)
        return MixtureParams(raw.log_softmax(-1), mu, log_std)

    # -- sampling -----------------------------------------------------------------------------
    def rsample_latent(
        self, p: MixtureParams, n: int, tau: float, generator: torch.Generator | None = None
    ) -> torch.Tensor:
        """Differentiable latent draws ``[n, B, D]`` (Gumbel-softmax + reparameterisation)."""
        w = gumbel_softmax_weights(p.logits, n, tau, generator)  # [n, B, K]
        xi = torch.randn(
            (n, *p.mu.shape), generator=generator, device=p.mu.device, dtype=p.mu.dtype
        )
        comp = p.mu.unsqueeze(0) + p.log_std.exp().unsqueeze(0) * xi  # [n, B, K, D]
        return (w.unsqueeze(-1) * comp).sum(-2)

    @torch.no_grad()
    def sample_latent(
        self, p: MixtureParams, n: int, generator: torch.Generator | None = None
    ) -> torch.Tensor:
        """Exact mixture draws ``[n, B, D]``: a hard component index, then its Gaussian."""
        b = p.logits.shape[0]
        idx = torch.multinomial(p.weights, n, replacement=True, generator=generator).T  # [n, B]
        gather = idx[..., None, None].expand(n, b, 1, self.d)
        mu = p.mu.unsqueeze(0).expand(n, -1, -1, -1).gather(2, gather).squeeze(2)
        std = p.log_std.exp().unsqueeze(0).expand(n, -1, -1, -1).gather(2, gather).squeeze(2)
        xi = torch.randn(mu.shape, generator=generator, device=mu.device, dtype=mu.dtype)
        return mu + std * xi

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        """Latent ``[..., D]`` -> perturbation ``[..., *input_shape]`` inside the ball."""
        lead = z.shape[:-1]
        u = decode_latent(z.reshape(-1, *self.latent_shape), self.input_shape, self.eps)
        return u.reshape(*lead, *self.input_shape)

    def sampler(self, x: torch.Tensor, y: torch.Tensor, m: int, g: torch.Generator) -> torch.Tensor:
        """``m`` exact draws of δ for each input: ``[m, B, *input_shape]`` (a PR sampler)."""
        with torch.no_grad():
            return self.decode(self.sample_latent(self(x, y), m, g))

    # -- regularisers -------------------------------------------------------------------------
    def regularisers(self, p: MixtureParams) -> dict[str, torch.Tensor]:
        """``entropy``: ``1 - H(π)/log K`` (0 for uniform weights); ``diversity``:
        ``-log det(G + 1e-4 I)/K`` of the unit-normed means' Gram matrix (0 if orthogonal)."""
        if self.k == 1:
            zero = p.logits.sum() * 0
            return {"entropy": zero, "diversity": zero}
        logp = p.logits.log_softmax(-1)
        ent = -(logp.exp() * logp).sum(-1) / math.log(self.k)
        mu_hat = F.normalize(p.mu, dim=-1)
        gram = mu_hat @ mu_hat.transpose(1, 2) + 1e-4 * torch.eye(self.k, device=p.mu.device)
        div = -torch.logdet(gram) / self.k
        return {"entropy": (1 - ent).mean(), "diversity": div.clamp(min=0).mean()}

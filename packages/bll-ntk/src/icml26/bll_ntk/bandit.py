"""The wheel bandit (Riquelme et al. 2018) with NeuralLinear Thompson sampling, BLL and NTK-BLL.

**Environment.** Contexts are uniform in the unit disc; arm 0 always pays
``N(μ1 = 1.2, 0.01²)``. Inside the radius δ the other arms pay ``N(μ2 = 1.0, 0.01²)``; outside
it, the arm of the context's quadrant pays ``N(μ3 = 50, 0.01²)`` and the rest ``μ2``. A large δ
makes the lucrative outer ring rare (a share ``1 − δ²`` of the contexts), so a policy must keep
exploring it.

**Policy** (Riquelme et al.'s NeuralLinear, "Deep Bayesian Bandits Showdown", ICLR 2018): a
network with one output per arm is trained by least squares on the observed (context, pulled
arm, reward) triples, every ``retrain_every`` pulls for ``train_steps`` mini-batch steps (it
keeps its weights between retrainings). On its last-layer features ``z = φ̃(x)`` each arm ``a``
has its own Bayesian linear regression with a normal-inverse-gamma prior::

    σ_a² ~ IG(a0, b0),    β_a | σ_a² ~ N(0, σ_a² Λ0_a⁻¹)

conditioned on the rewards of arm ``a`` only (``Λ_a = Λ0_a + Z_aᵀZ_a``, ``μ_a = Λ_a⁻¹ Z_aᵀ y_a``,
``a_a = a0 + n_a/2``, ``b_a = b0 + ½(y_aᵀy_a − μ_aᵀ Λ_a μ_a)``), updated after every pull and
recomputed from all data after every retraining. Thompson sampling draws ``σ_a²`` and ``β_a``
for every arm and pulls ``argmax_a zᵀβ_a``. Riquelme's settings: a0 = b0 = 6, λ = 0.25,
two initial pulls per arm, retraining every 50 pulls for 100 steps of batch 512.

* ``bll``: NeuralLinear as published, ``Λ0_a = λ I``.
* ``ntk_bll``: the paper's prior, ``Λ0_a = λ (I + M_aa)⁻¹``, ``M_aa`` the arm's block of the
  projected-NTK correction (:func:`icml26.bll_ntk.jacobians.ntk_projection`) of the current
  network on the contexts seen so far (the body parameters share the prior scale
  ``σ_a²/λ``, so the correction enters as in :class:`icml26.bll_ntk.bll.NTKBLL`).
* ``ntk_bll_sub``: the same with the projection from ``projection_subsample`` uniformly drawn
  contexts (the paper's subsampling).
* ``greedy``: the ``bll`` posterior mean, no sampling: the no-exploration floor.

``noise`` (settings) replaces the inverse-gamma noise by a fixed Gaussian noise variance
(a Gaussian-noise BLL: ``β_a ~ N(μ_a, σ² Λ_a⁻¹)``), to check that a result does not hinge on
the noise model. Diagnostics per run: ``var_ratio`` (median over the arms and the contexts
seen of the NTK-BLL / BLL posterior variance ``zᵀΛ_a⁻¹z`` at each retraining: how much the
prior change moves the exploration), ``prior_share`` (``tr Λ0_a / tr Λ_a``: how much the prior
still weighs against the data) and ``block_spread`` (how much the arms' ``M_aa`` differ:
the relative Frobenius distance of each block from their mean).

The regret is the cumulative *expected* regret, ``Σ_t max_a μ(x_t, a) − μ(x_t, a_t)``.
Contexts and rewards, the network and Thompson sampling draw from separate streams of the seed
(:func:`icml26.shared.rng_for`), so every policy of a seed sees the same contexts and rewards.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from icml26.bll_ntk.jacobians import ntk_projection
from icml26.bll_ntk.network import LastLayerModel, make_mlp
from icml26.shared import rng_for, seed_for

__all__ = [
    "BANDIT_POLICIES",
    "BanditRun",
    "NIGArms",
    "NeuralLinearSettings",
    "WheelBandit",
    "run_wheel",
]

#: The policies :func:`run_wheel` knows.
BANDIT_POLICIES = ("bll", "ntk_bll", "ntk_bll_sub", "greedy")


@dataclass(frozen=True)
class WheelBandit:
    """The wheel bandit's reward structure.

    Attributes:
        delta: radius of the inner disc, in (0, 1).
        mu1, mu2, mu3: mean rewards of arm 0, the ordinary arms, the outer-ring arm.
        sigma: reward noise.
        n_arms, context_dim: 5 arms, 2-D contexts.

    Raises:
        ValueError: ``delta`` outside (0, 1).
    """

    delta: float = 0.95
    mu1: float = 1.2
    mu2: float = 1.0
    mu3: float = 50.0
    sigma: float = 0.01
    n_arms: int = 5
    context_dim: int = 2

    def __post_init__(self) -> None:
        if not 0.0 < self.delta < 1.0:
            raise ValueError(f"wheel bandit delta must be in (0, 1), got {self.delta}")

    def contexts(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` contexts uniform in the unit disc ``(n, 2)``.

        Args:
            n: number of contexts.
            rng: the random stream.

        Returns:
            The contexts.
        """
        r = np.sqrt(rng.uniform(size=n))
        a = rng.uniform(0, 2 * np.pi, size=n)
        return np.c_[r * np.cos(a), r * np.sin(a)]

    def mean_rewards(self, x: np.ndarray) -> np.ndarray:
        """Expected rewards ``(N, 5)`` at contexts ``x (N, 2)``.

        Args:
            x: contexts.

        Returns:
            The mean reward of each arm.
        """
        x = np.atleast_2d(x)
        mu = np.full((x.shape[0], 5), self.mu2)
        mu[:, 0] = self.mu1
        outer = np.linalg.norm(x, axis=1) > self.delta
        quad = np.where(x[:, 0] >= 0, np.where(x[:, 1] >= 0, 1, 4), np.where(x[:, 1] >= 0, 2, 3))
        mu[outer, quad[outer]] = self.mu3
        return mu

    def rewards(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Noisy rewards ``(N, 5)`` of every arm at contexts ``x``.

        Args:
            x: contexts.
            rng: the random stream.

        Returns:
            The rewards.
        """
        mu = self.mean_rewards(x)
        return mu + self.sigma * rng.standard_normal(mu.shape)


@dataclass(frozen=True)
class NeuralLinearSettings:
    """NeuralLinear's settings (defaults: Riquelme et al. 2018's, with Adam for RMSProp).

    Attributes:
        steps: contexts (pulls) per run.
        delta: the wheel's δ.
        hidden: the network's hidden widths (last = feature width).
        a0, b0: the inverse-gamma noise prior.
        prior_precision: λ of the weight prior ``N(0, σ²/λ ...)``.
        initial_pulls: round-robin pulls of every arm before sampling starts.
        retrain_every: pulls between network retrainings.
        train_steps, batch_size, lr: each retraining (Adam).
        ridge: λ of the NTK projection's least squares.
        projection_subsample: contexts for ``ntk_bll_sub``'s projection.
        noise: a fixed Gaussian noise variance instead of the inverse-gamma noise
            (``None``: NeuralLinear's inverse-gamma prior).

    Raises:
        ValueError: a non-positive count, rate or prior parameter.
    """

    steps: int = 2000
    delta: float = 0.99
    hidden: tuple[int, ...] = (50,)
    a0: float = 6.0
    b0: float = 6.0
    prior_precision: float = 0.25
    initial_pulls: int = 2
    retrain_every: int = 50
    train_steps: int = 100
    batch_size: int = 512
    lr: float = 1e-2
    ridge: float = 1.0
    projection_subsample: int = 256
    noise: float | None = None

    def __post_init__(self) -> None:
        if self.noise is not None and self.noise <= 0:
            raise ValueError(f"noise must be a positive variance or None, got {self.noise}")
        counts = {
            "steps": self.steps,
            "initial_pulls": self.initial_pulls,
            "retrain_every": self.retrain_every,
            "train_steps": self.train_steps,
            "batch_size": self.batch_size,
            "projection_subsample": self.projection_subsample,
        }
        bad = [k for k, v in counts.items() if v < 1]
        if bad:
            raise ValueError(f"these bandit settings must be >= 1: {', '.join(bad)}")
        if min(self.a0, self.b0, self.prior_precision, self.lr) <= 0 or self.ridge < 0:
            raise ValueError("a0, b0, prior_precision and lr must be > 0, ridge >= 0")
        WheelBandit(delta=self.delta)  # validates delta


class NIGArms:
    """Per-arm normal-inverse-gamma Bayesian linear regression (NeuralLinear's last layer).

    Args:
        prior_precisions: ``(A, d, d)`` prior precision ``Λ0_a`` of each arm.
        a0, b0: the inverse-gamma prior of each arm's noise variance.
        noise: a fixed noise variance instead (a Gaussian-noise BLL); ``None``: inverse-gamma.
    """

    def __init__(
        self, prior_precisions: np.ndarray, a0: float, b0: float, noise: float | None = None
    ) -> None:
        self.prior = np.asarray(prior_precisions, dtype=np.float64)
        A, d, _ = self.prior.shape
        self.a0, self.b0, self.noise = a0, b0, noise
        self.G = np.zeros((A, d, d))
        self.b = np.zeros((A, d))
        self.yy = np.zeros(A)
        self.n = np.zeros(A)
        self._post: list[tuple[np.ndarray, np.ndarray, float, float] | None] = [None] * A

    def add(self, z: np.ndarray, arm: int, reward: float) -> None:
        """Condition arm ``arm`` on one more (feature, reward) pair.

        Args:
            z: ``(d,)`` features of the context.
            arm: the pulled arm.
            reward: its reward.
        """
        self.G[arm] += np.outer(z, z)
        self.b[arm] += z * reward
        self.yy[arm] += reward * reward
        self.n[arm] += 1
        self._post[arm] = None

    def add_many(self, Z: np.ndarray, arms: np.ndarray, rewards: np.ndarray) -> None:
        """Condition on many (features, arm, reward) triples at once.

        Args:
            Z: ``(n, d)`` features.
            arms: ``(n,)`` pulled arms.
            rewards: ``(n,)`` their rewards.
        """
        for arm in np.unique(arms):
            sel = arms == arm
            Za, ya = Z[sel], rewards[sel]
            self.G[arm] += Za.T @ Za
            self.b[arm] += Za.T @ ya
            self.yy[arm] += float(ya @ ya)
            self.n[arm] += int(sel.sum())
            self._post[arm] = None

    def posterior(self, arm: int) -> tuple[np.ndarray, np.ndarray, float, float]:
        """``(μ, L⁻¹, a, b)`` of one arm, with ``Λ = L Lᵀ`` (cached until the next ``add``).

        Args:
            arm: the arm.

        Returns:
            The posterior mean, the inverse Cholesky factor of the precision, and the
            inverse-gamma parameters.
        """
        post = self._post[arm]
        if post is None:
            P = self.prior[arm] + self.G[arm]
            Li = np.linalg.inv(np.linalg.cholesky(P))
            mu = Li.T @ (Li @ self.b[arm])
            a = self.a0 + 0.5 * self.n[arm]
            b = self.b0 + 0.5 * max(self.yy[arm] - float(mu @ self.b[arm]), 0.0)
            post = (mu, Li, a, b)
            self._post[arm] = post
        return post

    def sample(self, z: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One Thompson draw of every arm's value at features ``z``.

        Args:
            z: ``(d,)`` features.
            rng: the sampling stream.

        Returns:
            ``(A,)`` sampled values ``zᵀβ_a``.
        """
        out = np.empty(len(self.n))
        for arm in range(len(self.n)):
            mu, Li, a, b = self.posterior(arm)
            s2 = self.noise if self.noise is not None else b / rng.gamma(a)
            out[arm] = z @ mu + np.sqrt(s2) * ((Li @ z) @ rng.standard_normal(len(z)))
        return out

    def means(self, z: np.ndarray) -> np.ndarray:
        """Posterior mean value of every arm at ``z``.

        Args:
            z: ``(d,)`` features.

        Returns:
            ``(A,)`` values ``zᵀμ_a``.
        """
        return np.array([z @ self.posterior(arm)[0] for arm in range(len(self.n))])


@dataclass(frozen=True)
class BanditRun:
    """One policy on one seed.

    Attributes:
        regret: ``(steps,)`` cumulative expected regret.
        outer_found: the share of outer-ring contexts on which the policy pulled their arm.
        trace_ratio: mean over retrainings of ``tr M / D`` (0 for the non-NTK policies).
        var_ratio: mean over retrainings of the median NTK-BLL / BLL posterior variance
            (1 for the non-NTK policies).
        prior_share: mean over retrainings and arms of ``tr Λ0_a / tr Λ_a``.
        block_spread: mean over retrainings of the arms' ``M_aa`` spread (0 without NTK).
    """

    regret: np.ndarray
    outer_found: float
    trace_ratio: float
    var_ratio: float = 1.0
    prior_share: float = 0.0
    block_spread: float = 0.0


def _prior_precisions(
    policy: str, net: LastLayerModel, xs: torch.Tensor, s: NeuralLinearSettings, seed: int
) -> tuple[np.ndarray, float, float]:
    """``Λ0_a`` of every arm, ``tr M / D`` and the arms' block spread at the current network."""
    d = net.feature_dim
    A = net.n_outputs
    eye = np.eye(d)
    if policy not in ("ntk_bll", "ntk_bll_sub"):
        return np.broadcast_to(s.prior_precision * eye, (A, d, d)).copy(), 0.0, 0.0
    sub = s.projection_subsample if policy == "ntk_bll_sub" else None
    proj = ntk_projection(
        net, xs, ridge=s.ridge, subsample=sub, generator=torch.Generator().manual_seed(seed)
    )
    M = proj.M.cpu().numpy()
    blocks = np.stack([M[a * d : (a + 1) * d, a * d : (a + 1) * d] for a in range(A)])
    centre = blocks.mean(0)
    spread = float(
        np.mean([np.linalg.norm(b - centre) for b in blocks])
        / max(float(np.linalg.norm(centre)), 1e-300)
    )
    prec = np.stack([s.prior_precision * np.linalg.inv(eye + block) for block in blocks])
    return prec, proj.trace_ratio, spread


def _diagnose(arms: NIGArms, Z: np.ndarray, s: NeuralLinearSettings) -> tuple[float, float]:
    """(median posterior-variance ratio to BLL's prior over arms and rows of ``Z``, mean
    prior share ``tr Λ0 / tr Λ``)."""
    d = Z.shape[1]
    ratios, shares = [], []
    for arm in range(len(arms.n)):
        own = np.linalg.inv(arms.prior[arm] + arms.G[arm])
        bll = np.linalg.inv(s.prior_precision * np.eye(d) + arms.G[arm])
        ratios.append(np.einsum("nd,de,ne->n", Z, own, Z) / np.einsum("nd,de,ne->n", Z, bll, Z))
        shares.append(np.trace(arms.prior[arm]) / np.trace(arms.prior[arm] + arms.G[arm]))
    return float(np.median(np.concatenate(ratios))), float(np.mean(shares))


def _retrain(
    model: torch.nn.Module,
    opt: torch.optim.Optimizer,
    xs: torch.Tensor,
    actions: np.ndarray,
    rewards: np.ndarray,
    s: NeuralLinearSettings,
    gen: torch.Generator,
) -> None:
    """``train_steps`` Adam steps of least squares on the pulled arms' rewards."""
    n = xs.shape[0]
    rows = torch.arange(n)
    acts = torch.as_tensor(actions)
    target = torch.as_tensor(rewards, dtype=xs.dtype)
    model.train()
    for _ in range(s.train_steps):
        idx = torch.randint(0, n, (min(s.batch_size, n),), generator=gen)
        opt.zero_grad()
        pred = model(xs[idx])[rows[: len(idx)], acts[idx]]
        loss = ((pred - target[idx]) ** 2).mean()
        loss.backward()
        opt.step()
    model.eval()


def run_wheel(policy: str, s: NeuralLinearSettings, seed: int) -> BanditRun:
    """One NeuralLinear run of ``policy`` on the wheel bandit.

    Args:
        policy: one of :data:`BANDIT_POLICIES`.
        s: the settings.
        seed: the run's seed (contexts, network and sampling use separate streams of it).

    Returns:
        The regret curve and diagnostics.

    Raises:
        ValueError: an unknown policy.
    """
    if policy not in BANDIT_POLICIES:
        raise ValueError(f"unknown bandit policy {policy!r}: use one of {BANDIT_POLICIES}")
    env = WheelBandit(delta=s.delta)
    env_rng = rng_for(seed, "wheel")
    X = env.contexts(s.steps, env_rng)
    R = env.rewards(X, env_rng)
    MU = env.mean_rewards(X)
    best = MU.max(1)
    A = env.n_arms
    sample_rng = rng_for(seed, "thompson")
    torch.manual_seed(seed_for(seed, "network"))
    model = make_mlp(env.context_dim, A, s.hidden)
    net = LastLayerModel(model)
    opt = torch.optim.Adam(model.parameters(), lr=s.lr)
    gen = torch.Generator().manual_seed(seed_for(seed, "batches"))
    xs = torch.as_tensor(X, dtype=torch.float32)
    actions = np.zeros(s.steps, dtype=int)
    regret = np.zeros(s.steps)
    arms: NIGArms | None = None
    feats = np.zeros((0, 0))
    ratios: list[float] = []
    diag: list[tuple[float, float, float]] = []  # (var ratio, prior share, block spread)
    warmup = A * s.initial_pulls
    for t in range(s.steps):
        if t < warmup:
            a = t % A
        else:
            if arms is None or (t - warmup) % s.retrain_every == 0:
                _retrain(model, opt, xs[:t], actions[:t], R[np.arange(t), actions[:t]], s, gen)
                feats = net.features(xs)[0].double().cpu().numpy()
                prec, ratio, spread = _prior_precisions(
                    policy, net, xs[:t], s, seed_for(seed, "proj", t)
                )
                ratios.append(ratio)
                arms = NIGArms(prec, s.a0, s.b0, s.noise)
                arms.add_many(feats[:t], actions[:t], R[np.arange(t), actions[:t]])
                diag.append((*_diagnose(arms, feats[max(0, t - 200) : t], s), spread))
            z = feats[t]
            values = arms.means(z) if policy == "greedy" else arms.sample(z, sample_rng)
            a = int(np.argmax(values))
        actions[t] = a
        regret[t] = best[t] - MU[t, a]
        if arms is not None:
            arms.add(feats[t], a, float(R[t, a]))
    outer = np.linalg.norm(X, axis=1) > s.delta
    found = float(np.mean(actions[outer] == MU[outer].argmax(1))) if outer.any() else float("nan")
    means = np.mean(diag, axis=0) if diag else (1.0, 0.0, 0.0)
    return BanditRun(
        np.cumsum(regret),
        found,
        float(np.mean(ratios)) if ratios else 0.0,
        float(means[0]),
        float(means[1]),
        float(means[2]),
    )

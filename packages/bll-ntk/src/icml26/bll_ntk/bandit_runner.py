"""Thompson sampling on the wheel bandit with each posterior (neural-linear style).

The network (arms as outputs, only the pulled arm's reward observed) is retrained every
``retrain_every`` pulls, the posterior refitted every ``update_every`` pulls, and each pull
plays the arm maximising one posterior function sample at the context.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from icml26.bll_ntk.bandit import WheelBandit
from icml26.bll_ntk.baselines import DeepEnsemble, MCDropout
from icml26.bll_ntk.bll import BLL, NTKBLL, LastLayerLaplace, LinearisedLaplace
from icml26.bll_ntk.network import make_mlp
from icml26.bll_ntk.train import TrainSpec, train_regressor

__all__ = ["BanditSettings", "run_thompson"]


@dataclass(frozen=True)
class BanditSettings:
    steps: int = 1000
    delta: float = 0.95
    hidden: tuple[int, ...] = (50, 50)
    train_steps: int = 200
    retrain_every: int = 100
    update_every: int = 25
    init_pulls: int = 2
    lr: float = 3e-3
    weight_decay: float = 1e-4
    ridge: float = 1.0
    hyperparameters: str = "bll"
    subsample: int = 64
    ensemble_size: int = 5
    dropout: float = 0.1


def run_thompson(method: str, s: BanditSettings, seed: int) -> np.ndarray:
    """Cumulative expected regret ``(steps,)`` of Thompson sampling with ``method``."""
    env = WheelBandit(delta=s.delta)
    rng = np.random.default_rng(seed)
    X = env.contexts(s.steps, rng)
    R = env.rewards(X, rng)
    MU = env.mean_rewards(X)
    A = env.n_arms
    spec = TrainSpec(steps=s.train_steps, lr=s.lr, weight_decay=s.weight_decay, batch_size=256)
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    xs = torch.tensor(X, dtype=torch.float32)
    actions = np.zeros(s.steps, dtype=int)
    regret = np.zeros(s.steps)
    model = make_mlp(2, A, s.hidden, dropout=s.dropout if method == "mc_dropout" else 0.0)
    post = None
    scale = (0.0, 1.0)
    for t in range(s.steps):
        if t < A * s.init_pulls:
            a = t % A
        else:
            n = t
            mask = torch.zeros(n, A, dtype=torch.bool)
            mask[torch.arange(n), torch.tensor(actions[:n])] = True
            if post is None or t % s.retrain_every == 0 or t % s.update_every == 0:
                r_obs = R[np.arange(n), actions[:n]]
                scale = (float(r_obs.mean()), float(r_obs.std() + 1e-6))
                y = torch.zeros(n, A)
                y[mask] = torch.tensor((r_obs - scale[0]) / scale[1], dtype=torch.float32)
                retrain = post is None or t % s.retrain_every == 0
                post = _refit(method, post, model, xs[:n], y, mask, spec, s, retrain, seed + t)
            a = int(np.argmax(_sample(method, post, model, xs[t : t + 1], gen)))
        actions[t] = a
        regret[t] = MU[t].max() - MU[t, a]
    return np.cumsum(regret)


def _refit(method, post, model, x, y, mask, spec, s, retrain, seed):  # type: ignore[no-untyped-def]
    if method == "ensemble":
        if retrain or post is None:
            ens = DeepEnsemble(
                lambda: make_mlp(2, y.shape[1], s.hidden), "regression", spec, s.ensemble_size, seed
            )
            return ens.fit(x, y, mask)
        return post
    if retrain:
        train_regressor(model, x, y, spec, mask=mask, seed=seed)
    if method == "mc_dropout":
        return MCDropout(model, "regression", spec, n_samples=2)  # sampled one pass at a time
    if method == "bll":
        return BLL(model).fit(x, y, mask)
    if method in ("ntk_bll", "ntk_bll_sub"):
        sub = s.subsample if method == "ntk_bll_sub" else None
        if retrain or post is None:
            post = NTKBLL(
                model,
                ridge=s.ridge,
                subsample=sub,
                posterior_subsample=sub,
                hyperparameters=s.hyperparameters,  # type: ignore[arg-type]
                seed=seed,
            )
            return post.fit(x, y, mask)
        return post.fit(x, y, mask, reuse_projection=True)
    if method == "ll_laplace":
        return LastLayerLaplace(model).fit(x, y, mask)
    if method == "lla":
        return LinearisedLaplace(model).fit(x, y, mask)
    raise ValueError(f"unknown bandit method {method!r}")


def _sample(method, post, model, x, gen):  # type: ignore[no-untyped-def]
    if method == "ensemble":
        k = int(torch.randint(len(post.members), (1,), generator=gen))
        with torch.no_grad():
            return post.members[k](x)[0].cpu().numpy()
    if method == "mc_dropout":
        return post.outputs(x, n_samples=1)[0, 0].cpu().numpy()
    if method in ("bll", "ntk_bll", "ntk_bll_sub"):
        return post.sample_functions(x, 1, gen)[0, 0].cpu().numpy()
    cov = post.output_cov(x)[0]
    with torch.no_grad():
        mean = model(x)[0].double()
    lam, Q = torch.linalg.eigh(0.5 * (cov + cov.T))
    z = torch.randn(cov.shape[0], generator=gen, dtype=torch.float64).to(cov.device)
    return (mean + Q @ (lam.clamp_min(0.0).sqrt() * z)).cpu().numpy()

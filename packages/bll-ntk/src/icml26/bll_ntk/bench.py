"""``icml26 bench bll-ntk``: fit + predict seconds of BLL, NTK-BLL and the linearised Laplace.

Each (width, N) size trains a 2-hidden-layer regression MLP on synthetic data, then times
``fit`` + ``predict`` of each posterior ``repeats`` times in this one process
(:func:`icml26.shared.stats.best_of`): the median is the figure, the spread
(max − min over repeats) is reported beside it.
"""

from __future__ import annotations

from typing import Any

import torch

from icml26.bll_ntk.bll import BLL, NTKBLL
from icml26.bll_ntk.config import BenchConfig
from icml26.bll_ntk.laplace import LinearisedLaplace
from icml26.bll_ntk.network import make_mlp
from icml26.bll_ntk.train import TrainSpec, train_regressor
from icml26.shared import RunDir, log, seed_for
from icml26.shared.keys import metric_key
from icml26.shared.stats import best_of

__all__ = ["bench"]

_METHODS = {"bll": BLL, "ntk_bll": NTKBLL, "lla": LinearisedLaplace}


def bench(cfg: BenchConfig, run_dir: RunDir) -> dict[str, Any]:
    """Time every posterior at every size.

    Args:
        cfg: the bench config.
        run_dir: the run folder.

    Returns:
        ``seconds.<method>.<size>`` (median), ``spread.<method>.<size>`` (max − min),
        ``n_params.<size>`` and ``cost_ratio.<size>.<method>`` (median over LLA's median;
        ``lla`` itself 1).
    """
    out: dict[str, float] = {}
    gen = torch.Generator().manual_seed(seed_for(cfg.seed, "bench-data"))
    for width, n in zip(cfg.widths, cfg.n_points, strict=True):
        size = f"w{width}_n{n}"
        x = torch.randn(n + cfg.n_test, cfg.d_in, generator=gen)
        w = torch.randn(cfg.d_in, 1, generator=gen)
        y = torch.sin(x @ w) + 0.1 * torch.randn(n + cfg.n_test, 1, generator=gen)
        torch.manual_seed(seed_for(cfg.seed, "bench-model", size))
        model = make_mlp(cfg.d_in, 1, (width,) * cfg.depth)
        train_regressor(model, x[:n], y[:n], TrainSpec(steps=200, batch_size=256))
        medians: dict[str, float] = {}
        xtr, ytr, xte = x[:n], y[:n], x[n:]
        for name, cls in _METHODS.items():

            def fit_predict(
                cls: Any = cls, model: Any = model, xtr: Any = xtr, ytr: Any = ytr, xte: Any = xte
            ) -> Any:
                return cls(model).fit(xtr, ytr).predict(xte)

            timing = best_of(fit_predict, repeats=cfg.repeats, warmup=1)
            medians[name] = timing.median
            out[metric_key("seconds", name, size)] = timing.median
            out[metric_key("spread", name, size)] = max(timing.times) - min(timing.times)
        out[metric_key("n_params", size)] = sum(p.numel() for p in model.parameters())
        for name in _METHODS:
            out[metric_key("cost_ratio", size, name)] = medians[name] / medians["lla"]
        run_dir.log_metrics(None, size=size, **medians)
        log(f"bench {size}: " + ", ".join(f"{k} {v:.3f}s" for k, v in medians.items()))
    return out

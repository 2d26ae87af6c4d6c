"""Transport-geometry analogs of the KL divergence and KL-regularised control (JAX, float64).

Every divergence ``D(mean1, cov1, mean2, cov2)`` is the analog of ``KL(N1 || N2)`` (``N2`` the
reference; the flow of the dynamical definition runs from ``N2`` to ``N1``)::

    from icml26.transport_kl import kl, wkl, kwkl, w2, penalty_matrix, riccati

The names are imported lazily, so ``icml26 list`` never imports JAX.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from icml26.shared.exports import lazy_exports

if TYPE_CHECKING:
    from .config import RunConfig as RunConfig
    from .control import closed_loop_costs as closed_loop_costs
    from .control import discounted_lyapunov as discounted_lyapunov
    from .control import double_integrator as double_integrator
    from .control import penalty_matrix as penalty_matrix
    from .control import riccati as riccati
    from .control import solve_discounted_riccati as solve_discounted_riccati
    from .flow import flow_divergence as flow_divergence
    from .gaussian import kl as kl
    from .gaussian import kwkl as kwkl
    from .gaussian import w2 as w2
    from .gaussian import wkl as wkl
    from .pareto import FrontSettings as FrontSettings
    from .pareto import front_study as front_study

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "RunConfig": ".config",
        "closed_loop_costs": ".control",
        "discounted_lyapunov": ".control",
        "double_integrator": ".control",
        "penalty_matrix": ".control",
        "riccati": ".control",
        "solve_discounted_riccati": ".control",
        "flow_divergence": ".flow",
        "kl": ".gaussian",
        "kwkl": ".gaussian",
        "w2": ".gaussian",
        "wkl": ".gaussian",
        "FrontSettings": ".pareto",
        "front_study": ".pareto",
    },
    submodules=["cartpole", "control", "elliptic", "flow", "gaussian", "kalman", "pareto"],
)

"""icml26-lean-slt: the formalised results of statistical learning theory as checked numerics.

Nothing here is a formal proof. Each function mirrors a theorem of the Lean 4 formalisation
``YuanheZ/lean-stat-learning-theory`` (see :data:`THEOREM_MAP`, read against the commit
``theorems.UPSTREAM_COMMIT``) and is checked against Monte Carlo on cases where the truth is
computable::

    from icml26.lean_slt import dudley_bound, make_process, monte_carlo_sup

    p = make_process("l1_ball", 1000)
    p.dudley_bound(), p.expected_sup(), monte_carlo_sup(p, rng, 4000).mean
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from icml26.shared.exports import lazy_exports

if TYPE_CHECKING:
    from .concentration import LipschitzFunction as LipschitzFunction
    from .concentration import check_lipschitz as check_lipschitz
    from .concentration import tail_check as tail_check
    from .config import RunConfig as RunConfig
    from .covering import greedy_net as greedy_net
    from .covering import maurey_log_covering_bound as maurey_log_covering_bound
    from .entropy import dudley_bound as dudley_bound
    from .entropy import entropy_integral as entropy_integral
    from .least_squares import critical_radius as critical_radius
    from .least_squares import fit_exponent as fit_exponent
    from .least_squares import l1_constrained_ls as l1_constrained_ls
    from .least_squares import master_error_bound as master_error_bound
    from .processes import make_process as make_process
    from .processes import monte_carlo_sup as monte_carlo_sup
    from .theorems import THEOREM_MAP as THEOREM_MAP
    from .theorems import verify_theorem_map as verify_theorem_map

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "LipschitzFunction": ".concentration",
        "check_lipschitz": ".concentration",
        "tail_check": ".concentration",
        "RunConfig": ".config",
        "greedy_net": ".covering",
        "maurey_log_covering_bound": ".covering",
        "dudley_bound": ".entropy",
        "entropy_integral": ".entropy",
        "critical_radius": ".least_squares",
        "fit_exponent": ".least_squares",
        "l1_constrained_ls": ".least_squares",
        "master_error_bound": ".least_squares",
        "make_process": ".processes",
        "monte_carlo_sup": ".processes",
        "THEOREM_MAP": ".theorems",
        "verify_theorem_map": ".theorems",
    },
    submodules=["concentration", "covering", "entropy", "least_squares", "processes", "theorems"],
)

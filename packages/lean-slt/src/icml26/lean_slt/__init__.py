"""icml26-lean-slt: the formalised results of statistical learning theory as checked numerics.

Nothing here is a formal proof. Each function mirrors a theorem of the Lean 4 formalisation
``YuanheZ/lean-stat-learning-theory`` (see :data:`THEOREM_MAP`) and is checked against Monte
Carlo on cases where the truth is computable.
"""

from icml26.lean_slt.concentration import (
    LIPSCHITZ_FUNCTIONS,
    LipschitzFunction,
    TailCheck,
    check_lipschitz,
    concentration_bound,
    effective_variance_ratio,
    estimate_lipschitz,
    tail_check,
)
from icml26.lean_slt.covering import (
    euclidean_ball_log_covering_bound,
    euclidean_ball_log_covering_lower,
    greedy_net,
    interval_covering_number,
    l1_ball_log_covering_bound,
    l1_ball_log_packing_gv,
    l1_ball_log_packing_lower,
    l1_ball_log_volume_lower,
    linear_class_log_covering_bound,
    lipschitz_class_log_covering_bounds,
    maurey_log_covering_bound,
    sample_l1_ball,
    sample_lipschitz_functions,
    sample_sparse_sign_vectors,
)
from icml26.lean_slt.entropy import (
    DUDLEY_CONSTANT,
    dudley_bound,
    entropy_integral,
    power_law_entropy_integral,
)
from icml26.lean_slt.least_squares import (
    LINEAR_C1_RANK,
    LINEAR_C2_RANK,
    best_subset_ls,
    critical_radius,
    empirical_error,
    fit_exponent,
    formal_linear_rate_bound,
    l1_constrained_ls,
    l1_local_complexity_bound,
    linear_critical_radius,
    linear_local_complexity,
    master_error_bound,
    ols,
    project_l1_ball,
)
from icml26.lean_slt.processes import (
    PROCESSES,
    BrownianGrid,
    EuclideanBallProcess,
    FiniteIID,
    GaussianProcess,
    L1BallProcess,
    expected_max_iid_gaussian,
    make_process,
    monte_carlo_sup,
)
from icml26.lean_slt.theorems import THEOREM_MAP, TheoremRef, markdown_table, theorem_for

__all__ = [
    "DUDLEY_CONSTANT",
    "LINEAR_C1_RANK",
    "LINEAR_C2_RANK",
    "LIPSCHITZ_FUNCTIONS",
    "PROCESSES",
    "THEOREM_MAP",
    "BrownianGrid",
    "EuclideanBallProcess",
    "FiniteIID",
    "GaussianProcess",
    "L1BallProcess",
    "LipschitzFunction",
    "TailCheck",
    "TheoremRef",
    "best_subset_ls",
    "check_lipschitz",
    "concentration_bound",
    "critical_radius",
    "dudley_bound",
    "effective_variance_ratio",
    "empirical_error",
    "entropy_integral",
    "estimate_lipschitz",
    "euclidean_ball_log_covering_bound",
    "euclidean_ball_log_covering_lower",
    "expected_max_iid_gaussian",
    "fit_exponent",
    "formal_linear_rate_bound",
    "greedy_net",
    "interval_covering_number",
    "l1_ball_log_covering_bound",
    "l1_ball_log_packing_gv",
    "l1_ball_log_packing_lower",
    "l1_ball_log_volume_lower",
    "l1_constrained_ls",
    "l1_local_complexity_bound",
    "linear_class_log_covering_bound",
    "linear_critical_radius",
    "linear_local_complexity",
    "lipschitz_class_log_covering_bounds",
    "make_process",
    "markdown_table",
    "master_error_bound",
    "maurey_log_covering_bound",
    "monte_carlo_sup",
    "ols",
    "power_law_entropy_integral",
    "project_l1_ball",
    "sample_l1_ball",
    "sample_lipschitz_functions",
    "sample_sparse_sign_vectors",
    "tail_check",
    "theorem_for",
]

from importlib.metadata import PackageNotFoundError as _NotFound
from importlib.metadata import version as _version

try:
    __version__ = _version("icml26-lean-slt")
except _NotFound:  # running from a source tree
    __version__ = "0+unknown"

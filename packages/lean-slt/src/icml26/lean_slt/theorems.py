"""The map: each function of this package and the Lean 4 theorem it mirrors.

Theorem names and files are those of the formalisation's public repository
(``YuanheZ/lean-stat-learning-theory``) at commit :data:`UPSTREAM_COMMIT` (Lean v4.32.0,
Mathlib at :data:`MATHLIB_REV`), checked against that commit's sources by
:func:`verify_theorem_map` (every named theorem is declared in the file named); statements are written here in
mathematical notation, in our own words. Nothing in this package is a formal proof: a check
below is a numerical experiment on cases where the truth is computable. For every hypothesis
of a theorem the map says how our check stands towards it:

* ``holds by construction``: true of the objects we simulate, by their definition;
* ``verified``: checked numerically by the package (a test or the main job can fail on it);
* ``assumed``: needed by the theorem, true of our setting, not checked numerically;
* ``not formalised``: the check goes beyond the formalisation (textbook result).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "LEAN_TOOLCHAIN",
    "MATHLIB_REV",
    "REPOSITORY",
    "THEOREM_MAP",
    "UPSTREAM_COMMIT",
    "TheoremRef",
    "markdown_table",
    "theorem_for",
    "verify_theorem_map",
]

REPOSITORY = "https://github.com/YuanheZ/lean-stat-learning-theory"
#: The upstream commit the map was read against (2026-07-15, "Update README section heading").
UPSTREAM_COMMIT = "d0f506f0a695018265dccb33bcb05e2f5ca1c876"
#: ``lean-toolchain`` at that commit.
LEAN_TOOLCHAIN = "leanprover/lean4:v4.32.0"
#: Mathlib's revision in that commit's ``lake-manifest.json`` (input rev ``v4.32.0``).
MATHLIB_REV = "81a5d257c8e410db227a6665ed08f64fea08e997"


@dataclass(frozen=True)
class TheoremRef:
    """One row of the map.

    Attributes:
        function: the function(s) of this package (``module.function``).
        lean_name: the theorem's name in the formalisation ("" when not formalised).
        lean_file: its file, relative to the repository root.
        statement: the statement in mathematical notation.
        hypotheses: each hypothesis with how our check stands towards it.
        check: the metric keys / tests that exercise it.
        source: the textbook reference the formalisation cites.
    """

    function: str
    lean_name: str
    lean_file: str
    statement: str
    hypotheses: dict[str, str] = field(default_factory=dict)
    check: str = ""
    source: str = ""


#: Every function of the package that mirrors a theorem, with the theorem, its file and
#: how our check stands towards each hypothesis.
THEOREM_MAP: tuple[TheoremRef, ...] = (
    TheoremRef(
        "covering.euclidean_ball_log_covering_bound, processes.EuclideanBallProcess",
        "coveringNumber_euclideanBall_le",
        "SLT/CoveringNumber.lean",
        "N(ε, B₂ᵈ(R)) ≤ (1 + 2R/ε)ᵈ",
        {"R ≥ 0": "verified (argument check)", "ε > 0": "verified (argument check)"},
        "dudley.euclidean_ball.*; test_covering: greedy nets of ball samples",
        "Vershynin (2018), Cor. 4.2.13",
    ),
    TheoremRef(
        "covering.greedy_net (packing side)",
        "isENet_of_maximal",
        "SLT/CoveringNumber.lean",
        "a maximal ε-packing of s is an ε-net of s (ε ≥ 0)",
        {"ε ≥ 0": "verified (argument check)", "maximality": "holds by construction (greedy scan)"},
        "test_covering: every sample point is within ε of a greedy centre",
        "Vershynin (2018), Lemma 4.2.6",
    ),
    TheoremRef(
        "covering.maurey_log_covering_bound, covering.l1_ball_log_covering_bound",
        "coveringNumber_l1Ball_le",
        "SLT/CoveringNumber.lean",
        "N(ε, B₁ᵈ(R), ‖·‖₂) ≤ (2d + 1)^⌈R²/ε²⌉",
        {"R ≥ 0": "verified (argument check)", "ε > 0": "verified (argument check)"},
        "maurey.d<d>.log_bound vs log_packing (certified lower bound) and log_greedy",
        "Daras et al. (2021), Thm. 2 (Maurey's empirical method)",
    ),
    TheoremRef(
        "least_squares.l1_local_complexity_bound",
        "l1BallImage_coveringNumber_le",
        "SLT/LeastSquares/L1Regression/L1CoveringBound.lean",
        "N(ε, {Xθ/√n : ‖θ‖₁ ≤ R}) ≤ (2d + 1)^⌈R²/ε²⌉ when every column has ‖X_j‖₂ ≤ √n",
        {
            "column normalisation ‖X_j‖₂ ≤ √n": "holds by construction (columns rescaled)",
            "n > 0, R ≥ 0, ε > 0": "verified (argument check)",
        },
        "ls_rate.l1.formal_*",
        "Raskutti, Wainwright & Yu (2011), Lemma 4, q = 1",
    ),
    TheoremRef(
        "entropy.entropy_integral",
        "entropyIntegral (definition)",
        "SLT/MetricEntropy.lean",
        "∫_(0,D] √(log N(ε, s)) dε, with log N read as 0 when N ≤ 1",
        {"N(ε) finite on (0, D]": "verified (a non-finite log N raises)"},
        "test_entropy: power-law closed form, ∫₀¹ √log(1 + 2/u) du < 2 (integral_constant_lt_two)",
        "",
    ),
    TheoremRef(
        "entropy.dudley_bound, processes.*",
        "dudley",
        "SLT/Dudley.lean",
        "E sup_{t∈s} X_t ≤ 12√2 σ ∫₀ᴰ √(log N(ε, s)) dε",
        {
            "σ > 0, X σ-sub-Gaussian for the metric": "holds by construction (Gaussian, canonical metric, σ = 1)",
            "s totally bounded, diam s ≤ D": "holds by construction (D = exact diameter bound)",
            "X_{t₀} = 0 for some t₀ ∈ s": "assumed: centring at a point leaves E sup unchanged for a centred process (balls and grids contain 0)",
            "entropy integral finite": "verified (computed)",
            "sample paths continuous on s": "holds by construction (finite sets; linear in t)",
        },
        "dudley.<process>.bound ≥ mc_sup (test); l1-ball looseness growth (claim)",
        "Boucheron, Lugosi & Massart (2013), Cor. 13.2",
    ),
    TheoremRef(
        "processes.FiniteIID (finite maxima)",
        "subGaussian_finite_max_bound",
        "SLT/SubGaussian.lean",
        "E max_{t∈T} X_t ≤ σ · diam(T) · √(2 log |T|)",
        {
            "|T| ≥ 2, diam T > 0": "holds by construction",
            "X_{t₀} = 0 for some t₀ ∈ T": "assumed (as for dudley)",
        },
        "test_processes: E max of n iid Gaussians ≤ √2 · √(2 log n)",
        "Wainwright (2019), Exercise 2.12",
    ),
    TheoremRef(
        "concentration.tail_check, concentration.concentration_bound",
        "gaussian_lipschitz_concentration",
        "SLT/GaussianLipConcen.lean",
        "X ~ N(0, Iₙ), f L-Lipschitz: P(|f(X) − E f(X)| ≥ t) ≤ 2 exp(−t²/(2L²)) for t > 0",
        {
            "n > 0, L > 0": "verified (argument check)",
            "f L-Lipschitz (‖·‖₂)": "verified numerically (check_lipschitz can refute, not prove)",
        },
        "concentration.<f>.max_excess ≤ mc_error (test); tightness of the max (claim)",
        "Boucheron, Lugosi & Massart (2013), Thm. 5.6",
    ),
    TheoremRef(
        "concentration.effective_variance_ratio",
        "lipschitz_cgf_bound",
        "SLT/GaussianLipConcen.lean",
        "log E exp(λ(f − E f)) ≤ λ² L²/2",
        {"f L-Lipschitz": "verified numerically (as above)"},
        "concentration.<f>.tightness ≤ 1 is the tail form of this bound",
        "Boucheron, Lugosi & Massart (2013), Thm. 5.5",
    ),
    TheoremRef(
        "least_squares.master_error_bound",
        "master_error_bound",
        "SLT/LeastSquares/MasterErrorBound.lean",
        "t ≥ δ*: P(‖f̂ − f*‖ₙ² ≤ 16 t δ*) ≥ 1 − exp(−n t δ*/(2σ²))",
        {
            "f* ∈ F, f̂ a least-squares estimator": "holds by construction (exact OLS / best subset; FISTA to tolerance for l1)",
            "δ* satisfies G_n(δ*)/δ* ≤ δ*/(2σ)": "verified (δ* computed from G_n, exact for linear)",
            "shifted class star-shaped": "holds by construction (linear spaces, l1 balls)",
            "Gaussian noise": "holds by construction",
        },
        "ls_rate.<setting>.master_coverage (test: ≥ guaranteed probability), looseness",
        "Wainwright (2019), Thm. 13.5",
    ),
    TheoremRef(
        "least_squares.critical_radius",
        "gaussian_complexity_monotone",
        "SLT/LeastSquares/Localization.lean",
        "H star-shaped ⇒ δ ↦ G_n(δ; H)/δ is non-increasing",
        {"H star-shaped": "holds by construction"},
        "critical_radius bisects on this monotonicity; test_least_squares",
        "Wainwright (2019), Lemma 13.6",
    ),
    TheoremRef(
        "least_squares.l1_local_complexity_bound",
        "local_gaussian_complexity_bound",
        "SLT/LeastSquares/DudleyApplication.lean",
        "G_n(δ) ≤ (24√2/√n) ∫₀^{2δ} √(log N(ε, B_n(δ; H))) dε",
        {"H star-shaped, image totally bounded": "holds by construction"},
        "ls_rate.l1.formal_*",
        "Wainwright (2019), (5.48), Gaussian case",
    ),
    TheoremRef(
        "least_squares.formal_linear_rate_bound, least_squares.ols",
        "linear_minimax_rate_rank",
        "SLT/LeastSquares/LinearRegression/MinimaxRate.lean",
        "P(‖f̂ − f*‖ₙ² ≤ C₁ σ² r/n) ≥ 1 − exp(−C₂ r), C₁ = 16(192√2)², C₂ = (192√2)²/2, r = rank X",
        {
            "f* linear, f̂ least squares": "holds by construction",
            "rank X > 0": "verified (rank computed)",
        },
        "ls_rate.linear.exponent (reported; E error = σ²d/n exactly, a test); formal_looseness",
        "Wainwright (2019), Example 13.8",
    ),
    TheoremRef(
        "least_squares.linear_local_complexity",
        "linear_local_gaussian_complexity_bound_rank",
        "SLT/LeastSquares/LinearRegression/GaussianComplexity.lean",
        "G_n(δ) ≤ 96√2 δ √r / √n",
        {"rank X > 0": "verified"},
        "test_least_squares: exact G_n(δ) = δ E‖χ_r‖/√n is below it",
        "",
    ),
    TheoremRef(
        "least_squares.master_error_bound (probability)",
        "bad_event_probability_bound",
        "SLT/LeastSquares/MasterErrorBound.lean",
        "u ≥ δ*: P(A(u)) ≤ exp(−n u²/(2σ²))",
        {"δ* critical, H star-shaped": "as for master_error_bound"},
        "through master_coverage",
        "Wainwright (2019), Lemma 13.12",
    ),
    TheoremRef(
        "covering.lipschitz_class_log_covering_bounds",
        "",
        "",
        "F_L = {f: [0,1] → ℝ, f(0) = 0, L-Lipschitz}: (⌈L/ε⌉ − 1) log 2 ≤ log N(ε, ‖·‖∞) ≤ ⌈2L/ε⌉ log 3",
        {"—": "not formalised (proved in the docstring)"},
        "test_covering: greedy nets of sampled Lipschitz functions",
        "Wainwright (2019), Example 5.10",
    ),
    TheoremRef(
        "least_squares.best_subset_ls",
        "",
        "",
        "‖f̂ − f*‖ₙ² ≲ σ² s log(ed/s)/n for best-subset least squares over s-sparse θ",
        {"—": "not formalised"},
        "ls_rate.l0.exponent vs −1 (reported)",
        "Raskutti, Wainwright & Yu (2011), q = 0",
    ),
)


def theorem_for(function: str) -> list[TheoremRef]:
    """The rows of the map whose ``function`` field mentions ``function``.

    Args:
        function: a function name of this package (``dudley_bound``).

    Returns:
        The matching rows (empty when none).
    """
    return [row for row in THEOREM_MAP if function in row.function]


_DECLARATION = r"^\s*(?:@\[[^\]]*\]\s*)?(?:private\s+|protected\s+)?(?:noncomputable\s+)?(?:theorem|lemma|def|abbrev)\s+{name}\b"


def verify_theorem_map(source_root: str | Path) -> list[str]:
    """Check every named theorem of the map against a checkout of the formalisation.

    This reads the Lean sources only (no Lean toolchain): each row's theorem must be declared
    (``theorem``, ``lemma`` or ``def``) in the file the row names. Run it on a clone at
    :data:`UPSTREAM_COMMIT`; on a later commit it says which names moved.

    Args:
        source_root: the root of a clone of :data:`REPOSITORY`.

    Returns:
        One line per problem (a missing file, a name not declared in its file); empty when
        the map matches the sources.

    Raises:
        FileNotFoundError: ``source_root`` is not a folder holding ``lean-toolchain``.
    """
    root = Path(source_root)
    if not (root / "lean-toolchain").is_file():
        raise FileNotFoundError(f"{root} is not a clone of {REPOSITORY} (no lean-toolchain)")
    problems = []
    for row in THEOREM_MAP:
        if not row.lean_name:
            continue
        path = root / row.lean_file
        if not path.is_file():
            problems.append(f"{row.lean_name}: file {row.lean_file} not found")
            continue
        name = re.escape(row.lean_name.removesuffix(" (definition)"))
        if not re.search(_DECLARATION.format(name=name), path.read_text("utf-8"), re.MULTILINE):
            problems.append(f"{row.lean_name}: not declared in {row.lean_file}")
    return problems


def markdown_table() -> str:
    """The map as a Markdown table.

    Returns:
        One row per theorem: our function, the Lean name, file, statement, hypotheses.
    """
    lines = [
        "| our function | Lean theorem | file | statement | hypotheses: our check |",
        "|---|---|---|---|---|",
    ]
    for r in THEOREM_MAP:
        hyps = "; ".join(f"{k}: {v}" for k, v in r.hypotheses.items())
        name = f"`{r.lean_name}`" if r.lean_name else "not formalised"
        file = f"`{r.lean_file}`" if r.lean_file else "—"
        lines.append(f"| `{r.function}` | {name} | {file} | {r.statement} | {hyps} |")
    return "\n".join(lines)

"""The RO-HNN paper as the ``icml26`` CLI sees it (light: no jax import here).

``beats_psd`` and ``decoder_beats_psd`` are decided where a linear reduction fails: the wave
equation's travelling pulses (the Kolmogorov barrier), at equal latent size, 3 seeds, with
PSD's own projection error reported first (``psd_projection_error_h1.wave``), and ON THE FIRST
PERIOD ONLY (h1: the test states of the time span the training trajectories cover,
``wave_dt = 0.1``, 20 steps). At ``n = 32`` the pulses (widths 0.04-0.08, 1.3-2.6 grid cells)
disperse under the finite-difference wave instead of recurring, so the states of later periods
are far from every training snapshot (median 0.69 relative against 0.26 in the first period;
at n = 128, 5-13 cells, still 0.28-0.38 against 0.21-0.23, measured 2026-12-05): h5/h10 and
``projection_error`` over all 201 steps are reported, not used to decide. The PSD-Galerkin
reference (the true ``H`` projected onto the PSD basis, ``rollout_error.<system>.psd_galerkin``)
is what PSD + HNN can at best learn, so ``beats_psd`` is decided against it
(``gain_over_galerkin``); the gain over the trained ``psd_hnn`` (``gain_over_psd``) is reported
only, since it also measures how far ``psd_hnn``'s training falls short of that reference. The decoder's symplecticity is exact by construction, and
the learned Hamiltonian's conservation along latent rollouts is a property of the shared
Störmer-Verlet integrator (it holds for PSD + HNN and for static latents alike), so both are
tests (``tests/test_cli.py``, ``tests/test_precision.py``), not claims.
"""

from __future__ import annotations

from icml26.ro_hnn.config import BENCH_PROFILES, PROFILES
from icml26.shared import Claim, Paper

__all__ = ["BENCH_CLAIMS", "CLAIMS", "PAPER"]


def _beats(
    system: str, model: str, baseline: str, metric: str = "rollout_error", h: str = ".h10"
) -> str:
    """``model`` better than ``baseline``: below 1 (better than predicting the mean state) and
    a gap larger than twice the two standard errors over seeds added."""
    e, se = f"{metric}.{system}", f"seed_se.{metric}.{system}"
    return (
        f"{e}.{model}{h} < 1 and {e}.{baseline}{h} - {e}.{model}{h} > "
        f"2 * ({se}.{model}{h} + {se}.{baseline}{h})"
    )


def _paired_gain(system: str, model: str, key: str) -> str:
    """``model`` better than ``psd_hnn`` on ``key``: the per-seed paired gain beyond two of its
    standard errors (``gain_over_psd``, seed ``k`` of both shares data and batches)."""
    g = f"gain_over_psd.{system}.{model}.{key}"
    return f"{g} > 2 * seed_se.{g}"


CLAIMS = [
    Claim(
        "decoder_beats_psd",
        "Where a linear reduction fails (wave equation, PSD projection error above 0.3 at the "
        "latent size used), RO-HNN's deep symplectic autoencoder represents the held-out "
        "states of the first period (the time span training covers) better than PSD at equal "
        "latent size: lower projection error, the paired per-seed gain beyond two of its "
        "standard errors over 3 seeds.",
        "nonlinear symplectic reduction beyond linear bases (abstract: 'scalability of model "
        "order reduction')",
        "psd_projection_error_h1.wave > 0.3 and "
        + _paired_gain("wave", "rohnn", "projection_error_h1"),
        placebo={"rohnn": "psd_hnn"},
        profiles=("quick", "full"),  # smoke runs FPUT only
    ),
    Claim(
        "beats_psd",
        "On the same wave, RO-HNN's rollouts over the first period (the training horizon, from "
        "held-out initial states) are more accurate than a strong PSD reference at equal "
        "latent size: PSD-Galerkin, the true H projected onto the PSD basis, integrated with "
        "8 substeps per step where learned models take 1 (not an upper bound: a fitted "
        "reduced H can absorb closure error the projection ignores) (error "
        "below 1 and the per-seed gain over PSD-Galerkin beyond two of its standard errors "
        "over 3 seeds; the reference is deterministic and shares every seed's data). The "
        "trained PSD + HNN (same geometric HNN, same data and batches) is reported beside it "
        "(gain_over_psd.wave.rohnn.h1), not used to decide: beating it can be its training "
        "shortfall.",
        "qualitative (nonlinear reduction beyond linear symplectic bases)",
        "psd_projection_error_h1.wave > 0.3 and rollout_error.wave.rohnn.h1 < 1 and "
        "gain_over_galerkin.wave.rohnn.h1 > 2 * seed_se.gain_over_galerkin.wave.rohnn.h1",
        placebo={"rohnn": "psd_hnn"},
        profiles=("quick", "full"),
    ),
    Claim(
        "energy_term_helps",
        "The loss term on the true energy of decoded states lowers the energy drift of RO-HNN's "
        "decoded long rollouts on FPUT (against the same model trained on the L2 terms only, "
        "same initialisation and batches per seed: the paired gain beyond two of its standard "
        "errors over 3 seeds).",
        "not in the paper (our remedy for the drift the L2 loss cannot see)",
        "energy_drift_gain.fput.rohnn > 2 * seed_se.energy_drift_gain.fput.rohnn",
        placebo={"rohnn": "rohnn_l2"},
        profiles=("quick", "full"),
    ),
    Claim(
        "energy_bounded",
        "RO-HNN predictions are useful and physically consistent: better than predicting the "
        "mean state one step ahead (rollout error at h1 below 1), and the true energy of decoded "
        "rollouts (10x the training horizon) stays within 10% of the initial energy, on FPUT "
        "and the wave.",
        "qualitative ('physically-consistent, stable' predictions); we test drift <= 10%",
        "rollout_error.fput.rohnn.h1 < 1 and rollout_error.wave.rohnn.h1 < 1 and "
        "max(energy_drift.fput.rohnn, energy_drift.wave.rohnn) <= 0.1",
        kind="absolute",
        floor="a model that decodes to the mean training state drifts by |H(x_ref) - H(x0)| / "
        "H(x0), of order 1, but a near-constant decoded state whose true energy matches H(x0) "
        "drifts by about 0, and the energy term (w_energy) pushes towards matching energies: "
        "the h1 < 1 premise refuses such a collapsed model (error 1 = the mean state). Not "
        "forced: the energy term sees 6-step windows only, and nothing in the model conserves "
        "the true energy of decoded long rollouts (RESULTS.md lists the measured drifts)",
        profiles=("quick", "full"),
    ),
    Claim(
        "long_horizon_beats_unconstrained",
        "RO-HNN is more accurate at 10x the training horizon than an unconstrained autoencoder "
        "with a latent neural ODE, on FPUT and cloth (error below 1, gap beyond two SEs).",
        "qualitative (stable long-term predictions vs unstructured baselines)",
        " and ".join(_beats(s, "rohnn", "ae_node") for s in ("fput", "cloth")),
        placebo={"rohnn": "ae_node"},
        profiles=("full",),
    ),
    Claim(
        "scales_beyond_full_hnn",
        "On the highest-dimensional system (damped cloth) RO-HNN is more accurate at 10x the "
        "horizon than a full-order HNN trained with the same budget.",
        "qualitative (HNN baseline degrades in high dimension)",
        _beats("cloth", "rohnn", "full_hnn"),
        placebo={"rohnn": "full_hnn"},
        profiles=("full",),
    ),
]

BENCH_CLAIMS = [
    Claim(
        "reduced_rollout_faster",
        "The reduced model is cheaper to roll out than the full-order reference integrator at n = 512.",
        "qualitative (model order reduction for scalability)",
        "rollout_speedup.n512 > 1",
        kind="absolute",
        floor="a reduced model as costly as the reference scores 1",
        profiles=("quick", "full"),
    ),
    Claim(
        "faster_at_equal_accuracy",
        "At n = 512 the reduced model is cheaper to roll out than the coarsest full-order "
        "reference integrator that is as accurate as it (same horizon, same trajectories).",
        "qualitative (model order reduction for scalability)",
        "rollout_speedup_equal_accuracy.n512 > 1",
        kind="absolute",
        floor="a reduced model as costly as the equally accurate reference scores 1",
        profiles=("quick", "full"),
    ),
    Claim(
        "faster_than_full_hnn",
        "At n = 512 the reduced model is cheaper to roll out than the full-order HNN trained "
        "with the same budget, and not less accurate.",
        "qualitative (HNNs do not scale to high dimension)",
        "rollout_speedup_vs_full_hnn.n512 > 1 and "
        "bench_rollout_error.n512.rohnn <= bench_rollout_error.n512.full_hnn",
        kind="absolute",
        floor="the full HNN in the reduced model's place scores a speed-up of 1",
        profiles=("quick", "full"),
    ),
]

PAPER = Paper(
    slug="ro-hnn",
    title="Reduced-order Hamiltonian neural networks (Learning Hamiltonian Dynamics at Scale: A "
    "Differential-Geometric Approach)",
    profiles=PROFILES,
    run="icml26.ro_hnn.experiment:run",
    claims=CLAIMS,
    bench="icml26.ro_hnn.bench:bench",
    bench_profiles=BENCH_PROFILES,
    bench_claims=BENCH_CLAIMS,
    framework="jax",
    summary="symplectic autoencoder + geometric HNN vs PSD on the wave (Kolmogorov barrier), "
    "energy-aware loss, FPUT, damped cloth",
)

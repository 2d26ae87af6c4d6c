"""The main job (``icml26 run transport-kl``) and the benchmark (``icml26 bench transport-kl``).

Four stages, each checkpointed in the run folder so a killed run resumes after the last
finished stage: (1) divergence table and degeneration sweep, (2) double-integrator noise
sweep, (3) nonlinear cart-pole, (4) ensemble Kalman example. Metric keys follow issue #4.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from icml26.shared import RunDir, log
from icml26.transport_kl.config import BenchConfig, TransportKLConfig

__all__ = ["bench", "run"]

DIVS = ("kl", "wkl", "kwkl", "w2")


def _spd(rng: np.random.Generator, d: int) -> np.ndarray:
    x = rng.normal(size=(d, d))
    return x @ x.T / d + 0.3 * np.eye(d)


def _rotation(rng: np.random.Generator, d: int) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(d, d)))
    return q * np.sign(np.diag(r))


def _rel(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-12)


# ------------------------------------------------------------------------------------------
# stage 1: divergences
# ------------------------------------------------------------------------------------------
def _divergence_stage(cfg: TransportKLConfig, run_dir: RunDir) -> tuple[dict[str, Any], dict]:
    import jax

    from icml26.transport_kl import elliptic, flow, gaussian

    rng = np.random.default_rng(cfg.seed)
    d = cfg.dim
    errors: dict[str, list[float]] = {k: [] for k in DIVS}
    rows: list[dict[str, Any]] = []

    def record(div: str, family: str, closed: float, numeric: float, how: str) -> None:
        err = _rel(closed, numeric)
        errors[div].append(err)
        rows.append(
            {"div": div, "family": family, "closed": closed, "numeric": numeric, "how": how}
        )
        run_dir.log_metrics(
            None, stage="closed_form", div=div, family=family, closed=closed, numeric=numeric
        )

    for i in range(cfg.n_pairs):
        m1, m2 = rng.normal(size=d), rng.normal(size=d)
        s1, s2 = _spd(rng, d), _spd(rng, d)
        q = _rotation(rng, d)
        c1 = q @ np.diag(rng.uniform(0.3, 2.0, d)) @ q.T
        c2 = q @ np.diag(rng.uniform(0.3, 2.0, d)) @ q.T
        # KL: the Fisher-Rao flow from N2 to N1 integrates to KL(N1 | N2)
        record(
            "kl",
            "gaussian",
            float(gaussian.kl(m1, s1, m2, s2)),
            flow.fisher_rao_divergence(m2, s2, m1, s1),
            "Fisher-Rao path integral (Gauss-Legendre)",
        )
        res = flow.flow_divergence(m1, s1, m2, s2, geometry="wasserstein", steps=cfg.flow_steps)
        record("wkl", "gaussian", float(gaussian.wkl(m1, s1, m2, s2)), res.value, "shooting+RK4")
        res = flow.flow_divergence(
            m1, s1, m2, s2, geometry="kalman_wasserstein", lam=0.0, steps=cfg.flow_steps
        )
        record("kwkl", "gaussian", float(gaussian.kwkl(m1, s1, m2, s2, 0.0)), res.value, "lam=0")
        res = flow.flow_divergence(
            m1, c1, m2, c2, geometry="kalman_wasserstein", lam=cfg.lam, steps=cfg.flow_steps
        )
        record(
            "kwkl",
            "gaussian",
            float(gaussian.kwkl(m1, c1, m2, c2, cfg.lam)),
            res.value,
            f"commuting, lam={cfg.lam}",
        )
        if cfg.w2_search:
            record(
                "w2",
                "gaussian",
                float(gaussian.w2(m1, s1, m2, s2, squared=True)),
                flow.w2_by_coupling_search(m1, s1, m2, s2, seed=cfg.seed + i),
                "W2^2 by coupling search (optax.lbfgs)",
            )
        if cfg.particles:
            k = elliptic.student_t_kappa(cfg.student_t_dof)
            key = jax.random.key(cfg.seed * 1000 + i)
            for geometry, lam, a1, a2, closed in (
                (
                    "wasserstein",
                    None,
                    s1,
                    s2,
                    elliptic.wkl_student_t(m1, s1, m2, s2, cfg.student_t_dof),
                ),
                (
                    "kalman_wasserstein",
                    cfg.lam,
                    c1,
                    c2,
                    elliptic.kwkl_student_t(m1, c1, m2, c2, cfg.student_t_dof, cfg.lam),
                ),
            ):
                pot = flow.flow_divergence(
                    m1,
                    k * a1,
                    m2,
                    k * a2,
                    geometry=geometry,  # type: ignore[arg-type]
                    lam=lam or 0.0,
                    steps=cfg.flow_steps,
                )
                x0 = elliptic.sample_student_t(
                    key, m1, a1, cfg.student_t_dof, cfg.particles, moment_match=True
                )
                pf = elliptic.particle_flow_divergence(
                    x0, pot.A, pot.b, lam=lam, steps=cfg.flow_steps
                )
                div = "wkl" if lam is None else "kwkl"
                record(div, "student_t", float(closed), pf.value, "particle flow")
                rows[-1]["pushforward_cov_error"] = float(
                    np.max(np.abs(pf.final_cov * (cfg.particles - 1) / cfg.particles - k * a2))
                )

    metrics: dict[str, Any] = {}
    for div, errs in errors.items():
        if errs:
            metrics[f"closed_form_error.{div}"] = max(errs)
    run_dir.write_json("divergence_pairs.json", {"pairs": rows})

    # degeneration sweep: equal covariances eps * I, fixed mean shift
    m1, m2 = np.zeros(d), np.ones(d)
    curves: dict[str, list[float]] = {}
    for k_idx, eps in enumerate(cfg.eps_grid):
        s = eps * np.eye(d)
        vals = {
            "kl": float(gaussian.kl(m1, s, m2, s)),
            "wkl": float(gaussian.wkl(m1, s, m2, s)),
            "kwkl": float(gaussian.kwkl(m1, s, m2, s, cfg.lam)),
            "w2": float(gaussian.w2(m1, s, m2, s)),
        }
        kl_t, _ = elliptic.kl_student_t_mc(
            m1, s, m2, s, cfg.student_t_dof, n=cfg.kl_mc_samples, seed=cfg.seed
        )
        vals_t = {
            "kl": kl_t,
            "wkl": float(elliptic.wkl_student_t(m1, s, m2, s, cfg.student_t_dof)),
            "kwkl": float(elliptic.kwkl_student_t(m1, s, m2, s, cfg.student_t_dof, cfg.lam)),
            "w2": float(elliptic.w2_student_t(m1, s, m2, s, cfg.student_t_dof)),
        }
        for div in DIVS:
            metrics[f"value.{div}.eps{k_idx}"] = vals[div]
            metrics[f"value_t.{div}.eps{k_idx}"] = vals_t[div]
            curves.setdefault(div, []).append(vals[div])
            curves.setdefault(f"t_{div}", []).append(vals_t[div])
    last = len(cfg.eps_grid) - 1
    metrics["degeneration.kl_growth"] = metrics[f"value.kl.eps{last}"] / metrics["value.kl.eps0"]
    metrics["degeneration.kl_t_growth"] = (
        metrics[f"value_t.kl.eps{last}"] / metrics["value_t.kl.eps0"]
    )
    metrics["degeneration.transport_growth"] = max(
        metrics[f"{fam}.{div}.eps{last}"] / metrics[f"{fam}.{div}.eps0"]
        for div in ("wkl", "kwkl", "w2")
        for fam in ("value", "value_t")
    )
    return metrics, {"eps": list(cfg.eps_grid), "curves": curves}


# ------------------------------------------------------------------------------------------
# stage 2: double integrator
# ------------------------------------------------------------------------------------------
NOISE_SHAPE_DI = np.diag([1e-5, 1e-5, 1.0, 1.0])


def _exact_cost_parts(
    a: np.ndarray,
    b: np.ndarray,
    gain: np.ndarray,
    sw: np.ndarray,
    q: np.ndarray,
    cfg: TransportKLConfig,
) -> tuple[float, float]:
    """Expected discounted state cost and control energy of ``u = -K x`` (``x0 ~ N(0, I)``).

    The closed-loop cost under an evaluation weight ``R_eval = w I`` is ``state + w * control``
    exactly, so one pair of Lyapunov sums gives the whole ``control_weight_sweep`` without
    Monte-Carlo noise.
    """
    from icml26.transport_kl import control

    zero_u, zero_x = np.zeros((b.shape[1], b.shape[1])), np.zeros_like(q)
    common = {"gamma": cfg.gamma, "x0_cov": np.eye(a.shape[0]), "horizon": cfg.horizon}
    state = control.closed_loop_cost_exact(a, b, gain, sw, q_eval=q, r_eval=zero_u, **common)
    energy = control.closed_loop_cost_exact(
        a, b, gain, sw, q_eval=zero_x, r_eval=np.eye(b.shape[1]), **common
    )
    return state, energy


def _double_integrator_stage(
    cfg: TransportKLConfig, run_dir: RunDir
) -> tuple[dict[str, Any], dict]:
    import jax

    from icml26.transport_kl import control

    a, b = control.double_integrator(cfg.dt)
    q = np.eye(4)
    r_eval = cfg.control_weight_eval * np.eye(2)
    rng = np.random.default_rng(cfg.seed + 1)
    x0 = rng.normal(size=(cfg.rollouts, 4))
    key = jax.random.key(cfg.seed + 1)
    metrics: dict[str, Any] = {}
    table: dict[str, dict[str, list[float]]] = {}
    for k_idx, rho in enumerate(cfg.rho_grid):
        sw = rho * NOISE_SHAPE_DI
        for div in control.DIVERGENCES:
            r = control.penalty_matrix(div, b, sw, beta=cfg.beta, lam=cfg.lam)
            sol = control.solve_discounted_riccati(a, b, q, r, cfg.gamma)
            tag = f"{div}.rho{k_idx}"
            metrics[f"riccati_ok.{tag}"] = int(sol.ok)
            finite_r = bool(np.all(np.isfinite(r)))
            metrics[f"cond_R.{tag}"] = float(np.linalg.cond(r)) if finite_r else float("inf")
            metrics[f"norm_R.{tag}"] = float(np.linalg.norm(r, 2)) if finite_r else float("inf")
            row = table.setdefault(div, {"gain": [], "radius": [], "cost": []})
            if not sol.ok:
                row["gain"].append(np.nan)
                row["radius"].append(np.nan)
                row["cost"].append(np.nan)
                continue
            gain_norm = float(np.linalg.norm(sol.K, 2))
            radius = float(np.max(np.abs(np.linalg.eigvals(a - b @ sol.K))))
            costs = control.simulate_linear(
                a,
                b,
                sol.K,
                sw,
                q_eval=q,
                r_eval=r_eval,
                gamma=cfg.gamma,
                horizon=cfg.horizon,
                x0=x0,
                key=key,
            )
            metrics[f"gain_norm.{tag}"] = gain_norm
            metrics[f"spectral_radius.{tag}"] = radius
            metrics[f"closed_loop_cost.{tag}"] = float(costs.mean())
            row["gain"].append(gain_norm)
            row["radius"].append(radius)
            row["cost"].append(float(costs.mean()))
            sweep_parts = _exact_cost_parts(a, b, sol.K, sw, q, cfg)
            run_dir.log_metrics(
                None,
                stage="double_integrator",
                div=div,
                rho=rho,
                gain_norm=gain_norm,
                spectral_radius=radius,
                cost=float(costs.mean()),
            )
            for j, weight in enumerate(cfg.control_weight_sweep):
                metrics[f"closed_loop_cost_sweep.{tag}.r{j}"] = (
                    sweep_parts[0] + weight * sweep_parts[1]
                )
        kl_cost = metrics.get(f"closed_loop_cost.kl.rho{k_idx}")
        for div in ("wkl", "kwkl", "w2", "lqr"):
            cost = metrics.get(f"closed_loop_cost.{div}.rho{k_idx}")
            if kl_cost is not None and cost is not None:
                metrics[f"cost_ratio.{div}_vs_kl.rho{k_idx}"] = cost / kl_cost
            for j in range(len(cfg.control_weight_sweep)):
                kl_j = metrics.get(f"closed_loop_cost_sweep.kl.rho{k_idx}.r{j}")
                cost_j = metrics.get(f"closed_loop_cost_sweep.{div}.rho{k_idx}.r{j}")
                if kl_j is not None and cost_j is not None:
                    metrics[f"cost_ratio_sweep.{div}_vs_kl.rho{k_idx}.r{j}"] = cost_j / kl_j
    sweep: dict[str, list[list[float]]] = {}
    for div in ("wkl", "kwkl"):
        sweep[div] = [
            [
                metrics.get(f"cost_ratio_sweep.{div}_vs_kl.rho{k}.r{j}", float("nan"))
                for k in range(len(cfg.rho_grid))
            ]
            for j in range(len(cfg.control_weight_sweep))
        ]
    for j, weight in enumerate(cfg.control_weight_sweep):
        metrics[f"control_weight_sweep.r{j}"] = float(weight)
    data = {"rho": list(cfg.rho_grid), "table": table, "weights": list(cfg.control_weight_sweep)}
    return metrics, {**data, "sweep": sweep}


# ------------------------------------------------------------------------------------------
# stage 3: cart-pole
# ------------------------------------------------------------------------------------------
NOISE_SHAPE_CP = np.diag([1e-4, 1e-2, 1e-4, 1e-2])
THETA_LIMIT = 0.5  # rad
TRACK_LIMIT = 2.4  # m


def _cartpole_stage(cfg: TransportKLConfig, run_dir: RunDir) -> tuple[dict[str, Any], dict]:
    import jax

    from icml26.transport_kl import cartpole, control

    p = cartpole.CartPole()
    a, b = cartpole.linearise(p)
    q = np.diag([1.0, 0.1, 10.0, 0.1])
    sw = cfg.cartpole_noise * NOISE_SHAPE_CP
    rng = np.random.default_rng(cfg.seed + 2)
    n = cfg.cartpole_rollouts
    x0 = np.column_stack(
        [
            rng.uniform(-0.5, 0.5, n),
            rng.uniform(-0.2, 0.2, n),
            rng.uniform(-0.15, 0.15, n),
            rng.uniform(-0.2, 0.2, n),
        ]
    )
    key = jax.random.key(cfg.seed + 2)
    metrics: dict[str, Any] = {}
    traj: dict[str, Any] = {}
    for div in control.DIVERGENCES:
        r = control.penalty_matrix(div, b, sw, beta=cfg.beta, lam=cfg.lam)
        sol = control.solve_discounted_riccati(a, b, q, r, cfg.gamma)
        metrics[f"riccati_ok.cartpole.{div}"] = int(sol.ok)
        if not sol.ok:
            metrics[f"stabilised_rate.{div}"] = 0.0
            continue
        out = cartpole.rollouts(
            p,
            sol.K,
            x0=x0,
            noise_cov=sw,
            key=key,
            horizon=cfg.cartpole_horizon,
            q=q,
            r=cfg.control_weight_eval,
            gamma=cfg.gamma,
            force_limit=cfg.force_limit,
        )
        max_theta = np.abs(out["theta"]).max(axis=0)
        max_x = np.abs(out["x"]).max(axis=0)
        ok = (max_theta < THETA_LIMIT) & (max_x < TRACK_LIMIT)
        metrics[f"stabilised_rate.{div}"] = float(ok.mean())
        metrics[f"closed_loop_cost.cartpole.{div}"] = float(out["cost"].mean())
        metrics[f"max_abs_theta.{div}"] = float(max_theta.max())
        metrics[f"max_abs_x.{div}"] = float(max_x.max())
        metrics[f"gain_norm.cartpole.{div}"] = float(np.linalg.norm(sol.K))
        traj[div] = {"theta": out["theta"][:, :6].tolist(), "x": out["x"][:, :6].tolist()}
        run_dir.log_metrics(None, stage="cartpole", div=div, stabilised=float(ok.mean()))
    return metrics, {"traj": traj, "dt": p.dt}


# ------------------------------------------------------------------------------------------
# stage 4: ensemble Kalman
# ------------------------------------------------------------------------------------------
def _kalman_stage(cfg: TransportKLConfig, run_dir: RunDir) -> tuple[dict[str, Any], dict]:
    from icml26.transport_kl import gaussian, kalman

    problem = kalman.make_inverse_problem(cfg.seed + 3, dim=cfg.kalman_dim)
    rng = np.random.default_rng(cfg.seed + 3)
    ens0 = rng.normal(size=(cfg.kalman_ensemble, cfg.kalman_dim))
    target = problem.minimiser
    metrics: dict[str, Any] = {}
    for tag, lam in (("lam0", 0.0), ("lam", cfg.lam)):
        out = kalman.ensemble_flow(
            problem, ens0, lam=lam, t_end=cfg.kalman_t_end, steps=cfg.kalman_steps
        )
        mean = out.mean(0)
        metrics[f"kalman.mean_error.{tag}"] = float(
            np.linalg.norm(mean - target) / np.linalg.norm(target)
        )
        metrics[f"kalman.span_gap.{tag}"] = kalman.span_gap(ens0, mean)
    m = ens0.mean(0)
    c = np.cov(ens0.T, bias=True)
    g = problem.H.T @ (problem.H @ m - problem.y) / problem.noise_var + m / problem.prior_var
    h = 0.1
    step = kalman.prox_step(m, c, g, lam=cfg.lam, h=h)
    ref = -h * (c + cfg.lam * np.eye(cfg.kalman_dim)) @ g
    metrics["kalman.prox_step_error"] = float(np.linalg.norm(step - ref) / np.linalg.norm(ref))
    metrics["kalman.kwkl_collapsed"] = float(
        gaussian.kwkl(m, c, m + ref, c, cfg.lam, validate=False)
    )
    metrics["kalman.kl_collapsed_finite"] = int(
        np.isfinite(float(gaussian.kl(m, c, m + ref, c, validate=False)))
    )
    run_dir.log_metrics(None, stage="kalman", **metrics)
    return metrics, {}


# ------------------------------------------------------------------------------------------
# plots
# ------------------------------------------------------------------------------------------
_LABELS = {"kl": "KL", "wkl": "WKL", "kwkl": "KWKL", "w2": "Bures-W2", "lqr": "LQR (R=I)"}


def _plots(run_dir: RunDir, data: dict[str, dict]) -> None:
    from icml26.shared import figure

    if "divergences" in data:
        dv = data["divergences"]
        with figure(run_dir.plot_path("divergence_vs_eps")) as (_, ax):
            for i, div in enumerate(DIVS):
                color = f"C{i}"
                ax.loglog(dv["eps"], dv["curves"][div], "o-", color=color, label=_LABELS[div])
                ax.loglog(dv["eps"], dv["curves"][f"t_{div}"], "x--", color=color, alpha=0.7)
            ax.set_xlabel("eps  (both covariances eps * I)")
            ax.set_ylabel("divergence")
            ax.set_title("Equal degenerating covariances (-- Student-t)")
            ax.invert_xaxis()
            ax.legend()
    if "double_integrator" in data:
        di = data["double_integrator"]
        with figure(run_dir.plot_path("control_noise_sweep"), 1, 3, width=12) as (_, axes):
            for i, (div, row) in enumerate(di["table"].items()):
                for ax, field in zip(axes, ("gain", "radius", "cost"), strict=True):
                    ax.semilogx(di["rho"], row[field], "o-", color=f"C{i}", label=_LABELS[div])
            axes[0].set_ylabel("||K||_2")
            axes[0].set_yscale("log")
            axes[1].set_ylabel("spectral radius of A - BK")
            axes[2].set_ylabel("closed-loop cost (MC)")
            axes[2].set_yscale("log")
            for ax in axes:
                ax.set_xlabel("noise scale rho")
                ax.invert_xaxis()
            axes[0].legend()
    if "double_integrator" in data and "sweep" in data["double_integrator"]:
        di = data["double_integrator"]
        with figure(run_dir.plot_path("control_weight_sweep"), 1, 2, width=9) as (_, axes):
            for ax, div in zip(axes, ("wkl", "kwkl"), strict=True):
                for j, weight in enumerate(di["weights"]):
                    ax.semilogx(
                        di["rho"],
                        di["sweep"][div][j],
                        "o-",
                        color=f"C{j}",
                        label=f"R_eval = {weight:g} I",
                    )
                ax.axhline(1.0, color="k", ls=":")
                ax.set_title(f"{_LABELS[div]} / KL closed-loop cost (exact)")
                ax.set_xlabel("noise scale rho")
                ax.set_yscale("log")
                ax.invert_xaxis()
            axes[0].set_ylabel("cost ratio (< 1: better than KL)")
            axes[0].legend()
    if "cartpole" in data and data["cartpole"]["traj"]:
        cp = data["cartpole"]
        divs = [d for d in ("kl", "wkl", "kwkl", "lqr") if d in cp["traj"]]
        with figure(
            run_dir.plot_path("cartpole_trajectories"), 2, len(divs), width=3.2 * len(divs)
        ) as (_, axes):
            axes = np.asarray(axes).reshape(2, len(divs))
            for j, div in enumerate(divs):
                theta = np.asarray(cp["traj"][div]["theta"])
                x = np.asarray(cp["traj"][div]["x"])
                t = np.arange(theta.shape[0]) * cp["dt"]
                axes[0, j].plot(t, theta, lw=0.9)
                axes[0, j].set_title(_LABELS[div])
                axes[1, j].plot(t, x, lw=0.9)
                axes[1, j].axhline(TRACK_LIMIT, color="k", ls=":")
                axes[1, j].axhline(-TRACK_LIMIT, color="k", ls=":")
                axes[1, j].set_xlabel("time [s]")
            axes[0, 0].set_ylabel("pole angle [rad]")
            axes[1, 0].set_ylabel("cart position [m]")


# ------------------------------------------------------------------------------------------
# entry points
# ------------------------------------------------------------------------------------------
STAGES = (
    ("divergences", _divergence_stage),
    ("double_integrator", _double_integrator_stage),
    ("cartpole", _cartpole_stage),
    ("kalman", _kalman_stage),
)


def run(config: TransportKLConfig, run_dir: RunDir) -> dict[str, Any]:
    """Main job: the four stages (resumable), the plots, and the flat metrics."""
    if not isinstance(config, TransportKLConfig):
        raise TypeError(f"expected a TransportKLConfig, got {type(config).__name__}")
    import jax

    run_dir.update_env(device=str(jax.devices()[0]), jax_backend=jax.default_backend())
    state: dict[str, Any] = {"done": [], "metrics": {}, "data": {}}
    saved = run_dir.checkpoints.latest()
    if saved is not None:
        state = saved[1]
        log(f"resuming after stages: {', '.join(state['done'])}")
    for idx, (name, fn) in enumerate(STAGES):
        if name in state["done"]:
            continue
        start = time.perf_counter()
        metrics, data = fn(config, run_dir)
        state["metrics"].update(metrics)
        state["data"][name] = data
        state["done"].append(name)
        state["metrics"][f"seconds.{name}"] = time.perf_counter() - start
        run_dir.checkpoints.save(idx, state)
        log(f"stage {name} done in {time.perf_counter() - start:.1f}s")
    _plots(run_dir, state["data"])
    return dict(state["metrics"])


def bench(config: BenchConfig, run_dir: RunDir) -> dict[str, Any]:
    """Throughput of batched WKL / W2 (jit + vmap) vs per-pair NumPy/SciPy loops."""
    import jax

    from icml26.transport_kl import gaussian, reference

    rng = np.random.default_rng(config.seed)
    d = config.dim
    metrics: dict[str, Any] = {}
    max_rel = 0.0
    for n in config.batches:
        m1, m2 = rng.normal(size=(n, d)), rng.normal(size=(n, d))
        s1 = np.stack([_spd(rng, d) for _ in range(n)])
        s2 = np.stack([_spd(rng, d) for _ in range(n)])
        for name, fast, slow in (
            ("divergence_speedup", gaussian.wkl, reference.wkl_np),
            ("w2_speedup", gaussian.w2, reference.w2_np),
        ):
            jax.block_until_ready(fast(m1, s1, m2, s2, validate=False))  # compile
            t_fast = []
            for _ in range(config.repeats):
                t0 = time.perf_counter()
                vals = jax.block_until_ready(fast(m1, s1, m2, s2, validate=False))
                t_fast.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            ref = np.array([slow(m1[i], s1[i], m2[i], s2[i]) for i in range(n)])
            t_slow = time.perf_counter() - t0
            max_rel = max(max_rel, float(np.max(np.abs(np.asarray(vals) - ref) / np.abs(ref))))
            metrics[f"{name}.batch{n}"] = t_slow / min(t_fast)
            metrics[f"seconds.{name}.jax.batch{n}"] = min(t_fast)
            metrics[f"seconds.{name}.numpy.batch{n}"] = t_slow
    metrics["bench.max_rel_diff"] = max_rel
    run_dir.update_env(device=str(jax.devices()[0]))
    return metrics

"""The ``icml26 run ro-hnn`` and ``icml26 bench ro-hnn`` jobs.

``run``: for every system, simulate training trajectories (``horizon`` steps) and held-out test
trajectories (``10 × horizon``), fit the PSD basis on the training snapshots, train each model
for ``n_seeds`` seeds, roll out from the test initial conditions and measure. Each finished
(system, model, seed) unit is stored in ``<run>/units/`` and training checkpoints in
``<run>/checkpoints/`` (orbax), so a killed run resumes where it stopped.

The run is four named stages: :func:`prepare_systems` (simulate, PSD bases),
:func:`train_and_evaluate` (the units), :func:`summarise` (metric tree), then the plots.

``bench``: rollout cost of RO-HNN on FPUT chains of growing size against the fine full-order
reference integrator, the coarsest reference integrator as accurate as RO-HNN (equal
accuracy) and the full-order HNN trained with the same budget; and RO-HNN's training-step time.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml26.ro_hnn.config import BenchConfig, RunConfig
from icml26.shared import RunDir, atomic_write_json, figure, log

__all__ = [
    "PreparedSystem",
    "bench",
    "prepare_systems",
    "reduction_setup",
    "run",
    "summarise",
    "train_and_evaluate",
]

_CURVES = ("error_curve", "energy_curve", "energy_reference", "latent_pred", "latent_true")


def _enable_x64() -> None:
    import jax

    jax.config.update("jax_enable_x64", True)


@dataclass(frozen=True)
class PreparedSystem:
    """Stage 1's result for one system: its data, the true system (``None`` for a user file)
    and the PSD reduction every reduced model starts from."""

    ds: Any
    system: Any
    basis: np.ndarray
    latent_scale: float
    full_scale: float

    @property
    def name(self) -> str:
        return str(self.ds.name)

    @property
    def setup(self) -> tuple[np.ndarray, float, float]:
        return self.basis, self.latent_scale, self.full_scale


#: Stage 2's result: ``units[system][model]`` = one metrics dict per seed.
Units = dict[str, dict[str, list[dict[str, Any]]]]


def prepare_systems(config: RunConfig) -> list[PreparedSystem]:
    """Stage 1: simulate every system (and load the user's file), fit the PSD bases."""
    from icml26.ro_hnn.data import dataset_from_trajectories, load_trajectories, make_dataset
    from icml26.ro_hnn.systems import make_system

    sizes = {"fput": config.fput_n, "wave": config.wave_n, "cloth": config.cloth_n}
    families: dict[str, dict[str, float]] = {
        "fput": {"amplitude": config.fput_amplitude},
        "wave": {},
        "cloth": {
            "damping": config.cloth_damping,
            "velocity_std": config.cloth_velocity,
            "tilt_max": config.cloth_tilt_max,
            "dt": config.cloth_dt,
        },
    }
    pairs: list[tuple[Any, Any]] = []
    for name in config.systems:
        system = make_system(name, sizes[name], **families[name])
        ds = make_dataset(
            system,
            n_train=config.n_train,
            n_test=config.n_test,
            horizon=config.horizon,
            seed=config.seed,
            noise=config.noise,
        )
        pairs.append((ds, system))
    if config.data_file:
        ds = dataset_from_trajectories(load_trajectories(config.data_file), n_test=config.n_test)
        if ds.horizon < config.window:
            raise ValueError(
                f"{config.data_file}: horizon {ds.horizon} is shorter than window {config.window}"
            )
        pairs.append((ds, None))
    out = []
    for ds, system in pairs:
        log(
            f"{ds.name}: n={ds.n} (phase space {2 * ds.n}), latent {2 * config.arch.latent_dof}, "
            f"train {ds.train.x.shape[0]}x{ds.horizon} steps, test {ds.test.x.shape[0]}x{10 * ds.horizon}"
        )
        out.append(PreparedSystem(ds, system, *reduction_setup(ds, config.arch)))
    return out


def reduction_setup(ds: Any, arch: Any) -> tuple[np.ndarray, float, float]:
    """PSD basis (wide enough for RO-HNN's last layer) and the typical latent / full coordinate sizes."""
    from icml26.ro_hnn.autoencoder import psd_basis

    snapshots = ds.train.x.reshape(-1, 2 * ds.n)
    q, p = snapshots[:, : ds.n], snapshots[:, ds.n :]
    width = min(ds.n, 2 * q.shape[0], max(arch.latent_dof, *arch.ae_hidden))
    basis = psd_basis(q, p, width, ds.q_ref)
    v = basis[:, : arch.latent_dof]
    z = np.concatenate([(q - ds.q_ref) @ v, p @ v], axis=1)
    latent_scale = float(np.sqrt(np.mean(z**2))) or 1.0
    full_scale = float(np.sqrt(np.mean((snapshots - ds.x_ref) ** 2))) or 1.0
    return basis, latent_scale, full_scale


def _unit(
    config: RunConfig,
    run_dir: RunDir,
    ds: Any,
    system: Any,
    kind: str,
    k: int,
    setup: tuple[np.ndarray, float, float],
) -> dict[str, Any]:
    """Train and evaluate one (system, model, seed); cached in ``<run>/units``."""
    from icml26.ro_hnn.evaluate import evaluate_model
    from icml26.ro_hnn.models import build_model
    from icml26.ro_hnn.train import Trainer, TrainSettings

    path = run_dir.path / "units" / f"{ds.name}.{kind}.s{k}.json"
    if path.exists():
        return {
            k2: (np.asarray(v) if k2 in _CURVES else v)
            for k2, v in json.loads(path.read_text()).items()
        }
    seed = config.seed + k
    basis, latent_scale, full_scale = setup
    model = build_model(
        kind,
        n=ds.n,
        dt=ds.train.dt,
        damped=ds.damped,
        arch=config.arch,
        basis=basis,
        q_ref=ds.q_ref,
        latent_scale=latent_scale,
        full_scale=full_scale,
        seed=seed,
    )
    settings = TrainSettings(
        steps=config.steps,
        batch=config.batch,
        window=config.window,
        lr=config.lr,
        w_rec=config.w_rec,
        w_latent=config.w_latent,
        w_obs=config.w_obs,
        chunk=config.chunk,
        checkpoint_every=config.checkpoint_every,
    )
    trainer = Trainer(model, ds.train.x, ds.x_ref, settings, seed=seed)
    start = time.perf_counter()

    def on_chunk(step: int, loss: float) -> None:
        run_dir.log_metrics(step, system=ds.name, model=kind, seed=seed, loss=loss)

    trainer.fit(
        checkpoint_dir=run_dir.checkpoints.folder / f"{ds.name}-{kind}-s{k}", on_chunk=on_chunk
    )
    train_seconds = time.perf_counter() - start
    metrics = evaluate_model(
        model,
        ds.test.x,
        ds.train.x,
        ds.x_ref,
        ds.horizon,
        energy=None if system is None else system.hamiltonian,
        damped=ds.damped,
    )
    metrics["train_seconds"] = train_seconds
    metrics["final_loss"] = trainer.losses[-1]
    metrics["loss_curve"] = trainer.losses
    log(
        f"  {ds.name:6s} {kind:9s} seed {seed}: h1 {metrics['h1']:.3g} h10 {metrics['h10']:.3g} "
        f"drift {metrics.get('energy_drift', float('nan')):.3g} ({train_seconds:.0f}s)"
    )
    path.parent.mkdir(exist_ok=True)
    atomic_write_json(
        path,
        {
            k2: (np.asarray(v).tolist() if isinstance(v, np.ndarray) else v)
            for k2, v in metrics.items()
        },
    )
    return metrics


def _mean(values: list[float]) -> float:
    arr = np.asarray(values, dtype=float)
    return float(np.mean(arr)) if np.all(np.isfinite(arr)) else float("inf")


def train_and_evaluate(config: RunConfig, run_dir: RunDir, systems: list[PreparedSystem]) -> Units:
    """Stage 2: every (system, model, seed) trained and evaluated (resumable units)."""
    return {
        p.name: {
            kind: [
                _unit(config, run_dir, p.ds, p.system, kind, k, p.setup)
                for k in range(config.n_seeds)
            ]
            for kind in config.models
        }
        for p in systems
    }


def summarise(config: RunConfig, systems: list[PreparedSystem], units: Units) -> dict[str, Any]:
    """Stage 3: the metric tree (means over seeds, seed spreads) from the units."""
    metrics: dict[str, Any] = {}
    for p in systems:
        name = p.name
        metrics.setdefault("latent_dim", {})[name] = 2 * config.arch.latent_dof
        metrics.setdefault("full_dim", {})[name] = 2 * p.ds.n
        for kind, us in units[name].items():
            for h in ("h1", "h5", "h10"):
                metrics.setdefault("rollout_error", {}).setdefault(name, {}).setdefault(kind, {})[
                    h
                ] = _mean([u[h] for u in us])
                metrics.setdefault("seed_std", {}).setdefault("rollout_error", {}).setdefault(
                    name, {}
                ).setdefault(kind, {})[h] = float(np.std([u[h] for u in us]))
            if "energy_drift" in us[0]:
                metrics.setdefault("energy_drift", {}).setdefault(name, {})[kind] = _mean(
                    [u["energy_drift"] for u in us]
                )
            if "learned_energy_drift" in us[0]:
                metrics.setdefault("learned_energy_drift", {}).setdefault(name, {})[kind] = _mean(
                    [u["learned_energy_drift"] for u in us]
                )
            if "symplecticity_defect" in us[0]:
                metrics.setdefault("symplecticity_defect", {}).setdefault(name, {})[kind] = float(
                    max(u["symplecticity_defect"] for u in us)
                )
            metrics.setdefault("projection_error", {}).setdefault(name, {})[kind] = _mean(
                [u["projection_error"] for u in us]
            )
            metrics.setdefault("rollout_seconds", {}).setdefault(name, {})[kind] = float(
                np.mean([u["rollout_seconds"] for u in us])
            )
            metrics.setdefault("train_seconds", {}).setdefault(name, {})[kind] = float(
                np.mean([u["train_seconds"] for u in us])
            )
            gaps = [u["h1"] / max(u["train_h1"], 1e-300) for u in us]
            metrics.setdefault("generalisation_gap", {}).setdefault(name, {})[kind] = _mean(gaps)
    return metrics


def run(config: RunConfig, run_dir: RunDir) -> dict[str, Any]:
    """Simulate and reduce, train and evaluate, summarise, plot (see the module doc)."""
    _enable_x64()
    systems = prepare_systems(config)
    units = train_and_evaluate(config, run_dir, systems)
    metrics = summarise(config, systems, units)
    _plots(run_dir, units, config)
    return metrics


def _plots(
    run_dir: RunDir, per_system: dict[str, dict[str, list[dict[str, Any]]]], config: RunConfig
) -> None:
    from icml26.shared import PALETTE

    names = list(per_system)
    cols = len(names)
    with figure(
        run_dir.plot_path("error_growth"),
        1,
        cols,
        title="Rollout error vs time (median over test ICs, mean over seeds)",
    ) as (_fig, axes):
        axes = np.atleast_1d(axes)
        for ax, name in zip(axes, names, strict=True):
            for i, (kind, units) in enumerate(per_system[name].items()):
                curve = np.mean([np.asarray(u["error_curve"], dtype=float) for u in units], axis=0)
                ax.semilogy(
                    np.arange(curve.size), curve, color=PALETTE[i % len(PALETTE)], label=kind
                )
            for k in (1, 5):
                ax.axvline(k * (curve.size - 1) / 10, color="grey", lw=0.8, ls=":")
            ax.set_title(name)
            ax.set_xlabel("step (dotted: 1x, 5x training horizon)")
        axes[0].set_ylabel("relative error")
        axes[0].legend()
    with figure(
        run_dir.plot_path("energy"),
        1,
        cols,
        title="True energy on decoded rollouts (test IC 0, first seed)",
    ) as (_fig, axes):
        axes = np.atleast_1d(axes)
        for ax, name in zip(axes, names, strict=True):
            by_model = per_system[name]
            first = next(iter(by_model.values()))[0]
            if "energy_reference" in first:
                ax.plot(
                    np.asarray(first["energy_reference"]), color="black", lw=2.2, label="reference"
                )
                for i, (kind, us) in enumerate(by_model.items()):
                    ax.plot(
                        np.asarray(us[0]["energy_curve"], dtype=float),
                        color=PALETTE[i % len(PALETTE)],
                        label=kind,
                    )
            ax.set_title(name)
            ax.set_xlabel("step")
        axes[0].set_ylabel("H(x)")
        axes[0].legend()
    with figure(
        run_dir.plot_path("latent_trajectories"),
        1,
        cols,
        title="RO-HNN latent coordinates (test IC 0): rollout vs encoded truth",
    ) as (_fig, axes):
        axes = np.atleast_1d(axes)
        for ax, name in zip(axes, names, strict=True):
            units = per_system[name].get("rohnn") or next(iter(per_system[name].values()))
            pred = np.asarray(units[0]["latent_pred"], dtype=float)
            true = np.asarray(units[0]["latent_true"], dtype=float)
            for j in range(pred.shape[1]):
                ax.plot(true[:, j], color=PALETTE[j], lw=2.2, alpha=0.5, label=f"E(x)_q{j}")
                ax.plot(pred[:, j], color=PALETTE[j], ls="--", label=f"rollout q{j}")
            ax.set_title(name)
            ax.set_xlabel("step")
        axes[0].legend()
    with figure(
        run_dir.plot_path("training_loss"), 1, cols, title="Training loss (first seed)"
    ) as (_fig, axes):
        axes = np.atleast_1d(axes)
        for ax, name in zip(axes, names, strict=True):
            for i, (kind, units) in enumerate(per_system[name].items()):
                ax.semilogy(
                    np.asarray(units[0]["loss_curve"], dtype=float),
                    color=PALETTE[i % len(PALETTE)],
                    label=kind,
                )
            ax.set_title(name)
            ax.set_xlabel("optimiser step")
        axes[0].legend()


#: Reference accuracies ``h·ω_max`` tried for the equal-accuracy comparison, finest first
#: (leapfrog is stable below 2).
_REFERENCE_ACCURACIES = (0.05, 0.1, 0.2, 0.5, 1.0, 1.5, 1.9)


def _timed(fn: Any, repeats: int) -> float:
    """Best wall time of ``repeats`` calls of a JAX function, after one compiling call."""
    import jax

    jax.block_until_ready(fn())
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        best = min(best, time.perf_counter() - start)
    return best


def _equal_accuracy_reference(
    system: Any, x0: Any, reference: np.ndarray, x_ref: np.ndarray, horizon: int, target: float
) -> tuple[int, float]:
    """The coarsest reference integrator (fewest sub-steps) whose rollout error against the
    fine reference is still <= ``target`` (the reduced model's error); ``(substeps, error)``.

    Falls back to the finest tried setting when even that is less accurate than the target.
    """
    from icml26.ro_hnn.evaluate import rollout_error
    from icml26.ro_hnn.systems import simulate

    best = None
    for acc in _REFERENCE_ACCURACIES:
        m = system.substeps(acc)
        coarse = np.asarray(simulate(system, x0, horizon, substeps=m))
        err = rollout_error(coarse, reference, x_ref, horizon)
        if best is None or err <= target:
            best = (m, err)
        if err > target:
            break
    assert best is not None
    return best


def bench(config: BenchConfig, run_dir: RunDir) -> dict[str, Any]:
    """Rollout cost of RO-HNN against (a) the fine full-order reference integrator, (b) the
    coarsest reference integrator as accurate as RO-HNN (equal accuracy), and (c) the
    full-order HNN (same training budget); plus RO-HNN's training-step time."""
    _enable_x64()
    import jax
    import jax.numpy as jnp
    from flax import nnx

    from icml26.ro_hnn.data import make_dataset
    from icml26.ro_hnn.evaluate import predict_batch, rollout_error
    from icml26.ro_hnn.models import build_model
    from icml26.ro_hnn.systems import FPUTChain, simulate
    from icml26.ro_hnn.train import Trainer, TrainSettings

    metrics: dict[str, Any] = {}
    rows = []
    for n in config.sizes:
        system = FPUTChain(n=n)
        ds = make_dataset(
            system,
            n_train=8,
            n_test=config.trajectories,
            horizon=max(10, config.horizon // 10),
            seed=config.seed,
        )
        basis, latent_scale, full_scale = reduction_setup(ds, config.arch)
        x0 = jnp.asarray(ds.test.x[:, 0])
        reference = ds.test.x[:, : config.horizon + 1]
        timings: dict[str, float] = {}
        errors: dict[str, float] = {}
        t_step = float("nan")
        for kind in ("rohnn", "full_hnn"):
            model = build_model(
                kind,
                n=n,
                dt=system.dt,
                damped=False,
                arch=config.arch,
                basis=basis,
                q_ref=ds.q_ref,
                latent_scale=latent_scale,
                full_scale=full_scale,
                seed=config.seed,
            )
            settings = TrainSettings(steps=config.train_steps, chunk=config.train_steps)
            trainer = Trainer(model, ds.train.x, ds.x_ref, settings, seed=config.seed)
            trainer.fit()  # compiles and trains train_steps steps
            if kind == "rohnn":
                trainer.step = 0
                start = time.perf_counter()
                trainer.fit()  # another train_steps steps, timed
                t_step = (time.perf_counter() - start) / config.train_steps
            graphdef, state = nnx.split(model)
            timings[kind] = _timed(
                lambda g=graphdef, s=state, x=x0: predict_batch(g, s, x, config.horizon),
                config.repeats,
            )
            _, pred = predict_batch(graphdef, state, x0, config.horizon)
            errors[kind] = rollout_error(np.asarray(pred), reference, ds.x_ref, config.horizon)
        # simulate() builds a fresh jax.jit per call: time a jitted wrapper (compiled once by
        # _timed), not XLA compilation on every repeat
        reference_fn = jax.jit(lambda x, sy=system: simulate(sy, x, config.horizon))
        t_full = _timed(lambda f=reference_fn, x=x0: f(x), config.repeats)
        m_eq, err_eq = _equal_accuracy_reference(
            system, x0, reference, ds.x_ref, config.horizon, errors["rohnn"]
        )
        coarse_fn = jax.jit(
            lambda x, sy=system, m=m_eq: simulate(sy, x, config.horizon, substeps=m)
        )
        t_eq = _timed(lambda f=coarse_fn, x=x0: f(x), config.repeats)
        t_reduced = timings["rohnn"]
        key = f"n{n}"
        metrics.setdefault("rollout_speedup", {})[key] = t_full / t_reduced
        metrics.setdefault("rollout_speedup_equal_accuracy", {})[key] = t_eq / t_reduced
        metrics.setdefault("rollout_speedup_vs_full_hnn", {})[key] = timings["full_hnn"] / t_reduced
        metrics.setdefault("reduced_rollout_seconds", {})[key] = t_reduced
        metrics.setdefault("full_rollout_seconds", {})[key] = t_full
        metrics.setdefault("equal_accuracy_rollout_seconds", {})[key] = t_eq
        metrics.setdefault("full_hnn_rollout_seconds", {})[key] = timings["full_hnn"]
        metrics.setdefault("train_step_seconds", {})[key] = t_step
        metrics.setdefault("reference_substeps", {})[key] = system.substeps()
        metrics.setdefault("equal_accuracy_substeps", {})[key] = m_eq
        for kind, err in (*errors.items(), ("equal_accuracy_reference", err_eq)):
            metrics.setdefault("bench_rollout_error", {}).setdefault(key, {})[kind] = err
        rows.append((n, t_full, t_reduced, t_eq, timings["full_hnn"]))
        log(
            f"bench n={n}: reference {t_full:.3f}s ({system.substeps()} substeps), "
            f"equal-accuracy reference {t_eq:.3f}s ({m_eq} substeps, error {err_eq:.3g}), "
            f"RO-HNN {t_reduced:.3f}s (error {errors['rohnn']:.3g}), "
            f"full HNN {timings['full_hnn']:.3f}s (error {errors['full_hnn']:.3g}), "
            f"train step {t_step * 1e3:.1f} ms"
        )
    with figure(
        run_dir.plot_path("rollout_cost"), title="Rollout cost vs full dimension (FPUT)"
    ) as (_fig, ax):
        sizes = [r[0] for r in rows]
        ax.loglog(sizes, [r[1] for r in rows], "o-", label="reference (leapfrog, fine steps)")
        ax.loglog(sizes, [r[3] for r in rows], "^-", label="reference, as accurate as RO-HNN")
        ax.loglog(sizes, [r[4] for r in rows], "d-", label="full-order HNN rollout")
        ax.loglog(sizes, [r[2] for r in rows], "s-", label="RO-HNN (latent rollout + decode)")
        ax.set_xlabel("masses n (phase space 2n)")
        ax.set_ylabel("seconds")
        ax.legend()
    return metrics

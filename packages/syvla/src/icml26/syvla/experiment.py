"""``icml26 run syvla`` and ``icml26 bench syvla``: the paper's experiment as named stages.

``run``: embed the texts (frozen MiniLM) -> expert demonstrations (BabyAIBot) -> behaviour
cloning -> the RL stage for every method and seed -> evaluation (success on four splits,
VQA accuracy, update KL statistics) -> plots. Finished stages are kept in the run folder
(``stages/``: model weights and metrics), so a killed run resumes where it stopped.
"""

from __future__ import annotations

import copy
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from icml26.shared import PALETTE, atomic_path, atomic_write_json, figure, log, seed_everything
from icml26.syvla.bc import BCConfig, evaluate_success, train_bc, vqa_accuracy
from icml26.syvla.data import Demos, TextBank, VecEnv, VQASet, collect_demos, random_states, vqa_set
from icml26.syvla.language import TextEncoder, default_cache_dir
from icml26.syvla.model import ModelConfig, SyVLA
from icml26.syvla.paper import METHODS, SPLIT_NAMES, BenchConfig, RunConfig
from icml26.syvla.ppo import RLConfig, collect_rollout, ppo_update, train_rl

__all__ = [
    "Stages",
    "behaviour_clone",
    "bench",
    "evaluate",
    "expert_data",
    "load_demos",
    "reinforce",
    "run",
    "text_bank",
]


class Stages:
    """Finished stages in ``<run>/stages``: ``<name>.pt`` (weights) and ``<name>.json``."""

    def __init__(self, root: Path) -> None:
        self.root = root / "stages"
        self.root.mkdir(parents=True, exist_ok=True)

    def load(self, name: str, model: SyVLA | None = None) -> dict[str, Any] | None:
        meta = self.root / f"{name}.json"
        if not meta.is_file():
            return None
        if model is not None:
            weights = self.root / f"{name}.pt"
            if not weights.is_file():
                return None
            model.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True))
        return json.loads(meta.read_text())

    def save(self, name: str, info: dict[str, Any], model: SyVLA | None = None) -> None:
        if model is not None:
            with atomic_path(self.root / f"{name}.pt") as tmp:
                torch.save({k: v.cpu() for k, v in model.state_dict().items()}, tmp)
        atomic_write_json(self.root / f"{name}.json", info)  # written last: marks the stage done


def text_bank(cfg: RunConfig) -> TextBank:
    """Stage 1: every instruction and question embedded once by the frozen encoder."""
    encoder = TextEncoder(
        cfg.text_model, cache_dir=default_cache_dir() if cfg.cache_text else None, device=cfg.device
    )
    return TextBank(encoder)


def load_demos(path: Path, view_size: int) -> Demos:
    """Your demonstrations: an ``.npz`` with ``views`` (N, S, S, 3) uint8 minigrid codes,
    ``missions`` (N texts) and ``actions`` (N ints in [0, 4))."""
    with np.load(path, allow_pickle=False) as data:
        missing = {"views", "missions", "actions"} - set(data.files)
        if missing:
            raise ValueError(f"{path} lacks the arrays {sorted(missing)}")
        views, missions, actions = data["views"], data["missions"], data["actions"]
    if views.ndim != 4 or views.shape[1:] != (view_size, view_size, 3):
        raise ValueError(
            f"views must have shape (N, {view_size}, {view_size}, 3), got {views.shape}"
        )
    if not len(views) == len(missions) == len(actions) or len(views) == 0:
        raise ValueError("views, missions and actions must be non-empty and of one length")
    if actions.min() < 0 or actions.max() >= 4:
        raise ValueError("actions must be in [0, 4): left, right, forward, pickup")
    return Demos(views.astype(np.uint8), [str(m) for m in missions], actions.astype(np.int64), 0, 0)


@dataclass
class ExpertData:
    demos: Demos
    vqa_eval: VQASet


def expert_data(cfg: RunConfig, bank: TextBank) -> ExpertData:
    """Stage 2: BabyAIBot demonstrations on ``train`` and a held-out VQA set (questions about
    states of random play on ``train``, disjoint seeds from the demonstrations)."""
    if cfg.demos_path is not None:
        demos = load_demos(Path(cfg.demos_path), cfg.view_size)
        bank.ids(demos.missions)  # every mission must be embeddable (a clear error otherwise)
    else:
        demos = collect_demos(cfg.demo_episodes, "train", cfg.view_size, seed=cfg.seed)
    states = random_states(cfg.vqa_eval, "train", cfg.view_size, seed=cfg.seed + 10_000)
    return ExpertData(demos, vqa_set(states, seed=cfg.seed + 20_000))


def _model(cfg: RunConfig, decouple: bool = True) -> SyVLA:
    mcfg = ModelConfig(
        view_size=cfg.view_size, d_model=cfg.d_model, n_queries=cfg.n_queries, hidden=cfg.hidden
    )
    return SyVLA(mcfg, decouple=decouple).to(cfg.device)


def behaviour_clone(
    cfg: RunConfig, data: ExpertData, bank: TextBank, seed: int, stages: Stages
) -> tuple[SyVLA, dict[str, Any]]:
    """Stage 3: the BC model (Intention Decoupling on: the action loss stops at the backbone;
    the backbone learns from the reasoning head's VQA and action-token losses)."""
    model = _model(cfg)
    name = f"bc.seed{seed}"
    info = stages.load(name, model)
    if info is None:
        seed_everything(seed, torch=True)
        model = _model(cfg)
        start = time.process_time()
        losses = train_bc(
            model,
            data.demos,
            bank,
            BCConfig(steps=cfg.bc_steps, batch=cfg.bc_batch, lr=cfg.bc_lr),
            seed=seed,
        )
        info = {"final_loss": float(np.mean(losses[-10:])), "cpu_s": time.process_time() - start}
        stages.save(name, info, model)
    return model, info


def reinforce(
    cfg: RunConfig,
    method: str,
    bc_model: SyVLA,
    data: ExpertData,
    bank: TextBank,
    seed: int,
    stages: Stages,
    run_dir: Any,
) -> tuple[SyVLA, dict[str, Any]]:
    """Stage 4: the RL stage of ``method`` from the BC model (a copy)."""
    spec = METHODS[method]
    model = copy.deepcopy(bc_model)
    model.decouple = spec.decouple
    name = f"{method}.seed{seed}"
    info = stages.load(name, model)
    if info is not None:
        return model, info
    seed_everything(seed, torch=True)
    rl = RLConfig(
        updates=cfg.rl_updates,
        n_envs=cfg.n_envs,
        n_steps=cfg.n_steps,
        epochs=cfg.ppo_epochs,
        minibatch=cfg.minibatch,
        lr=cfg.rl_lr,
        clip=cfg.clip,
        ent_coef=cfg.ent_coef,
        guided=spec.guided,
        guide_advantage=cfg.guide_advantage,
        guide_threshold=cfg.guide_threshold,
        guide_frac=cfg.guide_frac,
        vqa_cotrain=spec.vqa_cotrain,
        vqa_steps=cfg.vqa_steps,
    )

    def on_update(u: int, ret: float, succ: float, stats: Any) -> None:
        run_dir.log_metrics(
            u,
            return_curve=ret,
            success_curve=succ,
            update_kl=stats.kl,
            guides=stats.guides,
            method=method,
            seed=seed,
        )

    start = time.process_time()
    result = train_rl(
        model,
        rl,
        bank,
        demo_views=data.demos.views,
        demo_text_ids=bank.ids(data.demos.missions),
        demo_actions=data.demos.actions,
        seed=seed,
        on_update=on_update,
    )
    info = {
        "kl": result.kl,
        "returns": result.returns,
        "success": result.success,
        "guides": result.guides,
        "cpu_s": time.process_time() - start,
    }
    stages.save(name, info, model)
    return model, info


def evaluate(
    cfg: RunConfig,
    model: SyVLA,
    data: ExpertData,
    bank: TextBank,
    seed: int,
    stages: Stages,
    name: str,
) -> dict[str, float]:
    """Stage 5: success on every split and VQA accuracy of one trained model."""
    found = stages.load(f"eval.{name}")
    if found is not None:
        return found
    out = {
        f"success.{split}": evaluate_success(
            model, bank, split, cfg.eval_episodes, seed=seed * 7919 + 17 + i
        )[0]
        for i, split in enumerate(SPLIT_NAMES)
    }
    out["vqa_accuracy"] = vqa_accuracy(model, data.vqa_eval, bank)
    stages.save(f"eval.{name}", out)
    return out


def _summarise(
    cfg: RunConfig, evals: dict[str, list[dict[str, float]]], rl: dict[str, list[dict[str, Any]]]
) -> dict[str, float]:
    metrics: dict[str, float] = {}
    for method, runs in evals.items():
        for key in runs[0]:
            vals = np.array([r[key] for r in runs])
            prefix, _, rest = key.partition(".")
            if rest:  # success.<split>
                metrics[f"{prefix}.{rest}.{method}"] = float(vals.mean())
                metrics[f"{prefix}_sem.{rest}.{method}"] = float(
                    vals.std(ddof=1) / np.sqrt(len(vals)) if len(vals) > 1 else 0.0
                )
            else:
                metrics[f"{key}.{method}"] = float(vals.mean())
    for method, infos in rl.items():
        kls = np.concatenate([np.asarray(i["kl"], dtype=float) for i in infos])
        metrics[f"update_kl.{method}"] = float(kls.mean())
        # the standard deviation of the per-update KL over all updates of all seeds
        metrics[f"update_variance.{method}"] = float(kls.std(ddof=1)) if kls.size > 1 else 0.0
        metrics[f"final_return.{method}"] = float(np.mean([i["returns"][-1] for i in infos]))
        metrics[f"guides_per_update.{method}"] = float(
            np.mean([np.mean(i["guides"]) for i in infos])
        )
    return metrics


def _plots(
    cfg: RunConfig,
    run_dir: Any,
    metrics: dict[str, float],
    rl: dict[str, list[dict[str, Any]]],
    strip: list[tuple[np.ndarray, str]],
) -> None:
    methods = [m for m in cfg.methods if f"success.train.{m}" in metrics]
    with figure(run_dir.plot_path("success_per_split"), width=7.5, height=3.0) as (fig, ax):
        width = 0.8 / len(methods)
        x = np.arange(len(SPLIT_NAMES))
        for j, m in enumerate(methods):
            vals = [metrics[f"success.{s}.{m}"] for s in SPLIT_NAMES]
            errs = [metrics[f"success_sem.{s}.{m}"] for s in SPLIT_NAMES]
            ax.bar(x + j * width, vals, width, yerr=errs, label=m, color=PALETTE[j % len(PALETTE)])
        ax.set_xticks(x + 0.4 - width / 2, SPLIT_NAMES)
        ax.set_ylabel("success rate")
        ax.set_ylim(0, 1)
        ax.legend(fontsize=7, ncols=3)
    with figure(run_dir.plot_path("vqa_before_after_rl"), width=5.0, height=3.0) as (fig, ax):
        base = metrics["vqa_accuracy.bc"]
        vals = [metrics[f"vqa_accuracy.{m}"] for m in methods]
        ax.bar(methods, vals, color=[PALETTE[j % len(PALETTE)] for j in range(len(methods))])
        ax.axhline(base, color="k", ls="--", lw=1, label="before RL (bc)")
        ax.set_ylabel("VQA accuracy")
        ax.tick_params(axis="x", labelrotation=30)
        ax.legend(fontsize=7)
    if rl:
        with figure(run_dir.plot_path("return_curve"), width=5.0, height=3.0) as (fig, ax):
            for j, (m, infos) in enumerate(rl.items()):
                curves = np.array([i["returns"] for i in infos])
                ax.plot(curves.mean(0), label=m, color=PALETTE[j % len(PALETTE)])
            ax.set_xlabel("PPO update")
            ax.set_ylabel("mean episode return")
            ax.legend(fontsize=7)
    if strip:
        frames = strip[:: max(1, len(strip) // 6)][:6]
        with figure(
            run_dir.plot_path("rollout_strip"), 1, len(frames), width=2.0 * len(frames), height=2.4
        ) as (
            fig,
            axes,
        ):
            for k, ax in enumerate(np.atleast_1d(axes)):
                frame, _mission = frames[k]
                ax.imshow(frame)
                ax.set_axis_off()
                ax.set_title(f"t={k * max(1, len(strip) // 6)}", fontsize=7)
            fig.suptitle(f'syvla: "{frames[0][1]}"', fontsize=9)


def run(cfg: RunConfig, run_dir: Any) -> dict[str, float]:
    """The whole experiment (see the module docstring)."""
    torch.set_num_threads(cfg.threads)
    seed_everything(cfg.seed, torch=True)
    run_dir.update_env(device=cfg.device, torch_threads=cfg.threads)
    stages = Stages(Path(run_dir.path))
    t0 = time.process_time()
    bank = text_bank(cfg)
    data = expert_data(cfg, bank)
    log(f"syvla: {len(data.demos)} expert steps, {len(bank.texts)} texts embedded")
    evals: dict[str, list[dict[str, float]]] = {m: [] for m in cfg.methods}
    rl: dict[str, list[dict[str, Any]]] = {m: [] for m in cfg.methods if METHODS[m].rl}
    strip: list[tuple[np.ndarray, str]] = []
    bc_info: dict[str, Any] = {}
    shared = None
    for k in range(cfg.seeds):
        seed = cfg.seed + k
        if cfg.shared_bc:
            if shared is None:
                shared = behaviour_clone(cfg, data, bank, cfg.seed, stages)
            bc_model, bc_info = shared
        else:
            bc_model, bc_info = behaviour_clone(cfg, data, bank, seed, stages)
        for method in cfg.methods:
            if METHODS[method].rl:
                model, info = reinforce(cfg, method, bc_model, data, bank, seed, stages, run_dir)
                rl[method].append(info)
            else:
                model = bc_model
            evals[method].append(
                evaluate(cfg, model, data, bank, seed, stages, f"{method}.seed{seed}")
            )
            if method == "syvla" and k == 0:
                evaluate_success(model, bank, "train", 1, seed=cfg.seed, n_envs=1, frames=strip)
        log(f"syvla: seed {seed} done ({time.process_time() - t0:.0f} CPU-s)")
    metrics = _summarise(cfg, evals, rl)
    metrics["demo_steps"] = float(len(data.demos))
    metrics["bc_final_loss"] = float(bc_info.get("final_loss", float("nan")))
    _plots(cfg, run_dir, metrics, rl, strip)
    return metrics


def bench(cfg: BenchConfig, run_dir: Any) -> dict[str, float]:
    """Environment steps per second, policy forward latency, PPO update time."""
    torch.set_num_threads(cfg.threads)
    seed_everything(cfg.seed, torch=True)
    run_dir.update_env(device=cfg.device, torch_threads=cfg.threads)
    out: dict[str, float] = {}
    env = VecEnv(cfg.n_envs, "train", 13, seed=cfg.seed)
    env.reset()
    rng = np.random.default_rng(cfg.seed)
    start = time.perf_counter()
    for _ in range(cfg.env_steps):
        env.step(rng.integers(0, 3, size=env.n))
    out["env_steps_per_s"] = cfg.env_steps * cfg.n_envs / (time.perf_counter() - start)
    bank = text_bank(RunConfig(device=cfg.device))
    model = SyVLA(ModelConfig()).to(cfg.device).eval()
    vec = torch.as_tensor(bank.vectors, device=cfg.device)
    for batch in (1, cfg.forward_batch):
        views = torch.as_tensor(np.repeat(env.views[:1], batch, 0), device=cfg.device)
        text = vec[bank.ids([env.missions[0]] * batch)]
        with torch.no_grad():
            model(views, text)
            if cfg.device.startswith("cuda"):
                torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(cfg.forward_reps):
                model(views, text)
            if cfg.device.startswith("cuda"):
                torch.cuda.synchronize()
        tag = "b1" if batch == 1 else "batch"
        out[f"forward_latency_ms.{tag}"] = (time.perf_counter() - start) / cfg.forward_reps * 1e3
    out["forward_batch"] = float(cfg.forward_batch)
    rl = RLConfig(n_envs=cfg.n_envs, n_steps=32, guided=False, vqa_cotrain=True)
    gen = torch.Generator().manual_seed(cfg.seed)
    opt = torch.optim.Adam(model.parameters(), lr=rl.lr)
    times = []
    for u in range(cfg.ppo_updates):
        roll = collect_rollout(model, env, bank, rl, gen)
        start = time.perf_counter()
        ppo_update(model, opt, roll, rl, bank, buffer=None, gen=gen, seed=u)
        times.append(time.perf_counter() - start)
    out["ppo_update_s"] = float(np.mean(times))
    out["ppo_update_samples"] = float(rl.n_envs * rl.n_steps)
    return out

"""The run's steps, each a call into a method module: the recipe :mod:`experiment` chains.

Every trained model is kept as one stage file (weights and its training record), so a killed
run resumes at the first unfinished stage. Seeds: model initialisation, demonstrations, RL
environments, evaluation and VQA data each come from their own stream of the run's seed.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import inspect
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import torch

from icml26.shared import PICKLE, Stages, log, seed_for
from icml26.syvla import pretrain as pretrain_module
from icml26.syvla.backbone import VERIFY_TOLERANCE, find_shipped, shipped_key, write_backbone
from icml26.syvla.bc import BCConfig, train_bc
from icml26.syvla.config import METHODS, SPLIT_NAMES, RunConfig
from icml26.syvla.data import Demos, TextBank, VQASet, collect_demos
from icml26.syvla.evaluate import evaluate_success, vqa_accuracy, vqa_accuracy_by_family
from icml26.syvla.language import TextEncoder, default_cache_dir
from icml26.syvla.levels import ACTION_NAMES, LEVELS, N_ACTIONS
from icml26.syvla.model import ModelConfig, SyVLA
from icml26.syvla.ppo import RLConfig, train_rl
from icml26.syvla.pretrain import VQAPretrainConfig, pretrain_vqa, vqa_splits
from icml26.syvla.rgb import (
    TileEncoder,
    TileEncoderConfig,
    tile_accuracy,
    tile_data,
    train_tile_encoder,
)
from icml26.syvla.vqa import question_texts

__all__ = [
    "behaviour_clone",
    "evaluate_model",
    "expert_demos",
    "export_backbone",
    "load_demos",
    "make_model",
    "pretrain_backbone",
    "pretrain_settings",
    "reinforce",
    "text_bank",
    "tile_encoder",
    "trained",
    "vqa_data",
]


def text_bank(cfg: RunConfig) -> TextBank:
    """Every instruction and question embedded once by the frozen encoder."""
    cache = default_cache_dir() if cfg.cache_text else None
    return TextBank(TextEncoder(cfg.text_model, cache_dir=cache, device=cfg.device))


def load_demos(path: Path, view_size: int) -> Demos:
    """Your demonstrations: an ``.npz`` with ``views`` (N, S, S, 3) uint8 minigrid codes,
    ``missions`` (N texts) and ``actions`` (N ints in [0, 5): left, right, forward, pickup,
    drop)."""
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
    if actions.min() < 0 or actions.max() >= N_ACTIONS:
        raise ValueError(f"actions must be in [0, {N_ACTIONS}): {', '.join(ACTION_NAMES)}")
    return Demos(views.astype(np.uint8), [str(m) for m in missions], actions.astype(np.int64), 0, 0)


def expert_demos(
    cfg: RunConfig, bank: TextBank, seed: int, levels: tuple[str, ...] = tuple(LEVELS)
) -> Demos:
    """BabyAIBot demonstrations on ``train`` of ``levels`` from ``seed``'s ``demos`` stream
    (each repetition of a run has its own), or your file."""
    if cfg.demos_path is not None:
        demos = load_demos(Path(cfg.demos_path), cfg.view_size)
        bank.ids(demos.missions)  # every mission must be embeddable (a clear error otherwise)
        return demos
    return collect_demos(cfg.demo_episodes, "train", cfg.view_size, seed=seed, levels=levels)


def vqa_data(cfg: RunConfig) -> tuple[np.ndarray, VQASet, VQASet]:
    """VQA training views, validation and held-out questions (three streams)."""
    return vqa_splits(cfg.vqa_train_states, cfg.vqa_val, cfg.vqa_eval, cfg.view_size, seed=cfg.seed)


def make_model(cfg: RunConfig, seed: int, *, decouple: bool = True) -> SyVLA:
    """A fresh network, initialised from the seed's ``model`` stream."""
    torch.manual_seed(seed_for(seed, "model"))
    mcfg = ModelConfig(
        view_size=cfg.view_size, d_model=cfg.d_model, n_queries=cfg.n_queries, hidden=cfg.hidden
    )
    return SyVLA(mcfg, decouple=decouple).to(cfg.device)


def trained(
    stages: Stages, name: str, model: SyVLA, train: Callable[[SyVLA], dict[str, Any]]
) -> dict[str, Any]:
    """Train ``model`` in place once (stage ``name``: its weights and record), or reload it."""

    def compute() -> dict[str, Any]:
        info = train(model)
        state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
        return {"state": state, "info": info}

    out = stages.once(name, compute, saver=PICKLE)
    model.load_state_dict(out["state"])
    return out["info"]


def pretrain_settings(cfg: RunConfig) -> VQAPretrainConfig:
    """The VQA pretraining settings of ``cfg``."""
    return VQAPretrainConfig(max_steps=cfg.vqa_max_steps, lr=cfg.vqa_lr, patience=cfg.vqa_patience)


def pretrain_backbone(
    cfg: RunConfig,
    stages: Stages,
    bank: TextBank,
    vqa: tuple[np.ndarray, VQASet, VQASet],
    seed: int,
    run_dir: Any = None,
) -> tuple[SyVLA, dict[str, Any]]:
    """The VQA-pretrained backbone and reasoning head, with its held-out accuracy.

    With ``cfg.pretrained_backbone == "shipped"`` the backbone shipped in the wheel
    (:mod:`icml26.syvla.backbone`) is loaded when its key matches and its re-measured held-out
    accuracy agrees with its record; otherwise it is trained (or loaded from the user cache).
    Its record says where the weights came from (``from_shipped`` with ``shipped_file``;
    ``from_cache`` with ``cache_key`` and ``cache_path``, ``None`` with ``cache_pretrain=False``);
    with ``run_dir`` the same goes into ``env.json`` as ``pretrain_cache_seed<seed>``.
    ``heldout_accuracy`` is always measured here, on the run's own held-out questions."""
    model = make_model(cfg, seed)
    settings = pretrain_settings(cfg)

    def train(m: SyVLA) -> dict[str, Any]:
        start = time.process_time()
        res = pretrain_vqa(m, vqa[0], vqa[1], bank, settings, seed=seed)
        return {
            "steps": res.steps,
            "stopped": res.stopped,
            "curve": res.curve,
            "best_step": res.best_step,
            "best_val": res.best_val,
            "cpu_seconds": time.process_time() - start,
        }

    if cfg.cache_pretrain:
        fit = _cached(_pretrain_key(cfg, model, settings, vqa, bank, seed), train)
    else:
        fit = train
    if cfg.pretrained_backbone == "shipped":
        key = shipped_key(model, settings, vqa, seed=seed, text_model=cfg.text_model)
        fit = _shipped(key, fit, vqa[2], bank)
    info = trained(stages, f"pretrain-seed{seed}", model, fit)
    info.setdefault("from_cache", False)  # a stage file written before the field existed
    info.setdefault("cache_key", None)
    info.setdefault("cache_path", None)
    info.setdefault("from_shipped", False)
    info.setdefault("shipped_file", None)
    if run_dir is not None:
        fields = ("from_cache", "cache_key", "cache_path", "from_shipped", "shipped_file")
        run_dir.update_env(**{f"pretrain_cache_seed{seed}": {k: info[k] for k in fields}})
    info["heldout_accuracy"] = vqa_accuracy(model, vqa[2], bank)
    info["heldout_by_family"] = vqa_accuracy_by_family(model, vqa[2], bank)
    info["val_by_family"] = vqa_accuracy_by_family(model, vqa[1], bank)
    return model, info


def _shipped(
    key: str, fallback: Callable[[SyVLA], dict[str, Any]], heldout: VQASet, bank: TextBank
) -> Callable[[SyVLA], dict[str, Any]]:
    """Load the shipped backbone of ``key`` when there is one and its held-out accuracy,
    measured again here, is within :data:`VERIFY_TOLERANCE` of its record; else ``fallback``
    (training) from the initial weights. The record names the file and both figures."""

    def run(m: SyVLA) -> dict[str, Any]:
        found = find_shipped(key)
        if found is None:
            log(f"syvla: no shipped backbone for these settings (key {key[:12]}); pretraining")
            return fallback(m)
        state, record = found
        initial = {k: v.detach().clone() for k, v in m.state_dict().items()}
        m.load_state_dict(state)
        measured = vqa_accuracy(m, heldout, bank)
        if abs(measured - record["heldout_accuracy"]) > VERIFY_TOLERANCE:
            log(
                f"syvla: shipped backbone {record['file']} rejected (held-out VQA {measured:.3f} "
                f"here, {record['heldout_accuracy']:.3f} recorded); pretraining instead"
            )
            m.load_state_dict(initial)
            return {**fallback(m), "shipped_rejected": record["file"]}
        return {
            **record["training"],
            "from_shipped": True,
            "from_cache": False,
            "shipped_file": record["file"],
            "shipped_sha256": record["sha256"],
            "shipped_heldout_recorded": record["heldout_accuracy"],
            "shipped_commit": record["created"]["git"].get("commit"),
        }

    return run


def export_backbone(
    cfg: RunConfig,
    model: SyVLA,
    info: dict[str, Any],
    vqa: tuple[np.ndarray, VQASet, VQASet],
    run_dir: Any,
) -> tuple[Path, Path]:
    """Write the pretrained ``model`` to ``<run>/backbone/`` as a shippable backbone: the
    weights and a provenance record (command and commit from ``env.json``, the settings, how
    training ended, its CPU time, validation and held-out accuracy, with ``shipped_key``)."""
    settings = pretrain_settings(cfg)
    key = shipped_key(
        make_model(cfg, cfg.seed), settings, vqa, seed=cfg.seed, text_model=cfg.text_model
    )
    env = json.loads(run_dir.env_path.read_text(encoding="utf-8"))
    argv = env.get("argv") or []
    record = {
        "settings": {
            "model": dataclasses.asdict(model.cfg),
            "pretrain": dataclasses.asdict(settings),
            "seed": cfg.seed,
            "text_model": cfg.text_model,
            "vqa_train_states": cfg.vqa_train_states,
            "vqa_val": cfg.vqa_val,
            "vqa_eval": cfg.vqa_eval,
            "training_views_kept": len(vqa[0]),
        },
        "training": {
            k: info.get(k)
            for k in ("steps", "stopped", "curve", "best_step", "best_val", "cpu_seconds")
        },
        "heldout_accuracy": info["heldout_accuracy"],
        "heldout_by_family": info["heldout_by_family"],
        "val_by_family": info["val_by_family"],
        "created": {
            "command": " ".join(["icml26", *argv[1:]]),
            "git": env.get("git", {}),
            "time": env.get("time"),
            "packages": env.get("packages", {}),
            "threads": cfg.threads,
        },
    }
    return write_backbone(run_dir.path / "backbone", f"vqa-seed{cfg.seed}", model, key, record)


def key_modules() -> list[ModuleType]:
    """The ``icml26`` modules whose code decides the pretrained weights: :mod:`pretrain` and,
    transitively, every ``icml26`` module defining a function, class or module that one of
    them names (model, data and its question sets, evaluation, the seeding helpers, ...)."""
    seen: dict[str, ModuleType] = {}
    todo = [pretrain_module]
    while todo:
        mod = todo.pop()
        if mod.__name__ in seen:
            continue
        seen[mod.__name__] = mod
        for obj in vars(mod).values():
            name = obj.__name__ if isinstance(obj, ModuleType) else getattr(obj, "__module__", None)
            if isinstance(name, str) and name.startswith("icml26.") and name in sys.modules:
                todo.append(sys.modules[name])
    return [seen[name] for name in sorted(seen)]


def _source(module: ModuleType) -> str:
    """The code of ``module`` as hashed into the pretraining key."""
    return inspect.getsource(module)


def _pretrain_key(
    cfg: RunConfig,
    model: SyVLA,
    settings: VQAPretrainConfig,
    vqa: tuple[np.ndarray, VQASet, VQASet],
    bank: TextBank,
    seed: int,
) -> str:
    """What decides the pretrained weights: the code of :func:`key_modules`, the settings,
    the seed and device, the initial weights, the question embeddings pretraining looks up
    (the text encoder's output, so its weights and code count), the training views and the
    validation set (the data themselves)."""
    h = hashlib.sha256()
    for module in key_modules():
        h.update(module.__name__.encode())
        h.update(_source(module).encode())
    h.update(repr((model.cfg, settings, seed, cfg.device, cfg.text_model)).encode())
    h.update(torch.__version__.encode())
    for tensor in model.state_dict().values():
        h.update(tensor.detach().cpu().numpy().tobytes())
    h.update(np.ascontiguousarray(bank.vectors[bank.ids(question_texts())]).tobytes())
    for arr in (vqa[0], vqa[1].views, vqa[1].answers, np.array(vqa[1].questions)):
        h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()[:24]


def _cached(
    key: str, train: Callable[[SyVLA], dict[str, Any]]
) -> Callable[[SyVLA], dict[str, Any]]:
    """``train`` with its result kept under the user cache (``pretrain-<key>.pt``): a later
    run with the same code, settings, initial weights and data loads it instead. The record
    says which happened (``from_cache``) and names the key and file."""
    path = default_cache_dir() / f"pretrain-{key}.pt"
    where = {"cache_key": key, "cache_path": str(path)}

    def run(m: SyVLA) -> dict[str, Any]:
        if path.is_file():
            saved = torch.load(path, map_location="cpu", weights_only=False)
            m.load_state_dict(saved["state"])
            return {**saved["info"], "from_cache": True, **where}
        info = train(m)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        state = {k: v.detach().cpu() for k, v in m.state_dict().items()}
        torch.save({"state": state, "info": info}, tmp)
        tmp.replace(path)
        return {**info, "from_cache": False, **where}

    return run


def behaviour_clone(
    cfg: RunConfig,
    stages: Stages,
    pretrained: SyVLA,
    demos: Demos,
    bank: TextBank,
    seed: int,
    *,
    decouple: bool,
    vqa_test: VQASet | None = None,
    tag: str = "",
) -> tuple[SyVLA, dict[str, Any]]:
    """BC from the pretrained model, decoupled (action losses stop at the backbone) or joint;
    with ``vqa_test`` its info holds the held-out VQA accuracy after BC (``vqa_accuracy``).
    ``tag`` names the level set in the stage name (the ``babyai`` profile's levels)."""
    model = copy.deepcopy(pretrained)
    model.decouple = decouple
    settings = BCConfig(steps=cfg.bc_steps, batch=cfg.bc_batch, lr=cfg.bc_lr)

    def train(m: SyVLA) -> dict[str, Any]:
        losses = train_bc(m, demos, bank, settings, seed=seed)
        return {"final_loss": float(np.mean(losses[-10:]))}

    kind = "decoupled" if decouple else "joint"
    info = trained(stages, f"bc{tag}-{kind}-seed{seed}", model, train)
    if vqa_test is not None:
        info["vqa_accuracy"] = vqa_accuracy(model, vqa_test, bank)
    return model, info


def reinforce(
    cfg: RunConfig,
    stages: Stages,
    method: str,
    start: SyVLA,
    demos: Demos,
    bank: TextBank,
    seed: int,
    log: Callable[..., None],
    levels: tuple[str, ...] = tuple(LEVELS),
    tag: str = "",
) -> tuple[SyVLA, dict[str, Any]]:
    """The RL stage of ``method`` from a copy of its BC model, in rooms of ``levels``
    (``tag`` names them in the stage name)."""
    spec = METHODS[method]
    model = copy.deepcopy(start)
    model.decouple = spec.decouple
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
        guide_quantile=cfg.guide_quantile,
        guide_frac=cfg.guide_frac,
        guide_floor_quantile=cfg.guide_floor_quantile,
        vqa_cotrain=spec.vqa_cotrain,
        vqa_steps=cfg.vqa_steps,
        levels=levels,
    )

    def on_update(u: int, ret: float, succ: float, stats: Any) -> None:
        log(
            u,
            return_curve=ret,
            success_curve=succ,
            update_kl=stats.kl,
            guides=stats.guides,
            retrieved_fraction=stats.retrieved_fraction,
            guide_floor=stats.guide_floor,
            method=method + tag,
            seed=seed,
        )

    def train(m: SyVLA) -> dict[str, Any]:
        res = train_rl(
            m,
            rl,
            bank,
            demo_views=demos.views,
            demo_text_ids=bank.ids(demos.missions),
            demo_actions=demos.actions,
            seed=seed,
            on_update=on_update,
        )
        return vars(res)

    return model, trained(stages, f"rl{tag}-{method}-seed{seed}", model, train)


def evaluate_model(
    cfg: RunConfig, model: SyVLA, vqa_test: VQASet, bank: TextBank, seed: int
) -> dict[str, float]:
    """Success on every split (the seed's ``eval`` stream) and held-out VQA accuracy."""
    out = {
        f"success.{split}": evaluate_success(
            model, bank, split, cfg.eval_episodes, seed=seed_for(seed, "eval", split)
        )[0]
        for split in SPLIT_NAMES
    }
    out["vqa_accuracy"] = vqa_accuracy(model, vqa_test, bank)
    return out


def tile_encoder(cfg: RunConfig, stages: Stages) -> tuple[TileEncoder, dict[str, Any]]:
    """The per-tile RGB encoder of the registry levels, trained on frames of random play
    (the run seed's ``rgb_train`` stream), scored on frames of its ``rgb_test`` stream
    (``cell`` and ``frame`` accuracy of the codes it reads)."""
    settings = TileEncoderConfig(frames=cfg.rgb_frames, steps=max(cfg.rgb_steps, 1))
    torch.manual_seed(seed_for(cfg.seed, "rgb", "init"))
    encoder = TileEncoder(hidden=settings.hidden).to(cfg.device)

    def train(m: TileEncoder) -> dict[str, Any]:
        frames, codes = tile_data(cfg.levels, settings.frames, seed=cfg.seed, stream="rgb_train")
        losses = train_tile_encoder(m, frames, codes, settings, seed=cfg.seed)
        test = tile_data(cfg.levels, settings.test_frames, seed=cfg.seed, stream="rgb_test")
        return {"final_loss": float(np.mean(losses[-20:])), **tile_accuracy(m, *test)}

    def compute() -> dict[str, Any]:
        info = train(encoder)
        return {
            "state": {k: v.detach().cpu() for k, v in encoder.state_dict().items()},
            "info": info,
        }

    out = stages.once("rgb-encoder", compute, saver=PICKLE)
    encoder.load_state_dict(out["state"])
    encoder.eval()
    return encoder, out["info"]

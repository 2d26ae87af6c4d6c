"""The trainings a run consists of, each one a named, resumable stage, and the workloads they
train.

:func:`plan` lists every training of a :class:`~icml26.eco.config.RunConfig` once:

* ``main``: ``schemes`` on every workload at every seed of ``seeds`` (paired: a seed is one
  initialisation, batch order and rounding stream, shared by the schemes), and
  ``extra_schemes`` at ``seeds[0]`` on ``extra_workloads``;
* ``sweep``: ``sweep_schemes`` on ``sweep_workload`` at each rate of ``sweep_lrs`` and each
  seed of ``sweep_seeds``;
* ``ablation``: each ablation of each ECO scheme on ``ablation_workloads`` at
  ``ablation_seeds``, with master weights and naive removal in the default setting beside
  it, and master weights under the same change when the change affects them.

A training that two parts need (the default runs of the ablation stage at a main seed) is
planned once. :func:`run_job` trains one and returns its record (a JSON dict).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from icml26.eco.ablations import ablated_spec
from icml26.eco.config import RunConfig
from icml26.eco.data import load_mnist, load_text
from icml26.eco.models import LMConfig
from icml26.eco.schemes import parse_scheme
from icml26.eco.train import LMWorkload, MLPWorkload, TrainSpec, train
from icml26.shared import log, seed_for

__all__ = ["DEFAULT", "Job", "build_workloads", "plan", "run_job", "train_seed"]

#: the ablation name of a training in the paper's (default) setting
DEFAULT = "default"


@dataclass(frozen=True)
class Job:
    """One training.

    Attributes:
        workload: the workload's name.
        scheme: the scheme's name.
        seed: the training seed (an entry of the config's seed lists).
        spec: the optimisation settings.
        ablation: ``"default"`` or an ablation's name.
        lr_index: the sweep rate's index (largest rate first), or ``None``.
        measure_peak: measure the peak memory of the last step.
    """

    workload: str
    scheme: str
    seed: int
    spec: TrainSpec
    ablation: str = DEFAULT
    lr_index: int | None = None
    measure_peak: bool = False

    @property
    def stage(self) -> str:
        """The stage name (letters, digits, ``_`` and ``-``), unique per training."""
        parts = [self.workload, self.scheme, self.ablation, f"s{self.seed}"]
        if self.lr_index is not None:
            parts.append(f"lr{self.lr_index}")
        return "-".join(parts)


def train_seed(cfg: RunConfig, seed: int) -> int:
    """The seed a training at config seed ``seed`` passes to :func:`~icml26.eco.train.train`."""
    return seed_for(cfg.seed, "train", seed)


def _spec(
    cfg: RunConfig, workload: str, lr: float | None = None, steps: int | None = None
) -> TrainSpec:
    lm = workload in ("dense_lm", "moe_lm")
    return TrainSpec(
        steps=steps or (cfg.lm_steps if lm else cfg.mlp_steps),
        lr=lr or (cfg.lm_lr if lm else cfg.mlp_lr),
        betas=(cfg.beta1, cfg.beta2),
        weight_decay=cfg.weight_decay,
        fp8_group_size=cfg.fp8_group_size,
        int4_group_size=cfg.int4_group_size,
        quantize_all=cfg.quantize_all,
    )


def _main(cfg: RunConfig) -> list[Job]:
    first = cfg.seeds[0]
    jobs = [
        Job(w, s, seed, _spec(cfg, w), measure_peak=cfg.peak_memory and seed == first)
        for w in cfg.workloads
        for seed in cfg.seeds_for(w)
        for s in cfg.schemes
    ]
    jobs += [
        Job(w, s, first, _spec(cfg, w), measure_peak=cfg.peak_memory)
        for w in cfg.extra_workloads
        for s in cfg.extra_schemes
        if s not in cfg.schemes
    ]
    return jobs


def _sweep(cfg: RunConfig) -> list[Job]:
    lrs = sorted(cfg.sweep_lrs, reverse=True)
    jobs = []
    for k, lr in enumerate(lrs):
        steps = round(cfg.sweep_steps * lrs[0] / lr) if cfg.sweep_equal_budget else None
        spec = _spec(cfg, cfg.sweep_workload, lr=lr, steps=steps or cfg.sweep_steps)
        for seed in cfg.sweep_seeds:
            for s in cfg.sweep_schemes:
                jobs.append(Job(cfg.sweep_workload, s, seed, spec, lr_index=k))
    return jobs


def _ablation(cfg: RunConfig) -> list[Job]:
    jobs = []
    for w in cfg.ablation_workloads:
        base = _spec(cfg, w)
        for scheme in cfg.ablation_schemes:
            s = parse_scheme(scheme)
            master, naive = str(s.master_name), str(s.naive_name)
            for seed in cfg.ablation_seeds:
                jobs += [Job(w, name, seed, base) for name in (scheme, master, naive)]
                for abl in cfg.ablations:
                    specs = ablated_spec(abl, base, s.fmt or "fp8")
                    if specs is None:  # this ablation is the format's default
                        continue
                    jobs.append(Job(w, scheme, seed, specs.eco, ablation=abl))
                    if specs.affects_master:
                        jobs.append(Job(w, master, seed, specs.master, ablation=abl))
    return jobs


def plan(cfg: RunConfig) -> list[Job]:
    """Every training of the run, once (main, then sweep, then ablations).

    Args:
        cfg: the run's config.

    Returns:
        The jobs, with distinct stage names; a job two parts need appears once, as the
        first part planned it.
    """
    jobs: dict[str, Job] = {}
    for job in [*_main(cfg), *(_sweep(cfg) if cfg.sweep_lrs else [])]:
        jobs.setdefault(job.stage, job)
    if cfg.ablations:
        for job in _ablation(cfg):
            jobs.setdefault(job.stage, job)
    return list(jobs.values())


def build_workloads(cfg: RunConfig) -> dict[str, Any]:
    """The workloads the run's jobs train (data loaded once).

    Args:
        cfg: the run's config.

    Returns:
        Workload name -> workload.
    """
    names = {job.workload for job in plan(cfg)}
    out: dict[str, Any] = {}
    if names & {"dense_lm", "moe_lm"}:
        text = load_text(cfg.text_file or None, cfg.corpus_bytes)
        log(f"eco: text {text.source}: {text.train.numel()} train / {text.val.numel()} val bytes")
        for name in ("dense_lm", "moe_lm"):
            moe = name == "moe_lm"
            lm = LMConfig(
                seq_len=cfg.seq_len,
                d_model=cfg.d_model,
                n_layers=cfg.n_layers,
                n_heads=cfg.n_heads,
                d_ff=cfg.moe_d_ff if moe else cfg.d_ff,
                n_experts=cfg.n_experts if moe else 0,
                top_k=cfg.top_k,
            )
            if name in names:
                out[name] = LMWorkload(
                    name, text, lm, cfg.lm_batch_size, cfg.val_batches, cfg.seed, cfg.device
                )
    if names & {"mlp", "logreg"}:
        mnist = load_mnist(seed=cfg.seed)
        for name, hidden in (("mlp", (cfg.mlp_hidden,)), ("logreg", ())):
            if name in names:
                out[name] = MLPWorkload(mnist, hidden, cfg.mlp_batch_size, name, cfg.device)
    return out


def run_job(job: Job, workloads: dict[str, Any], cfg: RunConfig) -> dict[str, Any]:
    """Train one job and return its record.

    Args:
        job: the training.
        workloads: from :func:`build_workloads`.
        cfg: the run's config.

    Returns:
        :meth:`~icml26.eco.train.TrainResult.as_dict` of the run.
    """
    res = train(
        workloads[job.workload],
        job.scheme,
        job.spec,
        train_seed(cfg, job.seed),
        measure_peak=job.measure_peak,
    )
    log(f"eco: {job.stage}: val {res.val_loss:.4f} final {res.final_loss:.4f}")
    return res.as_dict()

"""The benchmark (``icml26 bench disempowerment``): throughput per engine and log size, CPU
seconds per 1,000 conversations per back end (scrubbing, TF-IDF, staged, MiniLM on everything,
the judge), and peak memory.

Costs are CPU seconds of work, so they are timed with one torch thread: with two, each
MiniLM call also bills the pool's spinning threads (on this loaded 2-core machine 0.1-0.5
CPU-s per ``encode`` call whatever its size, against 0.017 CPU-s with one thread; MiniLM on
300 conversations 6.2 against 2.4 CPU-s). That spin made the staged path, one small call on
the few flagged conversations, look barely cheaper than MiniLM on all 40 conversations of the
smoke bench (13 against 28 CPU-s per 1,000 with 5% flagged): a measurement artefact, not the
cost of the work. ``cost_cpu_s.minilm_call`` (one text) shows what a call costs beyond it.
"""

from __future__ import annotations

import resource
import time
from typing import Any

from icml26.disempowerment.classifiers import StagedClassifier, assistant_view, fit_classifier
from icml26.disempowerment.config import BenchConfig
from icml26.disempowerment.datasets import synthetic_labelled
from icml26.disempowerment.embeddings import MiniLMEmbedder
from icml26.disempowerment.engine import process_log
from icml26.disempowerment.pipeline import make_judge
from icml26.disempowerment.scrub import Scrubber
from icml26.disempowerment.synthetic import generate_log
from icml26.shared import RunDir, log, seed_for

__all__ = ["bench"]


def bench(cfg: BenchConfig, run_dir: RunDir) -> dict[str, float]:
    """Throughput per engine and log size; cost per 1,000 conversations per back end; memory."""
    scrubber = Scrubber()
    train = synthetic_labelled(cfg.n_train, seed=seed_for(cfg.seed, "train"), share=0.3)
    texts = [scrubber(c.text()) for c in train.conversations]
    staged = fit_classifier("staged", texts, train.labels, seed=cfg.seed, embedder=MiniLMEmbedder())
    assert isinstance(staged, StagedClassifier)
    m: dict[str, float] = {}
    biggest = generate_log(max(cfg.sizes), seed=seed_for(cfg.seed, "log"))
    for engine in cfg.engines:
        if engine == "ray":
            try:
                import ray
            except ImportError:
                log("ray is not installed: skipping engine=ray")
                continue
        for n in cfg.sizes:
            processed = process_log(
                biggest.conversations[:n], staged, engine=engine, workers=cfg.workers
            )
            m[f"throughput.{engine}.n{n}"] = processed.throughput
            log(f"{engine} n={n}: {processed.throughput:.0f} conversations/s")
        m[f"throughput.{engine}"] = m[f"throughput.{engine}.n{max(cfg.sizes)}"]
    if "throughput.ray" in m:
        import ray

        ray.shutdown()
        m["throughput.ray_over_local"] = m["throughput.ray"] / m["throughput.local"]
    m.update(_costs(staged, scrubber, biggest.conversations[: cfg.cost_n]))
    if cfg.judge != "none":
        judge = make_judge(cfg.judge)
        texts = [scrubber(c.text()) for c in biggest.conversations[: cfg.judge_n]]
        start = time.process_time()
        judge.predict(texts)
        m["cost_cpu_s_per_1k.llm_judge"] = 1000 * (time.process_time() - start) / cfg.judge_n
        tokens = judge.backend.usage.total_tokens
        m["cost_tokens_per_1k.llm_judge"] = 1000 * tokens / cfg.judge_n
    m["memory.peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return m


def _costs(staged: StagedClassifier, scrubber: Scrubber, sample: list[Any]) -> dict[str, float]:
    """CPU seconds per 1,000 conversations of each back end on ``sample``, timed with one
    torch thread (see the module docstring), the flagged share and a MiniLM call's cost."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _timed_costs(staged, scrubber, sample)
    finally:
        torch.set_num_threads(threads)


def _timed_costs(
    staged: StagedClassifier, scrubber: Scrubber, sample: list[Any]
) -> dict[str, float]:
    per_1k = 1000 / len(sample)
    m: dict[str, float] = {}
    start = time.process_time()
    texts = [scrubber(c.text()) for c in sample]
    m["cost_cpu_s_per_1k.scrub"] = per_1k * (time.process_time() - start)
    start = time.process_time()
    staged.screen.predict(texts)
    m["cost_cpu_s_per_1k.tfidf"] = per_1k * (time.process_time() - start)
    start = time.process_time()
    flagged = staged.run(texts).flagged
    m["cost_cpu_s_per_1k.staged"] = per_1k * (time.process_time() - start)
    m["stage2.share_flagged"] = float(flagged.mean())  # the share MiniLM reads when staged
    views = [assistant_view(t) for t in texts]
    start = time.process_time()
    staged.embedder.encode(views)
    m["cost_cpu_s_per_1k.minilm"] = per_1k * (time.process_time() - start)
    start = time.process_time()
    staged.embedder.encode(views[:1])
    m["cost_cpu_s.minilm_call"] = time.process_time() - start
    return m

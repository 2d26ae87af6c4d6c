"""The benchmark (``icml26 bench disempowerment``): throughput per engine and log size, CPU
seconds per 1,000 conversations per back end (scrubbing, TF-IDF, staged, MiniLM on everything,
the judge), and peak memory."""

from __future__ import annotations

import resource
import time

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
    sample = biggest.conversations[: cfg.cost_n]
    start = time.process_time()
    texts = [scrubber(c.text()) for c in sample]
    m["cost_cpu_s_per_1k.scrub"] = 1000 * (time.process_time() - start) / len(sample)
    for name, fn in (
        ("tfidf", staged.screen.predict),
        ("staged", staged.predict),
        ("minilm", lambda ts: staged.embedder.encode([assistant_view(t) for t in ts])),
    ):
        start = time.process_time()
        fn(texts)
        m[f"cost_cpu_s_per_1k.{name}"] = 1000 * (time.process_time() - start) / len(texts)
    if cfg.judge != "none":
        judge = make_judge(cfg.judge)
        start = time.process_time()
        judge.predict(texts[: cfg.judge_n])
        m["cost_cpu_s_per_1k.llm_judge"] = 1000 * (time.process_time() - start) / cfg.judge_n
        tokens = judge.backend.usage.total_tokens
        m["cost_tokens_per_1k.llm_judge"] = 1000 * tokens / cfg.judge_n
    m["memory.peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return m
